//! Counterfactual memory audit (CMA, SPEC.md §2; seed paper 002, §III).
//!
//! Input: one [`MemoryRecord`] per (pair, memory, action seed, world), as read by
//! `roboaudit_data::read_memory_records`. A [`Plan`] (TOML, hashed with [`Plan::hash`])
//! fixes δ, the registered seeds, margins, distance, eligibility and bootstrap settings.
//! [`analyze`] computes sensitivity, action- and branch-change rates, correct-choice and
//! ambiguity rates, signed faithfulness `F`, matched-world values `V(m, w)`, `U1`, absolute
//! regret, per-pair reliability, pair-cluster bootstrap intervals and the positive rule into a
//! serializable [`MemoryAudit`]. [`equivalence_test`] serves the irrelevant-history control;
//! [`check_output_plan`] and [`check_records_plan`] refuse results whose plan changed.
//!
//! ```
//! use roboaudit_types::{MemoryLabel, MemoryRecord};
//! use roboaudit_memory::{Plan, analyze};
//!
//! // One pair, one seed, a memory-faithful policy: each memory's chunk goes to its own branch.
//! let mut records = Vec::new();
//! for memory in MemoryLabel::BOTH {
//!     for world in MemoryLabel::BOTH {
//!         let toward_world = if memory == world { 1.0 } else { 0.0 };
//!         records.push(MemoryRecord {
//!             pair_id: "p0".into(), memory, action_seed: 0, world,
//!             progress_warranted: toward_world, progress_other: 1.0 - toward_world,
//!             value: toward_world, action: vec![memory.index() as f32],
//!             present_equal: true, route: None, stratum: None, plan_hash: None,
//!         });
//!     }
//! }
//! let audit = analyze(&records, &Plan::default())?;
//! assert_eq!(audit.faithfulness.value, Some(1.0));
//! assert_eq!(audit.u1.value, Some(1.0));
//! assert_eq!(audit.reliable_pairs.bidirectional, 1);
//! # Ok::<(), roboaudit_memory::MemoryError>(())
//! ```

mod audit;
mod control;
mod equivalence;
mod error;
mod guard;
pub mod interventions;
pub mod natural;
mod pairs;
mod plan;
mod render;
mod report;

pub use audit::analyze;
pub use control::{CONTROL_SCHEMA, DEFAULT_MARGIN, RouteControl, route_control};
pub use equivalence::{Equivalence, equivalence_test};
pub use error::MemoryError;
pub use guard::{AUDIT_FILE, check_output_plan, check_records_plan};
pub use pairs::{Choice, Exclusion, branch_choice, check_excluded_pairs};
pub use plan::{BootstrapPlan, Distance, Eligibility, MAX_RESAMPLES, Plan, PlanSource};
pub use render::{render_compact_table, render_control_text, render_summary_markdown};
pub use report::{
    CrossedWorld, DirectionCounts, Estimate, MatchedWorldValue, MemoryAudit, PairReport,
    PositiveRule, Reliability, SCHEMA, SeedCount, Stratified, SubsetSummary,
};
pub use roboaudit_types::{MemoryLabel, MemoryRecord};
