//! Random draws shared by every rule of one audit (SPEC.md §0 scene bootstrap, §1 shuffle), laid
//! out so that a rule's replicate costs O(n): the scene counts of each resample, the library
//! qualities `q_b(e)` on each resample, and one matrix of scene permutations.
//!
//! Sharing is what the NumPy reference does too (one bootstrap index matrix and one permutation
//! matrix for all rules), and it makes rules comparable on the very same resamples. Every block
//! of rows comes from its own ChaCha8 stream and blocks are filled in parallel, so the draws do
//! not depend on the thread count.

use crate::matrix::Transfer;
use crate::shuffle::fast_shuffle;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roboaudit_stats::ResampleMatrix;

/// Rows per ChaCha8 stream of the permutation matrix (as `ResampleMatrix`'s blocks).
const ROWS_PER_STREAM: usize = 64;

/// Resamples evaluated per rayon task: large enough to amortise scheduling, fixed so that the
/// order of results never depends on the thread count.
const CHUNK: usize = 256;

/// Scene-bootstrap resamples and shuffle permutations of one audit, precomputed once.
pub(crate) struct SharedDraws {
    n: usize,
    k: usize,
    resamples: usize,
    /// How often resample `b` drew scene `s`, `weights[b * n + s]` (as f64, so that replicate
    /// sums are plain dot products).
    weights: Vec<f64>,
    /// `q_b(e) = Σ_s weights[b,s]·P[e,s] / n`, the quality of every experience on resample `b`,
    /// `quality[b * k + e]`.
    quality: Vec<f64>,
    /// Scene permutations, `perms[r * n + s]` = scene whose selection scene `s` receives in
    /// permutation `r`.
    perms: Vec<u32>,
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
        // Scene-major copy of P so the inner loop over experiences is contiguous.
        let mut p_scene = vec![0.0; n * k];
        for e in 0..k {
            for s in 0..n {
                p_scene[s * k + e] = t.at(e, s);
            }
        }
        let resamples = matrix.len();
        let mut weights = vec![0.0; resamples * n];
        let mut quality = vec![0.0; resamples * k];
        let rows = matrix.rows();
        let inv_n = 1.0 / n as f64;
        weights
            .par_chunks_mut(n * CHUNK)
            .zip(quality.par_chunks_mut(k * CHUNK))
            .enumerate()
            .for_each(|(c, (w_chunk, q_chunk))| {
                for (i, (w, q)) in w_chunk
                    .chunks_exact_mut(n)
                    .zip(q_chunk.chunks_exact_mut(k))
                    .enumerate()
                {
                    for &s in &rows[c * CHUNK + i] {
                        w[s] += 1.0;
                    }
                    for (s, &count) in w.iter().enumerate() {
                        if count > 0.0 {
                            let col = &p_scene[s * k..(s + 1) * k];
                            q.iter_mut()
                                .zip(col)
                                .for_each(|(acc, &p)| *acc += count * p);
                        }
                    }
                    q.iter_mut().for_each(|v| *v *= inv_n);
                }
            });
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
        let two_class_counts = weights
            .chunks_exact(n)
            .map(|w| lane_sum(n, |s| w[s] * indicator[s]))
            .collect();
        Self {
            n,
            k,
            resamples,
            weights,
            quality,
            perms,
            permutations,
            two_class,
            two_class_counts,
        }
    }

    /// Shuffled success `mean_s P[picks[π(s)], s]` of every shared permutation `π`, in
    /// permutation order. `picks` are library positions of the full library.
    pub fn shuffled_successes(&self, t: &Transfer, picks: &[usize]) -> Vec<f64> {
        let n = self.n;
        // cols[s * n + from] = P[picks[from], s]: one small table (n² values, in cache), so a
        // permutation costs n loads.
        let mut cols = vec![0.0; n * n];
        for (from, &p) in picks.iter().enumerate() {
            for s in 0..n {
                cols[s * n + from] = t.p[p * n + s];
            }
        }
        let starts: Vec<usize> = (0..n).map(|s| s * n).collect();
        let inv_n = 1.0 / n as f64;
        let mut out = vec![0.0; self.permutations];
        out.par_chunks_mut(CHUNK)
            .zip(self.perms.par_chunks(n * CHUNK))
            .for_each(|(o, rows)| {
                for (slot, row) in o.iter_mut().zip(rows.chunks_exact(n)) {
                    *slot = lanes4(row, &starts, row, |from, start, _| {
                        cols[start + from as usize]
                    }) * inv_n;
                }
            });
        out
    }

    /// Discrimination gap `G_b = SR_b − Σ_e f_b(e) q_b(e)` on every resample (SPEC.md §1: SR,
    /// f and q recomputed over the resampled scenes, with multiplicity), in resample order.
    /// Written as `Σ_s w_b[s]·(P[sel(s), s] − q_b(sel(s))) / n`, the same quantity.
    pub fn gap_replicates(&self, t: &Transfer, picks: &[usize]) -> Vec<f64> {
        let (n, k) = (self.n, self.k);
        let own: Vec<f64> = picks.iter().enumerate().map(|(s, &p)| t.at(p, s)).collect();
        let inv_n = 1.0 / n as f64;
        let mut out = vec![0.0; self.resamples];
        out.par_chunks_mut(CHUNK)
            .zip(self.weights.par_chunks(n * CHUNK))
            .zip(self.quality.par_chunks(k * CHUNK))
            .for_each(|((o, w_rows), q_rows)| {
                for ((slot, w), q) in o
                    .iter_mut()
                    .zip(w_rows.chunks_exact(n))
                    .zip(q_rows.chunks_exact(k))
                {
                    *slot = lanes4(w, &own, picks, |w, o, &e| w * (o - q[e])) * inv_n;
                }
            });
        out
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
        let mut out = vec![None; self.resamples];
        out.par_chunks_mut(CHUNK)
            .zip(self.weights.par_chunks(n * CHUNK))
            .zip(self.two_class_counts.par_chunks(CHUNK))
            .for_each(|((o, w_rows), counts)| {
                for ((b, slot), w) in o.iter_mut().enumerate().zip(w_rows.chunks_exact(n)) {
                    // Within-query AUROCs are defined exactly on the two-outcome scenes, for
                    // every score, so their per-resample count is shared by all rules.
                    let count = if same_pattern {
                        counts[b]
                    } else {
                        lane_sum(n, |s| w[s] * defined[s])
                    };
                    *slot = (count > 0.0).then(|| lanes4(w, &v, &v, |w, x, _| w * x) / count);
                }
            });
        out
    }
}

/// `Σ_{i < len} term(i)` accumulated in 4 independent lanes: a single running sum is one long
/// chain of dependent additions, which made these O(n) replicate loops latency-bound. The
/// rounding differs from a left-to-right sum only in the last bits, identically for every
/// thread count.
#[inline]
fn lane_sum(len: usize, term: impl Fn(usize) -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let mut i = 0;
    while i + 4 <= len {
        acc[0] += term(i);
        acc[1] += term(i + 1);
        acc[2] += term(i + 2);
        acc[3] += term(i + 3);
        i += 4;
    }
    let mut tail = 0.0;
    while i < len {
        tail += term(i);
        i += 1;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `Σ_i term(a_i, b_i, c_i)` over three equal-length slices in 4 independent lanes, walking
/// fixed-size chunks so that the per-element loads need no bounds checks (only a gather inside
/// `term` does). Same rounding rule as [`lane_sum`].
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
