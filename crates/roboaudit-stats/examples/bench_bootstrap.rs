//! Timing of the 10,000-resample scene-cluster bootstrap over a 50 × 40 success matrix and of
//! pooled AUROC over 10^6 samples, printed as one JSON object (read by
//! `scripts/bench_stats_vs_numpy.py`, which times NumPy on the same matrix and resample count).
//! Run: `cargo run --example bench_bootstrap -p roboaudit-stats`.
//!
//! Headline statistic: best-fixed success over the drawn scenes,
//! `BF = max_e mean_{s in draw} P[e, s]`, which does not separate per scene (the max is taken
//! after averaging), so every resample recomputes a 50-experience score vector.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use roboaudit_stats::{
    BootstrapConfig, ResampleDesign, ResampleMatrix, WideKernel, auroc, bootstrap,
    bootstrap_counts, run_wide,
};
use std::time::Instant;

const EXPERIENCES: usize = 50;
pub(crate) const SCENES: usize = 40;
const RESAMPLES: usize = 10_000;
/// Timed runs after one warm-up (the NumPy script uses the same count).
const REPEATS: usize = 25;

/// SplitMix64 (Steele et al. 2014): the NumPy script hashes the same way, so both sides bootstrap
/// the very same matrix.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Row width: 50 experiences padded to 52 = 13 AVX registers of 4 (or 26 SSE2 registers of 2).
const PADDED: usize = 52;

/// `P[e, s] = (splitmix64(40e + s) >> 11) · 2^-53`, uniform in [0, 1), stored scene-major
/// (`pt[s][e]`, zero padding after experience 49) so that one scene's experiences are contiguous.
pub(crate) fn success_matrix() -> Vec<[f64; PADDED]> {
    (0..SCENES)
        .map(|s| {
            std::array::from_fn(|e| {
                if e < EXPERIENCES {
                    (splitmix64((e * SCENES + s) as u64) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
                } else {
                    0.0
                }
            })
        })
        .collect()
}

/// Best-fixed success over the drawn scenes from the index list of a resample (the form
/// [`bootstrap`] hands over): per-scene draw counts, then [`best_fixed_counts`].
pub(crate) fn best_fixed(pt: &[[f64; PADDED]], scenes: &[usize]) -> Option<f64> {
    let mut counts = [0u32; SCENES];
    for &s in scenes {
        // at most 40 draws: no overflow, and no overflow check in the dependent chain
        counts[s % SCENES] = counts[s % SCENES].wrapping_add(1);
    }
    best_fixed_counts(pt, &counts)
}

/// Best-fixed success from the scene multiplicities `c_s` of a resample (the form
/// [`bootstrap_counts`] hands over): `q[e] = Σ_s c_s · P[e, s]` over the scenes drawn at least
/// once (about 25 of 40), then `max_e q[e] / Σ_s c_s`; run through [`run_wide`], so with 256-bit
/// registers where the CPU has them (same bits either way).
pub(crate) fn best_fixed_counts(pt: &[[f64; PADDED]], counts: &[u32]) -> Option<f64> {
    let draws: u32 = counts.iter().sum();
    let best = run_wide(BestFixed { pt, counts });
    Some(best / f64::from(draws))
}

/// `max_e Σ_s c_s · P[e, s]`. The drawn scenes are listed without branches (which scenes were
/// drawn is random, so a branch on `c_s != 0` mispredicts), and `q` is accumulated in two
/// slices of 26 experiences that fit the vector registers (7 AVX or 13 SSE2 registers), so the
/// accumulators never leave the registers while the contiguous rows stream through.
struct BestFixed<'a> {
    pt: &'a [[f64; PADDED]],
    counts: &'a [u32],
}

impl WideKernel for BestFixed<'_> {
    type Output = f64;

    #[inline(always)]
    fn run(self) -> f64 {
        let (mut drawn, mut weight, mut k) = ([0usize; SCENES], [0.0f64; SCENES], 0);
        for (s, &c) in self.counts.iter().enumerate().take(SCENES) {
            drawn[k] = s;
            weight[k] = f64::from(c);
            k += usize::from(c != 0);
        }
        let (drawn, weight) = (&drawn[..k], &weight[..k]);
        slice_max::<0>(self.pt, drawn, weight).max(slice_max::<SLICE>(self.pt, drawn, weight))
    }
}

const SLICE: usize = PADDED / 2;

/// `max_{e in OFFSET..OFFSET+SLICE, e < 50} Σ_k weight[k] · P[e, drawn[k]]`, each sum left to
/// right over `k`, a multiply then an add per term.
#[inline(always)]
fn slice_max<const OFFSET: usize>(pt: &[[f64; PADDED]], drawn: &[usize], weight: &[f64]) -> f64 {
    let mut q = [0.0f64; SLICE];
    for (&s, &c) in drawn.iter().zip(weight) {
        let row: &[f64; SLICE] = pt[s][OFFSET..OFFSET + SLICE].try_into().unwrap();
        for (qe, &p) in q.iter_mut().zip(row) {
            *qe += c * p;
        }
    }
    let real = EXPERIENCES.saturating_sub(OFFSET).min(SLICE);
    // Two lanes: a single running max is one serial dependency chain.
    let mut max = [f64::NEG_INFINITY; 2];
    for (i, &v) in q[..real].iter().enumerate() {
        max[i % 2] = if v > max[i % 2] { v } else { max[i % 2] };
    }
    max[0].max(max[1])
}

/// Oracle minus random over the drawn scenes: `mean_s max_e P[e,s] − mean_{e,s} P[e,s]`.
pub(crate) fn oracle_gap(pt: &[[f64; PADDED]], scenes: &[usize]) -> Option<f64> {
    let (mut best, mut all) = (0.0, 0.0);
    for &s in scenes {
        let (max, sum) = max_and_sum(&pt[s][..EXPERIENCES]);
        best += max;
        all += sum;
    }
    let n = scenes.len() as f64;
    Some(best / n - all / (n * EXPERIENCES as f64))
}

/// Max and sum of a row with two independent lanes (a single running max or sum is one serial
/// dependency chain; two lanes halve it; four lanes were not faster here).
fn max_and_sum(row: &[f64]) -> (f64, f64) {
    let (mut max, mut sum) = ([f64::NEG_INFINITY; 2], [0.0; 2]);
    let (pairs, rest) = row.as_chunks::<2>();
    for p in pairs {
        for k in 0..2 {
            max[k] = if p[k] > max[k] { p[k] } else { max[k] };
            sum[k] += p[k];
        }
    }
    let (mut m, mut s) = (max[0].max(max[1]), sum[0] + sum[1]);
    for &v in rest {
        m = m.max(v);
        s += v;
    }
    (m, s)
}

/// Median and minimum wall time (seconds) of `REPEATS` runs, after one warm-up run.
fn time<T>(mut f: impl FnMut() -> T) -> (f64, f64, T) {
    let mut out = f();
    let mut secs: Vec<f64> = (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            out = f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    secs.sort_by(f64::total_cmp);
    (secs[REPEATS / 2], secs[0], out)
}

fn main() {
    let pt = success_matrix();
    let design = ResampleDesign {
        n_clusters: SCENES,
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: RESAMPLES,
        ..BootstrapConfig::default()
    };
    // `BENCH_PROFILE=engine perf record …`: only the engine, for a profile without the other benches;
    // `BENCH_PROFILE=bf perf stat …`: only the headline bootstrap (counts engine), and
    // `BENCH_PROFILE=bf_rows`: the same through the index-list engine.
    let profile = std::env::var("BENCH_PROFILE");
    for _ in 0..300 {
        match profile.as_deref() {
            Ok("engine") => std::hint::black_box(
                bootstrap_counts(&design, &config, |c| Some(f64::from(c[0]))).unwrap(),
            ),
            Ok("bf") => std::hint::black_box(
                bootstrap_counts(&design, &config, |c| best_fixed_counts(&pt, c)).unwrap(),
            ),
            Ok("bf_rows") => std::hint::black_box(
                bootstrap(&design, &config, |idx| best_fixed(&pt, idx)).unwrap(),
            ),
            _ => break,
        };
    }
    if profile.is_ok() {
        return;
    }
    let (bf_median, bf_min, bf) =
        time(|| bootstrap_counts(&design, &config, |c| best_fixed_counts(&pt, c)).unwrap());
    // The same resamples through the index-list engine: the very same result, a little slower.
    let (_, bf_rows_min, bf_rows) =
        time(|| bootstrap(&design, &config, |idx| best_fixed(&pt, idx)).unwrap());
    assert_eq!(bf, bf_rows);
    let (gap_median, gap_min, gap) =
        time(|| bootstrap(&design, &config, |idx| oracle_gap(&pt, idx)).unwrap());

    // Where the time goes: the engine alone (draws, rayon, percentile) with a statistic that
    // costs nothing, the materialized matrix (one Vec per row), and the statistic alone.
    let (_, engine_min, _) =
        time(|| bootstrap_counts(&design, &config, |c| Some(f64::from(c[0]))).unwrap());
    let (_, matrix_min, matrix) = time(|| ResampleMatrix::generate(&design, RESAMPLES, 0).unwrap());
    let (_, statistic_min, _) = time(|| {
        matrix
            .rows()
            .iter()
            .map(|r| best_fixed(&pt, r).unwrap())
            .sum::<f64>()
    });

    // u_k = splitmix64(k) >> 11 · 2^-53; label i is u_{2i} < 0.3, score i is
    // floor((u_{2i+1} + 0.2·label) · 1000) / 1000: three decimals, many ties, as with scores from
    // a coarse distance. The NumPy script builds the same samples.
    let u = |k: usize| (splitmix64(k as u64) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let n = 1_000_000;
    let labels: Vec<bool> = (0..n).map(|i| u(2 * i) < 0.3).collect();
    let scores: Vec<f64> = labels
        .iter()
        .enumerate()
        .map(|(i, &y)| ((u(2 * i + 1) + if y { 0.2 } else { 0.0 }) * 1000.0).floor() / 1000.0)
        .collect();
    let (auroc_median, auroc_min, value) = time(|| auroc(&scores, &labels, None).unwrap());

    let (bf_ci, gap_ci) = (bf.interval.unwrap(), gap.interval.unwrap());
    println!(
        "{{\"resamples\": {RESAMPLES}, \"experiences\": {EXPERIENCES}, \"scenes\": {SCENES}, \
         \"repeats\": {REPEATS}, \"threads\": {}, \
         \"bf_estimate\": {}, \"bf_lo\": {}, \"bf_hi\": {}, \"bf_median_s\": {bf_median}, \"bf_min_s\": {bf_min}, \
         \"gap_estimate\": {}, \"gap_lo\": {}, \"gap_hi\": {}, \"gap_median_s\": {gap_median}, \"gap_min_s\": {gap_min}, \
         \"profile_min_s\": {{\"engine_free_statistic\": {engine_min}, \"generate_matrix\": {matrix_min}, \
         \"bf_statistic_serial\": {statistic_min}, \"bf_index_engine\": {bf_rows_min}}}, \
         \"auroc_n\": {n}, \"auroc\": {}, \"auroc_median_s\": {auroc_median}, \"auroc_min_s\": {auroc_min}}}",
        rayon::current_num_threads(),
        bf.estimate,
        bf_ci.lo,
        bf_ci.hi,
        gap.estimate,
        gap_ci.lo,
        gap_ci.hi,
        value.unwrap(),
    );
}
