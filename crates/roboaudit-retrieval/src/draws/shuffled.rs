//! The frequency-matched shuffle null of every rule (SPEC.md §1) under the shared permutations.
//!
//! A rule's shuffled success under permutation `π` is `Σ_s P[picks[π(s)], s] / n`. With `P` as
//! whole numbers over one denominator, `P[e, s] = y[e, s] / d` (`d` the number of executions of
//! every cell when all have the same, as when a harness runs each experience in each scene with
//! the same seeds; [`Transfer::common_denominator`]), the shuffled success is the whole number
//! `Σ_s y[picks[π(s)], s]` over `n·d`: the sums are exact integers ([`ExactShuffled`], a
//! histogram per rule; the envelope's order statistics are read off it). When `n·d` exceeds a
//! `u16`, the successes are summed as `f64` values ([`Shuffled`], a vector per rule).

use super::{Perms, RuleDraws, SharedDraws};
use crate::kernels::{EXACT_STACK, ExactShuffled, MAX_STACK, Shuffled};
use crate::matrix::Transfer;
use rayon::prelude::*;
use roboaudit_stats::{StatsError, quantiles_in_place, quantiles_of_histogram, run_wide};

/// `$body` with `$perms` bound to rows `$at` of the shared permutations and `$index` to the
/// conversion of their entries to scene indices, for either entry width (the kernels are
/// generic over it).
macro_rules! with_perms {
    ($all:expr, $at:expr, |$perms:ident, $index:ident| $body:expr) => {
        match $all {
            Perms::Bytes(all) => {
                let ($perms, $index) = (&all[$at], usize::from);
                $body
            }
            Perms::Words(all) => {
                let ($perms, $index) = (&all[$at], |v: u32| v as usize);
                $body
            }
        }
    };
}

/// Permutations evaluated per rayon task: large enough to amortise scheduling, fixed so that the
/// order of results never depends on the thread count.
const CHUNK: usize = 256;

/// Largest stacked shuffle table: `n² · 4` values (one stack of 4 rules) must fit, else the
/// shuffled successes are computed one rule at a time from `n²`-value tables.
const MAX_TABLE_VALUES: usize = 1 << 21;

/// One rule's shuffled successes under the shared permutations.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ShuffleNull {
    /// `values[p]`: the success under permutation `p`.
    Values(Vec<f64>),
    /// `counts[k]` permutations give the success `k / denominator` (`denominator = n·d`, module
    /// docs).
    Counts { counts: Vec<u64>, denominator: u64 },
}

impl Default for ShuffleNull {
    fn default() -> Self {
        Self::Values(Vec::new())
    }
}

impl ShuffleNull {
    /// The quantiles `levels` of the shuffled successes (NumPy's "linear" method), the same
    /// bits whichever form holds them.
    ///
    /// # Errors
    /// No permutation (`Empty`), or a level outside [0, 1].
    pub fn quantiles(self, levels: &[f64]) -> Result<Vec<f64>, StatsError> {
        match self {
            Self::Values(mut values) => quantiles_in_place(&mut values, levels),
            Self::Counts {
                counts,
                denominator,
            } => {
                // Cast: n·d <= u16::MAX
                let values: Vec<f64> = (0..counts.len())
                    .map(|k| k as f64 / denominator as f64)
                    .collect();
                quantiles_of_histogram(&values, &counts, levels)
            }
        }
    }

    /// Every shuffled success, ascending for [`ShuffleNull::Counts`] (tests).
    #[cfg(test)]
    pub fn values(&self) -> Vec<f64> {
        match self {
            Self::Values(values) => values.clone(),
            Self::Counts {
                counts,
                denominator,
            } => counts
                .iter()
                .enumerate()
                .flat_map(|(k, &c)| std::iter::repeat_n(k as f64 / *denominator as f64, c as usize))
                .collect(),
        }
    }
}

/// `P` as `u16` numerators over one denominator `d` ([`Transfer::common_denominator`]) when a
/// sum of `n` of them always fits: `(y, d)` with `n·d <= u16::MAX`.
fn whole_successes(t: &Transfer) -> Option<(Vec<u16>, usize)> {
    let (y, d) = t.common_denominator()?;
    let d = usize::try_from(d).ok()?;
    if t.n.checked_mul(d)? > usize::from(u16::MAX) {
        return None;
    }
    let y = y
        .into_iter()
        .map(|v| u16::try_from(v).ok())
        .collect::<Option<Vec<u16>>>()?;
    Some((y, d))
}

impl SharedDraws {
    /// The shuffle null of every rule, in the order of `rules`: exact counts when the
    /// successes are whole numbers over a small enough denominator (module docs), else values.
    pub(super) fn shuffled_all(&self, t: &Transfer, rules: &[RuleDraws<'_>]) -> Vec<ShuffleNull> {
        match whole_successes(t) {
            Some((y, d)) => self.shuffled_counts(&y, d, rules),
            None => self
                .shuffled_values(t, rules)
                .into_iter()
                .map(ShuffleNull::Values)
                .collect(),
        }
    }

    /// The histograms of the whole-number shuffled successes `Σ_s y[picks[π(s)], s]` of every
    /// rule, rules stacked [`EXACT_STACK`] at a time in one table (see [`ExactShuffled`]); each
    /// task of [`CHUNK`] permutations counts into its own histograms, which are added up (whole
    /// numbers: the same counts in any order).
    fn shuffled_counts(&self, y: &[u16], d: usize, rules: &[RuleDraws<'_>]) -> Vec<ShuffleNull> {
        let n = self.n;
        let bins = n * d + 1;
        let chunks = self.permutations.div_ceil(CHUNK);
        let mut out = Vec::with_capacity(rules.len());
        for group in rules.chunks(EXACT_STACK) {
            let width = if group.len() <= 16 { 16 } else { EXACT_STACK };
            let mut table = vec![0u16; n * n * width];
            for (r, rule) in group.iter().enumerate() {
                for (from, &p) in rule.picks.iter().enumerate() {
                    for s in 0..n {
                        table[(s * n + from) * width + r] = y[p * n + s];
                    }
                }
            }
            let rules_here = group.len();
            let counts = (0..chunks)
                .into_par_iter()
                .fold(
                    || vec![0u64; rules_here * bins],
                    |mut counts, c| {
                        let rows = CHUNK.min(self.permutations - c * CHUNK);
                        let at = c * CHUNK * n..(c * CHUNK + rows) * n;
                        with_perms!(&self.perms, at, |perms, index| {
                            run_wide(ExactShuffled {
                                perms,
                                n,
                                table: &table,
                                width,
                                index,
                                rules: rules_here,
                                bins,
                                counts: &mut counts,
                            })
                        });
                        counts
                    },
                )
                .reduce(
                    || vec![0u64; rules_here * bins],
                    |mut a, b| {
                        a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                        a
                    },
                );
            out.extend(counts.chunks_exact(bins).map(|counts| ShuffleNull::Counts {
                counts: counts.to_vec(),
                denominator: (n * d) as u64,
            }));
        }
        out
    }

    /// Shuffled successes `Σ_s P[picks[π(s)], s] / n` of every rule under every permutation (one
    /// vector per rule, in permutation order), rules stacked [`MAX_STACK`] at a time in one
    /// table (see [`Shuffled`]); each task of [`CHUNK`] permutations writes its part of every
    /// rule's vector of the stack.
    pub(super) fn shuffled_values(&self, t: &Transfer, rules: &[RuleDraws<'_>]) -> Vec<Vec<f64>> {
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
                    with_perms!(&self.perms, at, |perms, index| {
                        run_wide(Shuffled {
                            perms,
                            n,
                            table: &table,
                            width,
                            index,
                            out: sums,
                        })
                    });
                    spread(sums, width, &mut parts, |v| v * inv_n);
                },
            );
        }
        out
    }
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
