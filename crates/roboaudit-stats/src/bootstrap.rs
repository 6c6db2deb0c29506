//! Cluster bootstrap (SPEC.md §0): seeded, parallel, byte-identical for any thread count.

use crate::StatsError;
use serde::Serialize;

/// Which confidence interval to compute from the bootstrap distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Percentile interval (SPEC §0 default), as `scipy.stats.bootstrap(method="percentile")`.
    #[default]
    Percentile,
    /// Bias-corrected and accelerated, jackknife over clusters, as `scipy.stats.bootstrap(method="BCa")`.
    Bca,
}

/// A two-sided confidence interval `[lo, hi]` at confidence `level` (e.g. 0.95).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Confidence level in (0, 1).
    pub level: f64,
}

/// What is resampled: `n_clusters` clusters (i.i.d. data is `n` clusters of one), optionally within strata.
#[derive(Debug, Clone, PartialEq)]
pub struct ResampleDesign {
    /// Number of clusters, ≥ 1.
    pub n_clusters: usize,
    /// Optional stratum of each cluster (`strata.len() == n_clusters`): each resample draws, within
    /// every stratum, as many clusters as it holds, with replacement from that stratum only.
    pub strata: Option<Vec<usize>>,
}

/// Resample indices: row `b` lists the `n_clusters` cluster indices drawn (with repetition) in resample `b`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResampleMatrix {
    n_clusters: usize,
    rows: Vec<Vec<usize>>,
}

impl ResampleMatrix {
    /// Draws `resamples` rows for `design` from a ChaCha stream seeded by `seed`.
    /// The same `(design, resamples, seed)` always gives the same matrix.
    ///
    /// # Errors
    /// `InvalidParameter` for zero clusters, zero resamples or strata of the wrong length.
    pub fn generate(design: &ResampleDesign, resamples: usize, seed: u64) -> Result<Self, StatsError> {
        todo!("{design:?} {resamples} {seed}")
    }

    /// Wraps explicit rows (for example from a reference implementation), each of length `n_clusters`
    /// with entries `< n_clusters`.
    ///
    /// # Errors
    /// `InvalidParameter` when a row has the wrong length or an index out of range, or there are no rows.
    pub fn from_rows(rows: Vec<Vec<usize>>, n_clusters: usize) -> Result<Self, StatsError> {
        todo!("{rows:?} {n_clusters}")
    }

    /// Number of resamples (rows).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there are no rows (never for a constructed matrix).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Number of clusters each row draws.
    pub fn n_clusters(&self) -> usize {
        self.n_clusters
    }

    /// The cluster indices of resample `b` (panics-free: `None` when out of range).
    pub fn row(&self, b: usize) -> Option<&[usize]> {
        self.rows.get(b).map(Vec::as_slice)
    }
}

/// Bootstrap settings. Defaults: 10,000 resamples, 95 %, percentile, seed 0.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapConfig {
    /// Number of resamples, ≥ 1.
    pub resamples: usize,
    /// Confidence level in (0, 1).
    pub level: f64,
    /// Interval method.
    pub method: IntervalMethod,
    /// RNG seed (ChaCha).
    pub seed: u64,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        Self { resamples: 10_000, level: 0.95, method: IntervalMethod::Percentile, seed: 0 }
    }
}

/// Result of a bootstrap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapResult {
    /// The statistic on the original data (all clusters once).
    pub estimate: f64,
    /// The interval; `None` when fewer than 2 resamples gave a defined statistic.
    pub interval: Option<Interval>,
    /// Method used.
    pub method: IntervalMethod,
    /// Resamples drawn.
    pub resamples: usize,
    /// Resamples on which the statistic was undefined (`None`) and which were left out.
    pub undefined_resamples: usize,
    /// Standard deviation (ddof 1) of the defined bootstrap replicates; `None` when fewer than 2.
    pub standard_error: Option<f64>,
}

/// Cluster bootstrap of `statistic`, which receives the list of cluster indices of one resample
/// (length `n_clusters` with repetitions; `0..n` for the original; for BCa's jackknife, all clusters
/// but one) and returns the statistic or `None` where undefined. Resamples are evaluated in
/// parallel (rayon); the output is byte-identical for any thread count.
///
/// # Errors
/// `InvalidParameter` for a bad config or design; `TooFew` when the statistic is undefined on the
/// original data.
pub fn bootstrap<F>(design: &ResampleDesign, config: &BootstrapConfig, statistic: F) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&[usize]) -> Option<f64> + Sync,
{
    let matrix = ResampleMatrix::generate(design, config.resamples, config.seed)?;
    bootstrap_with_matrix(&matrix, config.level, config.method, statistic)
}

/// As [`bootstrap`], on an explicit resample matrix (so an interval can be compared with a reference
/// computed on the very same resamples).
pub fn bootstrap_with_matrix<F>(
    matrix: &ResampleMatrix,
    level: f64,
    method: IntervalMethod,
    statistic: F,
) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&[usize]) -> Option<f64> + Sync,
{
    todo!("{matrix:?} {level} {method:?} {}", statistic(&[]).is_some())
}

/// Equivalence (SPEC §2 controls): true iff the whole interval lies inside `[−margin, +margin]`.
/// Failing to reject a difference is never equivalence.
pub fn equivalent(interval: &Interval, margin: f64) -> bool {
    interval.lo >= -margin && interval.hi <= margin
}
