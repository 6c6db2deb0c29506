//! Input checks shared by the estimators.

use crate::StatsError;

/// `NonFinite` naming the first NaN or infinite value of `x`.
pub(crate) fn check_finite(x: &[f64], what: &'static str) -> Result<(), StatsError> {
    // A fold without an early exit compiles to vector code; the position is searched only
    // when there is something to find.
    if x.iter().fold(true, |ok, v| ok & v.is_finite()) {
        return Ok(());
    }
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

/// The integer whose signed order is `f64::total_cmp`'s order of `v` (the transform of
/// `f64::total_cmp` itself); a bijection (the quantiles undo it).
pub(crate) fn total_order_key(v: f64) -> i64 {
    // Cast: a reinterpretation of the bits is wanted
    let bits = v.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}
