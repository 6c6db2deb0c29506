//! Pearson, Spearman and Kendall tau-b correlations (SPEC.md §0), matching SciPy.

use crate::StatsError;
use crate::check::{check_finite, check_same_len, sort_key};

/// Pearson's r on raw values (`scipy.stats.pearsonr(x, y).statistic`).
///
/// Returns `Ok(None)` when either input is constant (r undefined). Value in [−1, 1].
///
/// # Errors
/// `LengthMismatch`, `NonFinite`, `TooFew` when n < 2.
pub fn pearson(x: &[f64], y: &[f64]) -> Result<Option<f64>, StatsError> {
    check_pair(x, y, "Pearson correlation")?;
    Ok(pearson_unchecked(x, y))
}

/// Spearman's ρ with average ranks for ties (`scipy.stats.spearmanr(x, y).statistic`).
/// `Ok(None)` when either input is constant. Errors as [`pearson`].
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Option<f64>, StatsError> {
    check_pair(x, y, "Spearman correlation")?;
    Ok(pearson_unchecked(&average_ranks(x)?, &average_ranks(y)?))
}

/// Kendall's tau-b (`scipy.stats.kendalltau(x, y, variant="b").statistic`), O(n log n).
/// `Ok(None)` when either input is constant. Errors as [`pearson`].
///
/// Knight's algorithm: sort by (x, y), count x ties and joint ties, then count discordant pairs
/// as the swaps of a merge sort on y; `tau_b = (P − Q) / sqrt((n0 − n1)(n0 − n2))`.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Result<Option<f64>, StatsError> {
    check_pair(x, y, "Kendall tau-b")?;
    let mut pairs: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .map(|(&a, &b)| (sort_key(a), sort_key(b)))
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let x_ties = tied_pairs(&pairs, |a, b| a.0 == b.0);
    let joint_ties = tied_pairs(&pairs, |a, b| a == b);
    let mut ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let discordant = merge_sort_swaps(&mut ys);
    let y_ties = tied_pairs(&ys, |a, b| a == b);
    let n = x.len() as u128;
    let total = n * (n - 1) / 2;
    if x_ties == total || y_ties == total {
        return Ok(None);
    }
    // P − Q = (all pairs untied in x or y) − 2Q, in exact integers.
    let untied = total + joint_ties - x_ties - y_ties;
    // Cast: exact below 2^53 pairs; relative error 1e-16 beyond
    let (diff, tx, ty) = (
        untied as f64 - 2.0 * discordant as f64,
        (total - x_ties) as f64,
        (total - y_ties) as f64,
    );
    Ok(Some((diff / tx.sqrt() / ty.sqrt()).clamp(-1.0, 1.0)))
}

/// Ranks 1..=n with ties given their average rank (`scipy.stats.rankdata(x, method="average")`).
///
/// # Errors
/// `NonFinite` for NaN/infinite input.
pub fn average_ranks(x: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_finite(x, "x")?;
    Ok(average_ranks_by(x.len(), |a, b| {
        sort_key(x[a]).total_cmp(&sort_key(x[b]))
    }))
}

/// Average ranks 1..=n of positions `0..n` under the total order `cmp` (ties, where `cmp` says
/// `Equal`, share their average rank), as `scipy.stats.rankdata(method="average")`.
pub(crate) fn average_ranks_by(
    n: usize,
    cmp: impl Fn(usize, usize) -> std::cmp::Ordering,
) -> Vec<f64> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    let mut ranks = vec![0.0; n];
    let mut start = 0;
    while start < n {
        let first = order[start];
        let len = order[start..]
            .iter()
            .take_while(|&&i| cmp(i, first).is_eq())
            .count();
        // Ranks start..start+len (1-based) average to start + (len + 1) / 2; halves are exact.
        let rank = start as f64 + (len as f64 + 1.0) / 2.0;
        for &i in &order[start..start + len] {
            ranks[i] = rank;
        }
        start += len;
    }
    ranks
}

fn check_pair(x: &[f64], y: &[f64], what: &'static str) -> Result<(), StatsError> {
    check_same_len("x", x.len(), "y", y.len())?;
    if x.len() < 2 {
        return Err(StatsError::TooFew {
            what,
            n: x.len(),
            min: 2,
        });
    }
    check_finite(x, "x")?;
    check_finite(y, "y")
}

/// Pearson r on finite data of equal length ≥ 2, following SciPy's centring and max-scaled norms.
fn pearson_unchecked(x: &[f64], y: &[f64]) -> Option<f64> {
    if is_constant(x) || is_constant(y) {
        return None;
    }
    let xm = centred(x);
    let ym = centred(y);
    let (nx, ny) = (scaled_norm(&xm), scaled_norm(&ym));
    if nx == 0.0 || ny == 0.0 {
        return None;
    }
    let r: f64 = xm.iter().zip(&ym).map(|(a, b)| (a / nx) * (b / ny)).sum();
    // Two points are perfectly correlated; SciPy rounds to the exact ±1 as well.
    Some(if x.len() == 2 {
        r.round()
    } else {
        r.clamp(-1.0, 1.0)
    })
}

fn is_constant(x: &[f64]) -> bool {
    x.iter().all(|&v| v == x[0])
}

fn centred(x: &[f64]) -> Vec<f64> {
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    x.iter().map(|v| v - mean).collect()
}

/// Euclidean norm computed on `x / max|x|` so that huge values do not overflow.
fn scaled_norm(x: &[f64]) -> f64 {
    let max = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if max == 0.0 {
        return 0.0;
    }
    max * x.iter().map(|v| (v / max) * (v / max)).sum::<f64>().sqrt()
}

/// Number of pairs inside runs of consecutive equal elements (the input is sorted so that equal
/// elements are adjacent).
fn tied_pairs<T>(sorted: &[T], eq: impl Fn(&T, &T) -> bool) -> u128 {
    let mut total = 0_u128;
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && eq(&sorted[start], &sorted[end]) {
            end += 1;
        }
        let t = (end - start) as u128;
        total += t * (t - 1) / 2;
        start = end;
    }
    total
}

/// Sorts `v` ascending (bottom-up merge sort) and returns the number of inversions, i.e. pairs
/// i < j with `v[i] > v[j]` strictly (equal values are not swapped).
fn merge_sort_swaps(v: &mut Vec<f64>) -> u128 {
    let n = v.len();
    let mut buf = vec![0.0; n];
    let mut swaps = 0_u128;
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                if v[j] < v[i] {
                    // v[j] jumps over every element left in the left run.
                    swaps += (mid - i) as u128;
                    buf[k] = v[j];
                    j += 1;
                } else {
                    buf[k] = v[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&v[i..mid]);
            k += mid - i;
            buf[k..k + (hi - j)].copy_from_slice(&v[j..hi]);
            lo = hi;
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    swaps
}
