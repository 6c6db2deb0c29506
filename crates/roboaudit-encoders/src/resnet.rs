//! A pretrained ResNet-18 (He et al. 2015) loaded from a local safetensors file and run with
//! candle-transformers' `resnet18_no_final_layer` on the CPU (seed 000 §II: the "ImageNet
//! ResNet-18" embedding). Nothing is downloaded.
//!
//! - **Weights**: torchvision's layout, i.e. `torchvision.models.resnet18().state_dict()` saved
//!   with `safetensors.torch.save_file` (`conv1.weight`, `bn1.*`, `layer{1..4}.{0,1}.{conv1,
//!   bn1, conv2, bn2}.*`, `layer{2,3,4}.0.downsample.{0,1}.*`). `fc.{weight,bias}` (any number
//!   of classes) and every `num_batches_tracked` are accepted and not read. The widths are fixed
//!   (64, 128, 256, 512), so a checkpoint is either a ResNet-18 or refused.
//! - **Preprocessing** ([`preprocess`]): the whole frame area-resampled to `side × side`
//!   (default 224, `32..=1024`; no crop, see [`crate::image`]), scaled to `[0, 1]`, normalized with
//!   the ImageNet mean and std, channel-height-width order.
//! - **Feature**: the global average pool of `layer4`'s output, before `fc`: 512 values, `f32`,
//!   non-negative (a mean of ReLU outputs). BatchNorm runs in inference mode (running
//!   statistics, ε = 1e-5, torchvision's).
//! - candle's max pool pads by repeating the edge instead of with −∞; after a ReLU every value is
//!   ≥ 0 and the repeated value is in the window anyway, so the result is torchvision's.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Func, VarBuilder};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_data::lerobot::Rgb8Image;
use serde::Serialize;

use crate::EncoderError;
use crate::frozen::{Backbone, Frozen};
use crate::image::{IMAGENET_MEAN, IMAGENET_STD, normalized_chw};
use crate::weights::{self, check_and_load, require_marker};

/// Feature width: the channels of `layer4`.
pub const DIM: usize = 512;
/// Default input side in pixels (torchvision's ImageNet evaluation crop).
pub const DEFAULT_SIDE: usize = 224;
/// Smallest input side: five stride-2 stages leave a 1 × 1 map at 32 pixels.
pub const MIN_SIDE: usize = 32;
/// Largest input side (the cost grows with the side's square).
pub const MAX_SIDE: usize = 1024;
/// The architecture's name in errors.
pub const ARCHITECTURE: &str = "ResNet-18 (torchvision layout)";
/// Channels of the stem and of `layer1..layer4`.
const WIDTHS: [usize; 5] = [64, 64, 128, 256, 512];

/// Settings of a ResNet-18 encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResnetOptions {
    /// Input side in pixels, `32..=1024`; default 224.
    pub side: usize,
}

impl Default for ResnetOptions {
    fn default() -> Self {
        Self { side: DEFAULT_SIDE }
    }
}

impl ResnetOptions {
    /// Checks the side.
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] for a side outside `32..=1024`.
    pub fn validate(&self) -> Result<(), EncoderError> {
        if !(MIN_SIDE..=MAX_SIDE).contains(&self.side) {
            return Err(EncoderError::InvalidConfig(format!(
                "resnet18 side={} is out of range {MIN_SIDE}..={MAX_SIDE}",
                self.side
            )));
        }
        Ok(())
    }
}

/// Every tensor the model reads, with its shape (torchvision's names).
pub fn expected_tensors() -> Vec<(String, Vec<usize>)> {
    let bn = |out: &mut Vec<(String, Vec<usize>)>, prefix: &str, c: usize| {
        for p in ["weight", "bias", "running_mean", "running_var"] {
            out.push((format!("{prefix}.{p}"), vec![c]));
        }
    };
    let mut out = vec![("conv1.weight".to_owned(), vec![64, 3, 7, 7])];
    bn(&mut out, "bn1", 64);
    for layer in 1..=4 {
        let (c_in, c_out) = (WIDTHS[layer - 1], WIDTHS[layer]);
        for block in 0..2 {
            let p = format!("layer{layer}.{block}");
            let b_in = if block == 0 { c_in } else { c_out };
            out.push((format!("{p}.conv1.weight"), vec![c_out, b_in, 3, 3]));
            bn(&mut out, &format!("{p}.bn1"), c_out);
            out.push((format!("{p}.conv2.weight"), vec![c_out, c_out, 3, 3]));
            bn(&mut out, &format!("{p}.bn2"), c_out);
            if block == 0 && layer > 1 {
                out.push((format!("{p}.downsample.0.weight"), vec![c_out, c_in, 1, 1]));
                bn(&mut out, &format!("{p}.downsample.1"), c_out);
            }
        }
    }
    out
}

/// Tensors that may be present and are not read: the classifier and BatchNorm's step counters.
fn ignored(name: &str) -> bool {
    name == "fc.weight" || name == "fc.bias" || name.ends_with(".num_batches_tracked")
}

/// A loaded, frozen ResNet-18: id `resnet18-<file stem>-<side>`, e.g. `resnet18-resnet18-224`;
/// its feature is the pooled `layer4` output, 512 finite `f32` values.
pub type Resnet18Encoder = Frozen<Resnet18>;

/// candle-transformers' ResNet-18 without its classifier.
pub struct Resnet18 {
    net: Func<'static>,
}

impl Backbone for Resnet18 {
    const LABEL: &'static str = "";

    fn dim(&self) -> usize {
        DIM
    }

    fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
        preprocess(image, side)
    }

    fn forward(&self, x: &Tensor) -> Result<Vec<f32>, EncoderError> {
        Ok(self.net.forward(x)?.flatten_all()?.to_vec1::<f32>()?)
    }
}

impl Resnet18Encoder {
    /// Loads the checkpoint at `path` (read once, hashed, checked, converted to `f32`).
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] for bad options (before the file is read);
    /// [`EncoderError::Io`] when the file cannot be read; [`EncoderError::NotSafetensors`];
    /// [`EncoderError::WrongArchitecture`] when it has no `layer1.0.conv1.weight` (another
    /// model) or is a bottleneck ResNet; [`EncoderError::MissingTensor`],
    /// [`EncoderError::TensorShape`], [`EncoderError::TensorType`],
    /// [`EncoderError::UnexpectedTensor`] (e.g. a ResNet-34's `layer1.2.*`), each naming the
    /// file and tensor; [`EncoderError::Candle`].
    pub fn load(path: impl AsRef<Path>, options: &ResnetOptions) -> Result<Self, EncoderError> {
        options.validate()?;
        let path = path.as_ref();
        let file = weights::read(path)?;
        let st = weights::parse(path, &file.bytes)?;
        let shapes = weights::shapes(&st);
        require_marker(path, &shapes, "layer1.0.conv1.weight", ARCHITECTURE)?;
        if shapes.contains_key("layer1.0.conv3.weight") {
            return Err(EncoderError::WrongArchitecture {
                path: path.to_path_buf(),
                expected: ARCHITECTURE,
                found: weights::guess_architecture(shapes.keys().map(String::as_str)),
                missing: "layer1.0.conv2.weight of shape [64, 64, 3, 3]".to_owned(),
            });
        }
        let tensors = check_and_load(
            path,
            &st,
            &expected_tensors(),
            &ignored,
            ARCHITECTURE,
            "widths 64/128/256/512, two basic blocks per layer",
        )?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let net = candle_transformers::models::resnet::resnet18_no_final_layer(vb)?;
        Ok(Frozen {
            path: path.to_path_buf(),
            side: options.side,
            id: format!("resnet18-{}-{}", weights::stem(path), options.side),
            weights_hash: file.hash,
            model: Resnet18 { net },
        })
    }
}

/// The ResNet input of `image`: area-resampled to `side × side`, ImageNet-normalized, CHW.
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image or a zero side.
pub fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
    normalized_chw(image, side, IMAGENET_MEAN, IMAGENET_STD)
}

/// Writes a randomly initialized ResNet-18 in torchvision's layout to `path`, with a 1000-class
/// `fc` and `num_batches_tracked` counters so that `torchvision.models.resnet18()` loads it with
/// `strict=True`. The sizes are those of the real model (about 11.7 M values, a 47 MB file);
/// same seed ⇒ same bytes. Values: convolutions and `fc` uniform with variance `1 / fan_in`;
/// BatchNorm weight `0.8..1.2`, bias and running mean `± 0.1`, running variance `0.5..1.5`.
///
/// # Errors
/// [`EncoderError::Weights`] naming the file when it cannot be written; [`EncoderError::Candle`].
pub fn write_random_resnet18(path: &Path, seed: u64) -> Result<(), EncoderError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut list = expected_tensors();
    list.push(("fc.weight".to_owned(), vec![1000, DIM]));
    list.push(("fc.bias".to_owned(), vec![1000]));
    let mut tensors = HashMap::with_capacity(list.len() + 20);
    // Values are drawn in the list's fixed order, so the seed fixes every tensor.
    for (name, shape) in list {
        let n: usize = shape.iter().product();
        let (lo, hi) = if shape.len() >= 2 {
            let fan_in: usize = shape[1..].iter().product();
            let a = (3.0 / fan_in as f32).sqrt();
            (-a, a)
        } else if name.ends_with("running_var") {
            (0.5, 1.5)
        } else if name.ends_with(".weight") {
            (0.8, 1.2)
        } else {
            (-0.1, 0.1)
        };
        let v: Vec<f32> = (0..n)
            .map(|_| lo + (hi - lo) * rng.random::<f32>())
            .collect();
        if let Some(prefix) = name.strip_suffix(".running_var") {
            tensors.insert(
                format!("{prefix}.num_batches_tracked"),
                Tensor::zeros((), DType::I64, &Device::Cpu)?,
            );
        }
        tensors.insert(name, Tensor::from_vec(v, shape, &Device::Cpu)?);
    }
    weights::save(path, &tensors)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_layout_has_resnet18s_62_tensors_and_11_7_million_values() {
        let t = expected_tensors();
        // 20 convolutions (17 + 3 downsample) + 20 BatchNorms × 4.
        assert_eq!(t.len(), 20 + 20 * 4);
        let values: usize = t.iter().map(|(_, s)| s.iter().product::<usize>()).sum();
        // torchvision's resnet18 has 11,689,512 parameters, 513,000 of them in fc; BatchNorm
        // running statistics add 2 × 4,800 values.
        assert_eq!(values, 11_689_512 - 513_000 + 9_600);
        for side in [31, 1025] {
            assert!(ResnetOptions { side }.validate().is_err());
        }
        assert!(ResnetOptions { side: 32 }.validate().is_ok());
    }
}
