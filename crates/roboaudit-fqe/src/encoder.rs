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
            Self::Dinov2(d) => d.encode(image),
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
            Self::Dinov2(d) => d.encode_batch(images),
        }
    }
}

/// For each output cell of `0..out`, the input cells it overlaps and the overlap fraction (sum 1).
fn area_weights(input: usize, out: usize) -> Vec<Vec<(usize, f64)>> {
    #[allow(clippy::cast_precision_loss)]
    let scale = input as f64 / out as f64;
    (0..out)
        .map(|o| {
            #[allow(clippy::cast_precision_loss)]
            let (lo, hi) = (o as f64 * scale, (o + 1) as f64 * scale);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let (first, last) = (lo.floor() as usize, (hi.ceil() as usize).min(input));
            (first..last)
                .filter_map(|i| {
                    #[allow(clippy::cast_precision_loss)]
                    let overlap = (hi.min((i + 1) as f64) - lo.max(i as f64)) / scale;
                    (overlap > 0.0).then_some((i, overlap))
                })
                .collect()
        })
        .collect()
}

/// Area (box-filter) resampling to `side × side`, RGB, scaled to `[0, 1]`, HWC order.
///
/// # Errors
/// [`FqeError::InvalidInputs`] for an empty image, a zero side or a pixel buffer of the wrong size.
pub fn area_resample(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, FqeError> {
    area_resample_to(image, side, side)
}

/// Area (box-filter) resampling to `width × height` (each output pixel the overlap-weighted mean
/// of the input pixels it covers), RGB, scaled to `[0, 1]`, HWC order: `height · width · 3`
/// values. The resize of [`area_resample`] for any output shape (the report's thumbnails).
///
/// # Errors
/// [`FqeError::InvalidInputs`] for an empty image, a zero output size or a pixel buffer of the
/// wrong size.
pub fn area_resample_to(
    image: &Rgb8Image,
    width: usize,
    height: usize,
) -> Result<Vec<f32>, FqeError> {
    let (w, h) = (image.width as usize, image.height as usize);
    if w == 0 || h == 0 || width == 0 || height == 0 || image.pixels.len() != w * h * 3 {
        return Err(FqeError::InvalidInputs(format!(
            "cannot resample a {w}×{h} image with {} bytes to {width}×{height}",
            image.pixels.len()
        )));
    }
    let wx = area_weights(w, width);
    let wy = area_weights(h, height);
    let mut out = Vec::with_capacity(width * height * 3);
    for ys in &wy {
        for xs in &wx {
            let mut acc = [0.0f64; 3];
            for (y, fy) in ys {
                for (x, fx) in xs {
                    let k = (y * w + x) * 3;
                    for (c, a) in acc.iter_mut().enumerate() {
                        *a += fy * fx * f64::from(image.pixels[k + c]);
                    }
                }
            }
            #[allow(clippy::cast_possible_truncation)]
            out.extend(acc.iter().map(|a| (a / 255.0) as f32));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn area_resample_averages_blocks_and_fractional_overlaps() {
        // 4×1 → 2×… is not square; use 4×4 → 2×2: each output is the mean of a 2×2 block.
        let mut pixels = Vec::new();
        for y in 0..4u8 {
            for x in 0..4u8 {
                pixels.extend_from_slice(&[x * 50, y * 50, 255]);
            }
        }
        let img = Rgb8Image {
            width: 4,
            height: 4,
            pixels,
        };
        let out = area_resample(&img, 2).unwrap();
        // Output (0,0): red mean of x ∈ {0,1} = 25, green mean of y ∈ {0,1} = 25, blue 255.
        assert!((out[0] - 25.0 / 255.0).abs() < 1e-6);
        assert!((out[1] - 25.0 / 255.0).abs() < 1e-6);
        assert!((out[2] - 1.0).abs() < 1e-6);
        // Output (1,0): red mean of x ∈ {2,3} = 125.
        assert!((out[3] - 125.0 / 255.0).abs() < 1e-6);
        // 3 → 2 cells: output 0 covers cell 0 fully and half of cell 1 (weights 2/3, 1/3).
        let w = area_weights(3, 2);
        assert_eq!(w[0].len(), 2);
        assert!((w[0][0].1 - 2.0 / 3.0).abs() < 1e-12 && (w[0][1].1 - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn area_resample_to_keeps_rows_and_columns_apart() {
        // 4 wide × 2 high → 2 × 1: each output averages a 2 × 2 block; the red ramp runs along x.
        let mut pixels = Vec::new();
        for y in 0..2u8 {
            for x in 0..4u8 {
                pixels.extend_from_slice(&[x * 60, y * 100, 0]);
            }
        }
        let img = Rgb8Image {
            width: 4,
            height: 2,
            pixels,
        };
        let out = area_resample_to(&img, 2, 1).unwrap();
        assert_eq!(out.len(), 6);
        // Red: mean of {0, 60} = 30 and of {120, 180} = 150; green: mean of {0, 100} = 50.
        let want = [30.0, 50.0, 0.0, 150.0, 50.0, 0.0];
        for (o, w) in out.iter().zip(want) {
            assert!((o - w / 255.0).abs() < 1e-6, "{o} vs {w}");
        }
        assert!(area_resample_to(&img, 0, 1).is_err());
    }
}
