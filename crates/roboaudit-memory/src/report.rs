//! The serializable audit (`schema = "roboaudit.memory.v1"`). Undefined values are `null`
//! with a reason, never NaN; intervals are `[lo, hi]` with their level and cluster named.

use serde::{Deserialize, Serialize};

use crate::pairs::{Choice, Exclusion};
use crate::{Plan, PlanSource};

/// Schema tag written into every audit.
pub const SCHEMA: &str = "roboaudit.memory.v1";

/// A bootstrap estimate (SPEC.md §2 inference: cluster = pair, percentile interval).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Point estimate on all eligible pairs; `null` when undefined.
    pub value: Option<f64>,
    /// Percentile bootstrap interval `[lo, hi]`; `null` when undefined.
    pub ci: Option<[f64; 2]>,
    /// Confidence level of `ci`.
    pub level: f64,
    /// The resampled unit: always `pair`.
    pub cluster: String,
    /// Bootstrap resamples drawn.
    pub resamples: usize,
    /// Why `value` or `ci` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

/// `V(m, w) = mean_{p,k} v(a_{p,m,k}, w)`; the key names memory then world (`AB` = memory A
/// executed in world B).
#[allow(non_snake_case)] // the keys are the paper's (memory, world) labels
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchedWorldValue {
    /// `V(A, A)`.
    pub AA: Option<f64>,
    /// `V(A, B)`.
    pub AB: Option<f64>,
    /// `V(B, A)`.
    pub BA: Option<f64>,
    /// `V(B, B)`.
    pub BB: Option<f64>,
}

/// Crossed-world agreement: the record of `a_{p,m,k}` in world `w ≠ m` must name the same
/// branch as its matched-world record (SPEC.md §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossedWorld {
    /// Actions checked (`2 · pairs · seeds`).
    pub n_actions: usize,
    /// Actions whose crossed-world branch differs from the matched-world one.
    pub disagreements: usize,
    /// `disagreements / n_actions`; null without actions.
    pub disagreement_rate: Option<f64>,
}

/// Fully reliable pairs with one direction fully correct, per direction.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionCounts {
    /// Pairs with `β(a_{p,A,k}) = A` for every seed.
    pub A: usize,
    /// Pairs with `β(a_{p,B,k}) = B` for every seed.
    pub B: usize,
}

/// Pairs correct in both directions at one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedCount {
    /// The action seed.
    pub seed: i64,
    /// Pairs with both memories correct at this seed.
    pub pairs: usize,
}

/// Per-pair reliability (SPEC.md §2): bidirectional count with direction and seed breakdowns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reliability {
    /// Pairs correct for both memories and every registered seed.
    pub bidirectional: usize,
    /// Eligible pairs.
    pub n_pairs: usize,
    /// `bidirectional / n_pairs`; null without pairs.
    pub fraction: Option<f64>,
    /// Direction breakdown.
    pub by_direction: DirectionCounts,
    /// Seed breakdown, in seed order.
    pub by_seed: Vec<SeedCount>,
}

/// The positive rule (SPEC.md §2): the CI of `F` at the plan's level lies above 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositiveRule {
    /// The rule in words.
    pub rule: String,
    /// Whether it holds; null when the interval is undefined.
    pub passed: Option<bool>,
    /// Why `passed` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

/// Point estimates on one subset of pairs (a layout stratum or a detour route).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubsetSummary {
    /// The stratum or route value.
    pub name: String,
    /// Pairs in the subset.
    pub n_pairs: usize,
    /// Correct-choice rate.
    pub correct_choice_rate: f64,
    /// `F` on the subset, with a pair-bootstrap interval within the subset.
    pub faithfulness: Estimate,
    /// `U1` on the subset.
    pub u1: f64,
    /// Positive rule on the subset.
    pub positive_rule: PositiveRule,
}

/// Layout-stratified inference (present when every eligible pair has a `stratum`): pairs
/// are resampled within their stratum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stratified {
    /// `F` with a stratified pair-bootstrap interval.
    pub faithfulness: Estimate,
    /// `U1` with a stratified pair-bootstrap interval.
    pub u1: Estimate,
    /// Per-stratum estimates, by stratum name.
    pub strata: Vec<SubsetSummary>,
}

/// One eligible pair's decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairReport {
    /// The pair.
    pub pair_id: String,
    /// `choices[k] = [β(a_{p,A,k}), β(a_{p,B,k})]`, in seed order.
    pub choices: Vec<[Choice; 2]>,
    /// Fully reliable (both directions, every seed).
    pub reliable: bool,
    /// The pair's mean signed score `s`.
    pub faithfulness: f64,
    /// The pair's `U1` contribution.
    pub u1: f64,
    /// Crossed-world disagreements of the pair.
    pub crossed_disagreements: usize,
}

/// Result of a counterfactual memory audit (SPEC.md §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryAudit {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// [`Plan::hash`] of the plan the audit ran under.
    pub plan_hash: String,
    /// `file` or `defaults`.
    pub plan_source: PlanSource,
    /// The plan itself.
    pub plan: Plan,
    /// Notes on how to read this audit (e.g. that the defaults of SPEC.md §2 apply).
    pub notes: Vec<String>,
    /// Records read (all pairs).
    pub n_records: usize,
    /// Eligible pairs analysed.
    pub n_pairs: usize,
    /// Pairs excluded (failed present check or excluded by plan), never analysed or replaced.
    pub n_excluded: usize,
    /// The excluded pairs and why.
    pub excluded: Vec<Exclusion>,
    /// Audited action seeds.
    pub seeds: Vec<i64>,
    /// Flattened action-chunk dimension; null without eligible pairs.
    pub action_dim: Option<usize>,
    /// Why the metrics below are null (no or too few eligible pairs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub undefined_reason: Option<String>,
    /// `S = mean_{p,k} ‖a_{p,A,k} − a_{p,B,k}‖₂`.
    pub sensitivity: Option<f64>,
    /// Share of (pair, seed) whose two chunks differ by more than the plan's tolerance.
    pub action_change_rate: Option<f64>,
    /// Share of (pair, seed) whose two memories' branch choices differ (`none` counts as a choice).
    pub branch_change_rate: Option<f64>,
    /// `mean 1[β(a_{p,m,k}) = m]`.
    pub correct_choice_rate: Option<f64>,
    /// `mean 1[β(a_{p,m,k}) = other branch]`.
    pub wrong_choice_rate: Option<f64>,
    /// `mean 1[β = none]`.
    pub ambiguity_rate: Option<f64>,
    /// Crossed-world agreement.
    pub crossed_world: CrossedWorld,
    /// Signed faithfulness `F = mean s`.
    pub faithfulness: Estimate,
    /// `V(m, w)`.
    pub matched_world_value: MatchedWorldValue,
    /// `U1 = ½[V(A,A) + V(B,B) − V(A,B) − V(B,A)]`.
    pub u1: Estimate,
    /// Absolute regret `mean (1 − v(a_{p,m,k}, m))`.
    pub regret: Option<f64>,
    /// Per-pair reliability.
    pub reliable_pairs: Reliability,
    /// The positive rule on `F`.
    pub positive_rule: PositiveRule,
    /// Layout-stratified intervals, when every eligible pair has a stratum.
    pub stratified: Option<Stratified>,
    /// Per-route estimates (irrelevant-history control), when pairs have routes.
    pub by_route: Vec<SubsetSummary>,
    /// Every eligible pair's decisions, by pair id.
    pub pairs: Vec<PairReport>,
}
