//! Confidence intervals from a bootstrap distribution, bit-compatible with `scipy.stats.bootstrap`.

use crate::bootstrap::Interval;
use crate::check::sort_key;
use crate::normal::{normal_cdf, normal_quantile};
use crate::quantile::quantiles_selected;

/// Percentile interval: `np.percentile(replicates, [100·α/2, 100·(1 − α/2)])` with α = 1 − level.
/// `replicates` is non-empty and finite.
pub(crate) fn percentile_interval(replicates: &[f64], level: f64) -> Interval {
    let alpha = (1.0 - level) / 2.0;
    let bounds = percentiles_selected(&mut sort_keys(replicates), [alpha, 1.0 - alpha]);
    Interval {
        lo: bounds[0],
        hi: bounds[1],
        level,
    }
}

/// BCa interval as SciPy's `_bca_interval` (Efron & Tibshirani 14.3, 15.4 eq. 15.36), or `None`
/// where SciPy would give NaN. `jackknife[i]` is the statistic without cluster `i`.
pub(crate) fn bca_interval(
    replicates: &[f64],
    estimate: f64,
    jackknife: &[f64],
    level: f64,
) -> Option<Interval> {
    let n = jackknife.len();
    if n < 2 {
        return None;
    }
    let below = replicates.iter().filter(|&&t| t < estimate).count();
    let at_or_below = replicates.iter().filter(|&&t| t <= estimate).count();
    let z0 = normal_quantile((below + at_or_below) as f64 / (2 * replicates.len()) as f64);

    let nf = n as f64;
    let jack_mean = jackknife.iter().sum::<f64>() / nf;
    let u: Vec<f64> = jackknife
        .iter()
        .map(|t| (nf - 1.0) * (jack_mean - t))
        .collect();
    let num = u.iter().map(|v| v * v * v).sum::<f64>() / (nf * nf * nf);
    let den = u.iter().map(|v| v * v).sum::<f64>() / (nf * nf);
    let accel = 1.0 / 6.0 * num / den.powf(1.5);

    let alpha = (1.0 - level) / 2.0;
    let z_alpha = normal_quantile(alpha);
    let adjusted = |z: f64| {
        let num = z0 + z;
        normal_cdf(z0 + num / (1.0 - accel * num))
    };
    let (alpha_1, alpha_2) = (adjusted(z_alpha), adjusted(-z_alpha));
    if !(alpha_1.is_finite() && alpha_2.is_finite()) {
        return None;
    }
    let bounds = percentiles_selected(&mut sort_keys(replicates), [alpha_1, alpha_2]);
    Some(Interval {
        lo: bounds[0],
        hi: bounds[1],
        level,
    })
}

/// The replicates with −0.0 mapped to +0.0, so that `total_cmp` orders them as NumPy's sort does.
fn sort_keys(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| sort_key(v)).collect()
}

/// `np.percentile(data, [100·q0, 100·q1])` ("linear") on non-empty finite `keys`, in any order
/// (they are permuted): selection in O(n) instead of a sort, which was the largest fixed cost of a
/// bootstrap. The round trip through percent is kept because NumPy divides by 100 again.
fn percentiles_selected(keys: &mut [f64], qs: [f64; 2]) -> [f64; 2] {
    let qs = qs.map(|q| ((q * 100.0) / 100.0).clamp(0.0, 1.0));
    let v = quantiles_selected(keys, &qs);
    [v[0], v[1]]
}

/// `np.percentile(data, 100·q)` for one level, as [`percentiles_selected`] computes each of its
/// two (kept for the tests that check the selection against a sort).
#[cfg(test)]
fn percentile_selected(keys: &mut [f64], q: f64) -> f64 {
    quantiles_selected(keys, &[((q * 100.0) / 100.0).clamp(0.0, 1.0)])[0]
}

/// Sample standard deviation (ddof 1), `None` for fewer than 2 values.
pub(crate) fn standard_deviation(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    Some((x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile::{quantile_sorted, sorted_copy};

    /// Selection gives the very bits of interpolating on the sorted copy, with ties, both zeros,
    /// one or two values, and levels at and near the ends.
    #[test]
    fn selection_equals_percentile_of_sorted() {
        let mut state = 12_345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let qs: [f64; 9] = [0.0, 1e-9, 0.025, 0.05, 0.3, 0.5, 0.975, 0.999_999, 1.0];
        for n in [1usize, 2, 3, 10, 101, 1_000] {
            let data: Vec<f64> = (0..n)
                .map(|_| match next() % 5 {
                    0 => -0.0,
                    1 => 0.0,
                    k => (next() % 50) as f64 / 7.0 - k as f64,
                })
                .collect();
            let sorted = sorted_copy(&data);
            for q in qs {
                let expected = quantile_sorted(&sorted, ((q * 100.0) / 100.0).clamp(0.0, 1.0));
                let got = percentile_selected(&mut sort_keys(&data), q);
                assert_eq!(got.to_bits(), expected.to_bits(), "n = {n}, q = {q}");
            }
        }
    }
}
