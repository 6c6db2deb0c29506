//! The O(permutations × n) and O(resamples × n) loops of the shared draws, written so that
//! their accumulators stay in registers and they run with 256-bit registers where the CPU has
//! them ([`roboaudit_stats::run_wide`]).
//!
//! - [`Shuffled`]: the shuffled success of every rule under every permutation at once. The rules
//!   are stacked: `table[(s·n + from)·width + r] = P[picks_r[from], s]`, so a permutation costs
//!   `n` contiguous row loads for all rules instead of `n` scattered loads per rule.
//! - [`ExactShuffled`]: the same with whole-number successes in `u16` lanes (32 rules in one
//!   AVX-512 register), each rule's sums counted into a histogram.
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

/// Widest stack of rules in one [`ExactShuffled`] pass: 32 `u16` sums, one AVX-512 register.
pub(crate) const EXACT_STACK: usize = 32;

/// For every permutation `p` of `perms` (rows of `n` entries, any integer width through
/// `index`): the whole-number sums `Σ_s table[(s·n + perms[p·n + s])·width + r]` of the first
/// `rules` rules of the stack, each counted into its histogram, `counts[r·bins + sum] += 1`.
/// `width` is a multiple of 8 up to [`EXACT_STACK`] (zero-padded); the table's sums of `n`
/// entries never exceed `bins − 1 <= u16::MAX` (the caller's bound).
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
        stacks!(8 16 24 32);
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
    for row in perms.chunks_exact(n) {
        let mut acc = [0u16; W];
        for (s, &from) in row.iter().enumerate() {
            let at = s.wrapping_mul(n).wrapping_add(index(from)).wrapping_mul(W);
            let Some(v) = table
                .get(at..at.wrapping_add(W))
                .and_then(|v| <&[u16; W]>::try_from(v).ok())
            else {
                continue;
            };
            for i in 0..W {
                // Within u16: the caller bounds every sum of n entries.
                acc[i] = acc[i].wrapping_add(v[i]);
            }
        }
        for (r, &sum) in acc.iter().enumerate().take(rules) {
            if let Some(c) = counts.get_mut(r * bins + usize::from(sum)) {
                *c += 1;
            }
        }
    }
}

/// Resamples per strip of the resample kernels: four vectors of eight lanes (`Lanes`), the
/// widest strip whose accumulators stay in registers beside the loads.
pub(crate) const STRIP: usize = 32;

/// Eight resamples' values: one AVX-512 register, two AVX2 ones.
type Lanes = [f64; 8];

/// Columns per register tile of [`ColumnSums`] (4 × 4 vectors of accumulators: 16 of the 32
/// AVX-512 registers, and the broadcast values and weights beside them).
pub(crate) const COLUMN_TILE: usize = 4;

/// `out[c·stride + j] = Σ_s values[s·width + c] · weights[s·stride + j]`, left to right over the
/// scenes `s < n` (one fused multiply-add per term), for every column `c < width` and every
/// resample `j` of the first `len` rounded up to [`STRIP`] (`stride` at least that; the weights
/// there are padding, finite, and their sums are never read). `width` is a multiple of
/// [`COLUMN_TILE`] (zero columns pad it). Every drawn and undrawn scene is a term: a weight of 0
/// adds exactly nothing.
pub(crate) struct ColumnSums<'a> {
    pub weights: &'a [f64],
    pub values: &'a [f64],
    pub width: usize,
    pub n: usize,
    pub stride: usize,
    pub len: usize,
    pub out: &'a mut [f64],
}

impl WideKernel for ColumnSums<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let ColumnSums {
            weights,
            values,
            width,
            n,
            stride,
            len,
            out,
        } = self;
        for j0 in (0..len).step_by(STRIP) {
            for c0 in (0..width).step_by(COLUMN_TILE) {
                let mut acc = [[0.0f64; STRIP]; COLUMN_TILE];
                for s in 0..n {
                    let w = strip(weights, s * stride + j0).as_flattened();
                    let Some(x) = values
                        .get(s * width + c0..s * width + c0 + COLUMN_TILE)
                        .and_then(|x| <&[f64; COLUMN_TILE]>::try_from(x).ok())
                    else {
                        continue;
                    };
                    for i in 0..STRIP {
                        for c in 0..COLUMN_TILE {
                            acc[c][i] = x[c].mul_add(w[i], acc[c][i]);
                        }
                    }
                }
                for (c, lanes) in acc.iter().enumerate() {
                    let at = (c0 + c) * stride + j0;
                    if let Some(o) = out.get_mut(at..at + STRIP) {
                        o.copy_from_slice(lanes);
                    }
                }
            }
        }
    }
}

/// A strip of zeros (the value of a strip past a table's end, which the callers never ask for).
const ZERO: [Lanes; STRIP / 8] = [[0.0; 8]; STRIP / 8];

/// The [`STRIP`] values of `table` from `at` on, as vectors of lanes.
#[inline(always)]
fn strip(table: &[f64], at: usize) -> &[Lanes; STRIP / 8] {
    table
        .get(at..at.wrapping_add(STRIP))
        .and_then(|w| w.as_chunks::<8>().0.try_into().ok())
        .unwrap_or(&ZERO)
}

/// For every rule `r` and resample `j` of the first `len` rounded up to [`STRIP`]:
/// `own[r·stride + j] = Σ_s w_j(s)·P[pick_r(s), s]` and `picked[r·stride + j] = Σ_s
/// w_j(s)·quality[pick_r(s)·stride + j]`, left to right over the scenes (one fused multiply-add
/// per term). `weights` and `quality` are cluster-major tables of rows of `stride`;
/// `picks[r]` / `own_values[r]` hold rule `r`'s pick and `P[pick, s]` per scene.
pub(crate) struct GapSums<'a> {
    pub picks: &'a [&'a [usize]],
    pub own_values: &'a [Vec<f64>],
    pub weights: &'a [f64],
    pub quality: &'a [f64],
    pub stride: usize,
    pub len: usize,
    pub own: &'a mut [f64],
    pub picked: &'a mut [f64],
}

impl WideKernel for GapSums<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let GapSums {
            picks,
            own_values,
            weights,
            quality,
            stride,
            len,
            own,
            picked,
        } = self;
        // Two rules at a time, so that each strip of weights loaded serves both (an odd last
        // rule is paired with itself and stored once).
        let rules = picks.len().min(own_values.len());
        for r0 in (0..rules).step_by(2) {
            let r1 = (r0 + 1).min(rules - 1);
            let (picks0, picks1) = (picks[r0], picks[r1]);
            let (values0, values1) = (&own_values[r0], &own_values[r1]);
            let scenes = picks0
                .len()
                .min(picks1.len())
                .min(values0.len())
                .min(values1.len());
            for j0 in (0..len).step_by(STRIP) {
                let mut own0 = [0.0f64; STRIP];
                let mut picked0 = [0.0f64; STRIP];
                let mut own1 = [0.0f64; STRIP];
                let mut picked1 = [0.0f64; STRIP];
                for s in 0..scenes {
                    let w = strip(weights, s * stride + j0).as_flattened();
                    let q0 = strip(quality, picks0[s] * stride + j0).as_flattened();
                    let q1 = strip(quality, picks1[s] * stride + j0).as_flattened();
                    let (v0, v1) = (values0[s], values1[s]);
                    for i in 0..STRIP {
                        own0[i] = v0.mul_add(w[i], own0[i]);
                        picked0[i] = w[i].mul_add(q0[i], picked0[i]);
                        own1[i] = v1.mul_add(w[i], own1[i]);
                        picked1[i] = w[i].mul_add(q1[i], picked1[i]);
                    }
                }
                for (r, acc_own, acc_picked) in [(r0, &own0, &picked0), (r1, &own1, &picked1)] {
                    let at = r * stride + j0;
                    if let Some(o) = own.get_mut(at..at + STRIP) {
                        o.copy_from_slice(acc_own);
                    }
                    if let Some(o) = picked.get_mut(at..at + STRIP) {
                        o.copy_from_slice(acc_picked);
                    }
                }
            }
        }
    }
}
