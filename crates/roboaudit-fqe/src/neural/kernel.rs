//! The one matrix product of the hand-written network: `gemm`'s f32 kernel on the calling thread.
//!
//! Strided operands give the transposed products of the backward pass without copies. The kernel
//! never splits a product across threads: neural FQE parallelizes across whole fits instead, so
//! the thread count a user asks for is the number of cores a fit uses and a fit's bytes do not
//! depend on it.

/// A read-only matrix view: element `(i, j)` is `data[i * rs + j * cs]`.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) data: &'a [f32],
    pub(super) rs: usize,
    pub(super) cs: usize,
}

impl<'a> View<'a> {
    /// A row-major `rows × cols` matrix (`cols` the row stride).
    pub(super) fn rows(data: &'a [f32], cols: usize) -> Self {
        Self {
            data,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose of a row-major matrix with `cols` columns.
    pub(super) fn t(data: &'a [f32], cols: usize) -> Self {
        Self {
            data,
            rs: 1,
            cs: cols,
        }
    }
}

fn fits(len: usize, rows: usize, cols: usize, rs: usize, cs: usize) -> bool {
    rows == 0 || cols == 0 || (rows - 1) * rs + (cols - 1) * cs < len
}

/// `dst (m × n, row stride drs) (+)= lhs (m × k) · rhs (k × n)`; adds to `dst` when `accumulate`.
///
/// # Panics
/// When an operand's view reaches past its slice (a bug in the caller's shapes, not bad input).
#[allow(clippy::too_many_arguments)]
pub(super) fn matmul(
    m: usize,
    n: usize,
    k: usize,
    lhs: View<'_>,
    rhs: View<'_>,
    dst: &mut [f32],
    drs: usize,
    accumulate: bool,
) {
    assert!(fits(lhs.data.len(), m, k, lhs.rs, lhs.cs), "lhs shape");
    assert!(fits(rhs.data.len(), k, n, rhs.rs, rhs.cs), "rhs shape");
    assert!(fits(dst.len(), m, n, drs, 1), "dst shape");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for r in 0..m {
                dst[r * drs..r * drs + n].fill(0.0);
            }
        }
        return;
    }
    // SAFETY: the asserts above keep every element the kernel addresses,
    // `base + i·rs + j·cs` for `i < rows`, `j < cols`, inside its slice; `dst` is borrowed
    // mutably, so it aliases neither operand.
    #[allow(unsafe_code)]
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            drs as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.cs as isize,
            lhs.rs as isize,
            rhs.data.as_ptr(),
            rhs.cs as isize,
            rhs.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_products_match_a_naive_loop() {
        // A 3×2 times (4×... ) transposed: lhs = Aᵀ for a row-major 2×3 A.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2×3
        let b = [1.0, -1.0, 0.5, 2.0]; // 2×2
        let mut out = [0.0f32; 6]; // 3×2 = Aᵀ·B
        matmul(
            3,
            2,
            2,
            View::t(&a, 3),
            View::rows(&b, 2),
            &mut out,
            2,
            false,
        );
        let want = [
            1.0 * 1.0 + 4.0 * 0.5,
            -1.0 + 4.0 * 2.0,
            2.0 + 5.0 * 0.5,
            -2.0 + 10.0,
            3.0 + 3.0,
            -3.0 + 12.0,
        ];
        assert_eq!(out, want);
        matmul(
            3,
            2,
            2,
            View::t(&a, 3),
            View::rows(&b, 2),
            &mut out,
            2,
            true,
        );
        assert_eq!(out, want.map(|v| 2.0 * v));
    }
}
