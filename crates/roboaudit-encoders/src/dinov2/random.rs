//! Randomly initialized DINOv2 checkpoints in the torch-hub layout, for tests and benchmarks
//! (nothing is downloaded): the same tensor names and shapes as a released checkpoint, seeded
//! values. A depth-2, width-32 model loads and runs in milliseconds; [`RandomDinov2::vit_s14`]
//! has the sizes (and cost) of `dinov2_vits14`.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::checkpoint::expected_tensors;
use crate::EncoderError;

/// Sizes and seed of a random checkpoint (the head count is not stored in a checkpoint: pass it
/// to the encoder, or use a width that is a multiple of 64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomDinov2 {
    /// Transformer blocks (≥ 1).
    pub depth: usize,
    /// Token width (≥ 1).
    pub width: usize,
    /// Seed of every value.
    pub seed: u64,
}

impl RandomDinov2 {
    /// A tiny model: depth 2, width 32 (use 2 heads).
    pub fn tiny(seed: u64) -> Self {
        Self {
            depth: 2,
            width: 32,
            seed,
        }
    }

    /// The sizes of ViT-S/14 (`dinov2_vits14`): depth 12, width 384 (6 heads by the default
    /// rule); about 22 M values, an 88 MB file.
    pub fn vit_s14(seed: u64) -> Self {
        Self {
            depth: 12,
            width: 384,
            seed,
        }
    }
}

/// Values of one tensor. Matrices and the patch convolution: uniform with variance `1 / fan_in`
/// (unit-variance outputs from unit-variance inputs, so the attention logits are of order 1 and
/// the softmax is far from uniform and from one-hot); LayerNorm scales `1 ± 0.2`; biases
/// `± 0.1`; LayerScale `0.1..1`; class token, position embeddings and mask token `± 1`.
fn values(name: &str, shape: &[usize], rng: &mut ChaCha8Rng) -> Vec<f32> {
    let n: usize = shape.iter().product();
    let mut u = |lo: f32, hi: f32| -> Vec<f32> {
        (0..n)
            .map(|_| lo + (hi - lo) * rng.random::<f32>())
            .collect()
    };
    let is_norm =
        name == "norm.weight" || name.ends_with("norm1.weight") || name.ends_with("norm2.weight");
    if shape.len() >= 2 && name.ends_with("weight") {
        let fan_in: usize = shape[1..].iter().product();
        let a = (3.0 / fan_in as f32).sqrt();
        u(-a, a)
    } else if is_norm {
        u(0.8, 1.2)
    } else if name.ends_with("gamma") {
        u(0.1, 1.0)
    } else if name.ends_with("bias") {
        u(-0.1, 0.1)
    } else {
        u(-1.0, 1.0)
    }
}

/// Writes a random checkpoint of `spec`'s sizes to `path` (safetensors, `f32`, with a
/// `mask_token` as released checkpoints have, and no classifier head). Same spec ⇒ same bytes.
///
/// # Errors
/// [`EncoderError::InvalidConfig`] for a zero depth or width; [`EncoderError::Weights`] naming the file
/// when it cannot be written; [`EncoderError::Candle`].
pub fn write_random_dinov2(path: &Path, spec: &RandomDinov2) -> Result<(), EncoderError> {
    if spec.depth == 0 || spec.width == 0 {
        return Err(EncoderError::InvalidConfig(format!(
            "a random DINOv2 needs depth and width ≥ 1, got {spec:?}"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut list = expected_tensors(spec.depth, spec.width);
    list.push(("mask_token".to_owned(), vec![1, spec.width]));
    let mut tensors = HashMap::with_capacity(list.len());
    // Values are drawn in the list's fixed order, so the seed fixes every tensor.
    for (name, shape) in list {
        let v = values(&name, &shape, &mut rng);
        tensors.insert(name, Tensor::from_vec(v, shape, &Device::Cpu)?);
    }
    crate::weights::save(path, &tensors)
}
