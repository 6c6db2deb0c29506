//! Settings of neural FQE ([`NeuralFqeConfig`]) and the output head of the Q network.

use serde::{Deserialize, Serialize};

use crate::FqeError;
use crate::error::Setting;

/// The last layer of the Q network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QHead {
    /// An unbounded linear output. The default of reports written before the head was a setting
    /// (their fits used it).
    #[default]
    Linear,
    /// A logistic output `σ(z) ∈ (0, 1)`. Every true `Q` of a terminal success reward discounted by
    /// `γ ≤ 1` lies in `[0, 1]`, so this restricts the model class to values that can be right,
    /// without touching the Bellman target of SPEC §3: where the target policy's actions leave
    /// the data, a linear head extrapolates without bound and the bootstrapped targets feed the
    /// error back (the push suite's `far_from_data` policy reached 10⁷), while a logistic head
    /// cannot leave the range of returns.
    Sigmoid,
}

/// Neural FQE settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeuralFqeConfig {
    /// Discount `γ` in `[0, 1]`.
    pub gamma: f64,
    /// Gradient steps; with `auto_steps`, the cap.
    pub steps: usize,
    /// Stop each fit when its estimate has settled (see [`super::SETTLE_WINDOW`]: enough Bellman
    /// backups for the median episode and a flat learning curve), at most `steps`. The learning
    /// rate still decays over `steps`. False when the field is missing.
    #[serde(default)]
    pub auto_steps: bool,
    /// Transitions per mini-batch.
    pub batch_size: usize,
    /// Width of the hidden layers.
    pub hidden: usize,
    /// Embedding width of each input part but the time input.
    pub part_embedding: usize,
    /// Embedding width of the time input ([`crate::load::TIME_PART`], one value wide); `None`,
    /// and a missing field in reports written before the setting, embeds it at
    /// `part_embedding` like any part. One number needs few units: at 16 the push suite's first
    /// dense layer reads 192 values where 64 made it 240 (the crate README).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_embedding: Option<usize>,
    /// Embedding width of the action.
    pub action_embedding: usize,
    /// Embedding width of the task.
    pub task_embedding: usize,
    /// AdamW learning rate at step 0.
    pub learning_rate: f64,
    /// Learning rate at the last step as a fraction of `learning_rate` (linear decay), in `(0, 1]`.
    pub final_lr_fraction: f64,
    /// AdamW decoupled weight decay.
    pub weight_decay: f64,
    /// Target network copy period `N` in steps (used when `target_tau` is 0). The bootstrapped
    /// target is used as SPEC §3 defines it, not clipped to `[0, 1]`; estimates outside that
    /// range are reported in [`crate::FqeReport::notes`] instead.
    pub target_update_every: usize,
    /// Polyak rate `τ ∈ [0, 1]`: when > 0 the target network moves every step,
    /// `θ̄ ← (1 − τ) θ̄ + τ θ`, instead of being copied every `target_update_every` steps. 0 when
    /// the field is missing.
    #[serde(default)]
    pub target_tau: f64,
    /// Learning-curve point period in steps.
    pub curve_every: usize,
    /// Seed of initialization and mini-batch draws.
    pub seed: u64,
    /// Output head of the Q network ([`QHead::Linear`] when the field is missing).
    #[serde(default)]
    pub head: QHead,
}

/// `roboaudit fqe fit`'s settings, but for the target period, which the CLI derives from the
/// steps and the median episode ([`super::target_period`]; 100 here, its value for the push
/// suite). Two hidden layers of 128 with 512-row batches: on the testbed
/// push suite (3 seeds, `--steps auto`) this was more accurate than 256 units with 256-row
/// batches (median ARE 8.7 % against 11.3 %, the in-support policies in the same order) for about
/// half the CPU time; a narrower network on the same batches ranked two policies wrong. The
/// action is embedded 64 wide: 32 pulled the estimates further toward the dataset's average
/// (push suite in support 8.3 % against 7.6 %, Meta-World 18.7 % against 15.7 %) for 13–17 % fewer
/// multiply-adds a step (the crate README, "Measured on the testbed push suite").
impl Default for NeuralFqeConfig {
    fn default() -> Self {
        Self {
            gamma: 0.99,
            steps: 20_000,
            auto_steps: false,
            batch_size: 512,
            hidden: 128,
            part_embedding: 64,
            time_embedding: Some(16),
            action_embedding: 64,
            task_embedding: 16,
            learning_rate: 1e-3,
            final_lr_fraction: 0.05,
            weight_decay: 1e-4,
            target_update_every: 100,
            target_tau: 0.0,
            curve_every: 500,
            seed: 0,
            head: QHead::Sigmoid,
        }
    }
}

impl NeuralFqeConfig {
    /// Embedding width of the input part named `name`: `time_embedding` (or `part_embedding`
    /// when unset) for [`crate::load::TIME_PART`], `part_embedding` for any other.
    pub fn embedding_of(&self, name: &str) -> usize {
        if name == crate::load::TIME_PART {
            self.time_embedding.unwrap_or(self.part_embedding)
        } else {
            self.part_embedding
        }
    }

    /// Checks ranges.
    ///
    /// # Errors
    /// [`FqeError::Setting`] for `γ ∉ (0, 1]`, steps, batch rows or target period outside
    /// `1..=`[`crate::bounds_settings::MAX_STEPS`] (batch: [`crate::bounds_settings::MAX_BATCH`]),
    /// hidden width outside `1..=`[`crate::bounds_settings::MAX_HIDDEN`], batch rows × hidden
    /// width over [`crate::bounds_settings::MAX_BATCH_WIDTH`] (named as the batch size),
    /// `τ ∉ [0, 1]` or a learning rate `∉ (0, 1]`; [`FqeError::InvalidConfig`] for a zero
    /// embedding width or curve period, `final_lr_fraction ∉ (0, 1]` or a negative weight decay.
    pub fn validate(&self) -> Result<(), FqeError> {
        use crate::bounds_settings::{
            MAX_BATCH, MAX_BATCH_WIDTH, MAX_HIDDEN, MAX_STEPS, check_count, check_discount,
            check_unit,
        };
        let bad = |m: &str| Err(FqeError::InvalidConfig(m.to_owned()));
        check_discount(Setting::Gamma, self.gamma)?;
        let steps = if self.auto_steps {
            Setting::MaxSteps
        } else {
            Setting::Steps
        };
        check_count(steps, self.steps, 1, MAX_STEPS)?;
        check_count(Setting::BatchSize, self.batch_size, 1, MAX_BATCH)?;
        check_count(Setting::Hidden, self.hidden, 1, MAX_HIDDEN)?;
        if self.batch_size * self.hidden > MAX_BATCH_WIDTH {
            return Err(FqeError::Setting {
                setting: Setting::BatchSize,
                message: format!(
                    "{} rows × {} hidden units is over {MAX_BATCH_WIDTH}, the most a fit's \
                     activation buffers hold (lower the batch size or the hidden width)",
                    self.batch_size, self.hidden
                ),
            });
        }
        check_count(
            Setting::TargetUpdate,
            self.target_update_every,
            1,
            MAX_STEPS,
        )?;
        check_unit(Setting::TargetTau, self.target_tau)?;
        if !(self.learning_rate > 0.0 && self.learning_rate <= 1.0) {
            return Err(FqeError::Setting {
                setting: Setting::LearningRate,
                message: format!(
                    "{} is out of range (0, 1]",
                    crate::number::compact(self.learning_rate)
                ),
            });
        }
        if self.part_embedding == 0
            || self.time_embedding == Some(0)
            || self.action_embedding == 0
            || self.task_embedding == 0
            || self.curve_every == 0
        {
            return bad("sizes and periods must be > 0");
        }
        if !(self.final_lr_fraction > 0.0 && self.final_lr_fraction <= 1.0) {
            return bad("final_lr_fraction must be in (0, 1]");
        }
        if self.weight_decay.is_nan() || self.weight_decay < 0.0 {
            return bad("weight_decay must be >= 0");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_input_has_its_own_embedding_width() {
        let c = NeuralFqeConfig::default();
        assert_eq!(c.embedding_of(crate::load::TIME_PART), 16);
        assert_eq!(c.embedding_of("observation.state"), 64);
        let unset = NeuralFqeConfig {
            time_embedding: None,
            ..c.clone()
        };
        assert_eq!(unset.embedding_of(crate::load::TIME_PART), 64);
        let zero = NeuralFqeConfig {
            time_embedding: Some(0),
            ..c
        };
        assert!(matches!(zero.validate(), Err(FqeError::InvalidConfig(_))));
    }

    #[test]
    fn reports_without_the_setting_read_as_unset_and_round_trip() {
        let mut v = serde_json::to_value(NeuralFqeConfig::default()).unwrap();
        assert_eq!(v["time_embedding"], 16);
        v.as_object_mut().unwrap().remove("time_embedding");
        let old: NeuralFqeConfig = serde_json::from_value(v).unwrap();
        assert_eq!(old.time_embedding, None);
        let written = serde_json::to_value(&old).unwrap();
        assert!(written.get("time_embedding").is_none());
    }
}
