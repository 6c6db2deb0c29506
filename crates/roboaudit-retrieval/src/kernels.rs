//! The O(resamples × n) loops of the shared scene bootstrap, written so that each one streams
//! through contiguous memory and runs with 256-bit registers where the CPU has them
//! ([`roboaudit_stats::run_wide`]).
//!
//! Every replicate is computed with the very operations, in the very order, of the per-resample
//! form it replaces (a `Σ_s` in four interleaved lanes `s mod 4` plus a sequential tail, or a
//! left-to-right sum over the drawn scenes), so the replicates are bit-identical to it; only the
//! loop order changes: the loops here run over a block of resamples innermost, reading
//! resample-minor ("transposed") tables `x[s * stride + b]`.

use roboaudit_stats::WideKernel;

/// Resamples per block of the transposed loops: the block's accumulators (five rows of this
/// many `f64`) and one row of each input stay in L1 while the `n` scenes stream through.
pub(crate) const BLOCK: usize = 256;

/// Scene `s`'s term of a replicate sum on resample `b`, from the resample-minor weights
/// `w[s * resamples + b]` (how often `b` drew `s`; stored as `u32`, a quarter of the memory
/// traffic of `f64`, and converted exactly).
#[derive(Clone, Copy)]
pub(crate) enum Term<'a> {
    /// `w · value[s]`.
    Scaled(&'a [f64]),
    /// `w · (own[s] − quality[picks[s] * resamples + b])`.
    Gap {
        own: &'a [f64],
        picks: &'a [usize],
        quality: &'a [f64],
    },
}

/// `Σ_s term(s, b)` for the resamples `b0..b0 + out.len()` (at most [`BLOCK`]), with the
/// rounding of the per-resample four-lane sum: lane `j` adds the terms of scenes
/// `s ≡ j (mod 4)` below `4⌊n/4⌋` in scene order, a tail adds the rest in order, and the
/// result is `((l0 + l1) + (l2 + l3)) + tail`.
pub(crate) struct LaneSums<'a> {
    pub n: usize,
    pub resamples: usize,
    pub b0: usize,
    pub weights: &'a [u32],
    pub term: Term<'a>,
    pub out: &'a mut [f64],
}

impl WideKernel for LaneSums<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let len = self.out.len().min(BLOCK);
        let mut lanes = [[0.0f64; BLOCK]; 5];
        let full = self.n - self.n % 4;
        for s in 0..self.n {
            let lane = &mut lanes[if s < full { s % 4 } else { 4 }][..len];
            let row = s * self.resamples + self.b0;
            let w = &self.weights[row..row + len];
            match self.term {
                Term::Scaled(value) => {
                    let c = value[s];
                    for i in 0..len {
                        lane[i] += f64::from(w[i]) * c;
                    }
                }
                Term::Gap {
                    own,
                    picks,
                    quality,
                } => {
                    let (o, at) = (own[s], picks[s] * self.resamples + self.b0);
                    let q = &quality[at..at + len];
                    for i in 0..len {
                        lane[i] += f64::from(w[i]) * (o - q[i]);
                    }
                }
            }
        }
        let [l0, l1, l2, l3, tail] = &lanes;
        for (b, out) in self.out[..len].iter_mut().enumerate() {
            *out = ((l0[b] + l1[b]) + (l2[b] + l3[b])) + tail[b];
        }
    }
}

/// `q_b(e) = (Σ_s c_b(s) · P[e, s]) · inv_n` for a block of resamples, summed left to right
/// over the scenes drawn at least once (a multiply then an add per term), written row-major
/// (`out[i * k + e]` for the block's `i`-th resample). `counts[i * n + s]` are the block's scene
/// multiplicities, `p_scene[s * stride + e]` is `P` scene-major with rows padded to `stride`
/// (a multiple of 8, zeros after `k`).
pub(crate) struct Qualities<'a> {
    pub n: usize,
    pub k: usize,
    pub stride: usize,
    pub inv_n: f64,
    pub p_scene: &'a [f64],
    pub counts: &'a [f64],
    pub out: &'a mut [f64],
}

impl WideKernel for Qualities<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let (n, k, stride) = (self.n, self.k, self.stride);
        let mut drawn: Vec<(usize, f64)> = Vec::with_capacity(n);
        let mut q = vec![0.0f64; stride];
        for (counts, out) in self
            .counts
            .chunks_exact(n)
            .zip(self.out.chunks_exact_mut(k))
        {
            drawn.clear();
            drawn.extend(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0.0)
                    .map(|(s, &c)| (s, c)),
            );
            let mut e = 0;
            while e + 24 <= stride {
                tile::<24>(self.p_scene, stride, e, &drawn, &mut q);
                e += 24;
            }
            while e < stride {
                tile::<8>(self.p_scene, stride, e, &drawn, &mut q);
                e += 8;
            }
            for (o, &v) in out.iter_mut().zip(&q[..k]) {
                *o = v * self.inv_n;
            }
        }
    }
}

/// Columns `offset..offset + W` of the weighted sum, accumulated in registers.
#[inline(always)]
fn tile<const W: usize>(
    p_scene: &[f64],
    stride: usize,
    offset: usize,
    drawn: &[(usize, f64)],
    q: &mut [f64],
) {
    let mut acc = [0.0f64; W];
    for &(s, c) in drawn {
        // A fixed-size row: the loop below then has a known trip count, is unrolled, and the
        // accumulators stay in registers.
        let at = s * stride + offset;
        let Ok(row) = <&[f64; W]>::try_from(&p_scene[at..at + W]) else {
            continue;
        };
        for i in 0..W {
            acc[i] += c * row[i];
        }
    }
    q[offset..offset + W].copy_from_slice(&acc);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block form equals the per-resample four-lane sum bit for bit, for n with and
    /// without a tail.
    #[test]
    fn lane_sums_match_per_resample_lanes() {
        for n in [1, 3, 4, 7, 13, 40] {
            let resamples = 100;
            let weight = |s: usize, b: usize| f64::from(((s * resamples + b) * 7919 % 13) as u32);
            let weights: Vec<u32> = (0..n * resamples)
                .map(|i| ((i * 7919) % 13) as u32)
                .collect();
            let scale: Vec<f64> = (0..n).map(|s| 0.3 + s as f64).collect();
            let value = |s: usize, b: usize| weight(s, b) * scale[s];
            let mut out = vec![0.0; resamples];
            roboaudit_stats::run_wide(LaneSums {
                n,
                resamples,
                b0: 0,
                weights: &weights,
                term: Term::Scaled(&scale),
                out: &mut out,
            });
            for (b, &got) in out.iter().enumerate() {
                let mut acc = [0.0f64; 4];
                let full = n - n % 4;
                for s in 0..full {
                    acc[s % 4] += value(s, b);
                }
                let mut tail = 0.0;
                for s in full..n {
                    tail += value(s, b);
                }
                let want = (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail;
                assert_eq!(got.to_bits(), want.to_bits(), "n = {n}, b = {b}");
            }
        }
    }
}
