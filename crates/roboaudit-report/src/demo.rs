//! The demo's `audit.json` (`roboaudit.demo.v1`): one type for the demo that writes it and the
//! report that reads it. The retrieval part (`tasks`) is the retrieval-only demo's layout; the
//! top-level file adds the memory, control and FQE headlines and the folders the report renders.
//!
//! The collection settings and library statistics of each task are the retrieval collector's
//! types, which this crate does not depend on: [`DemoTask`] is generic over them, and a reader
//! that does not need them (the report) takes them as [`serde::de::IgnoredAny`], the defaults.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// Schema tag of the demo's `audit.json` files (top level and `retrieval/`).
pub const DEMO_SCHEMA: &str = "roboaudit.demo.v1";

/// Size of the demo: `standard` or `small` (about a quarter of the work). Each variant's
/// documentation is its command-line help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum DemoScale {
    /// The default sizes.
    Standard,
    /// About a quarter of the work.
    Small,
}

/// One retrieval task of the demo. `C` is the collection's settings and `L` its library
/// statistics (`roboaudit_retrieval_collect::{CollectConfig, LibraryStats}` when written).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DemoTask<C = IgnoredAny, L = IgnoredAny> {
    /// Task name (`stack`, `door`).
    pub task: String,
    /// Reuse mechanism (seed 000 §II) as `retrieval collect --mechanism` names it: `replay`,
    /// `policy` or `policy-dr` (the collection's own field, for readers that skip `collection`).
    /// Files written before learned mechanisms hold Replay only and omit it.
    #[serde(default = "replay")]
    pub mechanism: String,
    /// The collection settings.
    pub collection: C,
    /// Library acceptance statistics.
    pub library: L,
    /// Run folder of the collection, relative to the folder of the `audit.json` holding it.
    pub run_dir: String,
    /// The retrieval audit of the task.
    pub audit: roboaudit_retrieval::AuditReport,
    /// Appearance-caused failures of the collection (docs/methods.md §1.8); absent in files
    /// written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appearance_caused_failures: Option<roboaudit_types::AppearanceFailures>,
}

fn replay() -> String {
    "replay".to_owned()
}

impl<C, L> DemoTask<C, L> {
    /// The task's name in the report and the headlines: the task for Replay (`stack`), else the
    /// task and the mechanism (`stack (policy-dr)`).
    #[must_use]
    pub fn display_name(&self) -> String {
        display_name(&self.task, &self.mechanism)
    }
}

/// `task` for Replay, else `task (mechanism)`: how the report and the demo's headlines name a
/// retrieval audit of one task under one reuse mechanism.
#[must_use]
pub fn display_name(task: &str, mechanism: &str) -> String {
    if mechanism == "replay" {
        task.to_owned()
    } else {
        format!("{task} ({mechanism})")
    }
}

/// Headline of one memory audit of the demo (one built-in policy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicySummary {
    /// Built-in policy name.
    pub policy: String,
    /// Audit folder relative to the demo folder.
    pub dir: String,
    /// Eligible pairs analysed.
    pub n_pairs: usize,
    /// Pairs excluded by the present check.
    pub n_excluded: usize,
    /// Action seeds per pair.
    pub seeds: usize,
    /// `mean 1[β = m]` (the warranted branch chosen), in [0, 1]; `null` when undefined.
    pub correct_choice_rate: Option<f64>,
    /// Signed faithfulness `F` in [−1, 1] with its pair-bootstrap interval.
    pub faithfulness: roboaudit_memory::Estimate,
    /// `U1` with its interval.
    pub u1: roboaudit_memory::Estimate,
    /// Fully reliable pairs (every memory and seed chose the warranted branch).
    pub reliable_pairs: usize,
    /// Whether the 95% interval of `F` lies above 0; `null` when undefined.
    pub positive_rule: Option<bool>,
}

impl PolicySummary {
    /// The headline of `audit`, run with `seeds` action seeds per pair, written to `dir`
    /// (relative to the demo folder).
    pub fn from_audit(
        policy: &str,
        dir: String,
        seeds: usize,
        audit: &roboaudit_memory::MemoryAudit,
    ) -> Self {
        PolicySummary {
            policy: policy.to_owned(),
            dir,
            n_pairs: audit.n_pairs,
            n_excluded: audit.n_excluded,
            seeds,
            correct_choice_rate: audit.correct_choice_rate,
            faithfulness: audit.faithfulness.clone(),
            u1: audit.u1.clone(),
            reliable_pairs: audit.reliable_pairs.bidirectional,
            positive_rule: audit.positive_rule.passed,
        }
    }
}

/// Headline of the demo's irrelevant-history control (docs/methods.md §2.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlSummary {
    /// Folder relative to the demo folder.
    pub dir: String,
    /// Pairs per route.
    pub pairs: usize,
    /// Nuisance effect (route main effect) and its 90% interval.
    pub nuisance: (f64, Option<[f64; 2]>),
    /// Interaction (change of F between routes) and its 90% interval.
    pub interaction: (f64, Option<[f64; 2]>),
    /// Equivalence margin (> 0).
    pub margin: f64,
    /// Semantic effect positive on every route and both effects equivalent to zero.
    pub passed: bool,
}

/// What became of the demo's shared report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportOutcome {
    /// Audit folders rendered, relative to the demo folder.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Always `report`: `index.html`, `report.md` and `report.json` written by this crate.
    #[serde(default)]
    pub kind: String,
}

/// The demo's `audit.json` (`roboaudit.demo.v1`), top level or `retrieval/`. Fields after
/// `tasks` are absent in `retrieval/audit.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DemoFile<C = IgnoredAny, L = IgnoredAny> {
    /// [`DEMO_SCHEMA`].
    pub schema: String,
    /// Demo size.
    pub scale: DemoScale,
    /// Retrieval audits: Stack and Door under Replay, then Stack under Policy and Policy+DR.
    pub tasks: Vec<DemoTask<C, L>>,
    /// Memory audits, one per policy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<PolicySummary>,
    /// The irrelevant-history control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_control: Option<ControlSummary>,
    /// The FQE headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fqe: Option<roboaudit_fqe::headline::FqeHeadline>,
    /// Folders rendered into the report, relative to the demo folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<ReportOutcome>,
}

impl<C, L> DemoFile<C, L> {
    /// The headline parts present beside the retrieval tasks, by field name in alphabetical
    /// order (`fqe`, `memory`, `memory_control`).
    pub fn headline_parts(&self) -> Vec<&'static str> {
        [
            ("fqe", self.fqe.is_some()),
            ("memory", !self.memory.is_empty()),
            ("memory_control", self.memory_control.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect()
    }
}
