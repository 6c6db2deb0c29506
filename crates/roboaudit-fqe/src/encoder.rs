//! Frozen encoders (SPEC.md §3, seed 003 §3.4): images to feature vectors.
//!
//! - [`Encoder::RawPixels`]: the frame area-resampled to `side × side` and scaled to `[0, 1]`,
//!   `side² · 3` values in height-width-channel order (SPEC §3: 32 × 32, 3,072 values).
//! - [`Encoder::Dinov2`]: a pretrained DINOv2 ViT/14 loaded from a local safetensors file; the
//!   final-norm class token, `width` values (384 for ViT-S/14). See [`crate::dinov2`] for the
//!   preprocessing and the forward pass.
//!
//! Each encoder has an [`id`](Encoder::id) and a [`weights_hash`](Encoder::weights_hash): the
//! pair names its feature-cache file, so features of other weights or settings are never reused.

use std::path::Path;
use std::sync::Arc;

use roboaudit_data::lerobot::Rgb8Image;
use serde::Serialize;

use crate::FqeError;
use crate::dinov2::{Dinov2Encoder, Dinov2Options};

/// A frozen image encoder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Encoder {
    /// Area-resampled raw pixels, `side × side × 3`, values in `[0, 1]`.
    RawPixels {
        /// Output side in pixels (32 in SPEC §3).
        side: usize,
    },
    /// A loaded DINOv2 checkpoint ([`Encoder::dinov2`]); shared, so cloning is cheap.
    Dinov2(#[serde(serialize_with = "serialize_shared")] Arc<Dinov2Encoder>),
}

/// Serializes the shared encoder's description (serde's `rc` feature is not enabled).
fn serialize_shared<S: serde::Serializer>(d: &Arc<Dinov2Encoder>, s: S) -> Result<S::Ok, S::Error> {
    d.as_ref().serialize(s)
}

impl Encoder {
    /// The SPEC §3 raw-pixel encoder, 32 × 32.
    pub fn raw32() -> Self {
        Self::RawPixels { side: 32 }
    }

    /// Loads a DINOv2 checkpoint from a local safetensors file (nothing is downloaded).
    ///
    /// # Errors
    /// As [`Dinov2Encoder::load`]: [`FqeError::InvalidConfig`] for bad options,
    /// [`FqeError::Io`] for a missing or unreadable file, [`FqeError::Weights`] naming the file
    /// (and the tensor) for an invalid checkpoint.
    pub fn dinov2(path: impl AsRef<Path>, options: &Dinov2Options) -> Result<Self, FqeError> {
        Ok(Self::Dinov2(Arc::new(Dinov2Encoder::load(path, options)?)))
    }

    /// A short identifier used in cache file names and reports, e.g. `raw32` or
    /// `dinov2-dinov2_vits14-224`.
    pub fn id(&self) -> String {
        match self {
            Self::RawPixels { side } => format!("raw{side}"),
            Self::Dinov2(d) => d.id().to_owned(),
        }
    }

    /// Hash of the encoder's weights: 16 hex digits (the SHA-256 prefix of the weights file),
    /// or `none` for encoders without weights.
    pub fn weights_hash(&self) -> String {
        match self {
            Self::RawPixels { .. } => "none".to_owned(),
            Self::Dinov2(d) => d.weights_hash().to_owned(),
        }
    }

    /// Feature width: `side² · 3` for raw pixels, the token width for DINOv2.
    pub fn dim(&self) -> usize {
        match self {
            Self::RawPixels { side } => side * side * 3,
            Self::Dinov2(d) => d.dim(),
        }
    }

    /// Encodes one image into [`dim`](Self::dim) values.
    ///
    /// # Errors
    /// [`FqeError::InvalidInputs`] for an empty image; for DINOv2 also [`FqeError::Candle`] and
    /// [`FqeError::Numerical`] (a non-finite feature).
    pub fn encode(&self, image: &Rgb8Image) -> Result<Vec<f32>, FqeError> {
        match self {
            Self::RawPixels { side } => area_resample(image, *side),
            Self::Dinov2(d) => Ok(d.encode(image)?),
        }
    }

    /// Encodes a batch of images, in order; each result equals [`encode`](Self::encode) of that
    /// image alone (DINOv2 batches run on rayon's pool).
    ///
    /// # Errors
    /// As [`encode`](Self::encode).
    pub fn encode_batch(&self, images: &[Rgb8Image]) -> Result<Vec<Vec<f32>>, FqeError> {
        match self {
            Self::RawPixels { side } => images.iter().map(|i| area_resample(i, *side)).collect(),
            Self::Dinov2(d) => Ok(d.encode_batch(images)?),
        }
    }
}

/// Area (box-filter) resampling to `side × side`, RGB, scaled to `[0, 1]`, HWC order
/// ([`roboaudit_encoders::image::area_resample`]).
///
/// # Errors
/// [`FqeError::InvalidInputs`] for an empty image, a zero side or a pixel buffer of the wrong size.
pub fn area_resample(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, FqeError> {
    Ok(roboaudit_encoders::image::area_resample(image, side)?)
}

/// Area (box-filter) resampling to `width × height`, RGB, scaled to `[0, 1]`, HWC order:
/// `height · width · 3` values ([`roboaudit_encoders::image::area_resample_to`]; the report's
/// thumbnails).
///
/// # Errors
/// [`FqeError::InvalidInputs`] for an empty image, a zero output size or a pixel buffer of the
/// wrong size.
pub fn area_resample_to(
    image: &Rgb8Image,
    width: usize,
    height: usize,
) -> Result<Vec<f32>, FqeError> {
    Ok(roboaudit_encoders::image::area_resample_to(
        image, width, height,
    )?)
}
