//! The O(permutations × n) and O(resamples × n) loops of the shared draws, written so that
//! their accumulators stay in registers and they run with 256-bit registers where the CPU has
//! them ([`roboaudit_stats::run_wide`]).
//!
//! - [`Shuffled`]: the shuffled success of every rule under every permutation at once. The rules
//!   are stacked: `table[(s·n + from)·width + r] = P[picks_r[from], s]`, so a permutation costs
//!   `n` contiguous row loads for all rules instead of `n` scattered loads per rule.
//! - [`PickedQualities`]: `Σ_e F_b(e)·q_b(e)` of every rule on a block of resamples, with
//!   `F_b(e) = Σ_{s: pick(s) = e} w_b(s)`, vectorized over resamples (resample-minor tables).
//!
//! Every value is a left-to-right sum in a fixed order (scene order; experiences in library
//! order), the same on every dispatch path and for any thread count.

use roboaudit_stats::WideKernel;

/// Widest stack of rules in one [`Shuffled`] pass: 8 AVX registers of accumulators.
pub(crate) const MAX_STACK: usize = 32;

/// Resamples per tile of [`PickedQualities`]: long enough that the loops over the tile compile
/// to vector code (16 was unrolled into scalars and spilled; 32 measured fastest of 16, 32, 64).
pub(crate) const RUN: usize = 32;

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

/// `out[r·stride + i] = Σ_{(e, scenes) ∈ groups[r]} (Σ_{s ∈ scenes} weights[s·stride + i]) ·
/// quality[e·stride + i]` for every rule `r` and `i < len`: the picked qualities
/// `Σ_e F_b(e)·q_b(e)` (here with `n·q_b(e)`) of all rules on one block of resamples.
/// `groups[r]` holds rule `r`'s distinct picks in library order with the scenes that pick each;
/// `weights` / `quality` are the block's resample-minor tables (rows of `stride` at least `len`
/// rounded up to [`RUN`]; entries past `len` are padding). `F` is summed in integers (exact: at
/// most `n` draws; `i32` converts to `f64` in one vector instruction), then converted once per
/// pick. The runs of [`RUN`] resamples are the outer loop, so that one run's rows of both tables
/// stay in the L1 cache while every rule reads them.
pub(crate) struct PickedQualities<'a> {
    pub groups: &'a [Vec<(usize, Vec<usize>)>],
    pub weights: &'a [i32],
    pub quality: &'a [f64],
    pub stride: usize,
    pub len: usize,
    pub out: &'a mut [f64],
}

impl WideKernel for PickedQualities<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let stride = self.stride;
        for b in (0..self.len).step_by(RUN) {
            for (groups, out) in self.groups.iter().zip(self.out.chunks_exact_mut(stride)) {
                // `F` and the sum for RUN resamples at a time (whole runs: the tables are
                // padded to `stride`).
                let mut acc = [0.0f64; RUN];
                for (e, scenes) in groups {
                    let mut f = [0i32; RUN];
                    for &s in scenes {
                        // Offsets inside the tables (wrapping ops spare the dev profile's
                        // overflow checks in the innermost loops).
                        let at = s.wrapping_mul(stride).wrapping_add(b);
                        let Some(w) = self
                            .weights
                            .get(at..at.wrapping_add(RUN))
                            .and_then(|w| <&[i32; RUN]>::try_from(w).ok())
                        else {
                            continue;
                        };
                        for i in 0..RUN {
                            // At most n draws in all: no overflow.
                            f[i] = f[i].wrapping_add(w[i]);
                        }
                    }
                    let at = e.wrapping_mul(stride).wrapping_add(b);
                    let Some(q) = self
                        .quality
                        .get(at..at.wrapping_add(RUN))
                        .and_then(|q| <&[f64; RUN]>::try_from(q).ok())
                    else {
                        continue;
                    };
                    for i in 0..RUN {
                        acc[i] += f64::from(f[i]) * q[i];
                    }
                }
                if let Some(o) = out.get_mut(b..b + RUN) {
                    o.copy_from_slice(&acc);
                }
            }
        }
    }
}
