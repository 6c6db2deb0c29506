//! A pretrained DINOv2 encoder (SPEC.md §3, seed 003 §3.4: frozen features of a pretrained
//! vision model loaded from a local safetensors file), run with candle-transformers' `dinov2`
//! model on the CPU. Nothing is downloaded: the weights come from a file the user names.
//!
//! - **Weights**: a DINOv2 ViT/14 checkpoint in the torch-hub layout ([`checkpoint`]); depth,
//!   width and patch are read from the tensor shapes, the head count is explicit or
//!   `width / 64`. ViT-S/14 and ViT-B/14 load; so does any small random checkpoint of the same
//!   layout ([`random`]).
//! - **Preprocessing** ([`preprocess`]): the whole frame is area-resampled to `side × side`
//!   (`side` a multiple of 14 in `14..=518`, default 224; no crop, so a non-square frame is
//!   stretched: a robot camera's workspace is not cut), scaled to `[0, 1]` and normalized per
//!   channel with the ImageNet mean `(0.485, 0.456, 0.406)` and std `(0.229, 0.224, 0.225)`, in
//!   channel-height-width order.
//! - **Feature**: the class token after the final LayerNorm, `width` values (384 for ViT-S, 768 for
//!   ViT-B), `f32`, unbounded. candle-transformers' public forward returns only its classifier
//!   head `head([cls, mean(patches)])` (1000 outputs); the encoder installs a head whose first
//!   `width` rows are the identity on the class token and whose other entries are 0, so those
//!   outputs are the class token exactly (products with 0 and 1 are exact), whatever head the
//!   file holds. This is why the width may not exceed 1000.
//! - **Batches**: [`Dinov2Encoder::encode_batch`] preprocesses a batch of frames and runs them on
//!   rayon's pool, one forward per frame: candle-transformers 0.11.1 concatenates its
//!   `[1, 1, D]` class token and adds its `[1, N, D]` position embedding without broadcasting,
//!   so its forward accepts one image at a time (a unit test checks that a batch of 2 still
//!   fails, so an upgrade that lifts the limit is noticed). One image per forward also makes a
//!   frame's feature independent of the other frames in its batch, which the cache relies on.
//!
//! Differences from PyTorch DINOv2 that come with candle-transformers 0.11.1 (the features are
//! those of the same weights, not bit-for-bit PyTorch's): GELU is the tanh approximation, the
//! LayerNorm epsilon is 1e-5 (PyTorch's model: 1e-6), and at a side other than 518 the 37 × 37
//! position embeddings are resampled by nearest neighbour (PyTorch: bicubic).

pub mod checkpoint;
pub mod random;

use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::dinov2::DinoVisionTransformer;
use roboaudit_data::lerobot::Rgb8Image;
use serde::Serialize;

pub use checkpoint::{Dinov2Arch, HEAD_WIDTH, MAX_WIDTH, PATCH, weights_hash};

use crate::EncoderError;
use crate::frozen::{Backbone, Frozen};
use crate::image::normalized_chw;
pub use crate::image::{IMAGENET_MEAN, IMAGENET_STD};
use crate::weights::file_safe;

/// Default input side in pixels (DINOv2's evaluation resolution, 16 × 16 patches).
pub const DEFAULT_SIDE: usize = 224;
/// Largest input side: the native resolution of the checkpoints' position embeddings (37 × 37
/// patches). Larger inputs would only upsample them; the cost grows with the side's fourth power.
pub const MAX_SIDE: usize = 518;
/// Outputs of candle-transformers' DINOv2 classifier head.
const HEAD_OUTPUTS: usize = 1000;

/// Settings of a DINOv2 encoder, checked by [`Dinov2Options::validate`] before any file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dinov2Options {
    /// Input side in pixels: a multiple of [`PATCH`] (14) in `14..=518`; default 224.
    pub side: usize,
    /// Attention heads; `None`: `width / 64` (every released DINOv2), which needs a width that
    /// is a multiple of 64.
    pub heads: Option<usize>,
}

impl Default for Dinov2Options {
    fn default() -> Self {
        Self {
            side: DEFAULT_SIDE,
            heads: None,
        }
    }
}

impl Dinov2Options {
    /// Checks the side and the explicit head count (whether the heads divide the width is known
    /// only once the file is read).
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] for a side outside `14..=518` or not a multiple of 14, or zero
    /// heads.
    pub fn validate(&self) -> Result<(), EncoderError> {
        if !(PATCH..=MAX_SIDE).contains(&self.side) || !self.side.is_multiple_of(PATCH) {
            return Err(EncoderError::InvalidConfig(format!(
                "dinov2 side={} must be a multiple of the patch size {PATCH} in {PATCH}..={MAX_SIDE}",
                self.side
            )));
        }
        if self.heads == Some(0) {
            return Err(EncoderError::InvalidConfig(
                "dinov2 heads=0: give at least one attention head".into(),
            ));
        }
        Ok(())
    }
}

/// A loaded, frozen DINOv2 encoder: id `dinov2-<file stem>-<side>`, with `-h<heads>` when the
/// heads are not `width / 64` (e.g. `dinov2-dinov2_vits14-224`); its feature is the final-norm
/// class token, `width` finite `f32` values (384 for ViT-S/14).
pub type Dinov2Encoder = Frozen<Dinov2>;

/// candle-transformers' DINOv2 with the probe head that outputs the class token, and the sizes
/// read from its checkpoint.
pub struct Dinov2 {
    arch: Dinov2Arch,
    transformer: DinoVisionTransformer,
}

impl Backbone for Dinov2 {
    const LABEL: &'static str = "DINOv2 ";

    fn dim(&self) -> usize {
        self.arch.width
    }

    fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
        preprocess(image, side)
    }

    fn forward(&self, x: &Tensor) -> Result<Vec<f32>, EncoderError> {
        let out = self.transformer.forward(x)?;
        Ok(out
            .narrow(1, 0, self.arch.width)?
            .flatten_all()?
            .to_vec1::<f32>()?)
    }
}

/// Two encoders are equal when they compute the same features: same weights (hash), sizes,
/// heads and side. The path is not compared (a copied file is the same encoder).
impl PartialEq for Dinov2Encoder {
    fn eq(&self, other: &Self) -> bool {
        self.weights_hash == other.weights_hash
            && self.model.arch == other.model.arch
            && self.side == other.side
    }
}

impl Eq for Dinov2Encoder {}

impl Serialize for Dinov2Encoder {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Dinov2Encoder", 5)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("file", &self.path)?;
        st.serialize_field("weights_hash", &self.weights_hash)?;
        st.serialize_field("side", &self.side)?;
        st.serialize_field("arch", &self.model.arch)?;
        st.end()
    }
}

impl Dinov2Encoder {
    /// Loads the checkpoint at `path` (read once, hashed, checked, converted to `f32`).
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] for bad options (before the file is read) or a head count that
    /// does not fit the width; [`EncoderError::Io`] when the file cannot be read;
    /// a weights-file error naming the file (and the tensor; [`EncoderError::weights_fault`]) when
    /// it is not a DINOv2 ViT/14
    /// safetensors checkpoint (see [`checkpoint`]); [`EncoderError::Candle`] if candle-transformers
    /// refuses the tensors.
    pub fn load(path: impl AsRef<Path>, options: &Dinov2Options) -> Result<Self, EncoderError> {
        options.validate()?;
        let path = path.as_ref();
        let ck = checkpoint::read_checkpoint(path, options.heads)?;
        let arch = ck.arch;
        let mut tensors = ck.tensors;
        // The probe head: output j < width is the class token's j-th value, the rest 0.
        let mut head = vec![0f32; HEAD_OUTPUTS * 2 * arch.width];
        for j in 0..arch.width {
            head[j * 2 * arch.width + j] = 1.0;
        }
        tensors.insert(
            "head.weight".into(),
            Tensor::from_vec(head, (HEAD_OUTPUTS, 2 * arch.width), &Device::Cpu)?,
        );
        tensors.insert(
            "head.bias".into(),
            Tensor::zeros(HEAD_OUTPUTS, DType::F32, &Device::Cpu)?,
        );
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let transformer = DinoVisionTransformer::new(vb, arch.depth, arch.width, arch.heads)?;
        let stem = path
            .file_stem()
            .map_or_else(|| "weights".to_owned(), |s| file_safe(&s.to_string_lossy()));
        let mut id = format!("dinov2-{stem}-{}", options.side);
        // The heads change the features of the same file and side: a count other than the
        // default rule is part of the cache key.
        if !arch.width.is_multiple_of(HEAD_WIDTH) || arch.heads != arch.width / HEAD_WIDTH {
            id.push_str(&format!("-h{}", arch.heads));
        }
        Ok(Frozen {
            path: path.to_path_buf(),
            side: options.side,
            weights_hash: ck.weights_hash,
            id,
            model: Dinov2 { arch, transformer },
        })
    }

    /// The sizes read from the checkpoint.
    pub fn arch(&self) -> Dinov2Arch {
        self.model.arch
    }
}

/// The DINOv2 input of `image`: area-resampled to `side × side`, scaled to `[0, 1]`, normalized
/// with [`IMAGENET_MEAN`] and [`IMAGENET_STD`], in channel-height-width order (`3 · side²`
/// values).
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image or a zero side.
pub fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
    normalized_chw(image, side, IMAGENET_MEAN, IMAGENET_STD)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn preprocessing_is_chw_and_imagenet_normalized() {
        // 2×2 image: a red column and a white one, kept at side 2.
        let img = Rgb8Image {
            width: 2,
            height: 2,
            pixels: vec![255, 0, 0, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        };
        let x = preprocess(&img, 2).unwrap();
        assert_eq!(x.len(), 12);
        let norm = |v: f32, c: usize| (v - IMAGENET_MEAN[c]) / IMAGENET_STD[c];
        // Red plane: 1 everywhere; green plane: 0 at x = 0, 1 at x = 1.
        for v in &x[..4] {
            assert!((v - norm(1.0, 0)).abs() < 1e-6);
        }
        assert!((x[4] - norm(0.0, 1)).abs() < 1e-6);
        assert!((x[5] - norm(1.0, 1)).abs() < 1e-6);
        assert!((x[8 + 1] - norm(1.0, 2)).abs() < 1e-6);
    }

    #[test]
    fn options_are_checked_before_any_file_is_read() {
        let missing = Path::new("/nonexistent/w.safetensors");
        for side in [0, 13, 15, 532] {
            let e = Dinov2Encoder::load(missing, &Dinov2Options { side, heads: None }).unwrap_err();
            assert!(matches!(e, EncoderError::InvalidConfig(_)), "{e}");
        }
        let e = Dinov2Encoder::load(
            missing,
            &Dinov2Options {
                side: 28,
                heads: Some(0),
            },
        )
        .unwrap_err();
        assert!(matches!(e, EncoderError::InvalidConfig(_)), "{e}");
        assert_eq!(file_safe("dino v2,ä"), "dino_v2__");
    }
}
