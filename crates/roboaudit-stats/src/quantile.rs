//! Quantiles with NumPy's default ("linear", type 7) interpolation.

use crate::StatsError;

/// The `q`-quantile of `data`, `q` in [0, 1], equal to `numpy.quantile(data, q)` (method "linear").
///
/// # Errors
/// `Empty`, `NonFinite`, `InvalidParameter` when `q` is outside [0, 1].
pub fn quantile(data: &[f64], q: f64) -> Result<f64, StatsError> {
    todo!("{data:?} {q}")
}

/// Several quantiles of the same data with one sort. Same semantics and errors as [`quantile`].
pub fn quantiles(data: &[f64], qs: &[f64]) -> Result<Vec<f64>, StatsError> {
    todo!("{data:?} {qs:?}")
}
