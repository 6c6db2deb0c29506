//! The network: two patch convolutions (kernel = stride, as in a ViT or ConvNeXt stem) over the
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

use crate::config::{IMAGE_SIDE, LOW_DIM, TARGET_DIM, TrainConfig};
use crate::error::Result;

/// Tensor names of the network, in the order [`Weights::tensors`] holds them.
pub const NAMES: [&str; 12] = [
    "conv1.weight",
    "conv1.bias",
    "conv2.weight",
    "conv2.bias",
    "proj.weight",
    "proj.bias",
    "fc1.weight",
    "fc1.bias",
    "fc2.weight",
    "fc2.bias",
    "out.weight",
    "out.bias",
];
/// Normalization tensor names: low-dimensional mean and scale (`[5]`), target mean and scale
/// (`[5]`).
pub const NORM_NAMES: [&str; 4] = ["low.mean", "low.std", "target.mean", "target.std"];
/// Kernel side (= stride) of each convolution.
pub const KERNELS: [usize; 2] = [4, 2];
/// Side of the last convolution's output (32 → 8 → 4).
const LAST_SIDE: usize = IMAGE_SIDE / 8;

/// The shape of each tensor of [`NAMES`] for the sizes of `t`, in that order.
pub fn shapes(t: &TrainConfig) -> Vec<Vec<usize>> {
    let [c1, c2] = t.channels;
    let (f, h) = (t.feature, t.hidden);
    vec![
        vec![c1, 3, KERNELS[0], KERNELS[0]],
        vec![c1],
        vec![c2, c1, KERNELS[1], KERNELS[1]],
        vec![c2],
        vec![f, c2 * LAST_SIDE * LAST_SIDE],
        vec![f],
        vec![h, f + LOW_DIM],
        vec![h],
        vec![h, h],
        vec![h],
        vec![TARGET_DIM, h],
        vec![TARGET_DIM],
    ]
}

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

fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> candle_core::Result<Tensor> {
    x.matmul(&w.t()?)?.broadcast_add(b)
}

/// Non-overlapping `k×k` patches of `x` `[N, C, H, W]` as rows `[N·(H/k)·(W/k), C·k·k]`, rows in
/// (image, row, column) order, columns in (channel, ky, kx) order (a PyTorch kernel's layout).
///
/// # Errors
/// [`candle_core::Error`] when `x` is not 4-d.
pub fn patches(x: &Tensor, k: usize) -> candle_core::Result<Tensor> {
    let (n, c, h, w) = x.dims4()?;
    x.reshape(vec![n, c, h / k, k, w / k, k])?
        .permute([0, 2, 4, 1, 3, 5])?
        .reshape((n * (h / k) * (w / k), c * k * k))
}

/// A convolution with kernel = stride on patch rows `p` (from [`patches`]), then relu.
fn patch_conv(p: &Tensor, w: &Tensor, b: &Tensor) -> candle_core::Result<Tensor> {
    let out = w.dim(0)?;
    linear(p, &w.reshape((out, ()))?, b)?.relu()
}

/// The first layer's patches of images `[N, 3, 32, 32]` in `[0, 1]` (constant during training).
///
/// # Errors
/// [`candle_core::Error`] when the images are not `[N, 3, 32, 32]`.
pub fn image_patches(images: &Tensor) -> candle_core::Result<Tensor> {
    patches(&(images - 0.5)?, KERNELS[0])
}

/// The visual feature `[N, F]` from the first layer's patches of `n` images ([`image_patches`]):
/// the policy encoder.
///
/// # Errors
/// [`candle_core::Error`] when the shapes do not fit.
pub fn features_of_patches(w: &[Tensor], p1: &Tensor, n: usize) -> candle_core::Result<Tensor> {
    let s1 = IMAGE_SIDE / KERNELS[0];
    let x = patch_conv(p1, &w[0], &w[1])?; // [N·8·8, c1]
    let c1 = x.dim(1)?;
    let x = x.reshape((n, s1, s1, c1))?.permute((0, 3, 1, 2))?;
    let x = patch_conv(&patches(&x, KERNELS[1])?, &w[2], &w[3])?; // [N·4·4, c2]
    let flat = x.reshape((n, ()))?;
    linear(&flat, &w[4], &w[5])?.relu()
}

/// The visual feature `[N, F]` of images `[N, 3, 32, 32]` in `[0, 1]` (the policy encoder).
///
/// # Errors
/// [`candle_core::Error`] when the shapes do not fit.
pub fn features(w: &[Tensor], images: &Tensor) -> candle_core::Result<Tensor> {
    features_of_patches(w, &image_patches(images)?, images.dim(0)?)
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

    #[test]
    fn patch_convolution_equals_candle_conv2d() {
        // Kernel = stride: the reshape-and-multiply path gives what a strided convolution gives.
        let t = TrainConfig {
            channels: [3, 2],
            ..TrainConfig::default()
        };
        let w = Weights::init(&t).unwrap().tensors;
        let n: Vec<f32> = (0..2 * 3 * 32 * 32)
            .map(|i| ((i * 37) % 101) as f32 / 101.0)
            .collect();
        let img = Tensor::from_vec(n, (2, 3, 32, 32), &Device::Cpu).unwrap();
        let x = (&img - 0.5).unwrap();
        let conv = |x: &Tensor, w: &Tensor, b: &Tensor, k: usize| {
            x.conv2d(w, 0, k, 1, 1)
                .unwrap()
                .broadcast_add(&b.reshape((1, b.dim(0).unwrap(), 1, 1)).unwrap())
                .unwrap()
                .relu()
                .unwrap()
        };
        let r = conv(&conv(&x, &w[0], &w[1], 4), &w[2], &w[3], 2); // [2, c2, 4, 4]
        let flat = r.permute((0, 2, 3, 1)).unwrap().reshape((2, ())).unwrap();
        let want = linear(&flat, &w[4], &w[5]).unwrap().relu().unwrap();
        let got = features(&w, &img).unwrap();
        let d = (want - got)
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!(d < 1e-5, "max difference {d}");
    }
}
