//! Quantiles with NumPy's default ("linear", type 7) interpolation.

use crate::StatsError;
use crate::check::{check_finite, sort_key};

/// The `q`-quantile of `data`, `q` in [0, 1], equal to `numpy.quantile(data, q)` (method "linear").
///
/// # Errors
/// `Empty`, `NonFinite`, `InvalidParameter` when `q` is outside [0, 1].
pub fn quantile(data: &[f64], q: f64) -> Result<f64, StatsError> {
    let out = quantiles(data, &[q])?;
    out.first()
        .copied()
        .ok_or_else(|| StatsError::InvalidParameter("quantile: no result".to_owned()))
}

/// Several quantiles of the same data with one sort. Same semantics and errors as [`quantile`].
pub fn quantiles(data: &[f64], qs: &[f64]) -> Result<Vec<f64>, StatsError> {
    if data.is_empty() {
        return Err(StatsError::Empty { what: "data" });
    }
    check_finite(data, "data")?;
    for &q in qs {
        check_q(q)?;
    }
    let sorted = sorted_copy(data);
    Ok(qs.iter().map(|&q| quantile_sorted(&sorted, q)).collect())
}

/// `numpy.percentile(data, p)` for `p` in [0, 100]: NumPy divides by 100 first, and so does this,
/// so that an interval matches SciPy bit for bit. Same errors as [`quantile`] (for `p / 100`).
pub fn percentile(data: &[f64], p: f64) -> Result<f64, StatsError> {
    quantile(data, p / 100.0)
}

pub(crate) fn check_q(q: f64) -> Result<(), StatsError> {
    if (0.0..=1.0).contains(&q) {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter(format!(
            "quantile level {q} is outside [0, 1]"
        )))
    }
}

/// Ascending copy (−0.0 and 0.0 compare equal; the caller has rejected NaN).
pub(crate) fn sorted_copy(data: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = data.iter().map(|&x| sort_key(x)).collect();
    sorted.sort_unstable_by(f64::total_cmp);
    sorted
}

/// Linear interpolation on ascending, non-empty, finite data, replicating NumPy's `_quantile`
/// and `_lerp` operation by operation (`q` in [0, 1] checked by the caller).
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let last = sorted[n - 1];
    #[allow(clippy::cast_precision_loss)] // n < 2^53 for any data that fits in memory
    let virtual_index = (n - 1) as f64 * q;
    if virtual_index >= (n - 1) as f64 {
        return last;
    }
    let previous = virtual_index.floor();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 <= previous < n - 1
    let i = previous as usize;
    let gamma = virtual_index - previous;
    let (a, b) = (sorted[i], sorted[i + 1]);
    let diff = b - a;
    // NumPy's _lerp switches formula at gamma = 0.5 for monotonicity; copied for bitwise equality.
    if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    }
}
