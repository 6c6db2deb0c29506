//! AUROC as the Mann–Whitney statistic (SPEC.md §0).

use crate::StatsError;
use serde::Serialize;

/// AUROC of `scores` against binary `labels`: P(score of a random positive > score of a random
/// negative), ties counted ½, optionally with non-negative `weights` (one per sample; the pair
/// (i, j) weighs `w_i · w_j`). Equals scikit-learn `roc_auc_score(labels, scores, sample_weight=weights)`
/// to 1e-12.
///
/// Returns `Ok(None)` when only one class is present (or one class has zero total weight): such a
/// sample has no AUROC and is ineligible, never 0.5.
///
/// # Errors
/// `Empty` for no samples, `LengthMismatch` when the slices differ in length, `NonFinite` for a
/// NaN/infinite score, `InvalidWeight` for a negative or non-finite weight.
///
/// Cost: O(n log n) (one sort).
pub fn auroc(scores: &[f64], labels: &[bool], weights: Option<&[f64]>) -> Result<Option<f64>, StatsError> {
    todo!("{scores:?} {labels:?} {weights:?}")
}

/// AUROC of one group in a [`GroupedAuroc`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupAuroc {
    /// The group label as given.
    pub group: usize,
    /// Number of samples in the group.
    pub n: usize,
    /// Number of positive samples.
    pub n_positive: usize,
    /// The group's AUROC; `None` when the group has a single class (ineligible).
    pub auroc: Option<f64>,
}

/// Per-group AUROC (for example within-query AUROC, one group per query scene).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupedAuroc {
    /// Every group present in the input, sorted by group label.
    pub groups: Vec<GroupAuroc>,
    /// Number of groups with both classes.
    pub n_eligible: usize,
    /// Unweighted mean AUROC over eligible groups; `None` when no group is eligible.
    pub mean: Option<f64>,
}

/// AUROC computed separately within each group (`groups[i]` is sample i's group label, any `usize`),
/// with the mean over the eligible groups. Same conventions and errors as [`auroc`].
pub fn grouped_auroc(
    scores: &[f64],
    labels: &[bool],
    groups: &[usize],
    weights: Option<&[f64]>,
) -> Result<GroupedAuroc, StatsError> {
    todo!("{scores:?} {labels:?} {groups:?} {weights:?}")
}
