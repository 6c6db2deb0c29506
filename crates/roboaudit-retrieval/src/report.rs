//! The serializable audit report (`schema = "roboaudit.retrieval.v1"`). Undefined values are
//! `null` with a sibling `*_reason` string, never NaN; intervals are `[lo, hi]`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema tag written into every report.
pub const SCHEMA: &str = "roboaudit.retrieval.v1";

/// Result of a retrieval audit (SPEC.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Number of query scenes n.
    pub n_scenes: usize,
    /// Library size K.
    pub n_experiences: usize,
    /// Executions of library × query cells used for `P` (own-base executions outside the
    /// query scenes are not counted).
    pub n_executions: usize,
    /// How ties are broken everywhere (argmax/argmin, top pick, best-fixed).
    pub tie_break: String,
    /// The settings the audit ran with.
    pub config: crate::AuditConfig,
    /// Reference points on all scenes.
    pub reference: ReferencePoints,
    /// Reference points per scene set.
    pub reference_by_set: ReferenceBySet,
    /// Scene- and experience-difficulty shares of the variance of `P`.
    pub variance_share: VarianceShare,
    /// Spearman ρ between own-base success and `q(e)` without the base scene; `null` if undefined.
    pub own_base_spearman: Option<f64>,
    /// Why `own_base_spearman` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub own_base_spearman_reason: Option<String>,
    /// Experiences entering the own-base correlation.
    pub own_base_n: usize,
    /// Per-experience quality, library order.
    pub experiences: Vec<ExperienceSummary>,
    /// Every rule that ran, in a fixed order.
    pub rules: Vec<RuleReport>,
    /// Rules that could not run, with the reason.
    pub skipped_rules: Vec<Skipped>,
    /// Library-size interventions (label-informed diagnostics, never retrieval methods).
    pub library_interventions: Vec<SizeIntervention>,
    /// How the shuffle-test power analysis plants gaps.
    pub power_method: String,
    /// The task and reuse mechanism of the run folder audited, with its appearance-caused
    /// failures, when the caller knows them ([`crate::request::AuditRequest::origin`]: `retrieval
    /// audit --run` on a finished `retrieval collect` folder); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run: Option<roboaudit_types::TaskMechanism>,
}

/// Reference points of one library on one scene set (SPEC.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferencePoints {
    /// Scenes in the set.
    pub n_scenes: usize,
    /// `R = mean_{e,s} P[e,s]`, in [0, 1].
    pub random: f64,
    /// `O = mean_s max_e P[e,s]`.
    pub oracle: f64,
    /// `BF = max_e q(e)` (hindsight, not deployable).
    pub best_fixed: f64,
    /// The best-fixed experience (lowest library index among ties).
    pub best_fixed_experience: String,
    /// `O − BF`.
    pub headroom: f64,
    /// `(BF − R)/(O − R)`; null when `O = R`.
    pub best_fixed_advantage: Option<f64>,
    /// Why `best_fixed_advantage` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub best_fixed_advantage_reason: Option<String>,
    /// `O − R` is below the stability threshold (0.05 by default).
    pub advantage_unstable: bool,
    /// The oracle's top-pick share with tied maxima counted fractionally.
    pub oracle_top_pick_share: f64,
}

/// Reference points on all, appearance-perturbed, layout-perturbed and fresh scenes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceBySet {
    /// All query scenes.
    pub all: ReferencePoints,
    /// Appearance-perturbed scenes; null when there are none.
    pub appearance: Option<ReferencePoints>,
    /// Why `appearance` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub appearance_reason: Option<String>,
    /// Layout-perturbed scenes; null when there are none.
    pub layout: Option<ReferencePoints>,
    /// Why `layout` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub layout_reason: Option<String>,
    /// Fresh scenes (new layout and appearance), SPEC.md §1 "per scene set"; absent from the JSON when
    /// the query set has none (and in reports written before it was added).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fresh: Option<ReferencePoints>,
}

/// Variance shares of `P` (SPEC.md §1), each in [0, 1]; null when `P` is constant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarianceShare {
    /// `Σ_s K (p̄_s − p̄)² / Σ_{e,s} (P − p̄)²`.
    pub scene: Option<f64>,
    /// `Σ_e n (q_e − p̄)² / Σ_{e,s} (P − p̄)²`.
    pub experience: Option<f64>,
    /// Why the shares are null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

/// One experience's quality and own-base success.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperienceSummary {
    /// Experience id.
    pub id: String,
    /// `q(e)` over all query scenes.
    pub quality: f64,
    /// Own-base success, when known.
    pub own_base_success: Option<f64>,
}

/// A rule that did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// Rule name.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// Frequency-matched shuffle of a rule's selections (SPEC.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShuffleReport {
    /// Exact expected shuffled success `Σ_e f(e) q(e)`.
    pub expected: f64,
    /// `[lo, hi]`: the (1−level)/2 and (1+level)/2 quantiles of shuffled success.
    pub envelope: [f64; 2],
    /// Whether the rule's success lies inside the envelope (bounds inclusive).
    pub inside: bool,
    /// Permutations drawn.
    pub permutations: usize,
}

/// Shuffle-test power at one planted-gap rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerPoint {
    /// Fraction of scenes whose selections are re-assigned greedily by `P` (the planted signal).
    pub rate: f64,
    /// Mean planted discrimination gap over replicates.
    pub mean_planted_gap: f64,
    /// Fraction of replicates whose success falls outside the rule's shuffle envelope.
    pub detection_rate: f64,
    /// Replicates.
    pub replicates: usize,
}

/// A rule re-run on a changed library (cheap point diagnostics only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleRerun {
    /// Rule name.
    pub name: String,
    /// Success on the changed library.
    pub success: f64,
    /// Advantage against the changed library's reference points; null when `O = R`.
    pub advantage: Option<f64>,
    /// `O − R` below the stability threshold.
    pub advantage_unstable: bool,
    /// Most-selected experience.
    pub top_pick: String,
    /// Its share.
    pub top_pick_share: f64,
    /// Concentration ratio `T / T_O`.
    pub concentration: f64,
    /// Discrimination gap.
    pub gap: f64,
}

/// Top-pick deletion: the rule re-run without its top pick (SPEC.md §1 interventions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopPickDeletion {
    /// The deleted experience.
    pub removed: String,
    /// Random / oracle reference of the reduced library.
    pub random: f64,
    /// Oracle of the reduced library.
    pub oracle: f64,
    /// The re-run.
    pub rerun: RuleRerun,
}

/// Which rule a [`RuleReport`] describes, without its representation: what readers of a report
/// test instead of the rule's name. Serialized in snake_case (`best_fixed`, `mp_empirical`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleFamily {
    /// Uniform random selection: the lower reference.
    Random,
    /// The best experience per query scene: the upper reference.
    Oracle,
    /// The one experience best on average over the query scenes.
    BestFixed,
    /// The most recently recorded experience.
    Recency,
    /// The experience with the best success in its own recording.
    TrackRecord,
    /// Nearest neighbour (cosine or L2) in a representation.
    Nn,
    /// Cross-domain similarity local scaling in a representation.
    Csls,
    /// Mahalanobis-style proximity with the empirical covariance.
    MpEmpirical,
    /// Mahalanobis-style proximity with a Gaussian fit.
    MpGaussian,
    /// Nearest neighbour in the structural (object-pose) representation.
    Structural,
    /// The user's own selection log.
    UserSelection,
}

impl RuleFamily {
    /// Random, oracle and best-fixed: the references every selection rule is judged against
    /// (SPEC.md §1), not selection rules themselves.
    #[must_use]
    pub fn is_reference(self) -> bool {
        matches!(self, Self::Random | Self::Oracle | Self::BestFixed)
    }
}

/// Diagnostics of one rule (SPEC.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleReport {
    /// `random`, `oracle`, `best_fixed`, `recency`, `track_record`, `nn/<rep>/cosine`,
    /// `nn/<rep>/l2`, `csls/<rep>`, `mp_empirical/<rep>`, `mp_gaussian/<rep>`,
    /// `structural/<rep>` or `user_selection`.
    pub name: String,
    /// The rule without its representation.
    pub family: RuleFamily,
    /// Representation of a geometric rule.
    pub representation: Option<String>,
    /// `SR = mean_s P[sel(s), s]`.
    pub success: f64,
    /// `(SR − R)/(O − R)`; null when `O = R`.
    pub advantage: Option<f64>,
    /// Why `advantage` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub advantage_reason: Option<String>,
    /// `O − R < 0.05` (configurable).
    pub advantage_unstable: bool,
    /// Chosen experience per query scene, scene file order.
    pub choices: Vec<String>,
    /// Selection distribution: experience id → share (selected experiences only).
    pub selection: BTreeMap<String, f64>,
    /// Most-selected experience (lowest library index among ties).
    pub top_pick: String,
    /// `T`.
    pub top_pick_share: f64,
    /// `T_O` (fractional ties).
    pub oracle_top_pick_share: f64,
    /// `C = T / T_O`.
    pub concentration: f64,
    /// `q(top) − mean_e q(e)`.
    pub top_pick_margin: f64,
    /// Selection entropy in nats.
    pub entropy: f64,
    /// `exp(entropy)`.
    pub effective_number: f64,
    /// Frequency-matched shuffle.
    pub shuffle: ShuffleReport,
    /// `G = SR − Σ f q`.
    pub gap: f64,
    /// Scene-bootstrap interval of `G` (cluster = scene).
    pub gap_ci: Option<[f64; 2]>,
    /// Why `gap_ci` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gap_ci_reason: Option<String>,
    /// Whether `gap_ci` excludes 0.
    pub gap_significant: Option<bool>,
    /// `G` recomputed within the appearance- and layout-perturbed scenes.
    pub gap_by_set: GapBySet,
    /// The score behind both AUROCs (see `auroc_score`).
    pub auroc_score: Option<String>,
    /// AUROC of the score against success, one sample per execution.
    pub pooled_auroc: Option<f64>,
    /// Why `pooled_auroc` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pooled_auroc_reason: Option<String>,
    /// Mean per-scene AUROC over eligible scenes (both outcomes present).
    pub within_query_auroc: Option<f64>,
    /// Why `within_query_auroc` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub within_query_auroc_reason: Option<String>,
    /// Eligible scenes; null for rules without a score.
    pub within_query_eligible: Option<usize>,
    /// Scene-bootstrap interval of the within-query AUROC.
    pub within_query_ci: Option<[f64; 2]>,
    /// Shuffle-test power at the configured planted rates.
    pub power: Vec<PowerPoint>,
    /// The rule without its top pick; null when not re-runnable or K = 1.
    pub top_pick_deletion: Option<TopPickDeletion>,
    /// Why `top_pick_deletion` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub top_pick_deletion_reason: Option<String>,
}

/// Discrimination gap recomputed within a scene subset (`f`, `q` and `SR` on that subset only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapBySet {
    /// Appearance-perturbed scenes; null when there are none.
    pub appearance: Option<f64>,
    /// Layout-perturbed scenes; null when there are none.
    pub layout: Option<f64>,
    /// Why a subset gap is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

/// Random K-subset summary of one rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubsetSummary {
    /// Rule name.
    pub name: String,
    /// Fraction of subsets with `C > 1`.
    pub fraction_concentration_above_1: f64,
    /// Mean concentration ratio.
    pub mean_concentration: f64,
    /// Mean discrimination gap.
    pub mean_gap: f64,
    /// Mean advantage over subsets where it is defined; null when never defined.
    pub mean_advantage: Option<f64>,
}

/// Interventions at one library size K' (SPEC.md §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeIntervention {
    /// K'.
    pub size: usize,
    /// Null when K' is not below the library size.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// The first K' experiences in library order.
    pub nested: Option<LibraryRun>,
    /// The K' experiences with the narrowest range of `q`.
    pub quality_equalized: Option<LibraryRun>,
    /// Number of random K'-subsets drawn.
    pub random_subsets: usize,
    /// Per-rule summary over the random subsets.
    pub random_subset_rules: Vec<SubsetSummary>,
}

/// All re-runnable rules on one changed library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryRun {
    /// Member experiences, library order.
    pub experiences: Vec<String>,
    /// Range `max q − min q` of the members (q over all scenes).
    pub quality_range: f64,
    /// Reference points of this library on all scenes.
    pub reference: ReferencePoints,
    /// The re-runs.
    pub rules: Vec<RuleRerun>,
}
