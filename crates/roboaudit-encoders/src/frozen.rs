//! What every pretrained encoder is once loaded: a frozen [`Backbone`] with the weights file it
//! came from, that file's hash, the encoder's id and its input side; and the steps all of them
//! take from an image to a feature (preprocess, one `[1, 3, side, side]` forward, a finiteness
//! check). [`crate::Resnet18Encoder`], [`crate::ClipEncoder`] and [`crate::Dinov2Encoder`] are
//! this type over their own models.

use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use rayon::prelude::*;
use roboaudit_data::lerobot::Rgb8Image;

use crate::EncoderError;

/// One pretrained network as an encoder needs it: its preprocessing and its forward pass.
pub trait Backbone: Send + Sync {
    /// The network's name in a non-finite-feature error (`the {LABEL}encoder gave …`): empty, or
    /// a name followed by a space.
    const LABEL: &'static str;

    /// Feature width.
    fn dim(&self) -> usize;

    /// The input of `image` at `side × side`: `3 · side²` values, channel-height-width order.
    ///
    /// # Errors
    /// [`EncoderError::InvalidImage`] for an empty image or a zero side.
    fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError>;

    /// The feature of one input `x` of shape `[1, 3, side, side]`, [`Backbone::dim`] values.
    ///
    /// # Errors
    /// [`EncoderError::Candle`].
    fn forward(&self, x: &Tensor) -> Result<Vec<f32>, EncoderError>;
}

/// A loaded, frozen encoder over the model `M`. Cheap to share (`Arc`) across threads; encoding
/// does not change it.
pub struct Frozen<M> {
    pub(crate) path: PathBuf,
    pub(crate) side: usize,
    pub(crate) weights_hash: String,
    pub(crate) id: String,
    pub(crate) model: M,
}

impl<M> std::fmt::Debug for Frozen<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frozen")
            .field("id", &self.id)
            .field("path", &self.path)
            .field("side", &self.side)
            .field("weights_hash", &self.weights_hash)
            .finish_non_exhaustive()
    }
}

impl<M: Backbone> Frozen<M> {
    /// The encoder's id: its kind, the file stem and the input side (e.g.
    /// `resnet18-resnet18-224`, `dinov2-dinov2_vits14-224`), with `-h<heads>` appended when a
    /// transformer's heads are not `width / 64`. Used in cache file names and reports.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// First 16 hex digits of the SHA-256 of the checkpoint file's bytes.
    pub fn weights_hash(&self) -> &str {
        &self.weights_hash
    }

    /// Feature width.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// Input side in pixels.
    pub fn side(&self) -> usize {
        self.side
    }

    /// The checkpoint file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The feature of one preprocessed input (`3 · side²` values, as the model's `preprocess`
    /// gives them).
    ///
    /// # Errors
    /// [`EncoderError::ImageSize`] for an input of another length; [`EncoderError::Candle`];
    /// [`EncoderError::Numerical`] for a non-finite feature (weights that overflow).
    pub fn encode_preprocessed(&self, input: Vec<f32>) -> Result<Vec<f32>, EncoderError> {
        let side = self.side;
        if input.len() != 3 * side * side {
            return Err(EncoderError::ImageSize {
                encoder: self.id.clone(),
                message: format!("{} input values, expected 3 × {side} × {side}", input.len()),
            });
        }
        let x = Tensor::from_vec(input, (1, 3, side, side), &Device::Cpu)?;
        let feature = self.model.forward(&x)?;
        if feature.iter().any(|v| !v.is_finite()) {
            return Err(EncoderError::Numerical(format!(
                "the {}encoder gave a non-finite feature (weights {})",
                M::LABEL,
                self.path.display()
            )));
        }
        Ok(feature)
    }

    /// The feature of one image: [`Self::dim`] finite `f32` values.
    ///
    /// # Errors
    /// [`EncoderError::InvalidImage`] for an empty image; as [`Self::encode_preprocessed`].
    pub fn encode(&self, image: &Rgb8Image) -> Result<Vec<f32>, EncoderError> {
        self.encode_preprocessed(M::preprocess(image, self.side)?)
    }

    /// [`Self::encode`] of every image, in order, on rayon's pool (one forward per image, so a
    /// feature does not depend on its batch or the thread count).
    ///
    /// # Errors
    /// As [`Self::encode`] (the first failing image's error).
    pub fn encode_batch(&self, images: &[Rgb8Image]) -> Result<Vec<Vec<f32>>, EncoderError> {
        images.par_iter().map(|img| self.encode(img)).collect()
    }
}
