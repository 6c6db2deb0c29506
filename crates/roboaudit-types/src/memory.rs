//! Counterfactual-memory-audit records after parsing (docs/methods.md §2): one row per (pair,
//! memory, action seed, world). `roboaudit-data` reads and writes them with file/row/column
//! checks; the memory harness writes them and the memory audit consumes them.

use serde::{Deserialize, Serialize};

/// A history (memory) or evaluator-world label of a pair: `A` or `B` (SPEC.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MemoryLabel {
    /// History / world `A`.
    A,
    /// History / world `B`.
    B,
}

impl MemoryLabel {
    /// Both labels, `A` first.
    pub const BOTH: [Self; 2] = [Self::A, Self::B];

    /// The other label.
    pub fn other(self) -> Self {
        match self {
            Self::A => Self::B,
            Self::B => Self::A,
        }
    }

    /// `"A"` or `"B"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::A => "A",
            Self::B => "B",
        }
    }

    /// 0 for `A`, 1 for `B` (for two-element arrays indexed by label).
    pub fn index(self) -> usize {
        match self {
            Self::A => 0,
            Self::B => 1,
        }
    }
}

/// One saved action chunk of a pair, executed in one evaluator world (SPEC.md §2).
///
/// `progress_warranted` is the progress toward `b_world` (the branch world `world` warrants),
/// `progress_other` toward the other branch; `value` is `v(a, world)` in [0, 1] (1 = the
/// reference warranted chunk). The same `action` (a flattened chunk, `float32`, one dimension
/// for the whole file) appears in both worlds' rows of one (pair, memory, action seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// The pair (the bootstrap cluster).
    pub pair_id: String,
    /// The history the policy was queried with.
    pub memory: MemoryLabel,
    /// The registered action seed (common randomness for both memories).
    pub action_seed: i64,
    /// The evaluator world the chunk was executed in (never seen by the policy).
    pub world: MemoryLabel,
    /// Progress toward the branch `world` warrants (finite; units of the harness).
    pub progress_warranted: f64,
    /// Progress toward the other branch (finite).
    pub progress_other: f64,
    /// Normalized progress toward `b_world`, in [0, 1].
    pub value: f64,
    /// The executed action chunk, flattened; finite, non-empty.
    pub action: Vec<f32>,
    /// Whether the pair's present passed the identity check; `false` excludes the pair.
    pub present_equal: bool,
    /// Optional detour route (irrelevant-history control), constant within a pair.
    pub route: Option<String>,
    /// Optional layout stratum, constant within a pair.
    pub stratum: Option<String>,
    /// Optional hash of the plan the harness ran under, constant within the file.
    pub plan_hash: Option<String>,
}
