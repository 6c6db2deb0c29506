//! Timing of the 10,000-resample scene-cluster bootstrap over a 50 × 40 success matrix and of
//! pooled AUROC over 10^6 samples, printed as one JSON object (read by
//! `scripts/bench_stats_vs_numpy.py`). Run: `cargo run --example bench_bootstrap -p roboaudit-stats`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_stats::{BootstrapConfig, ResampleDesign, auroc, bootstrap};
use std::time::Instant;

const EXPERIENCES: usize = 50;
const SCENES: usize = 40;
const RESAMPLES: usize = 10_000;
const REPEATS: usize = 15;

/// `P[e, s] = ((7e + 13s) mod 11) / 10`, stored scene-major; the NumPy script builds the same matrix.
fn success_matrix() -> Vec<Vec<f64>> {
    (0..SCENES)
        .map(|s| {
            (0..EXPERIENCES)
                .map(|e| ((e * 7 + s * 13) % 11) as f64 / 10.0)
                .collect()
        })
        .collect()
}

/// Oracle minus random over the drawn scenes, recomputed from the drawn columns (generic statistic).
fn oracle_gap(cols: &[Vec<f64>], scenes: &[usize]) -> Option<f64> {
    let (mut best, mut all) = (0.0, 0.0);
    for &s in scenes {
        let (max, sum) = max_and_sum(&cols[s]);
        best += max;
        all += sum;
    }
    let n = scenes.len() as f64;
    Some(best / n - all / (n * EXPERIENCES as f64))
}

/// Max and sum of a column with two independent lanes (a single running max or sum is one serial
/// dependency chain; two lanes halve it; four lanes were not faster here).
fn max_and_sum(col: &[f64]) -> (f64, f64) {
    let (mut max, mut sum) = ([f64::NEG_INFINITY; 2], [0.0; 2]);
    let (pairs, rest) = col.as_chunks::<2>();
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
    let cols = success_matrix();
    let design = ResampleDesign {
        n_clusters: SCENES,
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: RESAMPLES,
        ..BootstrapConfig::default()
    };
    let (generic_median, generic_min, result) =
        time(|| bootstrap(&design, &config, |idx| oracle_gap(&cols, idx)).unwrap());
    // Separable form: per-scene gap precomputed once, each resample only averages 40 numbers.
    let per_scene: Vec<f64> = (0..SCENES)
        .map(|s| oracle_gap(&cols, &[s]).unwrap())
        .collect();
    let (separable_median, separable_min, _) = time(|| {
        bootstrap(&design, &config, |idx| {
            Some(idx.iter().map(|&s| per_scene[s]).sum::<f64>() / idx.len() as f64)
        })
        .unwrap()
    });

    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let n = 1_000_000;
    let labels: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < 0.3).collect();
    let shift = |y: bool| if y { 0.2 } else { 0.0 };
    let scores: Vec<f64> = labels
        .iter()
        .map(|&y| ((rng.random::<f64>() + shift(y)) * 1000.0).round() / 1000.0)
        .collect();
    let (auroc_median, auroc_min, value) = time(|| auroc(&scores, &labels, None).unwrap());

    let interval = result.interval.unwrap();
    println!(
        "{{\"resamples\": {RESAMPLES}, \"experiences\": {EXPERIENCES}, \"scenes\": {SCENES}, \"threads\": {}, \
         \"estimate\": {}, \"lo\": {}, \"hi\": {}, \
         \"generic_median_s\": {generic_median}, \"generic_min_s\": {generic_min}, \
         \"separable_median_s\": {separable_median}, \"separable_min_s\": {separable_min}, \
         \"auroc_n\": {n}, \"auroc\": {}, \"auroc_median_s\": {auroc_median}, \"auroc_min_s\": {auroc_min}}}",
        rayon::current_num_threads(),
        result.estimate,
        interval.lo,
        interval.hi,
        value.unwrap(),
    );
}
