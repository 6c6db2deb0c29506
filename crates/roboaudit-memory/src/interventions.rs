//! Result types of the native-rollout memory interventions (docs/methods.md §2; seed 002
//! §III-D, §IV-C): what `roboaudit memory intervene` writes as `interventions.json` and the
//! report reads. The studies themselves run in `roboaudit-memory-harness` (`intervene`), which
//! needs the simulator; these types do not.

use roboaudit_types::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Schema tag of `interventions.json` ([`InterventionStudy`]).
pub const INTERVENTIONS_SCHEMA: &str = "roboaudit.memory.interventions.v1";

/// History replacement conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replacement {
    /// Memory rebuilt from the recipient's own history (must reproduce the native run).
    Own,
    /// A donor episode's history with the same target.
    DonorSame,
    /// A donor episode's history with another target.
    DonorOpposite,
    /// The bank cleared.
    Clear,
}

/// Restoration conditions after an injected fault (bank cleared at the event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Restoration {
    /// Nothing restored.
    None,
    /// Only the protected anchor restored.
    Anchor,
    /// The whole bank rebuilt from the full observed history.
    Full,
}

/// The cohort of native episodes a study runs: the settings an intervention study and a
/// natural-occurrence study share. Serialized flattened into either study's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CohortSettings {
    /// `put_back` or `rearrange` (native rollouts need the task's success predicate).
    pub task: TaskKind,
    /// Episodes (≥ 1); an intervention study's recipients cycle their targets over the trays.
    pub episodes: usize,
    /// Master seed of the episodes' layouts, scenes and histories.
    pub seed: u64,
    /// Layout levels (0–3) cycled over episodes; the level is the stratum.
    pub layout_levels: Vec<u8>,
    /// The policy observes every this many history steps (≥ 1).
    pub obs_every: usize,
    /// Action seed of the closed-loop queries (chunk `c` uses `action_seed + c`).
    pub action_seed: u64,
}

impl CohortSettings {
    /// `episodes` put_back episodes, seed 0, layout levels 0 and 1, observations every 4
    /// steps, action seed 0.
    pub fn with_episodes(episodes: usize) -> Self {
        CohortSettings {
            task: TaskKind::PutBack,
            episodes,
            seed: 0,
            layout_levels: vec![0, 1],
            obs_every: 4,
            action_seed: 0,
        }
    }
}

/// Settings of an intervention study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterventionConfig {
    /// Recipient episodes and how they run.
    #[serde(flatten)]
    pub cohort: CohortSettings,
    /// Restoration: chunks run with the cleared bank before the restoration query (≥ 1, and
    /// fewer than every episode runs after the event, or the study fails: a restoration that
    /// never happens would report the `none` numbers as `anchor` and `full`).
    pub fault_chunks: usize,
    /// Layout-stratified bootstrap of the rates' intervals (`roboaudit_memory_harness::intervals`).
    pub bootstrap: BootstrapSettings,
}

impl Default for InterventionConfig {
    /// put_back, 12 episodes, layout levels 0 and 1, one fault chunk.
    fn default() -> Self {
        InterventionConfig {
            cohort: CohortSettings::with_episodes(12),
            fault_chunks: 1,
            bootstrap: BootstrapSettings::default(),
        }
    }
}

/// One continuation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Continuation {
    /// Recipient episode id.
    pub episode_id: String,
    /// Condition name (`own`, `donor_same`, …, `none`, `anchor`, `full`).
    pub condition: String,
    /// Layout stratum.
    pub stratum: String,
    /// The recipient's own target tray.
    pub own_target: usize,
    /// The donor's target tray, for donor conditions.
    pub donor_target: Option<usize>,
    /// Official success.
    pub success: bool,
    /// Tray nearest the block at the end (within 5 cm), if any.
    pub committed: Option<usize>,
    /// Tray the first chunk brought the block closest to (largest distance reduction).
    pub first_direction: Option<usize>,
}

/// Bootstrap settings of the study intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapSettings {
    /// Resamples (≥ 1; default 10,000).
    pub resamples: usize,
    /// Two-sided confidence level in (0, 1) (default 0.95).
    pub level: f64,
    /// Seed of the resampling (ChaCha8; default 0).
    pub seed: u64,
}

impl Default for BootstrapSettings {
    /// 10,000 resamples, 95 %, seed 0 (SPEC.md §0 defaults).
    fn default() -> Self {
        BootstrapSettings {
            resamples: 10_000,
            level: 0.95,
            seed: 0,
        }
    }
}

/// A rate in `[0, 1]` with its stratified bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateInterval {
    /// The rate on the study's own recipients.
    pub estimate: f64,
    /// Percentile interval `[lo, hi]`, `lo ≤ hi`, both in `[0, 1]`; `None` when fewer than two
    /// resamples gave a defined rate (never for a condition with continuations).
    pub ci: Option<[f64; 2]>,
    /// Confidence level of `ci`.
    pub level: f64,
}

/// The intervals of one condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionIntervals {
    /// Condition name (as in [`ConditionSummary`]).
    pub condition: String,
    /// Official success rate.
    pub success: Option<RateInterval>,
    /// Rate of committing to the recipient's own target (replacement study only).
    pub committed_own: Option<RateInterval>,
    /// Rate of committing to the donor's target, for conditions whose donor has another target
    /// (`donor_opposite`); `None` elsewhere.
    pub committed_donor: Option<RateInterval>,
}

/// Per-condition counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionSummary {
    /// Condition name.
    pub condition: String,
    /// Continuations.
    pub n: usize,
    /// Official successes.
    pub successes: usize,
    /// Committed to the recipient's own target.
    pub committed_own: usize,
    /// Committed to the donor's target (donor conditions with a different target only).
    pub committed_donor: usize,
    /// Committed to no tray (block farther than 5 cm from every tray at the end).
    pub committed_none: usize,
}

/// Result of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterventionStudy {
    /// Always [`INTERVENTIONS_SCHEMA`].
    pub schema: String,
    /// `replacement` or `restoration`.
    pub study: String,
    /// The configuration.
    pub config: InterventionConfig,
    /// Recipients skipped because a history did not reach the event (before any query).
    pub skipped: usize,
    /// Replacement only: own-history reconstruction gave a memory bit-identical to the native
    /// one for every recipient.
    pub own_reproduces_native: Option<bool>,
    /// Per condition.
    pub summary: Vec<ConditionSummary>,
    /// Per condition, in the order of `summary`: rates with layout-stratified bootstrap
    /// intervals (recipient clusters, layout-level strata; `config.bootstrap`).
    pub intervals: Vec<ConditionIntervals>,
    /// Every continuation.
    pub continuations: Vec<Continuation>,
}
