//! Cluster bootstrap (SPEC.md §0): seeded, parallel, byte-identical for any thread count.

use crate::StatsError;
use crate::check::check_finite;
use crate::interval::{bca_interval, percentile_interval, standard_deviation};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
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
    /// (`ChaCha8Rng::seed_from_u64(seed)` with `set_stream(c)`), each index by Lemire's exact
    /// multiply-and-reject method on `next_u32`. Blocks are drawn in parallel, and the same
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
        &statistic,
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
    summarize(&replicates, estimate, n, level, method, &statistic)
}

fn check_level(level: f64) -> Result<(), StatsError> {
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

/// Interval and standard error from the replicates (in resample order), shared by both entry points.
fn summarize<F>(
    replicates: &[Option<f64>],
    estimate: f64,
    n: usize,
    level: f64,
    method: IntervalMethod,
    statistic: &F,
) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&[usize]) -> Option<f64> + Sync,
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
                let jackknife: Vec<Option<f64>> = (0..n)
                    .into_par_iter()
                    .map(|left_out| {
                        let rest: Vec<usize> = (0..n).filter(|&i| i != left_out).collect();
                        statistic(&rest)
                    })
                    .collect();
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

/// Cluster pools of each stratum, and each position's pool.
struct StratumPools {
    pools: Vec<Vec<usize>>,
    pool_of: Vec<usize>,
}

impl StratumPools {
    /// Validates `design` and `resamples` (the errors of [`ResampleMatrix::generate`], in its order).
    fn for_design(design: &ResampleDesign, resamples: usize) -> Result<Self, StatsError> {
        let n = design.n_clusters;
        if n == 0 || u32::try_from(n).is_err() {
            return Err(StatsError::InvalidParameter(format!(
                "bootstrap design has {n} clusters"
            )));
        }
        if resamples == 0 {
            return Err(StatsError::InvalidParameter(
                "bootstrap needs at least one resample".to_owned(),
            ));
        }
        match &design.strata {
            None => Ok(Self::single(n)),
            Some(strata) if strata.len() != n => Err(StatsError::InvalidParameter(format!(
                "strata has {} entries for {n} clusters",
                strata.len()
            ))),
            Some(strata) => Ok(Self::new(strata)),
        }
    }

    /// One pool holding every cluster (no strata).
    fn single(n: usize) -> Self {
        Self {
            pools: vec![(0..n).collect()],
            pool_of: vec![0; n],
        }
    }

    fn new(strata: &[usize]) -> Self {
        let mut labels: Vec<usize> = strata.to_vec();
        labels.sort_unstable();
        labels.dedup();
        let mut pools = vec![Vec::new(); labels.len()];
        let mut pool_of = Vec::with_capacity(strata.len());
        for (cluster, s) in strata.iter().enumerate() {
            // `labels` holds every stratum value, so the search always succeeds.
            let p = labels.binary_search(s).unwrap_or(0);
            pools[p].push(cluster);
            pool_of.push(p);
        }
        Self { pools, pool_of }
    }

    /// Draws the next row of the stream into `row` (`row.len() == pool_of.len()`).
    fn fill_row(&self, words: &mut BlockWords, row: &mut [usize]) {
        if let [pool] = self.pools.as_slice() {
            // One pool: it is `0..n`, so the drawn position is the cluster.
            #[allow(clippy::cast_possible_truncation)] // n <= u32::MAX (checked)
            uniform_row(words, pool.len() as u32, row);
            return;
        }
        for (slot, &p) in row.iter_mut().zip(&self.pool_of) {
            let pool = &self.pools[p];
            // Pools are non-empty and no larger than n_clusters <= u32::MAX (checked).
            #[allow(clippy::cast_possible_truncation)]
            let k = uniform_below(words, pool.len() as u32);
            *slot = pool[k as usize];
        }
    }
}

/// Every slot of `row` uniform on `0..n`, exactly as `uniform_below` called once per slot.
fn uniform_row(words: &mut BlockWords, n: u32, row: &mut [usize]) {
    for chunk in row.chunks_mut(FAST_CHUNK) {
        if !words.try_fast_chunk(n, chunk) {
            for slot in chunk {
                *slot = uniform_below(words, n) as usize;
            }
        }
    }
}

/// Words per refill of [`BlockWords`] (1 KiB).
const BUFFERED_WORDS: usize = 256;
/// Positions of a row drawn together by [`BlockWords::try_fast_chunk`].
const FAST_CHUNK: usize = 64;

/// The `next_u32` sequence of one block's ChaCha8 stream (`seed_from_u64(seed)`, then
/// `set_stream(block)`), read through a local buffer. `BlockRng::fill_bytes` on a whole number of
/// words yields exactly the words `next_u32` would, in the same order, and nothing else reads the
/// stream, so the draws are those of calling `next_u32` once per word; reading them in bulk
/// avoids a store and reload of the generator's index per word and lets Lemire's products for a
/// whole chunk be computed in one vectorizable pass.
struct BlockWords {
    rng: ChaCha8Rng,
    buf: [u32; BUFFERED_WORDS],
    pos: usize,
}

impl BlockWords {
    fn new(seed: u64, block: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(block as u64);
        Self {
            rng,
            buf: [0; BUFFERED_WORDS],
            pos: BUFFERED_WORDS,
        }
    }

    /// Moves the unread words to the front and refills the rest, in stream order.
    fn refill(&mut self) {
        let unread = BUFFERED_WORDS - self.pos;
        self.buf.copy_within(self.pos.., 0);
        let mut fresh = self.buf[unread..].chunks_exact_mut(2);
        for pair in fresh.by_ref() {
            // `next_u64` is the next two words, low word first (`BlockRng::next_u64_from_u32`).
            let x = self.rng.next_u64();
            #[allow(clippy::cast_possible_truncation)] // the low word is wanted
            let lo = x as u32;
            pair[0] = lo;
            pair[1] = (x >> 32) as u32;
        }
        for w in fresh.into_remainder() {
            *w = self.rng.next_u32();
        }
        self.pos = 0;
    }

    fn next_word(&mut self) -> u32 {
        if self.pos == BUFFERED_WORDS {
            self.refill();
        }
        let w = self.buf[self.pos];
        self.pos += 1;
        w
    }

    /// Lemire's draw below `n` for every slot of `out` (at most [`FAST_CHUNK`]), one word each,
    /// when no word of the chunk lands in the low band `low < n` where a rejection is possible;
    /// otherwise consumes nothing and returns false (probability < `out.len()·n / 2^32`), and the
    /// caller draws the chunk one word at a time. Either way the output is that of the sequential
    /// method.
    fn try_fast_chunk(&mut self, n: u32, out: &mut [usize]) -> bool {
        if BUFFERED_WORDS - self.pos < out.len() {
            self.refill();
        }
        let words = &self.buf[self.pos..self.pos + out.len()];
        let n64 = u64::from(n);
        #[allow(clippy::cast_possible_truncation)] // the low 32 bits are wanted
        let safe = words
            .iter()
            .fold(true, |ok, &w| ok & ((u64::from(w) * n64) as u32 >= n));
        if !safe {
            return false;
        }
        for (slot, &w) in out.iter_mut().zip(words) {
            #[allow(clippy::cast_possible_truncation)] // (w·n) >> 32 < n <= u32::MAX
            let k = ((u64::from(w) * n64) >> 32) as usize;
            *slot = k;
        }
        self.pos += out.len();
        true
    }
}

/// Uniform integer in `0..n` (`n >= 1`) by Lemire's multiply-and-reject ("nearly divisionless",
/// ACM TOMACS 2019): exactly uniform, one word per draw except with probability < n / 2^32.
fn uniform_below(words: &mut BlockWords, n: u32) -> u32 {
    let mut m = u64::from(words.next_word()) * u64::from(n);
    #[allow(clippy::cast_possible_truncation)] // the low 32 bits are wanted
    if (m as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u32) < threshold {
            m = u64::from(words.next_word()) * u64::from(n);
        }
    }
    #[allow(clippy::cast_possible_truncation)] // m >> 32 < n
    let k = (m >> 32) as u32;
    k
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
        for strata in [None, Some(vec![0, 1, 1, 0, 2, 2, 2, 1, 0, 1])] {
            let design = ResampleDesign {
                n_clusters: 10,
                strata,
            };
            for method in [IntervalMethod::Percentile, IntervalMethod::Bca] {
                let config = BootstrapConfig {
                    resamples: 1_000,
                    method,
                    seed: 17,
                    ..BootstrapConfig::default()
                };
                let fused = bootstrap(&design, &config, stat).unwrap();
                let matrix = ResampleMatrix::generate(&design, 1_000, 17).unwrap();
                let reference = bootstrap_with_matrix(&matrix, 0.95, method, stat).unwrap();
                assert_eq!(fused, reference);
                assert!(fused.undefined_resamples > 0);
            }
        }
    }

    /// The buffered, chunked draws equal Lemire's method on `next_u32` one word at a time, also
    /// where the fast path falls back often (n near 2^32: most words land in the low band and
    /// many are rejected) and rows straddle refills.
    #[test]
    fn buffered_draws_equal_sequential_lemire() {
        for (n, len) in [
            (3_000_000_000u32, 100),
            (2_147_483_649, 37),
            (40, 40),
            (1, 3),
        ] {
            let mut words = BlockWords::new(11, 3);
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            rng.set_stream(3);
            for _ in 0..50 {
                let mut row = vec![0; len];
                uniform_row(&mut words, n, &mut row);
                let expected: Vec<usize> = (0..len)
                    .map(|_| {
                        loop {
                            let m = u64::from(rng.next_u32()) * u64::from(n);
                            if (m as u32) >= n.wrapping_neg() % n {
                                break (m >> 32) as usize;
                            }
                        }
                    })
                    .collect();
                assert_eq!(row, expected, "n = {n}");
            }
        }
    }
}
