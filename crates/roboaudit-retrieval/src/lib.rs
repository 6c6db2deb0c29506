//! Retrieval audit of roboaudit (SPEC.md §1, seed paper 000: "Beyond End-Task Success: How to
//! Audit Visual Experience Retrieval in Robotics").
//!
//! Given an execution log of every library experience in every query scene, the audit builds
//! the transfer matrix `P[e,s]`, the reference points (random, oracle, best-fixed, headroom),
//! runs the selection rules (visual nearest neighbour with cosine and L2, CSLS, mutual proximity,
//! random, oracle, best-fixed, recency, track record, structural, a user log), and reports for
//! each rule its success, advantage, selection distribution and concentration, the
//! frequency-matched shuffle and discrimination gap with a scene-bootstrap interval, pooled and
//! within-query AUROC, a power analysis of the shuffle test and library interventions.
//!
//! Entry point: [`run_audit`] with a [`CheckedConfig`] (or [`PreparedInputs`] once and
//! [`run_prepared`] for each config); render with [`render_summary_markdown`]
//! and [`render_compact_table`]. Every random draw is seeded; the report is byte-identical for
//! the same inputs and seed whatever the thread count. [`request::audit_request`] is the whole
//! `retrieval audit` command over input files (read by `roboaudit-data`), results written
//! atomically.
//!
//! ```
//! use roboaudit_retrieval::synthetic::{SyntheticSpec, generate};
//! use roboaudit_retrieval::{AuditConfig, render_compact_table, run_audit};
//!
//! let inputs = generate(&SyntheticSpec { experiences: 6, scenes: 8, seeds: 2, representations: 1, dim: 4, seed: 1 });
//! let config = AuditConfig { resamples: 500, permutations: 500, library_sizes: vec![3], ..AuditConfig::default() };
//! let report = run_audit(&inputs, &config.check()?)?;
//! assert_eq!(report.schema, "roboaudit.retrieval.v1");
//! let oracle = report.rules.iter().find(|r| r.family == roboaudit_retrieval::RuleFamily::Oracle).unwrap();
//! assert_eq!(oracle.success, report.reference.oracle);
//! println!("{}", render_compact_table(&report));
//! # Ok::<(), roboaudit_retrieval::RetrievalError>(())
//! ```

mod audit;
mod config;
mod draws;
mod error;
mod geometry;
mod inference;
mod interventions;
mod kernels;
mod matrix;
mod metrics;
mod pairwise;
mod prepared;
mod render;
mod report;
pub mod request;
mod rules;
mod shuffle;
#[cfg(any(test, feature = "synthetic"))]
pub mod synthetic;

pub use audit::{POWER_METHOD, TIE_BREAK, run_audit, run_prepared};
pub use config::{
    AuditConfig, CheckedConfig, CiMethod, DEFAULT_PERMUTATIONS, DEFAULT_RANDOM_SUBSETS,
    DEFAULT_RESAMPLES, Metric,
};
pub use error::RetrievalError;
pub use prepared::PreparedInputs;
pub use render::{fixed, render_compact_table, render_summary_markdown, signed};
pub use report::{
    AuditReport, ExperienceSummary, GapBySet, LibraryRun, PowerPoint, ReferenceBySet,
    ReferencePoints, RuleFamily, RuleReport, RuleRerun, SCHEMA, ShuffleReport, SizeIntervention,
    Skipped, SubsetSummary, TopPickDeletion, VarianceShare,
};

/// Seed of an independent random stream named `tag` under the master `seed` (FNV-1a of the tag,
/// mixed by SplitMix64), so each rule's draws do not depend on which other rules run or on
/// the thread count.
pub(crate) fn stream_seed(seed: u64, tag: &str) -> u64 {
    use roboaudit_types::seed::{Fnv1a, splitmix64};
    splitmix64(seed ^ Fnv1a::new().write(tag.as_bytes()).finish())
}

#[cfg(test)]
mod unit_tests;
