//! Reading and checking safetensors weights files, shared by the encoders: the file's hash, the
//! architecture its tensor names look like, and the per-tensor checks (present, shape, float
//! type, nothing foreign) that turn a wrong file into an error naming the file and the tensor.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use candle_core::safetensors::SliceSafetensors;
use candle_core::{DType, Device, Tensor};
use sha2::{Digest, Sha256};

use crate::EncoderError;

/// First 16 hex digits (64 bits) of the SHA-256 of `bytes` — what `sha256sum FILE | cut -c1-16`
/// prints for a file.
pub fn weights_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(16);
    for b in &digest[..8] {
        // Writing to a String cannot fail.
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The architecture and layout whose tensor names `names` are, when recognised: used to say what
/// a file of the wrong architecture holds.
pub fn guess_architecture<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let names: BTreeSet<&str> = names.by_ref().collect();
    let has = |n: &str| names.contains(n);
    if has("cls_token") && has("pos_embed") {
        Some("DINOv2 (torch-hub layout)")
    } else if has("embeddings.cls_token") || has("dinov2.embeddings.cls_token") {
        Some("DINOv2 in the transformers Dinov2Model layout (convert it to the torch-hub layout)")
    } else if has("vision_model.embeddings.class_embedding") {
        Some("CLIP (transformers layout)")
    } else if has("visual.class_embedding") {
        Some("CLIP in the OpenAI/open_clip layout (convert it to the transformers layout)")
    } else if has("layer1.0.conv3.weight") {
        Some("a bottleneck ResNet (ResNet-50/101/152, torchvision layout)")
    } else if has("conv1.weight") && has("layer1.0.conv1.weight") {
        Some("a ResNet (torchvision layout)")
    } else {
        None
    }
}

/// A weights file read into memory: its bytes and hash.
pub(crate) struct WeightsFile {
    pub bytes: Vec<u8>,
    pub hash: String,
}

/// Reads `path` and hashes it.
///
/// # Errors
/// [`EncoderError::Io`] (`read`) when the file cannot be read.
pub(crate) fn read(path: &Path) -> Result<WeightsFile, EncoderError> {
    let bytes = std::fs::read(path).map_err(|e| EncoderError::io("read", path, e))?;
    let hash = weights_hash(&bytes);
    Ok(WeightsFile { bytes, hash })
}

/// Parses the safetensors header of `bytes`.
///
/// # Errors
/// [`EncoderError::NotSafetensors`] naming `path`.
pub(crate) fn parse<'a>(
    path: &Path,
    bytes: &'a [u8],
) -> Result<SliceSafetensors<'a>, EncoderError> {
    SliceSafetensors::new(bytes).map_err(|e| EncoderError::NotSafetensors {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The shapes of every tensor in `st`, by name.
pub(crate) fn shapes(st: &SliceSafetensors<'_>) -> HashMap<String, Vec<usize>> {
    st.tensors()
        .into_iter()
        .map(|(name, view)| (name, view.shape().to_vec()))
        .collect()
}

/// Checks that the identifying tensor `marker` is present.
///
/// # Errors
/// [`EncoderError::WrongArchitecture`] naming the architecture the names look like.
pub(crate) fn require_marker(
    path: &Path,
    shapes: &HashMap<String, Vec<usize>>,
    marker: &str,
    expected: &'static str,
) -> Result<(), EncoderError> {
    if shapes.contains_key(marker) {
        return Ok(());
    }
    Err(EncoderError::WrongArchitecture {
        path: path.to_path_buf(),
        expected,
        found: guess_architecture(shapes.keys().map(String::as_str)),
        missing: marker.to_owned(),
    })
}

/// Checks every tensor of `expected` (present, of its shape, of a float type), then that every
/// tensor of the file is expected or `ignored`, and loads the expected ones as `f32`.
///
/// # Errors
/// [`EncoderError::MissingTensor`], [`EncoderError::TensorShape`], [`EncoderError::TensorType`],
/// [`EncoderError::UnexpectedTensor`] (the first by name), each naming the file and tensor;
/// [`EncoderError::Weights`] when a tensor's bytes cannot be read.
pub(crate) fn check_and_load(
    path: &Path,
    st: &SliceSafetensors<'_>,
    expected: &[(String, Vec<usize>)],
    ignored: &dyn Fn(&str) -> bool,
    architecture: &'static str,
    sizes: &str,
) -> Result<HashMap<String, Tensor>, EncoderError> {
    let views: HashMap<String, _> = st.tensors().into_iter().collect();
    for (name, shape) in expected {
        let Some(view) = views.get(name) else {
            return Err(EncoderError::MissingTensor {
                path: path.to_path_buf(),
                tensor: name.clone(),
                architecture: format!("{architecture}, {sizes}"),
            });
        };
        if view.shape() != shape.as_slice() {
            return Err(EncoderError::TensorShape {
                path: path.to_path_buf(),
                tensor: name.clone(),
                shape: view.shape().to_vec(),
                expected: shape.clone(),
                layout: architecture,
            });
        }
        let dtype = DType::try_from(view.dtype()).ok();
        if !matches!(
            dtype,
            Some(DType::F32 | DType::F16 | DType::BF16 | DType::F64)
        ) {
            return Err(EncoderError::TensorType {
                path: path.to_path_buf(),
                tensor: name.clone(),
                dtype: format!("{:?}", view.dtype()),
            });
        }
    }
    let known: BTreeSet<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    let mut unexpected: Vec<&str> = views
        .keys()
        .map(String::as_str)
        .filter(|n| !known.contains(n) && !ignored(n))
        .collect();
    unexpected.sort_unstable();
    if let Some(first) = unexpected.first() {
        return Err(EncoderError::UnexpectedTensor {
            path: path.to_path_buf(),
            tensor: (*first).to_owned(),
            count: unexpected.len(),
            architecture,
        });
    }
    load(path, st, expected.iter().map(|(n, _)| n.as_str()))
}

/// Loads the tensors `names` as `f32`.
///
/// # Errors
/// [`EncoderError::Weights`] naming the file and tensor when one cannot be read.
pub(crate) fn load<'n>(
    path: &Path,
    st: &SliceSafetensors<'_>,
    names: impl Iterator<Item = &'n str>,
) -> Result<HashMap<String, Tensor>, EncoderError> {
    let mut tensors = HashMap::new();
    for name in names {
        let t = st
            .load(name, &Device::Cpu)
            .and_then(|t| t.to_dtype(DType::F32))
            .map_err(|e| EncoderError::Weights {
                path: path.to_path_buf(),
                tensor: Some(name.to_owned()),
                message: format!("cannot read tensor \"{name}\" ({e})"),
            })?;
        tensors.insert(name.to_owned(), t);
    }
    Ok(tensors)
}

/// Writes `tensors` to `path` as safetensors (`f32`). candle's writer orders the tensors by name,
/// so the same tensors give the same bytes.
///
/// # Errors
/// [`EncoderError::Weights`] naming the file when it cannot be written.
pub(crate) fn save(path: &Path, tensors: &HashMap<String, Tensor>) -> Result<(), EncoderError> {
    candle_core::safetensors::save(tensors, path).map_err(|e| EncoderError::Weights {
        path: path.to_path_buf(),
        tensor: None,
        message: format!("cannot write the checkpoint ({e})"),
    })
}

/// `stem` with every character outside `[A-Za-z0-9._-]` replaced by `_` (it goes into ids and
/// cache file names).
pub(crate) fn file_safe(stem: &str) -> String {
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file stem of `path`, made [`file_safe`] (`weights` when it has none).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "weights".to_owned(), |s| file_safe(&s.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hash_is_the_sha256_prefix_and_architectures_are_recognised() {
        // sha256("") = e3b0c44298fc1c14…
        assert_eq!(weights_hash(b""), "e3b0c44298fc1c14");
        assert_eq!(
            guess_architecture(["pos_embed", "cls_token"].into_iter()),
            Some("DINOv2 (torch-hub layout)")
        );
        assert_eq!(
            guess_architecture(["conv1.weight", "layer1.0.conv1.weight"].into_iter()),
            Some("a ResNet (torchvision layout)")
        );
        assert_eq!(guess_architecture(["x"].into_iter()), None);
        assert_eq!(file_safe("dino v2,ä"), "dino_v2__");
    }
}
