//! Timing of the 10,000-resample scene-cluster bootstrap over a 50 × 40 success matrix and of
//! pooled AUROC over 10^6 samples, printed as one JSON object (read by
//! `scripts/bench_stats_vs_numpy.py`, which times NumPy on the same matrix and resample count).
//! Run: `cargo run --example bench_bootstrap -p roboaudit-stats`.
//!
//! Headline statistic: best-fixed success over the drawn scenes,
//! `BF = max_e mean_{s in draw} P[e, s]`, which does not separate per scene (the max is taken
//! after averaging), so every resample recomputes a 50-experience score vector: the library's
//! cluster-weighted sums ([`bootstrap_sums`], kernel [`ClusterRows::weighted_sums`]); the
//! statistic itself only takes the maximum.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use rayon::prelude::*;
use roboaudit_stats::{
    BootstrapConfig, ClusterRows, ResampleDesign, ResampleMatrix, WeightedSums, auroc, bootstrap,
    bootstrap_counts, bootstrap_sums, resample_counts,
};
use std::time::Instant;

const EXPERIENCES: usize = 50;
pub(crate) const SCENES: usize = 40;
const RESAMPLES: usize = 10_000;
/// Timed runs after one warm-up (the NumPy script uses the same count).
const REPEATS: usize = 25;
/// Resamples per parallel task of the floor measurement (16 tasks for rayon to spread).
const FLOOR_ROWS: usize = 625;

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

/// The same matrix as the library's per-cluster rows: scene `s` (the cluster) carries the
/// success of every experience in it, `P[·, s]`.
pub(crate) fn scene_rows(pt: &[[f64; PADDED]]) -> ClusterRows {
    let values: Vec<f64> = pt
        .iter()
        .flat_map(|r| r[..EXPERIENCES].iter().copied())
        .collect();
    ClusterRows::new(SCENES, EXPERIENCES, &values).unwrap()
}

/// Best-fixed success over the drawn scenes from the index list of a resample (the form
/// [`bootstrap`] hands over): per-scene draw counts, then [`best_fixed_counts`].
pub(crate) fn best_fixed(rows: &ClusterRows, scenes: &[usize]) -> Option<f64> {
    let mut counts = [0u32; SCENES];
    for &s in scenes {
        // at most 40 draws: no overflow, and no overflow check in the dependent chain
        counts[s % SCENES] = counts[s % SCENES].wrapping_add(1);
    }
    best_fixed_counts(rows, &counts)
}

/// Best-fixed success from the scene multiplicities `c_s` of a resample (the form
/// [`bootstrap_counts`] hands over): `q[e] = Σ_s c_s · P[e, s]` by the library's weighted-sum
/// kernel ([`ClusterRows::weighted_sums`]), then `max_e q[e] / Σ_s c_s`.
pub(crate) fn best_fixed_counts(rows: &ClusterRows, counts: &[u32]) -> Option<f64> {
    let mut q = [0.0; EXPERIENCES];
    rows.weighted_sums(counts, &mut q).ok()?;
    Some(max(&q) / f64::from(counts.iter().sum::<u32>()))
}

/// Best-fixed success from the sums [`bootstrap_sums`] hands over (the headline form).
pub(crate) fn best_fixed_sums(r: &WeightedSums<'_>) -> Option<f64> {
    Some(max(r.sums) / f64::from(r.draws))
}

/// Largest value, in four lanes (a single running max is one serial dependency chain; the
/// four lanes compile to one vector max per four values).
fn max(v: &[f64]) -> f64 {
    let mut m = [f64::NEG_INFINITY; 4];
    let (quads, rest) = v.as_chunks::<4>();
    for q in quads {
        for k in 0..4 {
            m[k] = if q[k] > m[k] { q[k] } else { m[k] };
        }
    }
    for &x in rest {
        m[0] = if x > m[0] { x } else { m[0] };
    }
    let (a, b) = (
        if m[0] > m[1] { m[0] } else { m[1] },
        if m[2] > m[3] { m[2] } else { m[3] },
    );
    if a > b { a } else { b }
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
    let rows = scene_rows(&pt);
    let design = ResampleDesign {
        n_clusters: SCENES,
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: RESAMPLES,
        ..BootstrapConfig::default()
    };
    // `BENCH_PROFILE=engine perf record …`: only the engine, for a profile without the other benches;
    // `BENCH_PROFILE=bf perf stat …`: only the headline bootstrap (sums engine), and
    // `BENCH_PROFILE=bf_rows`: the same through the index-list engine.
    let profile = std::env::var("BENCH_PROFILE");
    for _ in 0..300 {
        match profile.as_deref() {
            Ok("engine") => std::hint::black_box(
                bootstrap_counts(&design, &config, |c| Some(f64::from(c[0]))).unwrap(),
            ),
            Ok("bf") => std::hint::black_box(
                bootstrap_sums(&design, &config, &rows, best_fixed_sums).unwrap(),
            ),
            Ok("bf_rows") => std::hint::black_box(
                bootstrap(&design, &config, |idx| best_fixed(&rows, idx)).unwrap(),
            ),
            _ => break,
        };
    }
    if profile.is_ok() {
        return;
    }
    let (bf_median, bf_min, bf) =
        time(|| bootstrap_sums(&design, &config, &rows, best_fixed_sums).unwrap());
    // The same resamples through the index-list and the counts engines: the very same result.
    let (_, bf_rows_min, bf_rows) =
        time(|| bootstrap(&design, &config, |idx| best_fixed(&rows, idx)).unwrap());
    assert_eq!(bf, bf_rows);
    let (_, bf_counts_min, bf_counts) =
        time(|| bootstrap_counts(&design, &config, |c| best_fixed_counts(&rows, c)).unwrap());
    assert_eq!(bf, bf_counts);
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
            .map(|r| best_fixed(&rows, r).unwrap())
            .sum::<f64>()
    });
    // The floor of any engine for this statistic: the weighted sums and their maximum alone, on
    // multiplicities drawn beforehand (no draws, no interval), on every thread. No bootstrap of
    // best-fixed can take less, so `numpy_best / floor` bounds the ratio this machine allows.
    let counts = resample_counts(&design, RESAMPLES, 0).unwrap();
    let (_, floor_min, _) = time(|| {
        counts
            .par_chunks(FLOOR_ROWS * SCENES)
            .map(|block| {
                let mut sums = vec![0.0; FLOOR_ROWS * EXPERIENCES];
                let sums = &mut sums[..block.len() / SCENES * EXPERIENCES];
                rows.weighted_sums_block(block, sums).unwrap();
                sums.chunks_exact(EXPERIENCES).map(max).sum::<f64>()
            })
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
         \"bf_statistic_serial\": {statistic_min}, \"bf_sums_floor\": {floor_min}, \"bf_index_engine\": {bf_rows_min}, \"bf_counts_engine\": {bf_counts_min}}}, \
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
