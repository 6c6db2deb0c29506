//! Cluster bootstrap of statistics of cluster-weighted sums (SPEC.md §0): every cluster carries
//! a row of values (for scene clusters of a transfer matrix, the column `P[·, s]` of every
//! experience), a resample's sums are `Σ_c count_c · row_c`, and the statistic sees only them
//! (best-fixed success `max_e Σ_s c_s P[e,s] / n`, the qualities `q_b(e)` of the retrieval audit).
//!
//! The sums are the hot loop, so they get one kernel here: only the clusters a resample drew
//! are visited (about 63 % of them for `n` draws of `n`), by the set bits of a bit set, and the
//! sums are accumulated over them in register tiles of up to [`TILE`] values, each row tile
//! streamed from memory once per drawn cluster, with 256-bit registers where the CPU has them
//! ([`crate::run_wide`]). Every sum is added left to right over the drawn clusters in cluster
//! order, a multiply then an add per term, so the result is the same on every dispatch path
//! and for any resample order.

use crate::StatsError;
use crate::bootstrap::{BootstrapConfig, BootstrapResult, ResampleDesign};
use crate::check::{check_finite, check_same_len};
use crate::counts::bootstrap_drawn;
use crate::draws::StratumPools;
use crate::wide::{WideKernel, run_wide};

/// Widest register tile of the sums, in values: 13 AVX registers of accumulators (of 16),
/// with room left for the broadcast weight and a product. Wider rows are cut into equal tiles.
const TILE: usize = 52;

/// Widest tile where the AVX-512 copy runs: 14 of its 32 registers, so that a row of up to 112
/// values (the 106 columns of a retrieval audit's replicates) is one tile, and the drawn
/// clusters are walked once per resample instead of once per tile.
const TILE_512: usize = 112;

/// A row of `width` finite values per cluster, stored padded to a multiple of 4 (zeros) so
/// that the tiles of [`ClusterRows::weighted_sums`] run in whole vector registers.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRows {
    n_clusters: usize,
    width: usize,
    stride: usize,
    /// Width of the register tiles (module docs).
    tile: usize,
    values: Vec<f64>,
}

/// The sums of one resample handed to a statistic by [`bootstrap_sums`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightedSums<'a> {
    /// `sums[j] = Σ_c count_c · row_c[j]` (length [`ClusterRows::width`]).
    pub sums: &'a [f64],
    /// `Σ_c count_c`: the number of clusters drawn (`n_clusters`, or `n_clusters − 1` for a
    /// leave-one-out jackknife sample of BCa).
    pub draws: u32,
}

impl ClusterRows {
    /// Rows from `values`, cluster-major: `values[c * width + j]` is value `j` of cluster `c`.
    ///
    /// # Errors
    /// `InvalidParameter` for zero clusters, zero width or a length other than
    /// `n_clusters * width`; `NonFinite` for a NaN or infinite value.
    ///
    /// # Example
    /// ```
    /// use roboaudit_stats::ClusterRows;
    /// // P[e][s] of two experiences over three scenes, one row per scene (the cluster)
    /// let rows = ClusterRows::new(3, 2, &[0.5, 1.0, 0.0, 0.5, 1.0, 0.0])?;
    /// let mut sums = [0.0; 2];
    /// rows.weighted_sums(&[2, 0, 1], &mut sums)?; // scene 0 drawn twice, scene 2 once
    /// assert_eq!(sums, [2.0, 2.0]);
    /// # Ok::<(), roboaudit_stats::StatsError>(())
    /// ```
    pub fn new(n_clusters: usize, width: usize, values: &[f64]) -> Result<Self, StatsError> {
        if n_clusters == 0 || width == 0 || Some(values.len()) != n_clusters.checked_mul(width) {
            return Err(StatsError::InvalidParameter(format!(
                "cluster rows: {} values for {n_clusters} clusters of width {width}",
                values.len()
            )));
        }
        check_finite(values, "cluster rows")?;
        let stride = width.div_ceil(4) * 4;
        let mut padded = vec![0.0; n_clusters * stride];
        for (to, from) in padded
            .chunks_exact_mut(stride)
            .zip(values.chunks_exact(width))
        {
            to[..width].copy_from_slice(from);
        }
        // Equal tiles of at most TILE values (104 = 52 + 52, not 52 + 48 + 4: a narrow tile
        // pays the whole loop overhead for one register). The tiling does not change any sum.
        let widest = if crate::wide::has_avx512() {
            TILE_512
        } else {
            TILE
        };
        let tiles = stride.div_ceil(widest);
        let tile = stride.div_ceil(tiles).div_ceil(4) * 4;
        Ok(Self {
            n_clusters,
            width,
            stride,
            tile,
            values: padded,
        })
    }

    /// Number of clusters (rows).
    pub fn n_clusters(&self) -> usize {
        self.n_clusters
    }

    /// Values per cluster.
    pub fn width(&self) -> usize {
        self.width
    }

    /// `sums[j] = Σ_c counts[c] · row_c[j]`, summed left to right over the clusters with a
    /// non-zero count (module docs).
    ///
    /// # Errors
    /// `LengthMismatch` when `counts` does not have one entry per cluster or `sums` one per value.
    pub fn weighted_sums(&self, counts: &[u32], sums: &mut [f64]) -> Result<(), StatsError> {
        self.weighted_sums_block(counts, sums)
    }

    /// [`Self::weighted_sums`] of a block of resamples at once (one vector dispatch for all):
    /// `counts` holds `r` rows of `n_clusters` multiplicities, `sums` receives `r` rows of
    /// `width` sums, both row-major.
    ///
    /// # Errors
    /// `LengthMismatch` unless `counts.len() / n_clusters == sums.len() / width` with no
    /// remainders.
    pub fn weighted_sums_block(&self, counts: &[u32], sums: &mut [f64]) -> Result<(), StatsError> {
        let rows = counts.len() / self.n_clusters;
        if !counts.len().is_multiple_of(self.n_clusters) {
            check_same_len("counts", counts.len(), "clusters", self.n_clusters)?;
        }
        check_same_len("sums", sums.len(), "resamples × width", rows * self.width)?;
        run_wide(Block {
            rows: self,
            counts,
            sums,
        });
        Ok(())
    }
}

/// [`ClusterRows::weighted_sums_block`] as one vector kernel.
struct Block<'a> {
    rows: &'a ClusterRows,
    counts: &'a [u32],
    sums: &'a mut [f64],
}

impl WideKernel for Block<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let n = self.rows.n_clusters;
        // The drawn set of one resample: on the stack up to 256 clusters (no allocation for a
        // single resample).
        let mut small = [0u64; 4];
        let mut large = Vec::new();
        let bits: &mut [u64] = if n <= 256 {
            &mut small[..n.div_ceil(64)]
        } else {
            large.resize(n.div_ceil(64), 0);
            &mut large
        };
        for (counts, out) in self
            .counts
            .chunks_exact(n)
            .zip(self.sums.chunks_exact_mut(self.rows.width))
        {
            // One word per 64 clusters, built in a register (an OR into memory per cluster
            // would chain every cluster through one memory word).
            for (word, chunk) in bits.iter_mut().zip(counts.chunks(64)) {
                *word = chunk
                    .iter()
                    .enumerate()
                    .fold(0, |w, (c, &count)| w | (u64::from(count != 0) << c));
            }
            sums_of_drawn(self.rows, counts, bits, out);
        }
    }
}

/// The sums (`out.len() == rows.width`) of one resample's `counts` (length `n_clusters`) with
/// the drawn clusters already known: `bits` has bit `c % 64` of word `c / 64` set exactly for
/// the clusters with a non-zero count.
#[inline(always)]
pub(crate) fn sums_of_drawn(rows: &ClusterRows, counts: &[u32], bits: &[u64], out: &mut [f64]) {
    let mut start = 0;
    while start < rows.width {
        let width = (rows.stride - start).min(rows.tile);
        let end = (start + width).min(rows.width);
        let out = &mut out[start..end];
        let drawn = Drawn {
            values: &rows.values[start..],
            stride: rows.stride,
            counts,
            bits,
        };
        // One monomorphized tile per width (multiples of 4 up to TILE_512), so that the
        // accumulators of every tile have a fixed size and stay in registers.
        macro_rules! tiles {
            ($($w:literal)*) => {
                match width {
                    $($w => tile::<$w>(&drawn, out),)*
                    _ => tile::<TILE_512>(&drawn, out),
                }
            };
        }
        tiles!(4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64 68 72 76 80 84 88 92 96 100 104 108);
        start += width;
    }
}

/// The drawn clusters of one resample and their rows (from one tile's first column on).
struct Drawn<'a> {
    values: &'a [f64],
    stride: usize,
    counts: &'a [u32],
    bits: &'a [u64],
}

/// `out[i] = Σ_c counts[c] · values[c·stride + i]` for `i < out.len() <= W` over the drawn
/// clusters, left to right in cluster order, accumulated in registers. The drawn clusters
/// are visited by their set bits, so the loop never branches on which clusters were drawn
/// (random, so such a branch would mispredict about every other cluster).
#[inline(always)]
fn tile<const W: usize>(drawn: &Drawn<'_>, out: &mut [f64]) {
    let mut acc = [0.0f64; W];
    for (word, &bits) in drawn.bits.iter().enumerate() {
        let mut rest = bits;
        while rest != 0 {
            // Wrapping ops: cluster indices and row offsets are in range (they index the
            // rows), and the dev profile's overflow checks would sit on the hot path.
            let c = (word << 6).wrapping_add(rest.trailing_zeros() as usize);
            rest &= rest.wrapping_sub(1);
            let at = c.wrapping_mul(drawn.stride);
            let (Some(&count), Some(row)) = (
                drawn.counts.get(c),
                drawn.values.get(at..at.wrapping_add(W)),
            ) else {
                continue;
            };
            // A fixed-size row: the loop below has a known trip count; it is vectorized and
            // fully unrolled, so the accumulators live in registers.
            let Ok(row) = <&[f64; W]>::try_from(row) else {
                continue;
            };
            let w = f64::from(count);
            for i in 0..W {
                acc[i] += w * row[i];
            }
        }
    }
    // A whole-array copy first: the accumulators never need a memory address, so they stay in
    // registers for the whole loop; only the copy drops the padding of the last tile.
    let done: [f64; W] = acc;
    let len = out.len().min(W);
    out[..len].copy_from_slice(&done[..len]);
}

/// Cluster bootstrap of a statistic of cluster-weighted sums: `statistic` receives, for every
/// resample, the [`WeightedSums`] of `rows` under the resample's cluster multiplicities (all
/// ones for the original data, one zero for each leave-one-out jackknife sample of BCa). The
/// resamples are the rows of [`crate::ResampleMatrix::generate`] for the same design, count and
/// seed, so the result is that of [`crate::bootstrap`] and [`crate::bootstrap_counts`] for the
/// same statistic written on an index list or on counts (when it computes the sums as
/// [`ClusterRows::weighted_sums`] does); only the work differs: no index list, and the sums run
/// in the kernel of this module.
///
/// # Errors
/// `InvalidParameter` for a bad config or design, or `rows` with another number of clusters
/// than the design; `TooFew` when the statistic is undefined on the original data; `NonFinite`
/// when it returns `Some` of a NaN or infinity.
///
/// # Example
/// Best-fixed success over the drawn scenes, `max_e Σ_s c_s P[e,s] / Σ_s c_s`:
/// ```
/// use roboaudit_stats::{BootstrapConfig, ClusterRows, ResampleDesign, bootstrap_sums};
/// // P[e][s] for 2 experiences × 4 scenes, stored one row per scene
/// let p = [[0.25, 1.0, 0.5, 0.75], [0.5, 0.25, 1.0, 0.5]];
/// let by_scene: Vec<f64> = (0..4).flat_map(|s| p.iter().map(move |row| row[s])).collect();
/// let rows = ClusterRows::new(4, 2, &by_scene)?;
/// let design = ResampleDesign { n_clusters: 4, strata: None };
/// let config = BootstrapConfig { resamples: 1_000, seed: 5, ..BootstrapConfig::default() };
/// let best_fixed = bootstrap_sums(&design, &config, &rows, |r| {
///     Some(r.sums.iter().copied().fold(f64::NEG_INFINITY, f64::max) / f64::from(r.draws))
/// })?;
/// assert_eq!(best_fixed.estimate, 0.625);
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn bootstrap_sums<F>(
    design: &ResampleDesign,
    config: &BootstrapConfig,
    rows: &ClusterRows,
    statistic: F,
) -> Result<BootstrapResult, StatsError>
where
    F: Fn(&WeightedSums<'_>) -> Option<f64> + Sync,
{
    let pools = StratumPools::for_design(design, config.resamples)?;
    crate::bootstrap::check_level(config.level)?;
    let n = design.n_clusters;
    if rows.n_clusters != n {
        return Err(StatsError::InvalidParameter(format!(
            "cluster rows have {} clusters, the design {n}",
            rows.n_clusters
        )));
    }
    let width = rows.width;
    // Cast: n <= u32::MAX (checked by the design)
    let draws = n as u32;
    let statistic = &statistic;
    let of_counts = |counts: &[u32]| {
        let mut sums = vec![0.0; width];
        rows.weighted_sums(counts, &mut sums).ok()?;
        statistic(&WeightedSums {
            sums: &sums,
            draws: counts.iter().sum(),
        })
    };
    // A drawn row's sums run in the kernel of this module, over its drawn set; the original
    // data and the jackknife go through `weighted_sums` (the same sums, bit for bit).
    bootstrap_drawn(&pools, config, &of_counts, || {
        let mut sums = vec![0.0; width];
        #[inline(always)]
        move |counts: &[u32], bits: &[u64]| {
            sums_of_drawn(rows, counts, bits, &mut sums);
            statistic(&WeightedSums { sums: &sums, draws })
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bootstrap::{IntervalMethod, bootstrap, engine_cases};

    /// The kernel gives, bit for bit, the left-to-right sum over the drawn clusters, for widths
    /// that need one tile, several, and padding.
    #[test]
    fn sums_equal_left_to_right_sums() {
        for (n, width) in [
            (7, 1),
            (5, 3),
            (9, 50),
            (3, 97),
            (40, 52),
            (40, 106),
            (6, 230),
        ] {
            let values: Vec<f64> = (0..n * width)
                .map(|i| ((i * 7919 % 1013) as f64 / 101.0 - 4.0).sin())
                .collect();
            let rows = ClusterRows::new(n, width, &values).unwrap();
            for seed in 0..20u32 {
                let counts: Vec<u32> = (0..n as u32).map(|c| (c * 31 + seed * 17) % 4).collect();
                let mut got = vec![0.0; width];
                rows.weighted_sums(&counts, &mut got).unwrap();
                for j in 0..width {
                    let mut want = 0.0;
                    for c in 0..n {
                        if counts[c] != 0 {
                            want += f64::from(counts[c]) * values[c * width + j];
                        }
                    }
                    assert_eq!(
                        got[j].to_bits(),
                        want.to_bits(),
                        "n {n} width {width} j {j}"
                    );
                }
            }
        }
        assert!(ClusterRows::new(2, 2, &[0.0; 3]).is_err());
        assert!(ClusterRows::new(1, 1, &[f64::NAN]).is_err());
        let rows = ClusterRows::new(2, 1, &[1.0, 2.0]).unwrap();
        assert!(rows.weighted_sums(&[1], &mut [0.0]).is_err());
        assert!(rows.weighted_sums_block(&[1, 1, 1, 1], &mut [0.0]).is_err());
    }

    /// The sums engine is the index engine on the same resamples (with strata, BCa, undefined
    /// replicates and a partial last block).
    #[test]
    fn sums_bootstrap_equals_index_bootstrap() {
        let (n, width) = (10, 3);
        let values: Vec<f64> = (0..n * width).map(|i| (i * i % 11) as f64 / 7.0).collect();
        let rows = ClusterRows::new(n, width, &values).unwrap();
        let stat = |s: &[f64], draws: u32| {
            let best = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // undefined on about a third of the resamples
            ((s[0] * 7.0).round() as i64 % 3 != 0).then_some(best / f64::from(draws))
        };
        let from_rows = |idx: &[usize]| {
            let mut counts = vec![0u32; n];
            idx.iter().for_each(|&i| counts[i] += 1);
            let mut sums = vec![0.0; width];
            rows.weighted_sums(&counts, &mut sums).unwrap();
            stat(&sums, idx.len() as u32)
        };
        for (design, config) in engine_cases() {
            let a = bootstrap_sums(&design, &config, &rows, |r| stat(r.sums, r.draws)).unwrap();
            let b = bootstrap(&design, &config, from_rows).unwrap();
            assert_eq!(a, b);
            // (a BCa interval may be undefined: a jackknife sample can be undefined too)
            assert!(a.undefined_resamples > 0, "{a:?}");
            assert!(
                a.interval.is_some() || config.method == IntervalMethod::Bca,
                "{a:?}"
            );
        }
        let wrong = ClusterRows::new(3, 1, &[1.0; 3]).unwrap();
        let design = ResampleDesign {
            n_clusters: n,
            strata: None,
        };
        assert!(
            bootstrap_sums(&design, &BootstrapConfig::default(), &wrong, |_| Some(0.0)).is_err()
        );
    }
}
