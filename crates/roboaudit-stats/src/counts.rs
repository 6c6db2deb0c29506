//! Cluster bootstrap of statistics that depend on a resample only through how often each
//! cluster was drawn (SPEC.md §0): the engine hands over multiplicities instead of index lists.

use crate::StatsError;
use crate::bootstrap::{BootstrapConfig, BootstrapResult, ROWS_PER_STREAM, ResampleDesign};
use crate::check::check_finite;
use crate::draws::{BlockCounts, BlockWords, StratumPools};
use crate::wide::{WideKernel, run_wide};
use rayon::prelude::*;

/// As [`crate::bootstrap`] for a statistic of the cluster multiplicities: `statistic` receives
/// `counts` (length `n_clusters`, `counts[c]` = how often cluster `c` was drawn; they sum to
/// `n_clusters`): all ones for the original data, one zero for each leave-one-out jackknife
/// sample of BCa. The resamples are the rows of [`crate::ResampleMatrix::generate`] for the
/// same design, count and seed, so for a statistic whose index form depends only on the
/// multiset of drawn clusters (any mean, sum, or maximum of per-cluster sums) the result is
/// identical to [`crate::bootstrap`]'s, while a statistic that needs no index list (for example a
/// weighted sum of per-cluster columns) skips building and reading one.
///
/// # Errors
/// As [`crate::bootstrap`]: `InvalidParameter` for a bad config or design; `TooFew` when the
/// statistic is undefined on the original data; `NonFinite` when it returns `Some` of a NaN
/// or infinity.
///
/// # Example
/// ```
/// use roboaudit_stats::{BootstrapConfig, ResampleDesign, bootstrap, bootstrap_counts};
/// let x = [0.2, 0.9, 0.4, 0.7, 0.5];
/// let design = ResampleDesign { n_clusters: 5, strata: None };
/// let config = BootstrapConfig { resamples: 500, seed: 3, ..BootstrapConfig::default() };
/// let by_counts = bootstrap_counts(&design, &config, |c: &[u32]| {
///     Some(c.iter().zip(&x).map(|(&k, v)| f64::from(k) * v).sum::<f64>() / 5.0)
/// })?;
/// let by_rows = bootstrap(&design, &config, |idx: &[usize]| {
///     let mut c = [0u32; 5];
///     idx.iter().for_each(|&i| c[i] += 1);
///     Some(c.iter().zip(&x).map(|(&k, v)| f64::from(k) * v).sum::<f64>() / 5.0)
/// })?;
/// assert_eq!(by_counts, by_rows);
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn bootstrap_counts<F>(
    design: &ResampleDesign,
    config: &BootstrapConfig,
    statistic: F,
) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&[u32]) -> Option<f64> + Sync,
{
    let pools = StratumPools::for_design(design, config.resamples)?;
    crate::bootstrap::check_level(config.level)?;
    bootstrap_drawn(&pools, config, &statistic, || {
        #[inline(always)]
        |counts: &[u32], _: &[u64]| statistic(counts)
    })
}

/// The engine of [`bootstrap_counts`] and [`crate::bootstrap_sums`] once their inputs are
/// checked: `of_counts` is the statistic of a row of multiplicities (length `n_clusters`), run on
/// the original data (all ones) and on each leave-one-out jackknife sample of BCa; `per_block`
/// makes, once per block of [`ROWS_PER_STREAM`] resamples, the evaluator of a drawn row, which
/// receives the row's counts and its drawn set (bit `c % 64` of word `c / 64` set exactly for
/// the clusters with a non-zero count) and must give what `of_counts` gives on those counts.
/// The replicates are the rows of [`crate::ResampleMatrix::generate`] for the pools' design,
/// `config.resamples` and `config.seed`, each block drawn and evaluated in one vector dispatch
/// ([`run_wide`]; the evaluator included), in parallel; the same for any thread count.
///
/// # Errors
/// `TooFew` when `of_counts` is undefined on the original data; `NonFinite` when it, or an
/// evaluator, returns `Some` of a NaN or infinity.
pub(crate) fn bootstrap_drawn<C, M, E>(
    pools: &StratumPools,
    config: &BootstrapConfig,
    of_counts: &C,
    per_block: M,
) -> Result<BootstrapResult, StatsError>
where
    C: Fn(&[u32]) -> Option<f64> + Sync,
    M: Fn() -> E + Sync,
    E: FnMut(&[u32], &[u64]) -> Option<f64>,
{
    let n = pools.n_clusters();
    let estimate = of_counts(&vec![1u32; n]).ok_or(StatsError::TooFew {
        what: "a bootstrap statistic defined on the original data",
        n: 0,
        min: 1,
    })?;
    check_finite(&[estimate], "bootstrap estimate")?;
    let mut replicates = vec![None; config.resamples];
    replicates
        .par_chunks_mut(ROWS_PER_STREAM)
        .enumerate()
        .for_each(|(block, out)| {
            run_wide(Resamples {
                pools,
                words: BlockWords::new(config.seed, block),
                per_block: &per_block,
                out,
            });
        });
    let jackknife = |left_out: usize| {
        let mut counts = vec![1u32; n];
        counts[left_out] = 0;
        of_counts(&counts)
    };
    crate::bootstrap::summarize(
        &replicates,
        estimate,
        n,
        config.level,
        config.method,
        &jackknife,
    )
}

/// The cluster multiplicities of the rows of [`crate::ResampleMatrix::generate`] for the same
/// design, resample count and seed, without the index rows: `counts[b * n_clusters + c]` is how
/// often resample `b` drew cluster `c`. Drawn in parallel blocks; the same for any thread count.
/// For callers that evaluate many statistics of the multiplicities on shared resamples (for
/// example with [`crate::ClusterRows::weighted_sums_block`]).
///
/// # Errors
/// As [`crate::ResampleMatrix::generate`].
///
/// # Example
/// ```
/// use roboaudit_stats::{ResampleDesign, ResampleMatrix, resample_counts};
/// let design = ResampleDesign { n_clusters: 4, strata: None };
/// let counts = resample_counts(&design, 100, 9)?;
/// let rows = ResampleMatrix::generate(&design, 100, 9)?;
/// for (b, row) in rows.rows().iter().enumerate() {
///     let mut want = [0u32; 4];
///     row.iter().for_each(|&c| want[c] += 1);
///     assert_eq!(&counts[b * 4..b * 4 + 4], &want);
/// }
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn resample_counts(
    design: &ResampleDesign,
    resamples: usize,
    seed: u64,
) -> Result<Vec<u32>, StatsError> {
    StratumPools::for_design(design, resamples)?;
    let n = design.n_clusters;
    let mut counts = vec![0u32; resamples * n];
    counts
        .par_chunks_mut(ROWS_PER_STREAM * n)
        .enumerate()
        .try_for_each(|(block, out)| {
            let first = block * ROWS_PER_STREAM;
            out.copy_from_slice(&resample_counts_rows(
                design,
                seed,
                first..first + out.len() / n,
            )?);
            Ok(())
        })?;
    Ok(counts)
}

/// Rows `rows` of [`resample_counts`] for the same design and seed (row `b` does not depend
/// on how many resamples are drawn): `counts[(b - rows.start) * n_clusters + c]`. Drawn in the
/// calling thread, so that a caller can produce and consume the resamples block by block (a
/// range starting at a multiple of [`ROWS_PER_STREAM`] draws nothing it does not return).
///
/// # Errors
/// As [`crate::ResampleMatrix::generate`] for the design (an empty range is allowed).
pub fn resample_counts_rows(
    design: &ResampleDesign,
    seed: u64,
    rows: std::ops::Range<usize>,
) -> Result<Vec<u32>, StatsError> {
    let pools = StratumPools::for_design(design, 1)?;
    let n = design.n_clusters;
    let mut counts = vec![0u32; rows.len() * n];
    let mut drawn = BlockCounts::new(n);
    for (block, first, wanted) in stream_blocks(rows.clone()) {
        let mut words = BlockWords::new(seed, block);
        pools.fill_block(&mut words, wanted.end - first, &mut drawn);
        for r in wanted {
            let at = (r - rows.start) * n;
            counts[at..at + n].copy_from_slice(drawn.row(r - first).0);
        }
    }
    Ok(counts)
}

/// Rows `rows` of [`resample_counts`] for the same design and seed, written cluster-major as
/// `f64` weights: `out[c * stride + (b - rows.start)]` is how often resample `b` drew cluster
/// `c` (the layout of a kernel that is vectorized over resamples, which then reads one
/// contiguous run of resamples per cluster). Entries of `out` past each cluster's first
/// `rows.len()` are left as they are. Drawn in the calling thread, from the same streams as
/// [`resample_counts_rows`].
///
/// # Errors
/// As [`crate::ResampleMatrix::generate`] for the design; `LengthMismatch` when `stride <
/// rows.len()` or `out` is shorter than `n_clusters` rows of `stride`.
///
/// # Example
/// ```
/// use roboaudit_stats::{ResampleDesign, resample_counts, resample_weight_columns};
/// let design = ResampleDesign { n_clusters: 3, strata: None };
/// let mut columns = vec![0.0; 3 * 5];
/// resample_weight_columns(&design, 9, 2..7, &mut columns, 5)?;
/// let rows = resample_counts(&design, 7, 9)?;
/// for b in 2..7 {
///     for c in 0..3 {
///         assert_eq!(columns[c * 5 + b - 2], f64::from(rows[b * 3 + c]));
///     }
/// }
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn resample_weight_columns(
    design: &ResampleDesign,
    seed: u64,
    rows: std::ops::Range<usize>,
    out: &mut [f64],
    stride: usize,
) -> Result<(), StatsError> {
    let pools = StratumPools::for_design(design, 1)?;
    let n = design.n_clusters;
    if stride < rows.len() {
        return Err(StatsError::LengthMismatch {
            left: "column stride",
            left_len: stride,
            right: "resamples",
            right_len: rows.len(),
        });
    }
    let needed = (n - 1) * stride + rows.len();
    if !rows.is_empty() && out.len() < needed {
        return Err(StatsError::LengthMismatch {
            left: "weight columns",
            left_len: out.len(),
            right: "clusters × stride",
            right_len: needed,
        });
    }
    run_wide(WeightColumns {
        pools: &pools,
        seed,
        rows,
        out,
        stride,
    });
    Ok(())
}

/// [`resample_weight_columns`] after its checks, as one vector kernel (the digits of a block's
/// rows are computed in vector registers).
struct WeightColumns<'a> {
    pools: &'a StratumPools,
    seed: u64,
    rows: std::ops::Range<usize>,
    out: &'a mut [f64],
    stride: usize,
}

impl WideKernel for WeightColumns<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let WeightColumns {
            pools,
            seed,
            rows,
            out,
            stride,
        } = self;
        let n = pools.n_clusters();
        let mut drawn = BlockCounts::new(n);
        let mut columns = Box::new([0u8; 64 * 64]);
        for (block, first, wanted) in stream_blocks(rows.clone()) {
            let mut words = BlockWords::new(seed, block);
            let (at, len) = (wanted.start - rows.start, wanted.len());
            let drawn_rows = wanted.end - first;
            // Cluster by cluster, so that each column is written in one contiguous run.
            if pools.fill_block_columns(&mut words, drawn_rows, &mut drawn, &mut columns) {
                for (c, column) in out.chunks_mut(stride).take(n).enumerate() {
                    let counts = &columns[c * 64 + (wanted.start - first)..c * 64 + drawn_rows];
                    for (slot, &k) in column[at..at + len].iter_mut().zip(counts) {
                        *slot = f64::from(k);
                    }
                }
            } else {
                pools.fill_block(&mut words, drawn_rows, &mut drawn);
                for (c, column) in out.chunks_mut(stride).take(n).enumerate() {
                    for (slot, r) in column[at..at + len].iter_mut().zip(wanted.start - first..) {
                        *slot = f64::from(drawn.row(r).0[c]);
                    }
                }
            }
        }
    }
}

/// The stream blocks that rows `rows` fall in: `(block, first row of the block, the rows of
/// `rows` in it)`. A block's stream is drawn from its first row, so the rows before the wanted
/// ones are drawn too (and dropped) when `rows` starts inside a block.
fn stream_blocks(
    rows: std::ops::Range<usize>,
) -> impl Iterator<Item = (usize, usize, std::ops::Range<usize>)> {
    let first_block = rows.start / ROWS_PER_STREAM;
    let last_block = rows.end.div_ceil(ROWS_PER_STREAM);
    (first_block..last_block).filter_map(move |block| {
        let first = block * ROWS_PER_STREAM;
        let wanted = rows.start.max(first)..rows.end.min(first + ROWS_PER_STREAM);
        (!wanted.is_empty()).then_some((block, first, wanted))
    })
}

/// One block of [`bootstrap_drawn`]: draw each row as counts and evaluate, in one vector
/// dispatch (the evaluator included; it does not depend on which copy runs it).
struct Resamples<'a, M> {
    pools: &'a StratumPools,
    words: BlockWords,
    per_block: &'a M,
    out: &'a mut [Option<f64>],
}

impl<M, E> WideKernel for Resamples<'_, M>
where
    M: Fn() -> E,
    E: FnMut(&[u32], &[u64]) -> Option<f64>,
{
    type Output = ();

    #[inline(always)]
    fn run(mut self) {
        let mut evaluate = (self.per_block)();
        let mut block = BlockCounts::new(self.pools.n_clusters());
        self.pools
            .fill_block(&mut self.words, self.out.len(), &mut block);
        for (r, slot) in self.out.iter_mut().enumerate() {
            let (counts, bits) = block.row(r);
            *slot = evaluate(counts, bits);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bootstrap::{bootstrap, engine_cases};
    use crate::{resample_counts, resample_counts_rows, resample_weight_columns};

    /// Any range of rows gives those rows of the whole, aligned to the streams or not.
    #[test]
    fn row_ranges_are_slices_of_the_whole() {
        let design = ResampleDesign {
            n_clusters: 9,
            strata: None,
        };
        let all = resample_counts(&design, 300, 5).unwrap();
        for range in [0..300, 64..128, 3..5, 250..300, 70..70] {
            let part = resample_counts_rows(&design, 5, range.clone()).unwrap();
            assert_eq!(part, all[range.start * 9..range.end * 9]);
        }
    }

    /// Weight columns hold the counts of the same rows, for row ranges aligned to the streams
    /// or not, on the small one-pool path and on the general one (strata; more than 64
    /// clusters); entries past the range are left as they were.
    #[test]
    fn weight_columns_are_the_counts_cluster_major() {
        for (n, strata) in [
            (9, None),
            (9, Some(vec![0, 1, 1, 0, 2, 2, 2, 1, 0])),
            (70, None),
        ] {
            let design = ResampleDesign {
                n_clusters: n,
                strata,
            };
            let all = resample_counts(&design, 300, 5).unwrap();
            for range in [0..300, 64..128, 3..5, 250..300, 70..70, 60..200] {
                let stride = range.len() + 3;
                let mut out = vec![-1.0; n * stride];
                resample_weight_columns(&design, 5, range.clone(), &mut out, stride).unwrap();
                for c in 0..n {
                    for (j, b) in range.clone().enumerate() {
                        assert_eq!(out[c * stride + j], f64::from(all[b * n + c]));
                    }
                    assert!(
                        out[c * stride + range.len()..(c + 1) * stride]
                            .iter()
                            .all(|&v| v == -1.0)
                    );
                }
            }
        }
    }

    /// Counts give the very result of the index form (same rows, same replicates, same BCa
    /// jackknife), with and without strata, with undefined replicates and a partial last block.
    #[test]
    fn counts_bootstrap_equals_index_bootstrap() {
        let x: Vec<f64> = (0..10).map(|i| f64::from(i * i % 7) - 2.5).collect();
        let from_counts = |c: &[u32]| {
            let total: f64 = c.iter().zip(&x).map(|(&k, v)| f64::from(k) * v).sum();
            (c[3] != 2).then_some(total / 10.0)
        };
        let from_rows = |idx: &[usize]| {
            let mut c = [0u32; 10];
            idx.iter().for_each(|&i| c[i] += 1);
            from_counts(&c)
        };
        for (design, config) in engine_cases() {
            let a = bootstrap_counts(&design, &config, from_counts).unwrap();
            let b = bootstrap(&design, &config, from_rows).unwrap();
            assert_eq!(a, b);
            assert!(a.undefined_resamples > 0 && a.interval.is_some());
        }
    }
}
