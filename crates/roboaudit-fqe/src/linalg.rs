//! Small dense linear algebra in `f64`: Gram matrices through candle's matmul, Cholesky solves.

use candle_core::{Device, Tensor};

use crate::FqeError;

/// Accumulates `acc += Aᵀ B` for row-major `a` (`rows × da`) and `b` (`rows × db`); `acc` is
/// `da × db` row-major.
pub(crate) fn add_at_b(
    acc: &mut [f64],
    a: &[f64],
    b: &[f64],
    rows: usize,
    da: usize,
    db: usize,
) -> Result<(), FqeError> {
    if rows == 0 {
        return Ok(());
    }
    let ta = Tensor::from_slice(a, (rows, da), &Device::Cpu)?;
    let tb = Tensor::from_slice(b, (rows, db), &Device::Cpu)?;
    let prod = ta.t()?.matmul(&tb)?.flatten_all()?.to_vec1::<f64>()?;
    for (x, y) in acc.iter_mut().zip(prod) {
        *x += y;
    }
    Ok(())
}

/// Lower Cholesky factor `L` (row-major `n × n`) of a symmetric positive definite matrix.
///
/// # Errors
/// [`FqeError::Numerical`] when the matrix is not positive definite.
pub(crate) fn cholesky(m: &[f64], n: usize) -> Result<Vec<f64>, FqeError> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = m[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            if i == j {
                if s <= 0.0 || !s.is_finite() {
                    return Err(FqeError::Numerical(format!(
                        "matrix is not positive definite (pivot {i} = {s:e}); raise the ridge"
                    )));
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    Ok(l)
}

/// Solves `L Lᵀ x = b` in place given the Cholesky factor `L`.
pub(crate) fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i * n + k] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[k * n + i] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

/// Solves the general square system `M x = b` in place (`m` row-major `n × n`, overwritten by its
/// LU factors) by Gaussian elimination with partial pivoting.
///
/// # Errors
/// [`FqeError::Numerical`] when a pivot is zero or non-finite (the matrix is singular).
pub(crate) fn lu_solve(m: &mut [f64], n: usize, b: &mut [f64]) -> Result<(), FqeError> {
    for col in 0..n {
        let mut piv = col;
        for r in col + 1..n {
            if m[r * n + col].abs() > m[piv * n + col].abs() {
                piv = r;
            }
        }
        let p = m[piv * n + col];
        if p == 0.0 || !p.is_finite() {
            return Err(FqeError::Numerical(format!(
                "singular system (pivot {col} = {p:e}); raise the ridge"
            )));
        }
        if piv != col {
            for j in 0..n {
                m.swap(piv * n + j, col * n + j);
            }
            b.swap(piv, col);
        }
        let (top, rest) = m.split_at_mut((col + 1) * n);
        let pivot_row = &top[col * n..];
        for r in 0..n - col - 1 {
            let row = &mut rest[r * n..(r + 1) * n];
            let f = row[col] / p;
            if f != 0.0 {
                for j in col..n {
                    row[j] -= f * pivot_row[j];
                }
                b[col + 1 + r] -= f * b[col];
            }
        }
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= m[i * n + k] * b[k];
        }
        b[i] = s / m[i * n + i];
    }
    Ok(())
}

/// Per-column mean and standard deviation of a row-major `rows × width` matrix. A constant
/// column (deviation at most 1e-6 of the widest column's) gets an infinite deviation so that
/// standardizing maps it to 0.
pub(crate) fn column_stats(values: &[f32], width: usize) -> (Vec<f64>, Vec<f64>) {
    let rows = values.len() / width.max(1);
    let mut mean = vec![0.0; width];
    let mut sq = vec![0.0; width];
    for row in values.chunks_exact(width) {
        for (j, v) in row.iter().enumerate() {
            mean[j] += f64::from(*v);
        }
    }
    let nf = rows.max(1) as f64;
    for m in &mut mean {
        *m /= nf;
    }
    for row in values.chunks_exact(width) {
        for (j, v) in row.iter().enumerate() {
            let d = f64::from(*v) - mean[j];
            sq[j] += d * d;
        }
    }
    let raw: Vec<f64> = sq.iter().map(|s| (s / nf).sqrt()).collect();
    // Columns whose spread is round-off next to the widest column carry no information;
    // standardizing them would blow their noise up to unit scale.
    let floor = 1e-6 * raw.iter().copied().fold(0.0, f64::max);
    let std = raw
        .iter()
        .map(|sd| {
            if *sd > floor.max(1e-12) {
                *sd
            } else {
                f64::INFINITY
            }
        })
        .collect();
    (mean, std)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cholesky_solves_a_known_system() {
        // [[4,2],[2,3]] x = [2, 1] has x = [0.5, 0].
        let l = cholesky(&[4.0, 2.0, 2.0, 3.0], 2).unwrap();
        let mut b = [2.0, 1.0];
        cholesky_solve(&l, 2, &mut b);
        assert!((b[0] - 0.5).abs() < 1e-12 && b[1].abs() < 1e-12);
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_err());
    }

    #[test]
    fn lu_solves_a_nonsymmetric_system_that_needs_pivoting() {
        // [[0,1,2],[1,0,3],[4,-3,8]] x = [8, 10, 22] has x = [1, 2, 3] (zero first pivot).
        let mut m = vec![0.0, 1.0, 2.0, 1.0, 0.0, 3.0, 4.0, -3.0, 8.0];
        let mut b = [8.0, 10.0, 22.0];
        lu_solve(&mut m, 3, &mut b).unwrap();
        for (x, want) in b.iter().zip([1.0, 2.0, 3.0]) {
            assert!((x - want).abs() < 1e-12, "{b:?}");
        }
        let mut singular = vec![1.0, 2.0, 2.0, 4.0];
        assert!(lu_solve(&mut singular, 2, &mut [1.0, 1.0]).is_err());
    }

    #[test]
    fn at_b_matches_hand_product() {
        let mut acc = vec![0.0; 4];
        // A = [[1,2],[3,4]], B = [[5,6],[7,8]]: AᵀB = [[26,30],[38,44]].
        add_at_b(
            &mut acc,
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0],
            2,
            2,
            2,
        )
        .unwrap();
        assert_eq!(acc, vec![26.0, 30.0, 38.0, 44.0]);
    }
}
