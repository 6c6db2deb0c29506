//! Random draws shared by every rule of one audit (SPEC.md §0 scene bootstrap, §1 shuffle), and
//! the replicates of all rules computed from them in one pass: the shuffled success of every
//! rule under every permutation, its discrimination gap and within-query AUROC mean on every
//! resample.
//!
//! Sharing is what the NumPy reference does too (one bootstrap index matrix and one permutation
//! matrix for all rules), and it makes rules comparable on the very same resamples. The
//! resamples are the rows of `ResampleMatrix::generate` (as weight columns of multiplicities,
//! `roboaudit_stats::resample_weight_columns`); every block of permutations comes from its own
//! ChaCha8 stream; blocks are filled in parallel, so nothing depends on the thread count. The
//! shuffle nulls are in the `shuffled` submodule.

use crate::kernels::{COLUMN_PAD, ColumnSums, GapSums, STRIP};
use crate::matrix::Transfer;
use crate::shuffle::{ShufflePlan, batched_shuffle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roboaudit_stats::{
    ResampleDesign, StatsError, WideKernel, resample_counts_rows, resample_weight_columns, run_wide,
};

/// Rows per ChaCha8 stream of the permutation matrix (as `ResampleMatrix`'s blocks).
const ROWS_PER_STREAM: usize = 64;

/// Resamples per rayon task and per block of the resample-minor tables: a multiple of the
/// resample streams' 64 rows, so that a block draws exactly its own rows.
const BLOCK: usize = 256;

/// Row stride of a block's resample-minor tables: `BLOCK` plus padding, so that the rows of a
/// table do not all map to the same few sets of the L1 cache (a power-of-two stride of 2 KiB
/// would leave a run of 40 rows competing for 16 lines).
const COLUMN_STRIDE: usize = BLOCK + 8;

// The resample kernels run whole strips: a block's strips must fit in a row of its tables.
const _: () = assert!(BLOCK.is_multiple_of(STRIP) && COLUMN_STRIDE >= BLOCK);

/// Scene permutations, one byte per entry when `n <= 256`: the shuffle null of every rule
/// streams through the whole table, and a quarter of the bytes keeps more of it in cache.
enum Perms {
    Bytes(Vec<u8>),
    Words(Vec<u32>),
}

/// Scene-bootstrap resamples and shuffle permutations of one audit. The permutations are drawn
/// once; the resamples are drawn block by block where they are used (each block of
/// [`BLOCK`] resamples from its own streams, the same draws whoever asks), so that no table of
/// all resamples is ever held.
pub(crate) struct SharedDraws {
    n: usize,
    k: usize,
    resamples: usize,
    /// Where the resamples come from.
    source: Resamples,
    /// `perms[r * n + s]` = scene whose selection scene `s` receives in permutation `r`.
    perms: Perms,
    permutations: usize,
    /// Scenes whose executions (over the full library) hold both outcomes: the scenes with a
    /// within-query AUROC whatever the score.
    two_class: Vec<bool>,
}

/// The multiplicities of the scene resamples.
enum Resamples {
    /// The rows of `ResampleMatrix::generate` for `n` clusters and this seed.
    Seeded(u64),
    /// Explicit multiplicities, `counts[b * n + s]` (tests).
    #[cfg(test)]
    Fixed(Vec<u32>),
}

/// What the replicates of one rule depend on.
pub(crate) struct RuleDraws<'a> {
    /// Library position (of the full library) chosen in each query scene.
    pub picks: &'a [usize],
    /// Within-query AUROC of each scene, for rules with a score.
    pub per_scene: Option<&'a [Option<f64>]>,
}

/// One rule's replicates, in permutation and resample order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Replicates {
    /// Shuffled success `mean_s P[picks[π(s)], s]` under every shared permutation `π`.
    pub shuffled: ShuffleNull,
    /// Discrimination gap on every resample (empty unless asked for).
    pub gaps: Vec<f64>,
    /// Mean within-query AUROC over the drawn eligible scenes (repeats counted) on every
    /// resample, NaN where none was drawn (empty for rules without a score): a plain `f64`
    /// vector, half the memory of `Option<f64>`, and only [`Replicates::defined_within`] reads it.
    pub within: Vec<f64>,
}

impl Replicates {
    /// The within-query replicates of the resamples that drew an eligible scene, in resample
    /// order (the vector itself, its NaNs dropped in place: no copy).
    pub fn defined_within(&mut self) -> Vec<f64> {
        let mut within = std::mem::take(&mut self.within);
        // Resamples without an eligible scene are rare: a vector pass looks for one before the
        // copying pass that drops them.
        if within.iter().fold(false, |any, v| any | v.is_nan()) {
            within.retain(|v| !v.is_nan());
        }
        within
    }
}

impl SharedDraws {
    /// `resamples` scene-bootstrap resamples from `boot_seed` (the rows of
    /// `ResampleMatrix::generate` for `n` clusters) and `permutations` uniform permutations of
    /// the `n` scenes from `perm_seed` (block `c` of 64 rows from
    /// `ChaCha8Rng::seed_from_u64(perm_seed)` with stream `c`, batched Fisher–Yates).
    pub fn build(
        t: &Transfer,
        resamples: usize,
        boot_seed: u64,
        permutations: usize,
        perm_seed: u64,
    ) -> Result<Self, StatsError> {
        // Validates the design once, with the errors of `ResampleMatrix::generate`.
        let design = ResampleDesign {
            n_clusters: t.n,
            strata: None,
        };
        resample_counts_rows(&design, boot_seed, 0..0)?;
        if resamples == 0 {
            return Err(StatsError::InvalidParameter(
                "bootstrap needs at least one resample".to_owned(),
            ));
        }
        // Permutation entries are `u32` and resample weights (a scene drawn at most n times)
        // `i32`.
        if i32::try_from(t.n).is_err() {
            return Err(StatsError::InvalidParameter(format!(
                "{} query scenes are more than the shared draws support",
                t.n
            )));
        }
        Self::new(
            t,
            resamples,
            Resamples::Seeded(boot_seed),
            permutations,
            perm_seed,
        )
    }

    /// As [`Self::build`] from explicit multiplicities (`counts[b * n + s]`).
    #[cfg(test)]
    pub fn from_counts(
        t: &Transfer,
        counts: Vec<u32>,
        permutations: usize,
        perm_seed: u64,
    ) -> Result<Self, StatsError> {
        let resamples = counts.len() / t.n;
        Self::new(
            t,
            resamples,
            Resamples::Fixed(counts),
            permutations,
            perm_seed,
        )
    }

    fn new(
        t: &Transfer,
        resamples: usize,
        source: Resamples,
        permutations: usize,
        perm_seed: u64,
    ) -> Result<Self, StatsError> {
        let (n, k) = (t.n, t.k);
        // Drawn straight into the narrowest entry type (the same swaps whatever the type).
        let perms = if n <= 256 {
            // Cast: s < n <= 256
            Perms::Bytes(draw_permutations(n, permutations, perm_seed, |s| s as u8))
        } else {
            // Cast: n fits in i32 (checked when built)
            Perms::Words(draw_permutations(n, permutations, perm_seed, |s| s as u32))
        };
        let two_class: Vec<bool> = (0..n)
            .map(|s| {
                let outcomes = (0..k).flat_map(|e| t.cells[e * n + s].iter());
                let wins = outcomes.clone().filter(|&&y| y).count();
                wins > 0 && wins < outcomes.count()
            })
            .collect();
        Ok(Self {
            n,
            k,
            resamples,
            source,
            perms,
            permutations,
            two_class,
        })
    }

    /// The multiplicities of resamples `rows` as weight columns: `out[s * stride + (b −
    /// rows.start)]` = how often resample `b` drew scene `s` (entries past `rows.len()` in each
    /// row are left as they are).
    fn weight_columns(
        &self,
        rows: std::ops::Range<usize>,
        out: &mut [f64],
        stride: usize,
    ) -> Result<(), StatsError> {
        match &self.source {
            Resamples::Seeded(seed) => {
                let design = ResampleDesign {
                    n_clusters: self.n,
                    strata: None,
                };
                resample_weight_columns(&design, *seed, rows, out, stride)
            }
            #[cfg(test)]
            Resamples::Fixed(counts) => {
                for (j, b) in rows.enumerate() {
                    for s in 0..self.n {
                        out[s * stride + j] = f64::from(counts[b * self.n + s]);
                    }
                }
                Ok(())
            }
        }
    }

    /// The replicates of every rule (gaps only when `gaps`), in the order of `rules`, computed
    /// for all rules at once: each block of resamples and of permutations is drawn into cache
    /// once and then serves every rule, and each rule's values are written straight into its
    /// own vectors (no gathering afterwards).
    pub fn replicates_many(
        &self,
        t: &Transfer,
        rules: &[RuleDraws<'_>],
        gaps: bool,
    ) -> Result<Vec<Replicates>, StatsError> {
        // Side by side: a thread done with its share of one takes up the other instead of
        // waiting at the end of the first.
        let (shuffled, resampled) = rayon::join(
            || self.shuffled_all(t, rules),
            || self.resample_replicates(t, rules, gaps),
        );
        let (gap_values, within_slot, within) = resampled?;
        // Paired with the rules by position: every list must have one entry per rule (gaps
        // none at all when not asked for).
        let want_gaps = if gaps { rules.len() } else { 0 };
        for (what, len, want) in [
            ("shuffle replicates", shuffled.len(), rules.len()),
            ("within-query slots", within_slot.len(), rules.len()),
            ("gap replicates", gap_values.len(), want_gaps),
        ] {
            if len != want {
                return Err(StatsError::LengthMismatch {
                    left: what,
                    left_len: len,
                    right: "rules",
                    right_len: want,
                });
            }
        }
        let mut gap_values = gap_values.into_iter();
        let mut within: Vec<Option<Vec<f64>>> = within.into_iter().map(Some).collect();
        Ok(shuffled
            .into_iter()
            .zip(within_slot)
            .map(|(shuffled, slot)| Replicates {
                shuffled,
                gaps: gap_values.next().unwrap_or_default(),
                within: slot
                    .and_then(|w| within.get_mut(w).and_then(Option::take))
                    .unwrap_or_default(),
            })
            .collect())
    }

    /// Gap and within-query replicates on every resample: one gap vector per rule (none unless
    /// `gaps`) and one within-query vector per scored rule (the `w`-th for the rule with
    /// `within_slot[r] = Some(w)`), in resample order, NaN where no eligible scene was drawn.
    ///
    /// `n·G_b = Σ_s w_b(s)·P[sel(s), s] − Σ_s w_b(s)·q_b(sel(s))` with `q_b(e) = Σ_s
    /// w_b(s)·P[e, s] / n` (the same quantity as `Σ_s w_b(s)·(P[sel(s), s] − q_b(sel(s)))`,
    /// SPEC.md §1), computed on the whole numbers `y = d·P` of
    /// [`Transfer::common_denominator`] where they keep every sum exact, so that each gap is an
    /// exact fraction rounded once; and the within-query mean is `Σ_s w_b(s)·v(s) / Σ_s
    /// w_b(s)·[v(s) defined]`.
    /// Each block of resamples is drawn as weight columns (scene-major, resample-minor); every
    /// `Σ_s w_b(s)·x(s)` shared by the rules (the qualities `n·q_b(e)`, the two-outcome count and
    /// each scored rule's AUROC sum) is one column of a single [`ColumnSums`] pass over them, and
    /// each rule's two gap sums one [`GapSums`] pass reading the quality columns.
    #[allow(clippy::type_complexity)]
    fn resample_replicates(
        &self,
        t: &Transfer,
        rules: &[RuleDraws<'_>],
        gaps: bool,
    ) -> Result<(Vec<Vec<f64>>, Vec<Option<usize>>, Vec<Vec<f64>>), StatsError> {
        let (n, k) = (self.n, self.k);
        let rule_count = rules.len();
        // `P` as whole numbers `y / d` when every sum below stays an exact integer in an `f64`
        // (the largest, `n·Σ_s w(s)·y`, is at most `n²·d`): the gaps are then exact
        // fractions, rounded once, and a gap of zero is exactly zero. Else `P` itself (d = 1).
        // Cast: checked against 2^52 first
        let (y, d): (Vec<f64>, f64) = match t.common_denominator() {
            Some((y, d)) if (n * n) as f64 * d as f64 <= (1u64 << 52) as f64 => {
                (y.into_iter().map(|v| v as f64).collect(), d as f64)
            }
            _ => (t.p.clone(), 1.0),
        };
        let n_f = n as f64;
        let gap_denominator = n_f * n_f * d;
        // The columns of the shared pass: qualities `y[e, ·]` (for the gaps), then the shared
        // two-outcome indicator, each scored rule's per-scene AUROC (0 where undefined) and an
        // own indicator for a rule whose defined scenes are not the two-outcome ones (never for
        // per-scene AUROCs over the full library, kept for safety).
        let mut columns: Vec<Vec<f64>> = Vec::new();
        if gaps {
            columns.extend((0..k).map(|e| y[e * n..(e + 1) * n].to_vec()));
        }
        let shared = columns.len();
        columns.push(
            self.two_class
                .iter()
                .map(|&b| f64::from(u8::from(b)))
                .collect(),
        );
        let mut within_slot: Vec<Option<usize>> = vec![None; rule_count];
        let mut within_columns: Vec<(usize, usize)> = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if let Some(per_scene) = r.per_scene {
                let value = columns.len();
                columns.push(per_scene.iter().map(|v| v.unwrap_or(0.0)).collect());
                let same = per_scene
                    .iter()
                    .zip(&self.two_class)
                    .all(|(v, &two)| v.is_some() == two);
                let count = if same {
                    shared
                } else {
                    columns.push(
                        per_scene
                            .iter()
                            .map(|v| f64::from(u8::from(v.is_some())))
                            .collect(),
                    );
                    columns.len() - 1
                };
                within_slot[i] = Some(within_columns.len());
                within_columns.push((value, count));
            }
        }
        let scored = within_columns.len();
        // Scene-major values, padded with zero columns to whole register tiles.
        let width = columns.len().div_ceil(COLUMN_PAD) * COLUMN_PAD;
        let mut values = vec![0.0; n * width];
        for (c, column) in columns.iter().enumerate() {
            for (s, &v) in column.iter().enumerate() {
                values[s * width + c] = v;
            }
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(StatsError::NonFinite {
                what: "replicate columns",
                index,
            });
        }
        let picks: Vec<&[usize]> = rules.iter().map(|r| r.picks).collect();
        let own_values: Vec<Vec<f64>> = if gaps {
            rules
                .iter()
                .map(|r| (0..n).map(|s| y[r.picks[s] * n + s]).collect())
                .collect()
        } else {
            Vec::new()
        };
        let blocks = self.resamples.div_ceil(BLOCK);
        let lanes = roboaudit_stats::wide_lanes();
        // Allocated and filled in parallel (as the shuffled vectors).
        let mut gap_values: Vec<Vec<f64>> = (0..if gaps { rule_count } else { 0 })
            .into_par_iter()
            .map(|_| vec![0.0; self.resamples])
            .collect();
        // Zeros (fresh zeroed memory, no fill pass): every entry is written below, NaN where
        // no eligible scene was drawn.
        let mut within: Vec<Vec<f64>> = (0..scored)
            .into_par_iter()
            .map(|_| vec![0.0; self.resamples])
            .collect();
        // Block `i`'s part of every gap and within-query vector: resamples `i·BLOCK..`.
        let mut tasks: Vec<(Vec<&mut [f64]>, Vec<&mut [f64]>)> =
            (0..blocks).map(|_| (Vec::new(), Vec::new())).collect();
        for values in &mut gap_values {
            for (task, part) in tasks.iter_mut().zip(values.chunks_mut(BLOCK)) {
                task.0.push(part);
            }
        }
        for values in &mut within {
            for (task, part) in tasks.iter_mut().zip(values.chunks_mut(BLOCK)) {
                task.1.push(part);
            }
        }
        // Scratch of one rayon split, reused block after block (zeroed once: the padding past
        // a block's resamples keeps finite values, which the kernels compute on and nobody
        // reads).
        struct Scratch {
            weights: Vec<f64>,
            /// Column `c` of the shared pass at `sums[c * COLUMN_STRIDE..]`.
            sums: Vec<f64>,
            own: Vec<f64>,
            picked: Vec<f64>,
        }
        tasks.into_par_iter().enumerate().try_for_each_init(
            || Scratch {
                weights: vec![0.0; n * COLUMN_STRIDE],
                sums: vec![0.0; width * COLUMN_STRIDE],
                own: vec![0.0; if gaps { rule_count * COLUMN_STRIDE } else { 0 }],
                picked: vec![0.0; if gaps { rule_count * COLUMN_STRIDE } else { 0 }],
            },
            |scratch, (i, (mut gap_out, mut within_out))| {
                let len = BLOCK.min(self.resamples - i * BLOCK);
                self.weight_columns(
                    i * BLOCK..i * BLOCK + len,
                    &mut scratch.weights,
                    COLUMN_STRIDE,
                )?;
                run_wide(ColumnSums {
                    weights: &scratch.weights,
                    values: &values,
                    width,
                    n,
                    stride: COLUMN_STRIDE,
                    len,
                    lanes,
                    out: &mut scratch.sums,
                });
                let column = |c: usize| &scratch.sums[c * COLUMN_STRIDE..c * COLUMN_STRIDE + len];
                if gaps {
                    run_wide(GapSums {
                        picks: &picks,
                        own_values: &own_values,
                        weights: &scratch.weights,
                        quality: &scratch.sums[..k * COLUMN_STRIDE],
                        stride: COLUMN_STRIDE,
                        len,
                        lanes,
                        own: &mut scratch.own,
                        picked: &mut scratch.picked,
                    });
                    // `q_b(e) = sums / (n·d)`, so `G_b = (n·own − picked) / (n²·d)`.
                    for (r, out) in gap_out.iter_mut().enumerate() {
                        let at = r * COLUMN_STRIDE;
                        for ((o, &own), &picked) in out
                            .iter_mut()
                            .zip(&scratch.own[at..at + len])
                            .zip(&scratch.picked[at..at + len])
                        {
                            *o = (own * n_f - picked) / gap_denominator;
                        }
                    }
                }
                for (&(value, count), out) in within_columns.iter().zip(within_out.iter_mut()) {
                    run_wide(Ratios {
                        values: column(value),
                        counts: column(count),
                        out,
                    });
                }
                Ok::<(), StatsError>(())
            },
        )?;
        Ok((gap_values, within_slot, within))
    }
}

/// `permutations` uniform permutations of `0..n` (`label(s)` for scene `s`), row-major: block `c`
/// of [`ROWS_PER_STREAM`] rows from `ChaCha8Rng::seed_from_u64(seed)` with stream `c`, batched
/// Fisher–Yates; blocks in parallel.
fn draw_permutations<T: Copy + Default + Send>(
    n: usize,
    permutations: usize,
    seed: u64,
    label: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut perms = vec![T::default(); permutations * n];
    let plan = ShufflePlan::new(n);
    perms
        .par_chunks_mut(n * ROWS_PER_STREAM)
        .enumerate()
        .for_each(|(block, chunk)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(block as u64);
            for row in chunk.chunks_exact_mut(n) {
                row.iter_mut().enumerate().for_each(|(s, v)| *v = label(s));
                match &plan {
                    Some(plan) => plan.shuffle(row, &mut rng),
                    None => batched_shuffle(row, &mut rng),
                }
            }
        });
    perms
}

/// `out[j] = values[j] / counts[j]`, NaN where the count is 0: the within-query means of one
/// rule on a block of resamples, the divisions in vector registers.
struct Ratios<'a> {
    values: &'a [f64],
    counts: &'a [f64],
    out: &'a mut [f64],
}

impl WideKernel for Ratios<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        for ((o, &v), &c) in self.out.iter_mut().zip(self.values).zip(self.counts) {
            *o = if c > 0.0 { v / c } else { f64::NAN };
        }
    }
}

mod shuffled;
#[cfg(test)]
mod tests;

pub(crate) use shuffled::ShuffleNull;
