//! Pearson, Spearman and Kendall tau-b correlations (SPEC.md §0), matching SciPy.

use crate::StatsError;

/// Pearson's r on raw values (`scipy.stats.pearsonr(x, y).statistic`).
///
/// Returns `Ok(None)` when either input is constant (r undefined). Value in [−1, 1].
///
/// # Errors
/// `LengthMismatch`, `NonFinite`, `TooFew` when n < 2.
pub fn pearson(x: &[f64], y: &[f64]) -> Result<Option<f64>, StatsError> {
    todo!("{x:?} {y:?}")
}

/// Spearman's ρ with average ranks for ties (`scipy.stats.spearmanr(x, y).statistic`).
/// `Ok(None)` when either input is constant. Errors as [`pearson`].
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Option<f64>, StatsError> {
    todo!("{x:?} {y:?}")
}

/// Kendall's tau-b (`scipy.stats.kendalltau(x, y, variant="b").statistic`), O(n log n).
/// `Ok(None)` when either input is constant. Errors as [`pearson`].
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Result<Option<f64>, StatsError> {
    todo!("{x:?} {y:?}")
}

/// Ranks 1..=n with ties given their average rank (`scipy.stats.rankdata(x, method="average")`).
///
/// # Errors
/// `NonFinite` for NaN/infinite input.
pub fn average_ranks(x: &[f64]) -> Result<Vec<f64>, StatsError> {
    todo!("{x:?}")
}
