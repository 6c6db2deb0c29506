//! Criterion benches of the two hot paths named in SPEC §0 / §1: a 10,000-resample scene-cluster
//! bootstrap over a 50 × 40 success matrix, and pooled AUROC over 10^6 samples.
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_stats::{BootstrapConfig, ResampleDesign, auroc, bootstrap};
use std::hint::black_box;

const EXPERIENCES: usize = 50;
const SCENES: usize = 40;

/// `P[e, s]` stored scene-major (`cols[s][e]`), success rates in tenths.
fn success_matrix() -> Vec<Vec<f64>> {
    (0..SCENES)
        .map(|s| {
            (0..EXPERIENCES)
                .map(|e| ((e * 7 + s * 13) % 11) as f64 / 10.0)
                .collect()
        })
        .collect()
}

/// Oracle minus random over the drawn scenes: `mean_s max_e P[e,s] − mean_{e,s} P[e,s]`.
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

fn bench_bootstrap(c: &mut Criterion) {
    let cols = success_matrix();
    let design = ResampleDesign {
        n_clusters: SCENES,
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: 10_000,
        ..BootstrapConfig::default()
    };
    let mut group = c.benchmark_group("cluster_bootstrap");
    group.sample_size(20);
    group.bench_function("oracle_gap_50x40_10k_resamples", |b| {
        b.iter(|| bootstrap(black_box(&design), &config, |idx| oracle_gap(&cols, idx)).unwrap())
    });
    group.finish();
}

fn bench_auroc(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let n = 1_000_000;
    let labels: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < 0.3).collect();
    // three decimals: many ties, as with scores from a coarse distance
    let shift = |y: bool| if y { 0.2 } else { 0.0 };
    let scores: Vec<f64> = labels
        .iter()
        .map(|&y| ((rng.random::<f64>() + shift(y)) * 1000.0).round() / 1000.0)
        .collect();
    let mut group = c.benchmark_group("auroc");
    group.sample_size(10);
    group.bench_function("pooled_1e6", |b| {
        b.iter(|| auroc(black_box(&scores), &labels, None).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_bootstrap, bench_auroc);
criterion_main!(benches);
