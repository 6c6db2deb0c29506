//! Collection settings: an unchecked [`CollectConfig`] (serde, presets) and the validated
//! [`CheckedConfig`] the pipeline trusts.

use crate::error::{CollectError, Result};
use crate::targets::{TargetPolicy, standard_targets};
use serde::{Deserialize, Serialize};

/// Settings of `roboaudit fqe collect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectConfig {
    /// Dataset episodes (≥ 4, so that every push task appears; default 750 as in seed 003 §4.1).
    pub episodes: usize,
    /// Ground-truth rollouts per target policy and task (≥ 1; default 100 as in seed 003 §4.4).
    pub rollouts: usize,
    /// Seed of every draw (scenes, episode noise, behaviour and target-policy noise).
    pub seed: u64,
    /// Side of the square scene-camera images in pixels (16..=128; default 64).
    pub image_size: usize,
    /// Discount per frame for `V^π = E[γ^{T−1} · success]` (in `(0, 1]`; default 0.99, the value of
    /// seed 003's LIBERO configuration).
    pub gamma: f64,
    /// Action samples per frame in the policy-actions file of a stochastic target policy (≥ 1;
    /// default 8); deterministic policies get one.
    pub samples: usize,
    /// Layout level of the initial scenes (0..=3; default 1: blocks displaced up to 3.5 cm and
    /// turned up to 0.4 rad, no obstacles).
    pub layout_level: u8,
    /// Write the dataset's camera as MP4 video (LeRobot's encoder settings: AV1 from
    /// `libsvtav1` when linked, else H.264) instead of PNG bytes (default false). Part of the run's
    /// identity; left out of the serialized settings when false, so PNG runs keep the
    /// fingerprint they had before the field existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub video: bool,
}

impl Default for CollectConfig {
    fn default() -> Self {
        CollectConfig {
            episodes: 750,
            rollouts: 100,
            seed: 0,
            image_size: 64,
            gamma: 0.99,
            samples: 8,
            layout_level: 1,
            video: false,
        }
    }
}

/// Most dataset episodes one collection records.
pub const MAX_EPISODES: usize = 100_000;
/// Most ground-truth rollouts per target policy and task.
pub const MAX_ROLLOUTS: usize = 100_000;
/// Most action samples per frame of a stochastic target policy: the bound `fqe actions` puts
/// on a served policy's samples.
pub use roboaudit_policy_client::summary::MAX_SAMPLES;

impl CollectConfig {
    /// A few-second configuration for tests and demos: 8 episodes, 3 rollouts, 32-pixel images,
    /// 2 samples.
    pub fn small() -> Self {
        CollectConfig {
            episodes: 8,
            rollouts: 3,
            image_size: 32,
            samples: 2,
            ..CollectConfig::default()
        }
    }

    /// Validates every field and fixes the target-policy set ([`standard_targets`]): episodes
    /// in 4..=[`MAX_EPISODES`], rollouts in 1..=[`MAX_ROLLOUTS`], samples in
    /// 1..=[`MAX_SAMPLES`] (a typo of a few digits would otherwise fill the memory before
    /// anything is written).
    ///
    /// # Errors
    /// [`CollectError::InvalidConfig`] naming the first field out of range.
    pub fn check(&self) -> Result<CheckedConfig> {
        let bad = |m: String| Err(CollectError::InvalidConfig(m));
        if self.episodes < 4 {
            return bad(format!(
                "episodes = {} (need at least 4, one per push task)",
                self.episodes
            ));
        }
        if self.episodes > MAX_EPISODES {
            return bad(format!(
                "episodes = {} (at most {MAX_EPISODES})",
                self.episodes
            ));
        }
        if self.rollouts == 0 {
            return bad("rollouts = 0 (need at least 1 per policy and task)".into());
        }
        if self.rollouts > MAX_ROLLOUTS {
            return bad(format!(
                "rollouts = {} (at most {MAX_ROLLOUTS} per policy and task)",
                self.rollouts
            ));
        }
        if !(16..=128).contains(&self.image_size) {
            return bad(format!("image size {} is not in 16..=128", self.image_size));
        }
        if self.video && self.image_size % 2 == 1 {
            return bad(format!(
                "image size {} is odd; video (yuv420p) needs an even size",
                self.image_size
            ));
        }
        if !roboaudit_fqe::bounds_settings::is_discount(self.gamma) {
            return bad(format!("gamma {} is not in (0, 1]", self.gamma));
        }
        if self.samples == 0 {
            return bad("samples = 0 (need at least 1)".into());
        }
        if self.samples > MAX_SAMPLES {
            return bad(format!(
                "samples = {} (at most {MAX_SAMPLES})",
                self.samples
            ));
        }
        if self.layout_level > 3 {
            return bad(format!(
                "layout level {} is not in 0..=3",
                self.layout_level
            ));
        }
        let targets = standard_targets();
        for t in &targets {
            t.params
                .check()
                .map_err(|m| CollectError::InvalidConfig(format!("target {}: {m}", t.name)))?;
        }
        Ok(CheckedConfig {
            config: self.clone(),
            targets,
        })
    }
}

/// A validated configuration with its target policies.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedConfig {
    /// The settings.
    pub config: CollectConfig,
    /// Target policies, in output order.
    pub targets: Vec<TargetPolicy>,
}

impl CheckedConfig {
    /// Samples per frame of a target policy's actions file: `samples` when it is stochastic, else 1.
    pub fn samples_for(&self, t: &TargetPolicy) -> usize {
        if t.is_stochastic() {
            self.config.samples
        } else {
            1
        }
    }
}
