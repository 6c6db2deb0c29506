//! Random draws shared by every rule of one audit (SPEC.md §0 scene bootstrap, §1 shuffle), laid
//! out so that a rule's replicate costs O(n): the scene counts of each resample, the library
//! qualities `q_b(e)` on each resample (both resample-minor, for the block loops of
//! [`crate::kernels`]), and one matrix of scene permutations.
//!
//! Sharing is what the NumPy reference does too (one bootstrap index matrix and one permutation
//! matrix for all rules), and it makes rules comparable on the very same resamples. Every block
//! of rows comes from its own ChaCha8 stream and blocks are filled in parallel, so the draws do
//! not depend on the thread count.

use crate::kernels::{BLOCK, LaneSums, Qualities, Term};
use crate::matrix::Transfer;
use crate::shuffle::fast_shuffle;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roboaudit_stats::ResampleMatrix;
use roboaudit_stats::run_wide;

/// Rows per ChaCha8 stream of the permutation matrix (as `ResampleMatrix`'s blocks).
const ROWS_PER_STREAM: usize = 64;

/// Permutations evaluated per rayon task: large enough to amortise scheduling, fixed so that the
/// order of results never depends on the thread count.
const CHUNK: usize = 256;

/// Scene-bootstrap resamples and shuffle permutations of one audit, precomputed once.
pub(crate) struct SharedDraws {
    n: usize,
    resamples: usize,
    /// How often resample `b` drew scene `s`, `weights[s * resamples + b]` (resample-minor, so
    /// that the replicate loops of [`crate::kernels`] stream over resamples).
    weights: Vec<u32>,
    /// `q_b(e) = Σ_s c_b(s)·P[e,s] / n`, the quality of every experience on resample `b`,
    /// `quality[e * resamples + b]`.
    quality: Vec<f64>,
    /// Scene permutations, `perms[r * n + s]` = scene whose selection scene `s` receives in
    /// permutation `r`.
    perms: Vec<u32>,
    /// `perms` in one byte per entry when `n <= 256`: the shuffle null of every rule streams
    /// through the whole table, and a quarter of the bytes keeps it in cache.
    perms_u8: Option<Vec<u8>>,
    permutations: usize,
    /// Scenes whose executions (over the full library) hold both outcomes: the scenes with a
    /// within-query AUROC whatever the score.
    two_class: Vec<bool>,
    /// Per resample, how many drawn scenes are in `two_class` (repeats counted).
    two_class_counts: Vec<f64>,
}

impl SharedDraws {
    /// Counts and qualities of every row of `matrix` (over the full library), and
    /// `permutations` uniform permutations of the `n` scenes drawn from `perm_seed` (block `c`
    /// of 64 rows from `ChaCha8Rng::seed_from_u64(perm_seed)` with stream `c`, Fisher–Yates).
    pub fn build(
        t: &Transfer,
        matrix: &ResampleMatrix,
        permutations: usize,
        perm_seed: u64,
    ) -> Self {
        let (n, k) = (t.n, t.k);
        // Scene-major copy of P, rows padded to a multiple of 8 (zeros), so the weighted sums
        // over experiences run in whole vector registers.
        let stride = k.div_ceil(8) * 8;
        let mut p_scene = vec![0.0; n * stride];
        for e in 0..k {
            for s in 0..n {
                p_scene[s * stride + e] = t.at(e, s);
            }
        }
        let resamples = matrix.len();
        let rows = matrix.rows();
        let inv_n = 1.0 / n as f64;
        // Row-major counts and qualities per block of resamples, then transposed into place.
        let blocks: Vec<(Vec<f64>, Vec<f64>)> = rows
            .par_chunks(BLOCK)
            .map(|block| {
                let mut counts = vec![0.0; block.len() * n];
                for (c, row) in counts.chunks_exact_mut(n).zip(block) {
                    for &s in row {
                        c[s] += 1.0;
                    }
                }
                let mut q = vec![0.0; block.len() * k];
                roboaudit_stats::run_wide(Qualities {
                    n,
                    k,
                    stride,
                    inv_n,
                    p_scene: &p_scene,
                    counts: &counts,
                    out: &mut q,
                });
                (counts, q)
            })
            .collect();
        let mut weights = vec![0u32; resamples * n];
        let mut quality = vec![0.0; resamples * k];
        for (i, (counts, q)) in blocks.iter().enumerate() {
            let b0 = i * BLOCK;
            for (r, c) in counts.chunks_exact(n).enumerate() {
                for (s, &v) in c.iter().enumerate() {
                    // a count of at most n draws, exact in f64 and in u32
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let count = v as u32;
                    weights[s * resamples + b0 + r] = count;
                }
            }
            for (r, qr) in q.chunks_exact(k).enumerate() {
                for (e, &v) in qr.iter().enumerate() {
                    quality[e * resamples + b0 + r] = v;
                }
            }
        }
        let mut perms = vec![0u32; permutations * n];
        perms
            .par_chunks_mut(n * ROWS_PER_STREAM)
            .enumerate()
            .for_each(|(block, chunk)| {
                let mut rng = ChaCha8Rng::seed_from_u64(perm_seed);
                rng.set_stream(block as u64);
                for row in chunk.chunks_exact_mut(n) {
                    row.iter_mut().enumerate().for_each(|(s, v)| *v = s as u32);
                    fast_shuffle(row, &mut rng);
                }
            });
        let two_class: Vec<bool> = (0..n)
            .map(|s| {
                let outcomes = (0..k).flat_map(|e| t.cells[e * n + s].iter());
                let wins = outcomes.clone().filter(|&&y| y).count();
                wins > 0 && wins < outcomes.count()
            })
            .collect();
        let indicator: Vec<f64> = two_class.iter().map(|&b| f64::from(u8::from(b))).collect();
        let mut two_class_counts = vec![0.0; resamples];
        two_class_counts
            .par_chunks_mut(BLOCK)
            .enumerate()
            .for_each(|(i, out)| {
                run_wide(LaneSums {
                    n,
                    resamples,
                    b0: i * BLOCK,
                    weights: &weights,
                    term: Term::Scaled(&indicator),
                    out,
                });
            });
        Self {
            n,
            resamples,
            weights,
            quality,
            perms_u8: (n <= 256).then(|| perms.iter().map(|&v| v as u8).collect()),
            perms,
            permutations,
            two_class,
            two_class_counts,
        }
    }

    /// Shuffled success `mean_s P[picks[π(s)], s]` of every shared permutation `π`, in
    /// permutation order. `picks` are library positions of the full library.
    #[cfg(test)]
    pub fn shuffled_successes(&self, t: &Transfer, picks: &[usize]) -> Vec<f64> {
        let n = self.n;
        let cols = shuffle_table(t, picks);
        let starts: Vec<usize> = (0..n).map(|s| s * n).collect();
        let inv_n = 1.0 / n as f64;
        let mut out = vec![0.0; self.permutations];
        match &self.perms_u8 {
            Some(perms) => permuted_sums(perms, n, &cols, &starts, inv_n, &mut out, usize::from),
            None => permuted_sums(&self.perms, n, &cols, &starts, inv_n, &mut out, |v| {
                v as usize
            }),
        }
        out
    }

    /// Discrimination gap `G_b = SR_b − Σ_e f_b(e) q_b(e)` on every resample (SPEC.md §1: SR,
    /// f and q recomputed over the resampled scenes, with multiplicity), in resample order.
    /// Written as `Σ_s w_b[s]·(P[sel(s), s] − q_b(sel(s))) / n`, the same quantity.
    #[cfg(test)]
    pub fn gap_replicates(&self, t: &Transfer, picks: &[usize]) -> Vec<f64> {
        let (n, b_total) = (self.n, self.resamples);
        let own: Vec<f64> = picks.iter().enumerate().map(|(s, &p)| t.at(p, s)).collect();
        let inv_n = 1.0 / n as f64;
        let mut out = vec![0.0; b_total];
        out.par_chunks_mut(BLOCK).enumerate().for_each(|(i, o)| {
            run_wide(LaneSums {
                n,
                resamples: b_total,
                b0: i * BLOCK,
                weights: &self.weights,
                term: Term::Gap {
                    own: &own,
                    picks,
                    quality: &self.quality,
                },
                out: &mut *o,
            });
            o.iter_mut().for_each(|v| *v *= inv_n);
        });
        out
    }

    /// [`Self::shuffled_successes`] and (when `gaps`) [`Self::gap_replicates`] of many rules,
    /// in rule order, bit-identical to one call per rule: each block of the shared tables is
    /// read from memory once and then serves every rule from cache, where one call per rule
    /// streams the whole tables once per rule. Without `gaps` the gap vectors are empty.
    pub fn replicates_many(
        &self,
        t: &Transfer,
        rules: &[&[usize]],
        gaps: bool,
    ) -> Vec<(Vec<f64>, Vec<f64>)> {
        let (n, b_total) = (self.n, self.resamples);
        let inv_n = 1.0 / n as f64;
        let tables: Vec<Vec<f64>> = rules.iter().map(|picks| shuffle_table(t, picks)).collect();
        let starts: Vec<usize> = (0..n).map(|s| s * n).collect();
        let shuffle_blocks: Vec<Vec<Vec<f64>>> = (0..self.permutations.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let len = CHUNK.min(self.permutations - c * CHUNK);
                tables
                    .iter()
                    .map(|cols| {
                        let mut o = vec![0.0; len];
                        let at = c * CHUNK * n..(c * CHUNK + len) * n;
                        match &self.perms_u8 {
                            Some(p) => permuted_block(
                                &p[at],
                                n,
                                cols,
                                &starts,
                                inv_n,
                                &mut o,
                                &usize::from,
                            ),
                            None => permuted_block(
                                &self.perms[at],
                                n,
                                cols,
                                &starts,
                                inv_n,
                                &mut o,
                                &|v: u32| v as usize,
                            ),
                        }
                        o
                    })
                    .collect()
            })
            .collect();
        let owns: Vec<Vec<f64>> = rules
            .iter()
            .map(|picks| picks.iter().enumerate().map(|(s, &p)| t.at(p, s)).collect())
            .collect();
        let gap_blocks: Vec<Vec<Vec<f64>>> = if gaps {
            (0..b_total.div_ceil(BLOCK))
                .into_par_iter()
                .map(|i| {
                    let len = BLOCK.min(b_total - i * BLOCK);
                    rules
                        .iter()
                        .zip(&owns)
                        .map(|(picks, own)| {
                            let mut o = vec![0.0; len];
                            run_wide(LaneSums {
                                n,
                                resamples: b_total,
                                b0: i * BLOCK,
                                weights: &self.weights,
                                term: Term::Gap {
                                    own,
                                    picks,
                                    quality: &self.quality,
                                },
                                out: &mut o,
                            });
                            o.iter_mut().for_each(|v| *v *= inv_n);
                            o
                        })
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        (0..rules.len())
            .map(|r| {
                let shuffled = shuffle_blocks
                    .iter()
                    .flat_map(|b| b[r].iter().copied())
                    .collect();
                let gap = gap_blocks
                    .iter()
                    .flat_map(|b| b[r].iter().copied())
                    .collect();
                (shuffled, gap)
            })
            .collect()
    }

    /// Mean of `value[s]` over the drawn scenes with `value[s]` defined, repeats counted, per
    /// resample; `None` where a resample drew no such scene.
    pub fn mean_replicates(&self, value: &[Option<f64>]) -> Vec<Option<f64>> {
        let n = self.n;
        let v: Vec<f64> = value.iter().map(|x| x.unwrap_or(0.0)).collect();
        let defined: Vec<f64> = value
            .iter()
            .map(|x| f64::from(u8::from(x.is_some())))
            .collect();
        let same_pattern = value
            .iter()
            .zip(&self.two_class)
            .all(|(x, &two)| x.is_some() == two);
        let b_total = self.resamples;
        let mut out = vec![None; b_total];
        out.par_chunks_mut(BLOCK).enumerate().for_each(|(i, o)| {
            let b0 = i * BLOCK;
            let len = o.len();
            let mut sums = [0.0f64; BLOCK];
            run_wide(LaneSums {
                n,
                resamples: b_total,
                b0,
                weights: &self.weights,
                term: Term::Scaled(&v),
                out: &mut sums[..len],
            });
            // Within-query AUROCs are defined exactly on the two-outcome scenes, for every
            // score, so their per-resample count is shared by all rules.
            let mut own_counts = [0.0f64; BLOCK];
            let counts = if same_pattern {
                &self.two_class_counts[b0..b0 + len]
            } else {
                run_wide(LaneSums {
                    n,
                    resamples: b_total,
                    b0,
                    weights: &self.weights,
                    term: Term::Scaled(&defined),
                    out: &mut own_counts[..len],
                });
                &own_counts[..len]
            };
            for ((slot, &sum), &count) in o.iter_mut().zip(&sums).zip(counts) {
                *slot = (count > 0.0).then(|| sum / count);
            }
        });
        out
    }
}

/// `cols[s * n + from] = P[picks[from], s]`: one small table (n² values, in cache), so a
/// permutation costs n loads.
fn shuffle_table(t: &Transfer, picks: &[usize]) -> Vec<f64> {
    let n = t.n;
    let mut cols = vec![0.0; n * n];
    for (from, &p) in picks.iter().enumerate() {
        for s in 0..n {
            cols[s * n + from] = t.p[p * n + s];
        }
    }
    cols
}

/// `out[r] = inv_n · Σ_s cols[starts[s] + perms[r·n + s]]` in four lanes ([`lanes4`]), for
/// permutation entries of any width (`index` widens one).
#[cfg(test)]
fn permuted_sums<T: Copy + Sync>(
    perms: &[T],
    n: usize,
    cols: &[f64],
    starts: &[usize],
    inv_n: f64,
    out: &mut [f64],
    index: impl Fn(T) -> usize + Sync,
) {
    out.par_chunks_mut(CHUNK)
        .zip(perms.par_chunks(n * CHUNK))
        .for_each(|(o, rows)| permuted_block(rows, n, cols, starts, inv_n, o, &index));
}

/// [`permuted_sums`] of one block of permutations (`rows`: `o.len()` rows of `n`).
fn permuted_block<T: Copy>(
    rows: &[T],
    n: usize,
    cols: &[f64],
    starts: &[usize],
    inv_n: f64,
    o: &mut [f64],
    index: &impl Fn(T) -> usize,
) {
    for (slot, row) in o.iter_mut().zip(rows.chunks_exact(n)) {
        *slot = lanes4(row, starts, row, |from, start, _| cols[start + index(from)]) * inv_n;
    }
}

/// `Σ_i term(a_i, b_i, c_i)` over three equal-length slices in 4 independent lanes, walking
/// fixed-size chunks so that the per-element loads need no bounds checks (only a gather inside
/// `term` does). A single running sum is one long chain of dependent additions; the four lanes
/// round as [`crate::kernels`]' block sums do, identically for every thread count.
#[inline]
fn lanes4<A: Copy, B: Copy, C>(a: &[A], b: &[B], c: &[C], term: impl Fn(A, B, &C) -> f64) -> f64 {
    let (a4, a_tail) = a.as_chunks::<4>();
    let (b4, b_tail) = b.as_chunks::<4>();
    let (c4, c_tail) = c.as_chunks::<4>();
    let mut acc = [0.0f64; 4];
    for ((x, y), z) in a4.iter().zip(b4).zip(c4) {
        for j in 0..4 {
            acc[j] += term(x[j], y[j], &z[j]);
        }
    }
    let mut tail = 0.0;
    for ((&x, &y), z) in a_tail.iter().zip(b_tail).zip(c_tail) {
        tail += term(x, y, z);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::gap_on;
    use roboaudit_stats::ResampleDesign;

    fn setup() -> (Transfer, ResampleMatrix, Vec<usize>) {
        let inputs = crate::synthetic::generate(&crate::synthetic::SyntheticSpec {
            experiences: 7,
            scenes: 13,
            seeds: 3,
            representations: 0,
            dim: 1,
            seed: 5,
        });
        let t = Transfer::build(&inputs).unwrap();
        let design = ResampleDesign {
            n_clusters: 13,
            strata: None,
        };
        let m = ResampleMatrix::generate(&design, 300, 3).unwrap();
        let picks = (0..13).map(|s| (s * 5 + 1) % 7).collect();
        (t, m, picks)
    }

    #[test]
    fn replicates_equal_the_statistic_on_each_row() {
        let (t, m, picks) = setup();
        let lib: Vec<usize> = (0..7).collect();
        let d = SharedDraws::build(&t, &m, 10, 1);
        let gaps = d.gap_replicates(&t, &picks);
        let per_scene: Vec<Option<f64>> = (0..13)
            .map(|s| (s % 3 == 0).then(|| s as f64 / 13.0))
            .collect();
        // The pattern of two-outcome scenes takes the shared-count path, any other the general one.
        let shared: Vec<Option<f64>> = (0..13)
            .map(|s| d.two_class[s].then(|| (s * s) as f64 / 169.0))
            .collect();
        assert!(d.two_class.iter().any(|&b| b));
        assert!((0..13).any(|s| per_scene[s].is_some() != d.two_class[s]));
        for (per_scene, means) in [
            (&per_scene, d.mean_replicates(&per_scene)),
            (&shared, d.mean_replicates(&shared)),
        ] {
            check_means(m.rows(), per_scene, &means);
        }
        for (b, row) in m.rows().iter().enumerate() {
            let g = gap_on(&t, &lib, &picks, row).unwrap();
            assert!((gaps[b] - g).abs() < 1e-12, "{b}: {} vs {g}", gaps[b]);
        }
    }

    /// All rules at once give each rule's single-rule replicates, bit for bit, with and
    /// without gaps, for a permutation and resample count that leave partial blocks.
    #[test]
    fn replicates_of_many_rules_equal_one_rule_at_a_time() {
        let (t, m, picks) = setup();
        let d = SharedDraws::build(&t, &m, 1_000, 4);
        let other: Vec<usize> = (0..13).map(|s| (s * 3) % 7).collect();
        let constant = vec![2usize; 13];
        let rules: Vec<&[usize]> = vec![&picks, &other, &constant];
        for gaps in [true, false] {
            let many = d.replicates_many(&t, &rules, gaps);
            for (rule, (shuffled, gap)) in rules.iter().zip(&many) {
                assert_eq!(shuffled, &d.shuffled_successes(&t, rule));
                let want = if gaps {
                    d.gap_replicates(&t, rule)
                } else {
                    Vec::new()
                };
                assert_eq!(gap, &want);
            }
        }
    }

    fn check_means(rows: &[Vec<usize>], per_scene: &[Option<f64>], means: &[Option<f64>]) {
        for (b, row) in rows.iter().enumerate() {
            let vals: Vec<f64> = row.iter().filter_map(|&s| per_scene[s]).collect();
            let want = (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64);
            match (means[b], want) {
                (Some(a), Some(w)) => assert!((a - w).abs() < 1e-12),
                (a, w) => assert_eq!(a, w),
            }
        }
    }

    #[test]
    fn permutations_are_permutations_and_reproducible() {
        let (t, m, picks) = setup();
        let d = SharedDraws::build(&t, &m, 200, 9);
        for row in d.perms.chunks_exact(13) {
            let mut sorted = row.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..13).collect::<Vec<u32>>());
        }
        assert!(
            d.perms
                .chunks_exact(13)
                .any(|r| r != d.perms[..13].to_vec())
        );
        let again = SharedDraws::build(&t, &m, 200, 9);
        assert_eq!(d.perms, again.perms);
        // Each shuffled success is the success of the permuted selections.
        let sr = d.shuffled_successes(&t, &picks);
        for (r, row) in d.perms.chunks_exact(13).enumerate() {
            let want: f64 = (0..13)
                .map(|s| t.at(picks[row[s] as usize], s))
                .sum::<f64>()
                / 13.0;
            assert!((sr[r] - want).abs() < 1e-12);
        }
    }
}
