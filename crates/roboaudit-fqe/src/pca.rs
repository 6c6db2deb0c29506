//! Principal components of frozen features, fitted from a streamed covariance: the frozen
//! encoder's output (3,072 raw-pixel values) is reduced to `k` components before FQE so that
//! neither estimator trains on thousands of input columns. The top-`k` subspace comes from
//! orthogonal (subspace) iteration on the covariance, started from a seeded random basis.
//! Directions with less than 1e-5 of the leading variance are dropped: the covariance is summed
//! from f32 products, so below that level a direction is round-off, not signal.

use candle_core::{Device, Tensor};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::FqeError;

/// The most principal components that `rows` rows of width `width` can give: at most `width`,
/// and at most `rows − 1`, the rank of a covariance of `rows` centred rows (at least 1).
/// Asking for more only adds round-off directions that the fit drops, after paying for them:
/// subspace iteration costs `O(width² · k + width · k²)` per round, so 1,024 components of
/// 3,072 raw pixels take minutes even when 120 rows span only 119 directions.
pub fn max_components(rows: usize, width: usize) -> usize {
    width.min(rows.saturating_sub(1)).max(1)
}

/// Streams rows into `Σx` and `Σxxᵀ`.
pub struct CovarianceAccumulator {
    dim: usize,
    n: usize,
    /// The first row: rows are shifted by it before the f32 products, which keeps the
    /// cancellation in `Σxxᵀ/n − μμᵀ` small (the covariance does not depend on the shift).
    shift: Option<Vec<f32>>,
    sum: Vec<f64>,
    outer: Vec<f64>,
    pending: Vec<f32>,
}

const BLOCK: usize = 512;

impl CovarianceAccumulator {
    /// An empty accumulator for rows of width `dim`.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            n: 0,
            shift: None,
            sum: vec![0.0; dim],
            outer: vec![0.0; dim * dim],
            pending: Vec::with_capacity(BLOCK * dim),
        }
    }

    /// Adds one row (ignored unless its width is `dim`).
    ///
    /// # Errors
    /// [`FqeError::Candle`] from the matrix product.
    pub fn add(&mut self, row: &[f32]) -> Result<(), FqeError> {
        if row.len() != self.dim {
            return Err(FqeError::InvalidInputs(format!(
                "row of width {} for a covariance of width {}",
                row.len(),
                self.dim
            )));
        }
        let shift = self.shift.get_or_insert_with(|| row.to_vec());
        for ((s, v), c) in self.sum.iter_mut().zip(row).zip(shift.iter()) {
            *s += f64::from(*v - *c);
            self.pending.push(*v - *c);
        }
        self.n += 1;
        if self.pending.len() == BLOCK * self.dim {
            self.drain()?;
        }
        Ok(())
    }

    fn drain(&mut self) -> Result<(), FqeError> {
        let rows = self.pending.len() / self.dim;
        if rows == 0 {
            return Ok(());
        }
        // Blocks of 512 rows are multiplied in f32 (twice the speed of f64) and summed in f64.
        let t = Tensor::from_slice(&self.pending, (rows, self.dim), &Device::Cpu)?;
        let prod = t.t()?.matmul(&t)?.flatten_all()?.to_vec1::<f32>()?;
        for (acc, v) in self.outer.iter_mut().zip(prod) {
            *acc += f64::from(v);
        }
        self.pending.clear();
        Ok(())
    }

    /// The top-`k` principal subspace after `iterations` rounds, `k` clamped to
    /// [`max_components`] of the rows added before any iteration runs.
    ///
    /// # Errors
    /// [`FqeError::InvalidInputs`] without rows; [`FqeError::Candle`].
    pub fn fit(mut self, k: usize, iterations: usize, seed: u64) -> Result<Pca, FqeError> {
        if self.n == 0 {
            return Err(FqeError::InvalidInputs(
                "no rows for principal components".into(),
            ));
        }
        self.drain()?;
        let d = self.dim;
        let k = k.min(max_components(self.n, d));
        let nf = self.n as f64;
        let shifted_mean: Vec<f64> = self.sum.iter().map(|s| s / nf).collect();
        let mut cov = self.outer;
        for i in 0..d {
            for j in 0..d {
                cov[i * d + j] = cov[i * d + j] / nf - shifted_mean[i] * shifted_mean[j];
            }
        }
        let shift = self.shift.unwrap_or_default();
        let mean: Vec<f64> = shifted_mean
            .iter()
            .zip(&shift)
            .map(|(m, c)| m + f64::from(*c))
            .collect();
        let c = Tensor::from_vec(cov, (d, d), &Device::Cpu)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut q: Vec<f64> = (0..d * k).map(|_| rng.random::<f64>() - 0.5).collect();
        orthonormalize(&mut q, d, k);
        for _ in 0..iterations {
            let z = c.matmul(&Tensor::from_slice(&q, (d, k), &Device::Cpu)?)?;
            q = z.flatten_all()?.to_vec1::<f64>()?;
            orthonormalize(&mut q, d, k);
        }
        // Variance along each direction; directions with round-off variance are dropped.
        let cq = c
            .matmul(&Tensor::from_slice(&q, (d, k), &Device::Cpu)?)?
            .flatten_all()?
            .to_vec1::<f64>()?;
        let variance: Vec<f64> = (0..k)
            .map(|j| (0..d).map(|i| q[i * k + j] * cq[i * k + j]).sum())
            .collect();
        let top = variance.iter().copied().fold(0.0, f64::max);
        let keep: Vec<usize> = (0..k)
            .filter(|&j| variance[j] > 1e-5 * top && variance[j] > 0.0)
            .collect();
        let k = keep.len().max(1);
        let keep = if keep.is_empty() { vec![0] } else { keep };
        // Store components row-major k × d.
        let mut components = vec![0.0f32; k * d];
        for i in 0..d {
            for (jj, j) in keep.iter().enumerate() {
                let v = q[i * variance.len() + j] as f32;
                components[jj * d + i] = v;
            }
        }
        Ok(Pca {
            dim: d,
            k,
            mean: mean.iter().map(|m| *m as f32).collect(),
            components,
            rows: self.n,
        })
    }
}

/// Modified Gram–Schmidt, applied twice, on the `k` columns of a row-major `d × k` matrix. A
/// column that is (numerically) in the span of the previous ones is set to zero: beyond the
/// covariance's rank the iterates are round-off, and normalizing them would fake new directions.
fn orthonormalize(q: &mut [f64], d: usize, k: usize) {
    for j in 0..k {
        let norm0 = (0..d).map(|i| q[i * k + j].powi(2)).sum::<f64>().sqrt();
        for _ in 0..2 {
            for p in 0..j {
                let dot: f64 = (0..d).map(|i| q[i * k + j] * q[i * k + p]).sum();
                for i in 0..d {
                    q[i * k + j] -= dot * q[i * k + p];
                }
            }
        }
        let norm = (0..d).map(|i| q[i * k + j].powi(2)).sum::<f64>().sqrt();
        let scale = if norm > 1e-9 * norm0 && norm > 1e-300 {
            1.0 / norm
        } else {
            0.0
        };
        for i in 0..d {
            q[i * k + j] *= scale;
        }
    }
}

/// A fitted projection `z = Cᵀ (x − μ)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pca {
    /// Input width.
    pub dim: usize,
    /// Components.
    pub k: usize,
    /// Mean `μ` of the fitted rows.
    pub mean: Vec<f32>,
    /// `k × dim` orthonormal rows.
    pub components: Vec<f32>,
    /// Rows the fit saw.
    pub rows: usize,
}

impl Pca {
    /// Projects one row of width `dim` to `k` values.
    pub fn project(&self, x: &[f32]) -> Vec<f32> {
        self.components
            .chunks_exact(self.dim)
            .map(|c| {
                c.iter()
                    .zip(x)
                    .zip(&self.mean)
                    .map(|((a, b), m)| a * (b - m))
                    .sum()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn recovers_the_dominant_direction() {
        // Points along (1, 1, 0)/√2 with small noise on the third axis.
        let mut acc = CovarianceAccumulator::new(3);
        for t in 0..588 {
            let s = f32::from(u16::try_from(t % 21).unwrap()) - 10.0;
            let e = if t % 2 == 0 { 0.1 } else { -0.1 };
            acc.add(&[s, s, e]).unwrap();
        }
        let pca = acc.fit(1, 30, 1).unwrap();
        let c = &pca.components;
        assert!(
            (c[0].abs() - 0.5f32.sqrt()).abs() < 1e-4 && c[2].abs() < 1e-4,
            "{c:?}"
        );
        let z = pca.project(&[2.0, 2.0, 0.0]);
        assert!((z[0].abs() - 8f32.sqrt()).abs() < 0.05);
    }

    #[test]
    fn components_are_capped_at_the_rank_rows_can_have() {
        assert_eq!(max_components(120, 3072), 119);
        assert_eq!(max_components(5000, 3072), 3072);
        assert_eq!(max_components(1, 8), 1);
        assert_eq!(max_components(0, 8), 1);
    }
}
