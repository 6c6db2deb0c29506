//! Quantiles with NumPy's default ("linear", type 7) interpolation.

use crate::StatsError;
use crate::check::{check_finite, check_same_len, sort_key};
use crate::select::order_statistics;
use crate::wide::{WideKernel, run_wide};
#[cfg(test)]
use crate::{check::total_order_key, select::from_total_order_key};

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

/// As [`quantiles`], without a copy or a sort: `data` is reordered in place and each level is found
/// by selection (two order statistics, O(n)), for callers that take quantiles of thousands of
/// replicate vectors. Bit-identical to [`quantiles`] (same index arithmetic and interpolation);
/// −0.0 is rewritten to +0.0, which NumPy's sort does not distinguish either.
///
/// # Errors
/// As [`quantiles`].
pub fn quantiles_in_place(data: &mut [f64], qs: &[f64]) -> Result<Vec<f64>, StatsError> {
    if data.is_empty() {
        return Err(StatsError::Empty { what: "data" });
    }
    for &q in qs {
        check_q(q)?;
    }
    // Both passes over the data in 256-bit registers where the CPU has them: for the thousands
    // of replicate vectors of an audit they are a good part of the cost.
    if !run_wide(SortKeys { data }) {
        check_finite(data, "data")?;
    }
    Ok(quantiles_selected(data, qs))
}

/// [`quantiles`] of data given as a histogram: `counts[i]` copies of `values[i]`, the values
/// finite and strictly ascending (so the data sorted is the values repeated by their counts):
/// the same order statistics and interpolation as [`quantiles`] on the expanded data, bit for
/// bit, in `O(values)` (for replicates that take few distinct values, such as successes that are
/// whole numbers of executions over a fixed count).
///
/// # Errors
/// `Empty` when all counts are 0; `LengthMismatch` for slices of different lengths;
/// `NonFinite` for a non-finite value; `InvalidParameter` for values not strictly ascending or
/// a level outside [0, 1].
///
/// # Example
/// ```
/// use roboaudit_stats::{quantiles, quantiles_of_histogram};
/// let (values, counts) = ([0.25, 0.5, 1.0], [2, 0, 3]);
/// let expanded = [0.25, 0.25, 1.0, 1.0, 1.0];
/// assert_eq!(
///     quantiles_of_histogram(&values, &counts, &[0.1, 0.6])?,
///     quantiles(&expanded, &[0.1, 0.6])?,
/// );
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn quantiles_of_histogram(
    values: &[f64],
    counts: &[u64],
    qs: &[f64],
) -> Result<Vec<f64>, StatsError> {
    check_same_len("values", values.len(), "counts", counts.len())?;
    check_finite(values, "values")?;
    if values.windows(2).any(|w| w[0] >= w[1]) {
        return Err(StatsError::InvalidParameter(
            "histogram values must be strictly ascending".to_owned(),
        ));
    }
    for &q in qs {
        check_q(q)?;
    }
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return Err(StatsError::Empty { what: "data" });
    }
    // The value at rank `r` (0-based) of the expanded, sorted data.
    let at_rank = |r: u64| {
        let mut seen = 0;
        for (&v, &c) in values.iter().zip(counts) {
            seen += c;
            if r < seen {
                return sort_key(v);
            }
        }
        f64::NAN
    };
    // Cast: counts are far below 2^53
    let last = (total - 1) as f64;
    Ok(qs
        .iter()
        .map(|&q| {
            // `quantile_sorted`'s index arithmetic and NumPy's _lerp, operation by operation.
            let virtual_index = last * q;
            if virtual_index >= last {
                return at_rank(total - 1);
            }
            let previous = virtual_index.floor();
            let i = previous as u64; // 0 <= previous < total - 1
            let gamma = virtual_index - previous;
            let (a, b) = (at_rank(i), at_rank(i + 1));
            let diff = b - a;
            if gamma >= 0.5 {
                b - diff * (1.0 - gamma)
            } else {
                a + diff * gamma
            }
        })
        .collect())
}

/// Maps every value to its [`sort_key`] (−0.0 to +0.0; NaN and infinities unchanged) and tells
/// whether all are finite.
struct SortKeys<'a> {
    data: &'a mut [f64],
}

impl WideKernel for SortKeys<'_> {
    type Output = bool;

    #[inline(always)]
    fn run(self) -> bool {
        // One pass without an early exit (it compiles to vector code): the keys are written as
        // the values are checked. `sort_key` keeps a NaN or infinity as it is, so the caller's
        // error still finds it.
        let mut finite = true;
        for v in self.data.iter_mut() {
            finite &= v.is_finite();
            *v = sort_key(*v);
        }
        finite
    }
}

/// The quantile levels `np.percentile` uses for a two-sided interval at `level`:
/// `100·α/2` and `100·(1 − α/2)` percent with `α = 1 − level`, divided by 100 again as NumPy does
/// (`(100·q)/100` is not always `q` in floating point, and intervals must match SciPy bit for bit).
pub fn percentile_levels(level: f64) -> [f64; 2] {
    let alpha = (1.0 - level) / 2.0;
    [alpha, 1.0 - alpha].map(|q| ((q * 100.0) / 100.0).clamp(0.0, 1.0))
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
    // Cast: n < 2^53 for any data that fits in memory
    let virtual_index = (n - 1) as f64 * q;
    if virtual_index >= (n - 1) as f64 {
        return last;
    }
    let previous = virtual_index.floor();
    // Cast: 0 <= previous < n - 1
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

/// [`quantile_sorted`] for several levels on non-empty, finite `keys` in any order (they are
/// permuted; −0.0 already mapped to +0.0): the order statistics the levels need are found by
/// selection instead of a sort ([`order_statistics`]: a sample bracket per tail and one pass,
/// with a full selection as the fallback). The index arithmetic and interpolation are
/// [`quantile_sorted`]'s, operation by operation, so the values are its bits.
pub(crate) fn quantiles_selected(keys: &mut [f64], qs: &[f64]) -> Vec<f64> {
    let n = keys.len();
    // (lower index, gamma) per level; `None` for a level at the top (the maximum)
    // Cast: n < 2^53 for any data that fits in memory; 0 <= previous < n - 1
    let plan: Vec<Option<(usize, f64)>> = qs
        .iter()
        .map(|&q| {
            let virtual_index = (n - 1) as f64 * q;
            (virtual_index < (n - 1) as f64).then(|| {
                let previous = virtual_index.floor();
                (previous as usize, virtual_index - previous)
            })
        })
        .collect();
    let mut needed: Vec<usize> = plan
        .iter()
        .flatten()
        .flat_map(|&(i, _)| [i, i + 1])
        .collect();
    needed.sort_unstable();
    needed.dedup();
    let order_stats = order_statistics(keys, &needed);
    let stat = |i: usize| {
        needed
            .binary_search(&i)
            .map_or(f64::NAN, |at| order_stats[at])
    };
    let max = || keys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // `keys` is documented as permuted; it is left as given, which is one permutation.
    plan.iter()
        .map(|level| match *level {
            None => max(),
            Some((i, gamma)) => {
                let (a, b) = (stat(i), stat(i + 1));
                let diff = b - a;
                // NumPy's _lerp switches formula at gamma = 0.5 for monotonicity.
                if gamma >= 0.5 {
                    b - diff * (1.0 - gamma)
                } else {
                    a + diff * gamma
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Selection in place gives the very bits of [`quantiles`] (moved here from the retrieval
    /// audit's shuffle envelopes and percentile intervals, which call it on 10,000 replicates).
    #[test]
    fn quantiles_in_place_match_sorted_quantiles() {
        let data: Vec<f64> = (0..1001)
            .map(|i| f64::from((i * 7919) % 1009) / 17.0 - 3.0)
            .collect();
        for qs in [
            [0.025, 0.975],
            [0.0, 1.0],
            [0.5, 0.1],
            percentile_levels(0.9),
        ] {
            let want = quantiles(&data, &qs).unwrap();
            let got = quantiles_in_place(&mut data.clone(), &qs).unwrap();
            assert_eq!(got, want, "{qs:?}");
        }
        assert!(matches!(
            quantiles_in_place(&mut [], &[0.1, 0.9]),
            Err(StatsError::Empty { .. })
        ));
        for v in [-1.5, -0.0, 0.0, 1e-300, -1e300, 3.25, f64::MIN_POSITIVE] {
            assert_eq!(
                from_total_order_key(total_order_key(v)).to_bits(),
                v.to_bits()
            );
            for w in [-2.0, -0.0, 0.0, 0.5, 7.0] {
                assert_eq!(total_order_key(v).cmp(&total_order_key(w)), v.total_cmp(&w));
            }
        }
        let got = quantiles_in_place(&mut [-0.0, 0.0], &[0.0, 1.0]).unwrap();
        assert!(got.iter().all(|v| v.to_bits() == 0.0f64.to_bits()));
    }
}
