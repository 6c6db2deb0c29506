//! The network (its visual part, tensor names and shapes are [`roboaudit_encoders::policy`]'s,
//! re-exported here): two patch convolutions (kernel = stride, as in a ViT or ConvNeXt stem) over the
//! 32×32 RGB image, a linear projection to the visual feature (the policy encoder), and a
//! two-layer head over the feature and the normalized low-dimensional input that predicts the
//! normalized target. A convolution whose kernel equals its stride is a reshape and one matrix
//! product, forward and backward, which is what makes a policy train in seconds on one core.
//!
//! ```text
//! image [N,3,32,32] − 0.5
//!   → conv 4×4 stride 4 → relu          [N,c1,8,8]
//!   → conv 2×2 stride 2 → relu          [N,c2,4,4]
//!   → flatten (row, column, channel) → linear → relu   [N,F]   (visual feature)
//! [feature ; (low − μ_low) / σ_low]     [N,F+5]
//!   → linear → relu → linear → relu     [N,H]
//!   → linear                            [N,5]        ((target − μ_t) / σ_t)
//! ```
//!
//! Convolution weights have PyTorch's layout `[out, in, k, k]`.

use std::collections::HashMap;

use candle_core::{D, Device, Tensor, Var};
use rand::RngExt;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
pub use roboaudit_encoders::policy::{
    KERNELS, NAMES, NORM_NAMES, features, features_of_patches, image_patches, linear, patches,
    shapes,
};

use crate::config::TrainConfig;
use crate::error::Result;

/// Input normalization: each of the 5 low-dimensional inputs and 5 targets by its mean and
/// standard deviation over the demonstration (floored at 10⁻² and 10⁻³).
#[derive(Debug, Clone)]
pub struct Norm {
    /// `[5]`.
    pub low_mean: Tensor,
    /// `[5]`, every entry > 0.
    pub low_std: Tensor,
    /// `[5]`.
    pub target_mean: Tensor,
    /// `[5]`, every entry > 0.
    pub target_std: Tensor,
}

impl Norm {
    /// The four tensors in [`NORM_NAMES`] order.
    pub fn tensors(&self) -> [&Tensor; 4] {
        [
            &self.low_mean,
            &self.low_std,
            &self.target_mean,
            &self.target_std,
        ]
    }
}

/// The network's weights, in [`NAMES`] order.
#[derive(Debug, Clone)]
pub struct Weights {
    /// The tensors.
    pub tensors: Vec<Tensor>,
}

impl Weights {
    /// Seeded initialization: every tensor uniform in `±1/√fan_in` (PyTorch's default bound), drawn
    /// in [`NAMES`] order from one ChaCha8 stream of `t.seed`.
    ///
    /// # Errors
    /// [`crate::PolicyError::Tensor`] (never for valid sizes).
    pub fn init(t: &TrainConfig) -> Result<Weights> {
        let mut rng = ChaCha8Rng::seed_from_u64(t.seed);
        let shapes = shapes(t);
        let mut tensors = Vec::with_capacity(shapes.len());
        for pair in shapes.chunks(2) {
            let fan: usize = pair[0][1..].iter().product();
            let bound = 1.0 / (fan as f64).sqrt();
            for shape in pair {
                let n: usize = shape.iter().product();
                let v: Vec<f32> = (0..n)
                    .map(|_| ((rng.random::<f64>() * 2.0 - 1.0) * bound) as f32)
                    .collect();
                tensors.push(Tensor::from_vec(v, shape.as_slice(), &Device::Cpu)?);
            }
        }
        Ok(Weights { tensors })
    }

    /// Trainable copies of the tensors.
    ///
    /// # Errors
    /// [`crate::PolicyError::Tensor`].
    pub fn vars(&self) -> Result<Vec<Var>> {
        Ok(self
            .tensors
            .iter()
            .map(Var::from_tensor)
            .collect::<candle_core::Result<_>>()?)
    }

    /// Name → tensor, with the normalization, as the weights file stores them.
    pub fn named(&self, norm: &Norm) -> HashMap<String, Tensor> {
        NAMES
            .iter()
            .zip(&self.tensors)
            .map(|(n, t)| ((*n).to_string(), t.clone()))
            .chain(
                NORM_NAMES
                    .iter()
                    .zip(norm.tensors())
                    .map(|(n, t)| ((*n).to_string(), t.clone())),
            )
            .collect()
    }
}

/// The normalized prediction `[N, 5]` from a visual feature `[N, F]` and normalized
/// low-dimensional inputs `[N, 5]`.
///
/// # Errors
/// [`candle_core::Error`] when the shapes do not fit.
pub fn head(w: &[Tensor], feature: &Tensor, low: &Tensor) -> candle_core::Result<Tensor> {
    let x = Tensor::cat(&[feature, low], D::Minus1)?;
    let x = linear(&x, &w[6], &w[7])?.relu()?;
    let x = linear(&x, &w[8], &w[9])?.relu()?;
    linear(&x, &w[10], &w[11])
}

/// The normalized prediction `[N, 5]` for images `[N, 3, 32, 32]` and normalized low-dimensional
/// inputs `[N, 5]`.
///
/// # Errors
/// [`candle_core::Error`] when the shapes do not fit.
pub fn forward(w: &[Tensor], images: &Tensor, low: &Tensor) -> candle_core::Result<Tensor> {
    head(w, &features(w, images)?, low)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LOW_DIM;

    #[test]
    fn shapes_fit_the_forward_pass_and_init_is_seeded() {
        let t = TrainConfig {
            channels: [2, 3],
            feature: 5,
            hidden: 6,
            ..TrainConfig::default()
        };
        let w = Weights::init(&t).unwrap();
        for (x, s) in w.tensors.iter().zip(shapes(&t)) {
            assert_eq!(x.dims(), s.as_slice());
        }
        let img = Tensor::zeros((2, 3, 32, 32), candle_core::DType::F32, &Device::Cpu).unwrap();
        let low = Tensor::zeros((2, LOW_DIM), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert_eq!(features(&w.tensors, &img).unwrap().dims(), &[2, 5]);
        assert_eq!(forward(&w.tensors, &img, &low).unwrap().dims(), &[2, 5]);
        let again = Weights::init(&t).unwrap();
        let other = Weights::init(&TrainConfig { seed: 1, ..t }).unwrap();
        let v = |w: &Weights| {
            w.tensors[0]
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        assert_eq!(v(&w), v(&again));
        assert_ne!(v(&w), v(&other));
        // Bound of conv1: 1/√(3·4·4).
        let b = 1.0 / 48f32.sqrt();
        assert!(v(&w).iter().all(|x| x.abs() <= b));
    }
}
