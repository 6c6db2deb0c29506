//! Criterion benches of the two hot paths named in SPEC §0 / §1: a 10,000-resample scene-cluster
//! bootstrap over a 50 × 40 success matrix (headline: best-fixed success, which is not separable
//! per scene; also oracle minus random), and pooled AUROC over 10^6 samples. The statistics and
//! inputs are those of `examples/bench_bootstrap.rs`, which `scripts/bench_stats_vs_numpy.py`
//! times against NumPy.
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use roboaudit_stats::{
    BootstrapConfig, ResampleDesign, auroc, bootstrap, bootstrap_counts, bootstrap_sums,
};
use std::hint::black_box;

#[allow(dead_code)] // its `main` and timing helpers are the example's, not the bench's
#[path = "../examples/bench_bootstrap.rs"]
mod example;

use example::{
    SCENES, best_fixed, best_fixed_counts, best_fixed_sums, oracle_gap, scene_rows, splitmix64,
    success_matrix,
};

fn bench_bootstrap(c: &mut Criterion) {
    let pt = success_matrix();
    let rows = scene_rows(&pt);
    let design = ResampleDesign {
        n_clusters: SCENES,
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: 10_000,
        ..BootstrapConfig::default()
    };
    let mut group = c.benchmark_group("cluster_bootstrap");
    group.sample_size(30);
    group.bench_function("best_fixed_50x40_10k_resamples", |b| {
        b.iter(|| bootstrap_sums(black_box(&design), &config, &rows, best_fixed_sums).unwrap())
    });
    group.bench_function("best_fixed_50x40_10k_resamples_counts_engine", |b| {
        b.iter(|| {
            bootstrap_counts(black_box(&design), &config, |c| best_fixed_counts(&rows, c)).unwrap()
        })
    });
    group.bench_function("best_fixed_50x40_10k_resamples_index_engine", |b| {
        b.iter(|| bootstrap(black_box(&design), &config, |idx| best_fixed(&rows, idx)).unwrap())
    });
    group.bench_function("oracle_gap_50x40_10k_resamples", |b| {
        b.iter(|| bootstrap(black_box(&design), &config, |idx| oracle_gap(&pt, idx)).unwrap())
    });
    group.bench_function("engine_only_10k_resamples", |b| {
        b.iter(|| bootstrap_counts(black_box(&design), &config, |c| Some(f64::from(c[0]))).unwrap())
    });
    group.finish();
}

fn bench_auroc(c: &mut Criterion) {
    let u = |k: usize| (splitmix64(k as u64) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let n = 1_000_000;
    let labels: Vec<bool> = (0..n).map(|i| u(2 * i) < 0.3).collect();
    // three decimals: many ties, as with scores from a coarse distance
    let scores: Vec<f64> = labels
        .iter()
        .enumerate()
        .map(|(i, &y)| ((u(2 * i + 1) + if y { 0.2 } else { 0.0 }) * 1000.0).floor() / 1000.0)
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
