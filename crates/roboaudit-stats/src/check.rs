//! Input checks shared by the estimators.

use crate::StatsError;

/// `NonFinite` naming the first NaN or infinite value of `x`.
pub(crate) fn check_finite(x: &[f64], what: &'static str) -> Result<(), StatsError> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite { what, index }),
        None => Ok(()),
    }
}

/// `LengthMismatch` unless both lengths agree.
pub(crate) fn check_same_len(
    left: &'static str,
    left_len: usize,
    right: &'static str,
    right_len: usize,
) -> Result<(), StatsError> {
    if left_len == right_len {
        Ok(())
    } else {
        Err(StatsError::LengthMismatch {
            left,
            left_len,
            right,
            right_len,
        })
    }
}

/// Maps −0.0 to +0.0 so that `f64::total_cmp` treats the two zeros as the tie they are.
pub(crate) fn sort_key(x: f64) -> f64 {
    x + 0.0
}
