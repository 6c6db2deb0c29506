//! The policy encoder (seed 000 §II "policy encoder"): the visual feature of a behaviour-cloned
//! Policy+DR image policy, read from a checkpoint folder as `retrieval collect --mechanism
//! policy-dr` writes it (`RUN/policies/cNNN/`: `model.safetensors` + `config.json`).
//!
//! This module is the one implementation of what a policy checkpoint is and of the network's
//! visual part; `roboaudit-retrieval-learned` trains, saves and runs the policies through it:
//!
//! - [`PolicyConfig`] (with [`TrainConfig`], [`DomainRandomization`]): `config.json`, one type
//!   for the crate that writes it and every crate that reads it;
//! - [`NAMES`], [`NORM_NAMES`], [`shapes`]: the tensors of `model.safetensors`;
//! - [`load_checkpoint`]: the config and every tensor, checked (schema, declared sizes, each
//!   tensor's name, shape, type and finiteness, nothing foreign);
//! - [`features`]: the forward pass from images to the visual feature;
//! - [`pool_chw`], [`preprocess`]: an RGB8 image to the network's input.
//!
//! ```text
//! image [N,3,32,32] in [0,1], − 0.5
//!   → conv 4×4 stride 4 → relu          [N,c1,8,8]
//!   → conv 2×2 stride 2 → relu          [N,c2,4,4]
//!   → flatten (row, column, channel) → linear → relu   [N,F]   (visual feature)
//! ```
//!
//! The action head (`fc1`, `fc2`, `out` over the feature and the low-dimensional input) is part of
//! the checkpoint and checked on load, but only `retrieval-learned` runs it. A convolution whose
//! kernel equals its stride is a reshape and one matrix product ([`patches`]). Convolution
//! weights have PyTorch's layout `[out, in, k, k]`.
//!
//! Preprocessing: a `k·32 × k·32` image (the harness renders 64 × 64, `k = 2`) is `k × k`
//! average-pooled, each value the sum of the `k²` bytes divided by `255 k²` in `f32` (exactly the
//! harness's `pixels32` values), channel-major. Other sizes are refused
//! ([`EncoderError::ImageSize`]): the policy never saw a stretched or fractionally resampled frame,
//! and its features of one would match no collection's.

use std::path::{Path, PathBuf};

use candle_core::{DType, Tensor};
use roboaudit_data::lerobot::Rgb8Image;
use serde::{Deserialize, Serialize};

use crate::EncoderError;
use crate::frozen::{Backbone, Frozen};
use crate::weights;

/// Name of the representation (in `embeddings.parquet` of a `policy-dr` run, and the default
/// name of `embed`'s `policy_encoder:DIR`): the visual feature ([`TrainConfig::feature`] values,
/// 64 by default, each ≥ 0) of one Policy+DR network; the collector uses the first library
/// experience's (`e00`) network on every scene's first image, so that the vectors are comparable.
pub const POLICY_ENCODER: &str = "policy_encoder";
/// Schema tag of [`PolicyConfig`].
pub const CONFIG_SCHEMA: &str = "roboaudit.retrieval_policy.v1";
/// File name of the configuration inside a checkpoint folder.
pub const CONFIG_FILE: &str = "config.json";
/// File name of the weights inside a checkpoint folder.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// Side (pixels) of the policy's RGB input image.
pub const IMAGE_SIDE: usize = 32;
/// Low-dimensional input: the measured tool-centre point position (m), the gripper opening in
/// `[0, 1]` and the episode clock `step / max_steps` in `[0, 1]`. Joint angles and the hand's
/// orientation are left out: the arm follows a Cartesian target, so its redundant (null-space)
/// joint configuration drifts by tenths of a radian between runs of the same path, and roll and
/// pitch random-walk under actuation noise by more than a demonstration varies them; a policy
/// that reads either leaves the demonstration at any other episode seed.
pub const LOW_DIM: usize = 5;
/// Output: the commanded tool-centre point after the step `x, y, z` (m, world), its yaw (rad)
/// and the gripper command in `[-1, 1]` (the representation the demonstration was recorded in).
pub const TARGET_DIM: usize = 5;

/// Network sizes and behaviour-cloning settings (`config.json`'s `train`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// Full-batch Adam steps (1 to 100 000).
    pub steps: usize,
    /// Adam learning rate (finite, in `(0, 1]`).
    pub lr: f64,
    /// Seed of the weight initialization.
    pub seed: u64,
    /// Output channels of the two convolutions (each 1 to 256).
    pub channels: [usize; 2],
    /// Width of the visual feature (the policy encoder's output; 1 to 1024).
    pub feature: usize,
    /// Width of the two hidden layers of the action head (1 to 4096).
    pub hidden: usize,
    /// Standard deviation of the Gaussian noise added to the normalized low-dimensional inputs
    /// at every training step (0 to 10): a policy that sees a few millimetres of drift in its own
    /// base scene must not leave the demonstration.
    pub low_noise: f64,
    /// Standard deviation of the Gaussian noise added to every pixel (values in `[0, 1]`) at every
    /// training step, one noise image per step shared by the batch (0 to 1).
    pub pixel_noise: f64,
    /// Samples per Adam step, drawn from a seeded shuffle of the samples epoch by epoch (1 to
    /// 100 000; one of at least the sample count is the full batch); `None`: every step uses
    /// every sample (full batch, the `policy` mechanism).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// Domain randomization of the demonstrations (the `policy-dr` mechanism); `None`: the
    /// experience's own demonstration only (the `policy` mechanism). Part of the settings a
    /// resumed run compares, so a checkpoint of one mechanism is never loaded for the other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dr: Option<DomainRandomization>,
}

/// How a Policy+DR demonstration is re-recorded (seed 000 §II "Policy+DR"; README: what each
/// task gets and why): the item's demonstrator re-run with the recording seed in its base layout
/// under `draws` appearance draws (camera pose, light, palette, table and background textures),
/// each block's position jittered in the plane when `layout_jitter > 0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainRandomization {
    /// Randomized re-recordings besides the canonical demonstration (1 to 64).
    pub draws: usize,
    /// Half-width (m) of the uniform jitter added to each block's `x` and `y` per draw (0 to 0.03);
    /// 0 leaves the layout as recorded.
    pub layout_jitter: f64,
}

impl DomainRandomization {
    /// Checks both fields against their documented ranges.
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), EncoderError> {
        if !(1..=64).contains(&self.draws) {
            return Err(EncoderError::InvalidConfig(format!(
                "dr.draws must be in 1..=64, got {}",
                self.draws
            )));
        }
        if !(0.0..=0.03).contains(&self.layout_jitter) {
            return Err(EncoderError::InvalidConfig(format!(
                "dr.layout_jitter must be in [0, 0.03] m, got {}",
                self.layout_jitter
            )));
        }
        Ok(())
    }
}

impl Default for TrainConfig {
    /// 600 steps at learning rate 2·10⁻³, convolutions of 16 and 32 channels, a 64-wide visual
    /// feature and a 128-wide head, no input noise, full batch, no domain randomization (README:
    /// why these sizes).
    fn default() -> Self {
        TrainConfig {
            steps: 600,
            lr: 2e-3,
            seed: 0,
            channels: [16, 32],
            feature: 64,
            hidden: 128,
            low_noise: 0.0,
            pixel_noise: 0.0,
            batch: None,
            dr: None,
        }
    }
}

impl TrainConfig {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), EncoderError> {
        let bad = |m: String| Err(EncoderError::InvalidConfig(m));
        if !(1..=100_000).contains(&self.steps) {
            return bad(format!("steps must be in 1..=100000, got {}", self.steps));
        }
        if !(self.lr.is_finite() && self.lr > 0.0 && self.lr <= 1.0) {
            return bad(format!("lr must be in (0, 1], got {}", self.lr));
        }
        if self.channels.iter().any(|c| !(1..=256).contains(c)) {
            return bad(format!(
                "channels must each be in 1..=256, got {:?}",
                self.channels
            ));
        }
        if !(1..=1024).contains(&self.feature) {
            return bad(format!("feature must be in 1..=1024, got {}", self.feature));
        }
        if !(1..=4096).contains(&self.hidden) {
            return bad(format!("hidden must be in 1..=4096, got {}", self.hidden));
        }
        if !(0.0..=10.0).contains(&self.low_noise) {
            return bad(format!(
                "low_noise must be in [0, 10], got {}",
                self.low_noise
            ));
        }
        if !(0.0..=1.0).contains(&self.pixel_noise) {
            return bad(format!(
                "pixel_noise must be in [0, 1], got {}",
                self.pixel_noise
            ));
        }
        if let Some(b) = self.batch
            && !(1..=100_000).contains(&b)
        {
            return bad(format!("batch must be in 1..=100000, got {b}"));
        }
        if let Some(dr) = &self.dr {
            dr.validate()?;
        }
        Ok(())
    }
}

/// Contents of `config.json`: what the weights are, what they were trained on, how well they fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// [`CONFIG_SCHEMA`].
    pub schema: String,
    /// Task name (`stack`, `door`).
    pub task: String,
    /// Base scene of the demonstration.
    pub base_scene_id: String,
    /// Episode seed of the demonstration.
    pub recording_seed: u64,
    /// Input image side ([`IMAGE_SIDE`]).
    pub image_side: usize,
    /// Low-dimensional input size ([`LOW_DIM`]).
    pub low_dim: usize,
    /// Output size ([`TARGET_DIM`]).
    pub target_dim: usize,
    /// Network sizes and training settings.
    pub train: TrainConfig,
    /// Training samples (one per demonstration step).
    pub samples: usize,
    /// Mean squared error of the normalized outputs after the last step.
    pub final_loss: f64,
}

/// Tensor names of the network, in the order [`Checkpoint::tensors`] holds them: the visual
/// encoder's first ([`ENCODER_TENSORS`] of them), then the action head's.
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
/// How many of [`NAMES`] (the first) the visual feature reads: `conv1`, `conv2`, `proj`.
pub const ENCODER_TENSORS: usize = 6;
/// Normalization tensor names: low-dimensional mean and scale (`[5]`), target mean and scale
/// (`[5]`).
pub const NORM_NAMES: [&str; 4] = ["low.mean", "low.std", "target.mean", "target.std"];
/// Kernel side (= stride) of each convolution.
pub const KERNELS: [usize; 2] = [4, 2];
/// Side of the last convolution's output (32 → 8 → 4).
const LAST_SIDE: usize = IMAGE_SIDE / 8;
/// The architecture, in error messages.
const ARCHITECTURE: &str = "retrieval policy network (roboaudit.retrieval_policy.v1)";

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

/// `x · wᵀ + b` for rows `x` `[N, in]`, weight `w` `[out, in]` and bias `b` `[out]`: `[N, out]`.
///
/// # Errors
/// [`candle_core::Error`] when the shapes do not fit.
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> candle_core::Result<Tensor> {
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

/// The first layer's patches `[N·8·8, 3·4·4]` of images `[N, 3, 32, 32]` in `[0, 1]` (constant
/// during training).
///
/// # Errors
/// [`candle_core::Error`] when the images are not `[N, 3, 32, 32]`.
pub fn image_patches(images: &Tensor) -> candle_core::Result<Tensor> {
    patches(&(images - 0.5)?, KERNELS[0])
}

/// The visual feature `[N, F]` (each value ≥ 0) from the first layer's patches of `n` images
/// ([`image_patches`]) and the network's tensors `w` in [`NAMES`] order (at least the first
/// [`ENCODER_TENSORS`]): the policy encoder.
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

/// The visual feature `[N, F]` (each value ≥ 0) of images `[N, 3, 32, 32]` in `[0, 1]` (the
/// policy encoder), `w` as for [`features_of_patches`].
///
/// # Errors
/// [`candle_core::Error`] when the shapes do not fit.
pub fn features(w: &[Tensor], images: &Tensor) -> candle_core::Result<Tensor> {
    features_of_patches(w, &image_patches(images)?, images.dim(0)?)
}

/// `factor × factor` average pooling of an interleaved RGB image (`w × h` bytes, both multiples
/// of `factor ≥ 1`) into channel-major values in `[0, 1]` (`3 · (h/factor) · (w/factor)`): each
/// value the `f32` sum of its `factor²` bytes divided by `255 · factor²` (for `factor = 2`,
/// bit for bit the harness's `pixels32` values).
pub fn pool_chw(rgb: &[u8], w: usize, h: usize, factor: usize) -> Vec<f32> {
    let (ow, oh) = (w / factor, h / factor);
    let scale = (factor * factor) as f32 * 255.0;
    let mut out = vec![0.0f32; 3 * ow * oh];
    for c in 0..3 {
        for y in 0..oh {
            for x in 0..ow {
                let mut s = 0.0f32;
                for yy in factor * y..factor * (y + 1) {
                    for xx in factor * x..factor * (x + 1) {
                        s += f32::from(rgb[(yy * w + xx) * 3 + c]);
                    }
                }
                out[(c * oh + y) * ow + x] = s / scale;
            }
        }
    }
    out
}

/// The network input of `image`: `3 · side²` values in `[0, 1]`, channel-major, by [`pool_chw`]
/// of a square image whose side is a whole multiple of `side`.
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image or a pixel buffer of the wrong size;
/// [`EncoderError::ImageSize`] for an image that is not `k·side × k·side`.
pub fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
    let (w, h) = (image.width as usize, image.height as usize);
    if w == 0 || h == 0 || side == 0 || image.pixels.len() != w * h * 3 {
        return Err(EncoderError::InvalidImage(format!(
            "a {w}×{h} image with {} bytes",
            image.pixels.len()
        )));
    }
    if w != h || w % side != 0 {
        return Err(EncoderError::ImageSize {
            encoder: POLICY_ENCODER.to_owned(),
            message: format!(
                "a {w}×{h} image; the policy takes {side}×{side}, pooled exactly from a square \
                 image whose side is a multiple of {side} (the harness renders {}×{})",
                2 * side,
                2 * side
            ),
        });
    }
    Ok(pool_chw(&image.pixels, w, h, w / side))
}

/// A checked checkpoint folder in memory.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// `config.json`.
    pub config: PolicyConfig,
    /// The tensors of [`NAMES`], in that order, `f32`, of the shapes [`shapes`] gives for
    /// `config.train`.
    pub tensors: Vec<Tensor>,
    /// The tensors of [`NORM_NAMES`], in that order, `f32`, each `[5]`.
    pub norm: [Tensor; 4],
    /// First 16 hex digits of the SHA-256 of `model.safetensors`.
    pub weights_hash: String,
}

fn config_error(path: &Path, message: String) -> EncoderError {
    EncoderError::PolicyConfig {
        path: path.to_path_buf(),
        message,
    }
}

/// Reads and checks `dir/config.json`: it parses as [`PolicyConfig`], has [`CONFIG_SCHEMA`], the
/// input and output sizes this build reads, and training settings in range.
///
/// # Errors
/// [`EncoderError::Io`] naming the file when it cannot be read; [`EncoderError::PolicyConfig`]
/// naming it otherwise.
pub fn read_config(dir: &Path) -> Result<PolicyConfig, EncoderError> {
    let cpath = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&cpath).map_err(|e| EncoderError::io("read", &cpath, e))?;
    let config: PolicyConfig = serde_json::from_str(&text).map_err(|e| {
        config_error(
            &cpath,
            format!(
                "not a retrieval policy config (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    if config.schema != CONFIG_SCHEMA {
        return Err(config_error(
            &cpath,
            format!("schema `{}`, expected `{CONFIG_SCHEMA}`", config.schema),
        ));
    }
    let sizes = (config.image_side, config.low_dim, config.target_dim);
    if sizes != (IMAGE_SIDE, LOW_DIM, TARGET_DIM) {
        return Err(config_error(
            &cpath,
            format!(
                "image side, low-dimensional input and output sizes {sizes:?}, this build reads \
                 ({IMAGE_SIDE}, {LOW_DIM}, {TARGET_DIM})"
            ),
        ));
    }
    config.train.validate().map_err(|e| match e {
        EncoderError::InvalidConfig(m) => config_error(&cpath, m),
        other => other,
    })?;
    Ok(config)
}

/// Loads and checks the checkpoint folder `dir` ([`read_config`], then `model.safetensors`:
/// every tensor of [`NAMES`] and [`NORM_NAMES`] present, of its shape, `f32`, finite, and no
/// other tensor).
///
/// # Errors
/// As [`read_config`]; [`EncoderError::Io`] when the weights file cannot be read;
/// [`EncoderError::NotSafetensors`]; [`EncoderError::WrongArchitecture`] when it has no
/// `conv1.weight` (another model); [`EncoderError::MissingTensor`],
/// [`EncoderError::TensorShape`] (sizes other than `config.json` declares),
/// [`EncoderError::TensorType`], [`EncoderError::UnexpectedTensor`], [`EncoderError::Weights`]
/// (a tensor not `f32`, or holding a non-finite value), each naming the file and tensor.
pub fn load_checkpoint(dir: &Path) -> Result<Checkpoint, EncoderError> {
    let config = read_config(dir)?;
    let wpath = dir.join(WEIGHTS_FILE);
    let file = weights::read(&wpath)?;
    let st = weights::parse(&wpath, &file.bytes)?;
    weights::require_marker(&wpath, &weights::shapes(&st), NAMES[0], ARCHITECTURE)?;
    let expected: Vec<(String, Vec<usize>)> = NAMES
        .iter()
        .zip(shapes(&config.train))
        .chain(
            NORM_NAMES
                .iter()
                .zip([LOW_DIM, LOW_DIM, TARGET_DIM, TARGET_DIM].map(|n| vec![n])),
        )
        .map(|(n, s)| ((*n).to_owned(), s))
        .collect();
    let t = &config.train;
    let sizes = format!(
        "channels {:?}, feature {}, hidden {} from {CONFIG_FILE}",
        t.channels, t.feature, t.hidden
    );
    let mut map =
        weights::check_and_load(&wpath, &st, &expected, &|_| false, ARCHITECTURE, &sizes)?;
    let fault = |name: &str, message: String| EncoderError::Weights {
        path: wpath.clone(),
        tensor: Some(name.to_owned()),
        message,
    };
    for (name, view) in st.tensors() {
        if DType::try_from(view.dtype()).ok() != Some(DType::F32) {
            return Err(fault(
                &name,
                format!("tensor \"{name}\" is {:?}, expected f32", view.dtype()),
            ));
        }
    }
    let mut take = |name: &str| -> Result<Tensor, EncoderError> {
        let t = map
            .remove(name)
            .ok_or_else(|| fault(name, format!("tensor \"{name}\" is missing")))?;
        let v = t.flatten_all()?.to_vec1::<f32>()?;
        if v.iter().any(|x| !x.is_finite()) {
            return Err(fault(
                name,
                format!("tensor \"{name}\" holds a non-finite value"),
            ));
        }
        Ok(t)
    };
    let tensors = NAMES.iter().map(|n| take(n)).collect::<Result<_, _>>()?;
    let norm = NORM_NAMES.map(&mut take);
    let [a, b, c, d] = norm;
    Ok(Checkpoint {
        config,
        tensors,
        norm: [a?, b?, c?, d?],
        weights_hash: file.hash,
    })
}

/// The visual part of a loaded policy: the first [`ENCODER_TENSORS`] tensors of [`NAMES`].
#[derive(Debug)]
pub struct PolicyNet {
    tensors: Vec<Tensor>,
    feature: usize,
}

impl Backbone for PolicyNet {
    const LABEL: &'static str = "policy ";

    fn dim(&self) -> usize {
        self.feature
    }

    fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
        preprocess(image, side)
    }

    fn forward(&self, x: &Tensor) -> Result<Vec<f32>, EncoderError> {
        Ok(features(&self.tensors, x)?
            .flatten_all()?
            .to_vec1::<f32>()?)
    }
}

/// The policy encoder of one checkpoint folder: [`TrainConfig::feature`] values (each ≥ 0) per
/// `k·32 × k·32` image.
pub type PolicyEncoder = Frozen<PolicyNet>;

impl Frozen<PolicyNet> {
    /// Loads the checkpoint folder `dir` ([`load_checkpoint`]: the whole checkpoint is checked,
    /// head included) and keeps its visual part. The id is `policy_encoder-<folder name>-32`, the
    /// weights hash that of `model.safetensors`.
    ///
    /// # Errors
    /// As [`load_checkpoint`]; [`EncoderError::Io`] (`read`) when `dir` is not a folder.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, EncoderError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(EncoderError::io(
                "read",
                dir,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not a policy checkpoint folder (model.safetensors + config.json)",
                ),
            ));
        }
        let ck = load_checkpoint(dir)?;
        let name = dir.file_name().map_or_else(
            || "policy".to_owned(),
            |n| weights::file_safe(&n.to_string_lossy()),
        );
        let mut tensors = ck.tensors;
        tensors.truncate(ENCODER_TENSORS);
        Ok(Frozen {
            path: PathBuf::from(dir),
            side: IMAGE_SIDE,
            id: format!("{POLICY_ENCODER}-{name}-{IMAGE_SIDE}"),
            weights_hash: ck.weights_hash,
            model: PolicyNet {
                tensors,
                feature: ck.config.train.feature,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use candle_core::Device;

    #[test]
    fn pooling_is_channel_major_means() {
        // 2×2 image → one pixel per channel: the mean of the four inputs.
        let rgb = [0u8, 10, 255, 255, 10, 255, 0, 10, 0, 255, 10, 0];
        let out = pool_chw(&rgb, 2, 2, 2);
        assert_eq!(out.len(), 3);
        assert!((out[0] - 0.5).abs() < 1e-6);
        assert!((out[1] - 10.0 / 255.0).abs() < 1e-6);
        assert!((out[2] - 0.5).abs() < 1e-6);
        // Factor 1 is the bytes scaled, channel-major.
        assert_eq!(pool_chw(&[255, 0, 51], 1, 1, 1), vec![1.0, 0.0, 0.2]);
    }

    #[test]
    fn preprocess_takes_square_multiples_of_the_input_side_only() {
        let img = |w: u32, h: u32| Rgb8Image {
            width: w,
            height: h,
            pixels: vec![7; (w * h * 3) as usize],
        };
        assert_eq!(preprocess(&img(64, 64), 32).unwrap().len(), 3 * 32 * 32);
        assert_eq!(preprocess(&img(32, 32), 32).unwrap().len(), 3 * 32 * 32);
        for (w, h) in [(48, 48), (64, 32), (24, 16)] {
            let e = preprocess(&img(w, h), 32).unwrap_err();
            assert!(
                matches!(e, EncoderError::ImageSize { .. }) && e.is_invalid_input(),
                "{w}×{h}: {e}"
            );
        }
    }

    #[test]
    fn patch_convolution_equals_candle_conv2d() {
        // Kernel = stride: the reshape-and-multiply path gives what a strided convolution gives.
        let t = TrainConfig {
            channels: [3, 2],
            ..TrainConfig::default()
        };
        let w: Vec<Tensor> = shapes(&t)
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let n: usize = s.iter().product();
                let v: Vec<f32> = (0..n)
                    .map(|j| (((j * 31 + i * 7) % 17) as f32 - 8.0) / 40.0)
                    .collect();
                Tensor::from_vec(v, s.as_slice(), &Device::Cpu).unwrap()
            })
            .collect();
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
        assert_eq!(got.dims(), &[2, t.feature]);
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
