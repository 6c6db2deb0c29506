//! Statistics core of roboaudit (SPEC.md §0).
//!
//! Every estimator here is checked against SciPy / scikit-learn reference values
//! (`scripts/reference_stats.py`, `tests/data/reference_stats.json`). Undefined values are
//! `None` or a typed error, never NaN.
//!
//! API CONTRACT (fixed: other crates code against these signatures):
//! - `auroc(scores, labels, weights) -> Result<Option<f64>>` (None = one class, ineligible)
//! - `grouped_auroc(scores, labels, groups, weights) -> Result<GroupedAuroc>`
//! - `auroc_tallies` / `grouped_auroc_tallies`: the same on items carrying a positive and a
//!   negative weight (outcome tallies at one score)
//! - `pearson`, `spearman`, `kendall_tau_b` `(x, y) -> Result<Option<f64>>` (None = constant input)
//! - `average_ranks(x) -> Result<Vec<f64>>`
//! - `quantile(data, q) -> Result<f64>` (NumPy "linear"), `quantiles(data, qs)`
//! - bootstrap: `ResampleDesign`, `ResampleMatrix`, `bootstrap(...)`, `Interval`, `IntervalMethod`
//! - `equivalent(interval, margin) -> bool`
//! - evaluator metrics: `absolute_relative_error`, `normalized_regret_at_k`, `mmrv`
//! - added helpers: `percentile` (NumPy percent scale), `normal_cdf` / `normal_quantile`
//!   (SciPy `ndtr` / `ndtri`), `ResampleMatrix::rows`, `ROWS_PER_STREAM`, `bootstrap_counts`
//!   (statistics of cluster multiplicities), `resample_counts` / `resample_counts_rows` /
//!   `resample_weight_columns`,
//!   `bootstrap_sums` with `ClusterRows` / `WeightedSums` (statistics of cluster-weighted
//!   sums, with their kernel),
//!   `WideKernel` / `run_wide` (AVX-512 / AVX2 dispatch of hot loops); `Rate` (a rate from
//!   counts, compared exactly), `exact_ratio` / `exact_signed_ratio` (the nearest `f64` of a
//!   fraction), `first_max`, `average_ranks_exact` / `spearman_exact` (ranks of exact values),
//!   `mean_rate` / `gcd` (exact means of rates)
//!
//! # Example
//! A scene-cluster bootstrap of a mean, and an AUROC with a tie:
//! ```
//! use roboaudit_stats::{BootstrapConfig, ResampleDesign, auroc, bootstrap};
//!
//! let success = [0.2, 0.9, 0.4, 0.7, 0.5, 0.6];
//! let design = ResampleDesign { n_clusters: success.len(), strata: None };
//! let config = BootstrapConfig { resamples: 2_000, seed: 7, ..BootstrapConfig::default() };
//! let mean = |scenes: &[usize]| {
//!     Some(scenes.iter().map(|&s| success[s]).sum::<f64>() / scenes.len() as f64)
//! };
//! let result = bootstrap(&design, &config, mean)?;
//! let ci = result.interval.expect("2,000 defined resamples");
//! assert!(ci.lo < result.estimate && result.estimate < ci.hi);
//!
//! let a = auroc(&[0.1, 0.4, 0.4, 0.8], &[false, false, true, true], None)?;
//! assert_eq!(a, Some(0.875));
//! // one class: ineligible, never 0.5
//! assert_eq!(auroc(&[0.1, 0.4], &[true, true], None)?, None);
//! # Ok::<(), roboaudit_stats::StatsError>(())
//! ```

mod auroc;
mod bootstrap;
mod check;
mod correlation;
mod counts;
mod draws;
mod error;
mod evaluator;
mod interval;
mod normal;
mod quantile;
mod rate;
mod select;
mod sums;
mod wide;

pub use auroc::{
    GroupAuroc, GroupedAuroc, auroc, auroc_tallies, grouped_auroc, grouped_auroc_tallies,
    pooled_and_grouped_auroc_tallies,
};
pub use bootstrap::{
    BootstrapConfig, BootstrapResult, Interval, IntervalMethod, ROWS_PER_STREAM, ResampleDesign,
    ResampleMatrix, bootstrap, bootstrap_with_matrix, equivalent,
};
pub use correlation::{average_ranks, kendall_tau_b, pearson, spearman};
pub use counts::{
    bootstrap_counts, resample_counts, resample_counts_rows, resample_weight_columns,
};
pub use error::StatsError;
pub use evaluator::{absolute_relative_error, mmrv, normalized_regret_at_k};
pub use normal::{normal_cdf, normal_quantile};
pub use quantile::{
    percentile, percentile_levels, quantile, quantiles, quantiles_in_place, quantiles_of_histogram,
};
pub use rate::{
    Rate, average_ranks_exact, exact_ratio, exact_signed_ratio, first_max, gcd, mean_rate,
    spearman_exact,
};
pub use sums::{ClusterRows, WeightedSums, bootstrap_sums};
pub use wide::{WideKernel, run_wide, wide_lanes};

/// Compiles and runs the README example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
