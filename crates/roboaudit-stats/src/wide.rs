//! Runtime dispatch of hot loops to 512-bit (AVX-512F) or 256-bit (AVX2) vector code on CPUs
//! that have it.
//!
//! The workspace builds for the baseline x86-64 target (SSE2: two `f64` per vector register), so
//! plain loops never use the wider registers current x86-64 CPUs have. A [`WideKernel`] run
//! through [`run_wide`] is compiled twice more, with AVX-512F and with AVX2 + FMA enabled, and
//! the widest copy the CPU reports at run time is taken (AVX-512 also doubles the registers,
//! which keeps larger register tiles out of memory). Results are bit-identical to the baseline
//! copy: Rust never contracts `a * b + c` into a fused multiply-add on its own, so every lane
//! performs the same IEEE operations in the same order; only the register width changes. A
//! kernel that wants fused multiply-adds asks for them with `f64::mul_add`, which rounds once on
//! every path (one instruction in the wide copies, a correctly rounded `fma` call in the
//! baseline one, where it is slow: such kernels are for CPUs with FMA, which every AVX2 CPU has).

/// A loop nest to run with the widest vector registers the CPU offers (see [`run_wide`]).
///
/// Implementors mark [`WideKernel::run`] `#[inline(always)]` (and the helpers it calls
/// `#[inline]`), so that the body is compiled into the AVX2 copy rather than called from it.
pub trait WideKernel {
    /// What the kernel returns.
    type Output;
    /// The kernel's work; must not depend on which copy runs it.
    fn run(self) -> Self::Output;
}

/// Runs `kernel` compiled for AVX-512 or AVX2 when the CPU supports it (x86-64 only),
/// otherwise the baseline copy. The output is identical either way (module docs).
pub fn run_wide<K: WideKernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            // SAFETY: `run_avx512` only requires the AVX-512F target feature (and the AVX2 it
            // implies), which the CPU was just reported to support.
            #[allow(unsafe_code)]
            return unsafe { run_avx512(kernel) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: `run_avx2` only requires the AVX2 and FMA target features, which the CPU
            // was just reported to support (the one `unsafe` of the crate; the lint is allowed
            // here only).
            #[allow(unsafe_code)]
            return unsafe { run_avx2(kernel) };
        }
    }
    kernel.run()
}

/// Whether [`run_wide`] takes the AVX-512 copy on this CPU (kernels size their register tiles by
/// it; their results do not depend on it).
pub(crate) fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The `f64` lanes of the vector registers [`run_wide`] runs a kernel with on this CPU: 8
/// (AVX-512), 4 (AVX2) or 2 (the SSE2 baseline). Kernels size their register tiles by it; their
/// results never depend on it.
pub fn wide_lanes() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            return 8;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return 4;
        }
    }
    2
}

/// The AVX-512 copy of a kernel: twice the registers and lanes of AVX2. The feature brings the
/// FMA instructions with it, but Rust never contracts a multiply and an add into one, so every
/// lane still rounds as the baseline copy does; an explicit `f64::mul_add` becomes one
/// instruction here and a correctly rounded `fma` call in the baseline copy, the same bits (the
/// tests below run this copy where the CPU has it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn run_avx512<K: WideKernel>(kernel: K) -> K::Output {
    kernel.run()
}

/// The AVX2 copy of a kernel, with FMA (every AVX2 CPU has it) so that an explicit
/// `f64::mul_add` is one instruction; Rust never contracts a plain multiply and add.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_avx2<K: WideKernel>(kernel: K) -> K::Output {
    kernel.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dot product in eight lanes, with a multiply then an add per term (the pattern of the
    /// hot loops) or, when `fused`, one fused multiply-add per term.
    struct Dot<'a> {
        a: &'a [f64],
        b: &'a [f64],
        fused: bool,
    }

    impl WideKernel for Dot<'_> {
        type Output = f64;
        #[inline(always)]
        fn run(self) -> f64 {
            let mut acc = [0.0f64; 8];
            for (x, y) in self.a.chunks_exact(8).zip(self.b.chunks_exact(8)) {
                for i in 0..8 {
                    acc[i] = if self.fused {
                        x[i].mul_add(y[i], acc[i])
                    } else {
                        acc[i] + x[i] * y[i]
                    };
                }
            }
            acc.iter().sum()
        }
    }

    /// The dispatched copy gives the very bits of the baseline copy, with plain products and
    /// sums (no FMA contraction) and with explicit fused multiply-adds (one FMA instruction in
    /// the wide copies, a correctly rounded `fma` call in the baseline one); the two differ.
    #[test]
    fn wide_copy_is_bit_identical_to_baseline() {
        let a: Vec<f64> = (0..1024)
            .map(|i| (f64::from(i) * 0.37).sin() / 3.0)
            .collect();
        let b: Vec<f64> = (0..1024)
            .map(|i| (f64::from(i) * 1.13).cos() * 7.1)
            .collect();
        let dot = |fused| Dot {
            a: &a,
            b: &b,
            fused,
        };
        let (plain, fused) = (dot(false).run(), dot(true).run());
        assert_eq!(run_wide(dot(false)).to_bits(), plain.to_bits());
        assert_eq!(run_wide(dot(true)).to_bits(), fused.to_bits());
        // a fused multiply-add rounds once per term and differs in the last bits
        assert_ne!(fused.to_bits(), plain.to_bits());
    }
}
