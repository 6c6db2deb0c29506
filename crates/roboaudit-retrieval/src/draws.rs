//! Random draws shared by every rule of one audit (SPEC.md §0 scene bootstrap, §1 shuffle), and
//! the replicates of all rules computed from them in one pass: the shuffled success of every
//! rule under every permutation, its discrimination gap and within-query AUROC mean on every
//! resample.
//!
//! Sharing is what the NumPy reference does too (one bootstrap index matrix and one permutation
//! matrix for all rules), and it makes rules comparable on the very same resamples. The
//! resamples are the rows of `ResampleMatrix::generate` (as multiplicities,
//! `roboaudit_stats::resample_counts_rows`); every block of permutations comes from its own ChaCha8
//! stream; blocks are filled in parallel, so nothing depends on the thread count.

use crate::kernels::{MAX_STACK, PickedQualities, Shuffled};
use crate::matrix::Transfer;
use crate::shuffle::{ShufflePlan, batched_shuffle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roboaudit_stats::{
    ClusterRows, ResampleDesign, StatsError, WideKernel, resample_counts_rows, run_wide,
};

/// Rows per ChaCha8 stream of the permutation matrix (as `ResampleMatrix`'s blocks).
const ROWS_PER_STREAM: usize = 64;

/// Permutations evaluated per rayon task: large enough to amortise scheduling, fixed so that the
/// order of results never depends on the thread count.
const CHUNK: usize = 256;

/// Resamples per rayon task and per block of the resample-minor tables: a multiple of the
/// resample streams' 64 rows, so that a block draws exactly its own rows.
const BLOCK: usize = 256;

/// Row stride of a block's resample-minor tables: `BLOCK` plus padding, so that the rows of a
/// table do not all map to the same few sets of the L1 cache (a power-of-two stride of 2 KiB
/// would leave a run of 40 rows competing for 16 lines).
const COLUMN_STRIDE: usize = BLOCK + 8;

/// Largest stacked shuffle table: `n² · 4` values (one stack of 4 rules) must fit, else the
/// shuffled successes are computed one rule at a time from `n²`-value tables.
const MAX_TABLE_VALUES: usize = 1 << 21;

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
    /// Shuffled success `mean_s P[picks[π(s)], s]` of every shared permutation `π`.
    pub shuffled: Vec<f64>,
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
        within.retain(|v| !v.is_nan());
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
            #[allow(clippy::cast_possible_truncation)] // s < n <= 256
            Perms::Bytes(draw_permutations(n, permutations, perm_seed, |s| s as u8))
        } else {
            #[allow(clippy::cast_possible_truncation)] // n fits in i32 (checked when built)
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

    /// The multiplicities of resamples `rows` (`counts[(b − rows.start) * n + s]`).
    fn counts(&self, rows: std::ops::Range<usize>) -> Result<Vec<u32>, StatsError> {
        match &self.source {
            Resamples::Seeded(seed) => {
                let design = ResampleDesign {
                    n_clusters: self.n,
                    strata: None,
                };
                resample_counts_rows(&design, *seed, rows)
            }
            #[cfg(test)]
            Resamples::Fixed(counts) => Ok(counts[rows.start * self.n..rows.end * self.n].to_vec()),
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
        let shuffled = self.shuffled_all(t, rules);
        let (gap_values, within_slot, within) = self.resample_replicates(t, rules, gaps)?;
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

    /// Shuffled successes `Σ_s P[picks[π(s)], s] / n` of every rule under every permutation (one
    /// vector per rule, in permutation order), rules stacked [`MAX_STACK`] at a time in one
    /// table (see [`Shuffled`]); each task of [`CHUNK`] permutations writes its part of every
    /// rule's vector of the stack.
    fn shuffled_all(&self, t: &Transfer, rules: &[RuleDraws<'_>]) -> Vec<Vec<f64>> {
        let n = self.n;
        let inv_n = 1.0 / n as f64;
        // Stacks of up to MAX_STACK rules while their table fits; beyond, one rule at a time
        // from an `n²`-value table.
        let fits = n * n * 4 <= MAX_TABLE_VALUES;
        let per_stack = if fits {
            MAX_STACK.min(MAX_TABLE_VALUES / (n * n) / 4 * 4).max(4)
        } else {
            1
        };
        let chunks = self.permutations.div_ceil(CHUNK);
        // Filled in parallel: megabytes of zeros written (and first touched) by one thread were
        // a serial stretch of the audit.
        let mut out: Vec<Vec<f64>> = rules
            .par_iter()
            .map(|_| vec![0.0; self.permutations])
            .collect();
        for (group, group_out) in rules.chunks(per_stack).zip(out.chunks_mut(per_stack)) {
            let width = if fits { group.len().div_ceil(4) * 4 } else { 1 };
            let mut table = vec![0.0; n * n * width];
            for (r, rule) in group.iter().enumerate() {
                for (from, &p) in rule.picks.iter().enumerate() {
                    for s in 0..n {
                        table[(s * n + from) * width + r] = t.at(p, s);
                    }
                }
            }
            // Task `c`'s part of every rule's vector: permutations `c·CHUNK..`.
            let mut tasks: Vec<Vec<&mut [f64]>> = (0..chunks)
                .map(|_| Vec::with_capacity(group.len()))
                .collect();
            for values in group_out.iter_mut() {
                for (task, part) in tasks.iter_mut().zip(values.chunks_mut(CHUNK)) {
                    task.push(part);
                }
            }
            tasks.into_par_iter().enumerate().for_each_init(
                || vec![0.0; CHUNK * width],
                |sums, (c, mut parts)| {
                    let rows = CHUNK.min(self.permutations - c * CHUNK);
                    let at = c * CHUNK * n..(c * CHUNK + rows) * n;
                    let sums = &mut sums[..rows * width];
                    match &self.perms {
                        Perms::Bytes(p) => run_wide(Shuffled {
                            perms: &p[at],
                            n,
                            table: &table,
                            width,
                            index: usize::from,
                            out: sums,
                        }),
                        Perms::Words(p) => run_wide(Shuffled {
                            perms: &p[at],
                            n,
                            table: &table,
                            width,
                            index: |v: u32| v as usize,
                            out: sums,
                        }),
                    }
                    spread(sums, width, &mut parts, |v| v * inv_n);
                },
            );
        }
        out
    }

    /// Gap and within-query replicates on every resample: one gap vector per rule (none unless
    /// `gaps`) and one within-query vector per scored rule (the `w`-th for the rule with
    /// `within_slot[r] = Some(w)`), in resample order, NaN where no eligible scene was drawn.
    ///
    /// `n·G_b = Σ_s w_b(s)·P[sel(s), s] − Σ_e F_b(e)·q_b(e)` with `F_b(e)` the resample weight of
    /// the scenes selecting `e` (the same quantity as `Σ_s w_b(s)·(P[sel(s), s] −
    /// q_b(sel(s)))`, SPEC.md §1), and the within-query mean is `Σ_s w_b(s)·v(s) / Σ_s
    /// w_b(s)·[v(s) defined]`. Every such `Σ_s w_b(s)·x(s)` of every rule (the qualities
    /// `n·q_b(e)` too) is one column of a single weighted-sum kernel pass over the drawn scenes
    /// ([`ClusterRows::weighted_sums_block`]); only `Σ_e F_b(e)·q_b(e)` runs per rule, over
    /// its distinct picks ([`PickedQualities`]).
    #[allow(clippy::type_complexity)]
    fn resample_replicates(
        &self,
        t: &Transfer,
        rules: &[RuleDraws<'_>],
        gaps: bool,
    ) -> Result<(Vec<Vec<f64>>, Vec<Option<usize>>, Vec<Vec<f64>>), StatsError> {
        let (n, k) = (self.n, self.k);
        let inv_n = 1.0 / n as f64;
        let rule_count = rules.len();
        // The columns of the kernel pass: qualities and own successes `P[sel_r(s), s]` (for the
        // gaps), then the shared two-outcome indicator, each scored rule's per-scene AUROC (0
        // where undefined) and an own indicator for a rule whose defined scenes are not the
        // two-outcome ones (never for per-scene AUROCs over the full library, kept for safety).
        let mut columns: Vec<Vec<f64>> = Vec::new();
        let (quality_at, own_at) = (0, k);
        if gaps {
            columns.extend((0..k).map(|e| (0..n).map(|s| t.at(e, s)).collect()));
            columns.extend(
                rules
                    .iter()
                    .map(|r| (0..n).map(|s| t.at(r.picks[s], s)).collect()),
            );
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
        let width = columns.len();
        let values: Vec<f64> = (0..n)
            .flat_map(|s| columns.iter().map(move |c| c[s]))
            .collect();
        let kernel_rows = ClusterRows::new(n, width, &values)?;
        // Distinct picks of each rule with the scenes that pick them, in library order.
        let groups: Vec<Vec<(usize, Vec<usize>)>> = rules
            .iter()
            .map(|r| {
                let mut by_pick: Vec<Vec<usize>> = vec![Vec::new(); k];
                r.picks
                    .iter()
                    .enumerate()
                    .for_each(|(s, &p)| by_pick[p].push(s));
                by_pick
                    .into_iter()
                    .enumerate()
                    .filter(|(_, scenes)| !scenes.is_empty())
                    .collect()
            })
            .collect();
        let blocks = self.resamples.div_ceil(BLOCK);
        // Allocated and filled in parallel (as the shuffled vectors).
        let mut gap_values: Vec<Vec<f64>> = (0..if gaps { rule_count } else { 0 })
            .into_par_iter()
            .map(|_| vec![0.0; self.resamples])
            .collect();
        let mut within: Vec<Vec<f64>> = (0..scored)
            .into_par_iter()
            .map(|_| vec![f64::NAN; self.resamples])
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
        // Scratch of one rayon split, reused block after block (no zeroing per block: every
        // entry read is written first; padding keeps finite values from earlier blocks).
        struct Scratch {
            sums: Vec<f64>,
            /// `sums` resample-minor: `columns[c * COLUMN_STRIDE + j]`.
            columns: Vec<f64>,
            weights: Vec<i32>,
            picked: Vec<f64>,
        }
        tasks.into_par_iter().enumerate().try_for_each_init(
            || Scratch {
                sums: vec![0.0; BLOCK * width],
                columns: vec![0.0; width * COLUMN_STRIDE],
                weights: vec![0; n * COLUMN_STRIDE],
                picked: vec![0.0; rule_count * COLUMN_STRIDE],
            },
            |scratch, (i, (mut gap_out, mut within_out))| {
                let len = BLOCK.min(self.resamples - i * BLOCK);
                let counts = self.counts(i * BLOCK..i * BLOCK + len)?;
                let sums = &mut scratch.sums[..len * width];
                kernel_rows.weighted_sums_block(&counts, sums)?;
                // Everything below reads the sums column by column, over resamples.
                transpose(sums, width, &mut scratch.columns, COLUMN_STRIDE, |v| v);
                let column =
                    |c: usize| &scratch.columns[c * COLUMN_STRIDE..c * COLUMN_STRIDE + len];
                if gaps {
                    // A count of at most n <= i32::MAX draws (checked when built).
                    transpose(&counts, n, &mut scratch.weights, COLUMN_STRIDE, |v| {
                        v as i32
                    });
                    run_wide(PickedQualities {
                        groups: &groups,
                        weights: &scratch.weights,
                        quality: &scratch.columns
                            [quality_at * COLUMN_STRIDE..(quality_at + k) * COLUMN_STRIDE],
                        stride: COLUMN_STRIDE,
                        len,
                        out: &mut scratch.picked,
                    });
                    // `q_b(e) = sums / n`, so `n·G_b = own − picked / n`.
                    for ((r, out), picked) in gap_out
                        .iter_mut()
                        .enumerate()
                        .zip(scratch.picked.chunks_exact(COLUMN_STRIDE))
                    {
                        for ((o, &p), &own) in
                            out.iter_mut().zip(&picked[..len]).zip(column(own_at + r))
                        {
                            *o = (own - p * inv_n) * inv_n;
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

/// `dst[c * stride + j] = f(src[j * cols + c])` for the `src.len() / cols` rows of `src`: a
/// [`spread`] into the first `cols` rows of `dst`.
fn transpose<T: Copy, U: Copy>(
    src: &[T],
    cols: usize,
    dst: &mut [U],
    stride: usize,
    f: impl Fn(T) -> U,
) {
    let len = src.len() / cols;
    let mut rows: Vec<&mut [U]> = dst
        .chunks_mut(stride)
        .take(cols)
        .map(|row| &mut row[..len])
        .collect();
    spread(src, cols, &mut rows, f);
}

/// `rows[r][j] = f(src[j * cols + r])` for every row `r` (at most `cols` of them, all of one
/// length) and every `j` of it, eight values of a row at a time: the eight source rows they come
/// from stay in L1 while every destination row takes its eight.
fn spread<T: Copy, U: Copy>(src: &[T], cols: usize, rows: &mut [&mut [U]], f: impl Fn(T) -> U) {
    let len = rows.first().map_or(0, |r| r.len());
    for j0 in (0..len).step_by(8) {
        let end = (j0 + 8).min(len);
        for (r, row) in rows.iter_mut().enumerate() {
            for (slot, j) in row[j0..end].iter_mut().zip(j0..) {
                *slot = f(src[j * cols + r]);
            }
        }
    }
}

#[cfg(test)]
mod tests;
