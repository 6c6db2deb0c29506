//! Cluster bootstrap (SPEC.md §0): seeded, parallel, byte-identical for any thread count.

use crate::StatsError;
use crate::check::check_finite;
use crate::draws::{BlockWords, StratumPools};
use crate::interval::{bca_interval, percentile_interval, standard_deviation};
use rayon::prelude::*;
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
    /// Draws `resamples` rows for `design`. Rows come in blocks of [`ROWS_PER_STREAM`]: block `c`
    /// (rows `64c..64c+64`) is drawn in order from its own ChaCha8 stream
    /// (`ChaCha8Rng::seed_from_u64(seed)` with `set_stream(c)`), read as its `next_u32` words. A
    /// row's positions are cut, in order, into batches whose bounds (the number of clusters each
    /// position draws from) multiply to at most 2^24 (a bound above 2^24 is a batch of its own),
    /// and each batch is drawn from one word by batched multiply-and-reject (Lemire 2019;
    /// Brackett-Rozinsky & Lemire 2024): with `x_0` the word, position `i` of the batch is the
    /// high half of the 64-bit product `x_{i-1} · b_i` and `x_i` its low half; the word is
    /// rejected, and the batch drawn from the next word, when `x_0 · Π b_i mod 2^32` is below
    /// `2^32 mod Π b_i`. Every index is exactly uniform and independent; 40 clusters take 10
    /// words per row (4 indices per word). Blocks are drawn in parallel, and the same
    /// `(design, resamples, seed)` always gives the same matrix, for any thread count; the first
    /// `m` rows do not depend on `resamples`. Without strata every entry is uniform on
    /// `0..n_clusters`; with strata, position `i` draws uniformly among the clusters of stratum
    /// `strata[i]`, so every stratum keeps its size.
    ///
    /// # Errors
    /// `InvalidParameter` for zero clusters (or more than `u32::MAX`), zero resamples or strata of
    /// the wrong length.
    ///
    /// # Example
    /// ```
    /// use roboaudit_stats::{ResampleDesign, ResampleMatrix};
    /// // clusters 0-2 in stratum 0, clusters 3-4 in stratum 1
    /// let design = ResampleDesign { n_clusters: 5, strata: Some(vec![0, 0, 0, 1, 1]) };
    /// let m = ResampleMatrix::generate(&design, 100, 42)?;
    /// assert_eq!(m, ResampleMatrix::generate(&design, 100, 42)?);
    /// let row = m.row(0).expect("100 rows");
    /// assert!(row[..3].iter().all(|&c| c < 3) && row[3..].iter().all(|&c| c >= 3));
    /// # Ok::<(), roboaudit_stats::StatsError>(())
    /// ```
    pub fn generate(
        design: &ResampleDesign,
        resamples: usize,
        seed: u64,
    ) -> Result<Self, StatsError> {
        let pools = StratumPools::for_design(design, resamples)?;
        let n = design.n_clusters;
        let mut rows = vec![Vec::new(); resamples];
        rows.par_chunks_mut(ROWS_PER_STREAM)
            .enumerate()
            .for_each(|(block, chunk)| {
                let mut words = BlockWords::new(seed, block);
                for row in chunk {
                    *row = vec![0; n];
                    pools.fill_row(&mut words, row);
                }
            });
        Ok(Self {
            n_clusters: n,
            rows,
        })
    }

    /// Wraps explicit rows (for example from a reference implementation), each of length `n_clusters`
    /// with entries `< n_clusters`.
    ///
    /// # Errors
    /// `InvalidParameter` when a row has the wrong length or an index out of range, or there are no rows.
    ///
    /// # Example
    /// ```
    /// use roboaudit_stats::ResampleMatrix;
    /// let m = ResampleMatrix::from_rows(vec![vec![0, 0, 2], vec![1, 2, 2]], 3)?;
    /// assert_eq!((m.len(), m.n_clusters(), m.row(1)), (2, 3, Some(&[1, 2, 2][..])));
    /// assert!(ResampleMatrix::from_rows(vec![vec![0, 3, 1]], 3).is_err());
    /// # Ok::<(), roboaudit_stats::StatsError>(())
    /// ```
    pub fn from_rows(rows: Vec<Vec<usize>>, n_clusters: usize) -> Result<Self, StatsError> {
        if rows.is_empty() || n_clusters == 0 {
            return Err(StatsError::InvalidParameter(
                "resample matrix needs rows and clusters".to_owned(),
            ));
        }
        for (b, row) in rows.iter().enumerate() {
            if row.len() != n_clusters {
                return Err(StatsError::InvalidParameter(format!(
                    "resample row {b} has {} entries, expected {n_clusters}",
                    row.len()
                )));
            }
            if let Some(&bad) = row.iter().find(|&&i| i >= n_clusters) {
                return Err(StatsError::InvalidParameter(format!(
                    "resample row {b} draws cluster {bad}, but there are {n_clusters}"
                )));
            }
        }
        Ok(Self { n_clusters, rows })
    }

    /// All rows, in resample order (row `b` has `n_clusters` cluster indices).
    pub fn rows(&self) -> &[Vec<usize>] {
        &self.rows
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
        Self {
            resamples: 10_000,
            level: 0.95,
            method: IntervalMethod::Percentile,
            seed: 0,
        }
    }
}

/// Result of a bootstrap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapResult {
    /// The statistic on the original data (all clusters once).
    pub estimate: f64,
    /// The interval; `None` when fewer than 2 resamples gave a defined statistic, or (BCa) when the
    /// adjustment is undefined: every replicate on one side of the estimate, a jackknife statistic
    /// undefined, fewer than 2 clusters or zero jackknife variance (where SciPy returns NaN).
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
/// original data; `NonFinite` when it returns `Some` of a NaN or infinity.
pub fn bootstrap<F>(
    design: &ResampleDesign,
    config: &BootstrapConfig,
    statistic: F,
) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&[usize]) -> Option<f64> + Sync,
{
    let pools = StratumPools::for_design(design, config.resamples)?;
    check_level(config.level)?;
    let n = design.n_clusters;
    let estimate = original_estimate(n, &statistic)?;
    // The rows of `ResampleMatrix::generate`, drawn and evaluated in place: one row buffer per
    // block instead of one allocation per resample, and no matrix kept alive.
    let mut replicates = vec![None; config.resamples];
    replicates
        .par_chunks_mut(ROWS_PER_STREAM)
        .enumerate()
        .for_each(|(block, out)| {
            let mut words = BlockWords::new(config.seed, block);
            let mut row = vec![0; n];
            for slot in out {
                pools.fill_row(&mut words, &mut row);
                *slot = statistic(&row);
            }
        });
    summarize(
        &replicates,
        estimate,
        n,
        config.level,
        config.method,
        &leave_one_out(n, &statistic),
    )
}

/// As [`bootstrap`], on an explicit resample matrix (so an interval can be compared with a reference
/// computed on the very same resamples). The percentile interval is `np.percentile` of the defined
/// replicates at `100·α/2` and `100·(1 − α/2)`; BCa follows SciPy 1.15's `_bca_interval` (z0 from
/// the mid-rank fraction of replicates below the estimate, acceleration from the leave-one-cluster-out
/// jackknife).
///
/// # Errors
/// `InvalidParameter` when `level` is outside (0, 1); `TooFew` when the statistic is undefined on
/// the original data; `NonFinite` when the statistic returns `Some` of a NaN or infinity.
pub fn bootstrap_with_matrix<F>(
    matrix: &ResampleMatrix,
    level: f64,
    method: IntervalMethod,
    statistic: F,
) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&[usize]) -> Option<f64> + Sync,
{
    check_level(level)?;
    let n = matrix.n_clusters;
    let estimate = original_estimate(n, &statistic)?;
    // par_iter + collect keeps resample order, so the output does not depend on the thread count.
    let replicates: Vec<Option<f64>> = matrix.rows.par_iter().map(|row| statistic(row)).collect();
    summarize(
        &replicates,
        estimate,
        n,
        level,
        method,
        &leave_one_out(n, &statistic),
    )
}

pub(crate) fn check_level(level: f64) -> Result<(), StatsError> {
    if level.is_finite() && level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter(format!(
            "confidence level {level} is outside (0, 1)"
        )))
    }
}

/// The statistic on every cluster once (`0..n`).
fn original_estimate<F>(n: usize, statistic: &F) -> Result<f64, StatsError>
where
    F: Fn(&[usize]) -> Option<f64>,
{
    let all: Vec<usize> = (0..n).collect();
    let estimate = statistic(&all).ok_or(StatsError::TooFew {
        what: "a bootstrap statistic defined on the original data",
        n: 0,
        min: 1,
    })?;
    check_finite(&[estimate], "bootstrap estimate")?;
    Ok(estimate)
}

/// The jackknife of an index statistic: all `n` clusters but `left_out`, in order.
fn leave_one_out<F>(n: usize, statistic: &F) -> impl Fn(usize) -> Option<f64> + Sync
where
    F: Fn(&[usize]) -> Option<f64> + Sync,
{
    move |left_out| {
        let rest: Vec<usize> = (0..n).filter(|&i| i != left_out).collect();
        statistic(&rest)
    }
}

/// Interval and standard error from the replicates (in resample order), shared by every entry
/// point; `jackknife(i)` is the statistic without cluster `i` (BCa only).
pub(crate) fn summarize<J>(
    replicates: &[Option<f64>],
    estimate: f64,
    n: usize,
    level: f64,
    method: IntervalMethod,
    jackknife: &J,
) -> Result<BootstrapResult, StatsError>
where
    J: Fn(usize) -> Option<f64> + Sync,
{
    if let Some(index) = replicates
        .iter()
        .position(|r| r.is_some_and(|v| !v.is_finite()))
    {
        return Err(StatsError::NonFinite {
            what: "bootstrap replicates",
            index,
        });
    }
    let defined: Vec<f64> = replicates.iter().flatten().copied().collect();
    let interval = if defined.len() < 2 {
        None
    } else {
        match method {
            IntervalMethod::Percentile => Some(percentile_interval(&defined, level)),
            // A jackknife needs two clusters; never call the statistic on an empty list.
            IntervalMethod::Bca if n < 2 => None,
            IntervalMethod::Bca => {
                let jackknife: Vec<Option<f64>> = (0..n).into_par_iter().map(jackknife).collect();
                let jackknife: Option<Vec<f64>> = jackknife.into_iter().collect();
                jackknife.and_then(|jk| bca_interval(&defined, estimate, &jk, level))
            }
        }
    };
    Ok(BootstrapResult {
        estimate,
        interval,
        method,
        resamples: replicates.len(),
        undefined_resamples: replicates.len() - defined.len(),
        standard_error: standard_deviation(&defined),
    })
}

/// Equivalence (SPEC §2 controls): true iff the whole interval lies inside `[−margin, +margin]`.
/// Failing to reject a difference is never equivalence.
pub fn equivalent(interval: &Interval, margin: f64) -> bool {
    interval.lo >= -margin && interval.hi <= margin
}

/// Rows drawn from one ChaCha stream by [`ResampleMatrix::generate`]: large enough that stream
/// set-up is negligible, small enough to spread 10,000 rows over many threads.
pub const ROWS_PER_STREAM: usize = 64;

/// The cases on which the tests of the resample engines compare one with another: 10 clusters
/// without and with strata, each with a percentile and a BCa interval, at the default level, on
/// 1,000 resamples (a partial last block) from seed 17.
#[cfg(test)]
pub(crate) fn engine_cases() -> impl Iterator<Item = (ResampleDesign, BootstrapConfig)> {
    [None, Some(vec![0, 1, 1, 0, 2, 2, 2, 1, 0, 1])]
        .into_iter()
        .flat_map(|strata| {
            [IntervalMethod::Percentile, IntervalMethod::Bca].map(|method| {
                let design = ResampleDesign {
                    n_clusters: 10,
                    strata: strata.clone(),
                };
                let config = BootstrapConfig {
                    resamples: 1_000,
                    method,
                    seed: 17,
                    ..BootstrapConfig::default()
                };
                (design, config)
            })
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `bootstrap` draws and evaluates rows in place; it must equal evaluating the materialized
    /// `ResampleMatrix::generate` rows, with and without strata, for a resample count that leaves
    /// a partial last block, and with undefined replicates.
    #[test]
    fn fused_bootstrap_equals_generated_matrix() {
        let stat = |idx: &[usize]| {
            let s: usize = idx.iter().map(|&i| i * i).sum();
            (!s.is_multiple_of(7)).then(|| s as f64 / idx.len() as f64)
        };
        for (design, config) in engine_cases() {
            let fused = bootstrap(&design, &config, stat).unwrap();
            let matrix = ResampleMatrix::generate(&design, config.resamples, config.seed).unwrap();
            let reference =
                bootstrap_with_matrix(&matrix, config.level, config.method, stat).unwrap();
            assert_eq!(fused, reference);
            assert!(fused.undefined_resamples > 0);
        }
    }
}
