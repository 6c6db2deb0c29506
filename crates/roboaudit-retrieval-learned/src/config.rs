//! A policy checkpoint's configuration (`config.json` beside `model.safetensors`): the declared
//! observation and action layout, the network sizes and the training settings.

use serde::{Deserialize, Serialize};

use crate::error::{PolicyError, Result};

/// Schema tag of [`PolicyConfig`].
pub const CONFIG_SCHEMA: &str = "roboaudit.retrieval_policy.v1";
/// File name of the configuration inside a checkpoint folder.
pub const CONFIG_FILE: &str = "config.json";
/// File name of the weights inside a checkpoint folder.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// Side (pixels) of the scene-camera render, 2×2 average-pooled to [`IMAGE_SIDE`].
pub const RENDER_SIDE: usize = 64;
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

/// Network sizes and behaviour-cloning settings.
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
    /// The randomization of `task` (`stack`, `door`): 4 appearance draws each; Stack blocks
    /// jittered by up to 1 cm (its demonstrator plans every macro from the blocks' measured
    /// poses), Door none (README: why).
    pub fn for_task(task: &str) -> DomainRandomization {
        DomainRandomization {
            draws: 4,
            layout_jitter: if task == "stack" { 0.01 } else { 0.0 },
        }
    }

    /// Checks both fields against their documented ranges.
    ///
    /// # Errors
    /// [`PolicyError::InvalidConfig`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        if !(1..=64).contains(&self.draws) {
            return Err(PolicyError::InvalidConfig(format!(
                "dr.draws must be in 1..=64, got {}",
                self.draws
            )));
        }
        if !(0.0..=0.03).contains(&self.layout_jitter) {
            return Err(PolicyError::InvalidConfig(format!(
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
    /// The Policy+DR settings of `task` (`stack`, `door`): the default network and 2500 Adam
    /// steps in seeded mini-batches of 64 samples (the demonstration and its re-runs hold about
    /// five times the samples of one demonstration; README: measured fit and training time),
    /// with [`DomainRandomization::for_task`].
    pub fn policy_dr(task: &str) -> TrainConfig {
        TrainConfig {
            steps: 2500,
            batch: Some(64),
            dr: Some(DomainRandomization::for_task(task)),
            ..TrainConfig::default()
        }
    }

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// [`PolicyError::InvalidConfig`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(PolicyError::InvalidConfig(m));
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
