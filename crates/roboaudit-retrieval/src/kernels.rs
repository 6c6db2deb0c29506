//! The O(permutations × n) and O(resamples × n) loops of the shared draws, written so that
//! their accumulators stay in registers and they run with 256-bit registers where the CPU has
//! them ([`roboaudit_stats::run_wide`]).
//!
//! - [`Shuffled`]: the shuffled success of every rule under every permutation at once. The rules
//!   are stacked: `table[(s·n + from)·width + r] = P[picks_r[from], s]`, so a permutation costs
//!   `n` contiguous row loads for all rules instead of `n` scattered loads per rule.
//! - [`ExactShuffled`]: the same with whole-number successes in `u16` lanes (32 rules in two
//!   256-bit registers), each rule's sums counted into a histogram.
//! - [`ColumnSums`]: the resample-weighted sums `Σ_s w_b(s)·x(s)` of many per-scene columns on
//!   a block of resamples, vectorized over resamples (cluster-major weight tables).
//! - [`GapSums`]: each rule's `Σ_s w_b(s)·P[pick(s), s]` and `Σ_s w_b(s)·Q_b(pick(s))` on the
//!   same block, from the quality columns of [`ColumnSums`].
//!
//! Every value is a left-to-right sum in a fixed order (scene order), the same on every dispatch
//! path and for any thread count. The resample kernels add each term with one fused
//! multiply-add (`f64::mul_add`, a single rounding): the AVX-512 and AVX2 copies of
//! [`roboaudit_stats::run_wide`] run it as one instruction, and every other path as a correctly
//! rounded `fma` call, so the bits never depend on the path.

use roboaudit_stats::WideKernel;

/// Widest stack of rules in one [`Shuffled`] pass: 8 AVX registers of accumulators.
pub(crate) const MAX_STACK: usize = 32;

/// `out[p·width + r] = Σ_s table[(s·n + perms[p·n + s])·width + r]` for every permutation `p`
/// of `perms` (rows of `n` entries, any integer width through `index`).
pub(crate) struct Shuffled<'a, T, I> {
    pub perms: &'a [T],
    pub n: usize,
    pub table: &'a [f64],
    /// Rules in the stack: a multiple of 4 up to [`MAX_STACK`] (zero-padded), or 1.
    pub width: usize,
    pub index: I,
    pub out: &'a mut [f64],
}

impl<T: Copy, I: Fn(T) -> usize> WideKernel for Shuffled<'_, T, I> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Shuffled {
            perms,
            n,
            table,
            width,
            index,
            out,
        } = self;
        // One monomorphized stack per width, so that the accumulators have a fixed size and
        // stay in registers.
        macro_rules! stacks {
            ($($w:literal)*) => {
                match width {
                    $($w => shuffled::<$w, T>(perms, n, table, &index, out),)*
                    _ => {}
                }
            };
        }
        stacks!(1 4 8 12 16 20 24 28 32);
    }
}

#[inline(always)]
fn shuffled<const W: usize, T: Copy>(
    perms: &[T],
    n: usize,
    table: &[f64],
    index: &impl Fn(T) -> usize,
    out: &mut [f64],
) {
    for (row, o) in perms.chunks_exact(n).zip(out.chunks_exact_mut(W)) {
        let mut acc = [0.0f64; W];
        for (s, &from) in row.iter().enumerate() {
            // Offsets stay inside the table (it has n·n rows of W); wrapping ops spare the dev
            // profile's overflow checks in the innermost loop.
            let at = s.wrapping_mul(n).wrapping_add(index(from)).wrapping_mul(W);
            let Some(v) = table.get(at..at.wrapping_add(W)) else {
                continue;
            };
            let Ok(v) = <&[f64; W]>::try_from(v) else {
                continue;
            };
            for i in 0..W {
                acc[i] += v[i];
            }
        }
        if let Ok(o) = <&mut [f64; W]>::try_from(o) {
            *o = acc;
        }
    }
}

/// Widest stack of rules in one [`ExactShuffled`] pass: 32 `u16` sums, two 256-bit registers.
pub(crate) const EXACT_STACK: usize = 32;

/// For every permutation `p` of `perms` (rows of `n` entries, any integer width through
/// `index`): the whole-number sums `Σ_s table[(s·n + perms[p·n + s])·width + r]` of the first
/// `rules` rules of the stack, each counted into its histogram, `counts[r·bins + sum] += 1`.
/// `width` is 16 or [`EXACT_STACK`] (zero-padded); the table's sums of `n` entries never exceed
/// `bins − 1 <= u16::MAX` (the caller's bound).
pub(crate) struct ExactShuffled<'a, T, I> {
    pub perms: &'a [T],
    pub n: usize,
    pub table: &'a [u16],
    pub width: usize,
    pub index: I,
    pub rules: usize,
    pub bins: usize,
    pub counts: &'a mut [u64],
}

impl<T: Copy, I: Fn(T) -> usize> WideKernel for ExactShuffled<'_, T, I> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        macro_rules! stacks {
            ($($w:literal)*) => {
                match self.width {
                    $($w => exact_shuffled::<$w, T, I>(self),)*
                    _ => {}
                }
            };
        }
        stacks!(16 32);
    }
}

#[inline(always)]
fn exact_shuffled<const W: usize, T: Copy, I: Fn(T) -> usize>(k: ExactShuffled<'_, T, I>) {
    let ExactShuffled {
        perms,
        n,
        table,
        index,
        rules,
        bins,
        counts,
        ..
    } = k;
    // Scene `s`'s rows of the table, one per origin scene: whole slices, so that a row is
    // found with one bounds check.
    let rows_of_scene = n.wrapping_mul(W);
    if rows_of_scene == 0 {
        return;
    }
    for row in perms.chunks_exact(n) {
        // Two halves of 16 lanes, each one 256-bit register (AVX-512F has no 16-bit lanes in
        // 512 bits); the second is all zeros for a stack of 16.
        let (mut lo, mut hi) = ([0u16; 16], [0u16; 16]);
        for (&from, scene_rows) in row.iter().zip(table.chunks_exact(rows_of_scene)) {
            let at = index(from).wrapping_mul(W);
            let Some(v) = scene_rows.get(at..at.wrapping_add(W)) else {
                continue;
            };
            let (first, second) = v.split_at(16.min(W));
            // Within u16: the caller bounds every sum of n entries.
            for (sum, &value) in lo.iter_mut().zip(first) {
                *sum = sum.wrapping_add(value);
            }
            for (sum, &value) in hi.iter_mut().zip(second) {
                *sum = sum.wrapping_add(value);
            }
        }
        for (r, &sum) in lo.iter().chain(&hi).enumerate().take(rules) {
            if let Some(c) = counts.get_mut(r * bins + usize::from(sum)) {
                *c += 1;
            }
        }
    }
}

/// Resamples per strip of the resample kernels (the widest; every strip length divides it):
/// a block of resamples is a whole number of strips when its length is a multiple of this.
pub(crate) const STRIP: usize = 32;

/// Columns of [`ColumnSums`]: a multiple of every column tile (zero columns pad the values).
pub(crate) const COLUMN_PAD: usize = 12;

/// `out[c·stride + j] = Σ_s values[s·width + c] · weights[s·stride + j]`, left to right over the
/// scenes `s < n` (one fused multiply-add per term), for every column `c < width` and every
/// resample `j` of the first `len` rounded up to [`STRIP`] (`stride` at least that; the weights
/// there are padding, finite, and their sums are never read). `width` is a multiple of
/// [`COLUMN_PAD`] (zero columns pad it). Every drawn and undrawn scene is a term: a weight of 0
/// adds exactly nothing. `lanes` is [`roboaudit_stats::wide_lanes`]: it picks the register tile
/// (the sums do not depend on it).
pub(crate) struct ColumnSums<'a> {
    pub weights: &'a [f64],
    pub values: &'a [f64],
    pub width: usize,
    pub n: usize,
    pub stride: usize,
    pub len: usize,
    pub lanes: usize,
    pub out: &'a mut [f64],
}

impl WideKernel for ColumnSums<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        // Tiles of columns × resamples whose accumulators stay in registers: 4 × 32 in the 32
        // AVX-512 registers, 3 × 16 in 16 AVX2 ones (measured fastest of 2 × 64 to 8 × 16 and
        // of 2 × 16 to 6 × 8).
        if self.lanes >= 8 {
            column_sums::<4, 32>(self);
        } else {
            column_sums::<3, 16>(self);
        }
    }
}

#[inline(always)]
fn column_sums<const C: usize, const J: usize>(k: ColumnSums<'_>) {
    let ColumnSums {
        weights,
        values,
        width,
        n,
        stride,
        len,
        out,
        ..
    } = k;
    for j0 in (0..len).step_by(J) {
        for c0 in (0..width).step_by(C) {
            let mut acc = [[0.0f64; J]; C];
            for s in 0..n {
                // In range: the callers size the tables (a failed get skips the term, and the
                // tests would see it).
                let Some(w) = strip::<J>(weights, s * stride + j0) else {
                    continue;
                };
                let Some(x) = values
                    .get(s * width + c0..s * width + c0 + C)
                    .and_then(|x| <&[f64; C]>::try_from(x).ok())
                else {
                    continue;
                };
                // Resamples outermost, columns inside: the loop the compiler vectorizes is the
                // one over resamples, with every column's accumulators in registers.
                for i in 0..J {
                    for c in 0..C {
                        acc[c][i] = x[c].mul_add(w[i], acc[c][i]);
                    }
                }
            }
            for (c, sums) in acc.iter().enumerate() {
                let at = (c0 + c) * stride + j0;
                if let Some(o) = out.get_mut(at..at + J) {
                    o.copy_from_slice(sums);
                }
            }
        }
    }
}

/// The `J` values of `table` from `at` on.
#[inline(always)]
fn strip<const J: usize>(table: &[f64], at: usize) -> Option<&[f64; J]> {
    table
        .get(at..at.wrapping_add(J))
        .and_then(|w| <&[f64; J]>::try_from(w).ok())
}

/// For every rule `r` and resample `j` of the first `len` rounded up to [`STRIP`]:
/// `own[r·stride + j] = Σ_s w_j(s)·P[pick_r(s), s]` and `picked[r·stride + j] = Σ_s
/// w_j(s)·quality[pick_r(s)·stride + j]`, left to right over the scenes (one fused multiply-add
/// per term). `weights` and `quality` are cluster-major tables of rows of `stride`;
/// `picks[r]` / `own_values[r]` hold rule `r`'s pick and `P[pick, s]` per scene (one per
/// scene). `lanes` is [`roboaudit_stats::wide_lanes`] (it picks how many rules share a pass;
/// the sums do not depend on it).
pub(crate) struct GapSums<'a> {
    pub picks: &'a [&'a [usize]],
    pub own_values: &'a [Vec<f64>],
    pub weights: &'a [f64],
    pub quality: &'a [f64],
    pub stride: usize,
    pub len: usize,
    pub lanes: usize,
    pub own: &'a mut [f64],
    pub picked: &'a mut [f64],
}

impl WideKernel for GapSums<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        // Rules per pass, so that each strip of weights loaded serves them all: 3 with 32
        // AVX-512 registers, 2 with 16 AVX2 ones (measured fastest of 1 to 4).
        if self.lanes >= 8 {
            gap_sums::<3>(self);
        } else {
            gap_sums::<2>(self);
        }
    }
}

#[inline(always)]
fn gap_sums<const R: usize>(k: GapSums<'_>) {
    let GapSums {
        picks,
        own_values,
        weights,
        quality,
        stride,
        len,
        own,
        picked,
        ..
    } = k;
    let rules = picks.len().min(own_values.len());
    // The last pass repeats its last rule where the rules run out (computed twice, the same
    // sums).
    for r0 in (0..rules).step_by(R) {
        let rs: [usize; R] = std::array::from_fn(|t| (r0 + t).min(rules - 1));
        let scenes = rs
            .iter()
            .map(|&r| picks[r].len().min(own_values[r].len()))
            .min()
            .unwrap_or(0);
        for j0 in (0..len).step_by(STRIP) {
            let mut acc_own = [[0.0f64; STRIP]; R];
            let mut acc_picked = [[0.0f64; STRIP]; R];
            for s in 0..scenes {
                let Some(w) = strip::<STRIP>(weights, s * stride + j0) else {
                    continue;
                };
                // The picks index the quality rows (in range by construction; the weights stand
                // in for a row that is not, and the tests would see it).
                let mut q = [w; R];
                let mut v = [0.0; R];
                for t in 0..R {
                    if let Some(row) = strip::<STRIP>(quality, picks[rs[t]][s] * stride + j0) {
                        q[t] = row;
                    }
                    v[t] = own_values[rs[t]][s];
                }
                for i in 0..STRIP {
                    for t in 0..R {
                        acc_own[t][i] = v[t].mul_add(w[i], acc_own[t][i]);
                        acc_picked[t][i] = w[i].mul_add(q[t][i], acc_picked[t][i]);
                    }
                }
            }
            for t in 0..R {
                let at = rs[t] * stride + j0;
                if let Some(o) = own.get_mut(at..at + STRIP) {
                    o.copy_from_slice(&acc_own[t]);
                }
                if let Some(o) = picked.get_mut(at..at + STRIP) {
                    o.copy_from_slice(&acc_picked[t]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roboaudit_stats::run_wide;

    /// Deterministic pseudo-random values in [0, 8) with a fractional part.
    fn values(count: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        (0..count)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 40) as f64 / (1u64 << 21) as f64
            })
            .collect()
    }

    /// Every register tile (the AVX-512 and the AVX2 shapes, whichever copy runs them) gives
    /// the sums of one fused multiply-add per scene in scene order, bit for bit, on a block
    /// whose length is not a whole number of strips.
    #[test]
    fn resample_kernels_do_not_depend_on_the_tile() {
        let (n, stride, len, width, k, rules) = (7, 72, 45, 2 * COLUMN_PAD, 5, 4);
        let weights = values(n * stride, 1);
        let table = values(n * width, 2);
        let want = |c: usize, j: usize| {
            (0..n).fold(0.0, |acc: f64, s| {
                table[s * width + c].mul_add(weights[s * stride + j], acc)
            })
        };
        let picks: Vec<Vec<usize>> = (0..rules)
            .map(|r| (0..n).map(|s| (s * 3 + r) % k).collect())
            .collect();
        let pick_refs: Vec<&[usize]> = picks.iter().map(Vec::as_slice).collect();
        let own_values: Vec<Vec<f64>> = (0..rules).map(|r| values(n, 10 + r as u64)).collect();
        for lanes in [8, 4, 2] {
            let mut out = vec![0.0; width * stride];
            run_wide(ColumnSums {
                weights: &weights,
                values: &table,
                width,
                n,
                stride,
                len,
                lanes,
                out: &mut out,
            });
            for c in 0..width {
                for j in 0..len {
                    assert_eq!(out[c * stride + j].to_bits(), want(c, j).to_bits());
                }
            }
            let (mut own, mut picked) = (vec![0.0; rules * stride], vec![0.0; rules * stride]);
            run_wide(GapSums {
                picks: &pick_refs,
                own_values: &own_values,
                weights: &weights,
                quality: &out[..k * stride],
                stride,
                len,
                lanes,
                own: &mut own,
                picked: &mut picked,
            });
            for r in 0..rules {
                for j in 0..len {
                    let (o, p) = (0..n).fold((0.0f64, 0.0f64), |(o, p), s| {
                        let w = weights[s * stride + j];
                        (
                            own_values[r][s].mul_add(w, o),
                            w.mul_add(out[picks[r][s] * stride + j], p),
                        )
                    });
                    assert_eq!(own[r * stride + j].to_bits(), o.to_bits(), "lanes {lanes}");
                    assert_eq!(
                        picked[r * stride + j].to_bits(),
                        p.to_bits(),
                        "lanes {lanes}"
                    );
                }
            }
        }
    }
}
