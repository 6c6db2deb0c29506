//! Off-policy evaluator metrics (SPEC.md §3): ARE, normalized regret@k, MMRV.

use crate::StatsError;

/// Absolute relative error `|estimate − truth| / truth`.
///
/// Returns `Ok(None)` when `truth == 0` (undefined; the caller flags it).
///
/// # Errors
/// `NonFinite` for NaN/infinite input.
pub fn absolute_relative_error(estimate: f64, truth: f64) -> Result<Option<f64>, StatsError> {
    todo!("{estimate} {truth}")
}

/// Normalized regret@k (DOPE): `(max V − max_{top-k by V̂} V) / max V`, where `estimates[i]` is V̂
/// and `truths[i]` is V of policy i. Ties in V̂ at the k-th place are broken by the lower index.
/// Value in [0, 1] for non-negative truths. `Ok(None)` when `max V == 0`.
///
/// # Errors
/// `LengthMismatch`, `Empty`, `NonFinite`, `InvalidParameter` when `k == 0` or `k > n`.
pub fn normalized_regret_at_k(estimates: &[f64], truths: &[f64], k: usize) -> Result<Option<f64>, StatsError> {
    todo!("{estimates:?} {truths:?} {k}")
}

/// Mean maximum rank violation (SimplerEnv):
/// `(1/N) Σ_i max_j 1[(V̂_i > V̂_j) ≠ (V_i > V_j)] · |V_i − V_j|`, strict comparisons.
///
/// # Errors
/// `LengthMismatch`, `Empty`, `NonFinite`.
pub fn mmrv(estimates: &[f64], truths: &[f64]) -> Result<f64, StatsError> {
    todo!("{estimates:?} {truths:?}")
}
