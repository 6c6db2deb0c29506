//! Off-policy evaluator metrics (SPEC.md §3): ARE, normalized regret@k, MMRV.

use crate::StatsError;
use crate::check::{check_finite, check_same_len, sort_key};

/// Absolute relative error `|estimate − truth| / |truth|` (SPEC §3; `truth` is a value `V ≥ 0`
/// there, where this is `|V̂ − V| / V`). Value ≥ 0.
///
/// Returns `Ok(None)` when `truth == 0` (undefined; the caller flags it).
///
/// # Errors
/// `NonFinite` for NaN/infinite input.
pub fn absolute_relative_error(estimate: f64, truth: f64) -> Result<Option<f64>, StatsError> {
    check_finite(&[estimate], "estimate")?;
    check_finite(&[truth], "truth")?;
    if truth == 0.0 {
        return Ok(None);
    }
    Ok(Some((estimate - truth).abs() / truth.abs()))
}

/// Normalized regret@k (DOPE): `(max V − max_{top-k by V̂} V) / max V`, where `estimates[i]` is V̂
/// and `truths[i]` is V of policy i. Ties in V̂ at the k-th place are broken by the lower index.
/// Value in [0, 1] for non-negative truths. `Ok(None)` when `max V == 0` (and, since the
/// normalization then has no meaning, when `max V < 0`).
///
/// # Errors
/// `LengthMismatch`, `Empty`, `NonFinite`, `InvalidParameter` when `k == 0` or `k > n`.
pub fn normalized_regret_at_k(
    estimates: &[f64],
    truths: &[f64],
    k: usize,
) -> Result<Option<f64>, StatsError> {
    check_metric_inputs(estimates, truths)?;
    let n = estimates.len();
    if k == 0 || k > n {
        return Err(StatsError::InvalidParameter(format!(
            "regret@k needs 1 <= k <= n = {n}, got k = {k}"
        )));
    }
    let max_truth = truths.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max_truth <= 0.0 {
        return Ok(None);
    }
    let mut order: Vec<usize> = (0..n).collect();
    // Stable sort, descending estimate: equal estimates keep the lower index first.
    order.sort_by(|&a, &b| sort_key(estimates[b]).total_cmp(&sort_key(estimates[a])));
    let best_of_top_k = order[..k]
        .iter()
        .map(|&i| truths[i])
        .fold(f64::NEG_INFINITY, f64::max);
    Ok(Some((max_truth - best_of_top_k) / max_truth))
}

/// Mean maximum rank violation (SimplerEnv):
/// `(1/N) Σ_i max_j 1[(V̂_i > V̂_j) ≠ (V_i > V_j)] · |V_i − V_j|`, strict comparisons.
/// Value ≥ 0, in the units of V. O(N²).
///
/// # Errors
/// `LengthMismatch`, `Empty`, `NonFinite`.
pub fn mmrv(estimates: &[f64], truths: &[f64]) -> Result<f64, StatsError> {
    check_metric_inputs(estimates, truths)?;
    let total: f64 = (0..estimates.len())
        .map(|i| {
            (0..estimates.len())
                .filter(|&j| (estimates[i] > estimates[j]) != (truths[i] > truths[j]))
                .map(|j| (truths[i] - truths[j]).abs())
                .fold(0.0, f64::max)
        })
        .sum();
    Ok(total / estimates.len() as f64)
}

fn check_metric_inputs(estimates: &[f64], truths: &[f64]) -> Result<(), StatsError> {
    check_same_len("estimates", estimates.len(), "truths", truths.len())?;
    if estimates.is_empty() {
        return Err(StatsError::Empty { what: "estimates" });
    }
    check_finite(estimates, "estimates")?;
    check_finite(truths, "truths")
}
