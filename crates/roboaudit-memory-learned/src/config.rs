//! The checkpoint's configuration (`config.json` beside `model.safetensors`): architecture,
//! task, training settings and the registered qualification rate.

use roboaudit_memory_harness::FeatureLayout;
use roboaudit_testbed::TaskKind;
use serde::{Deserialize, Serialize};

use crate::error::LearnedError;

/// Schema tag of [`LearnedConfig`].
pub const CONFIG_SCHEMA: &str = "roboaudit.learned_memory.v1";
/// File name of the configuration inside a checkpoint folder.
pub const CONFIG_FILE: &str = "config.json";
/// File name of the weights inside a checkpoint folder.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// File name of the cached qualification result inside a checkpoint folder.
pub const QUALIFICATION_FILE: &str = "qualification.json";

/// Learned memory-policy family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// A GRU over the observation stream; memory = its hidden state.
    Recurrent,
    /// Mem-0 style (seed 002 §IV-A, §IV-C2): a protected anchor embedding of the first
    /// observation and a window of the most recent observation embeddings, attended by the
    /// present; memory = components `anchor` and `window`.
    AnchorWindow,
}

impl Family {
    /// `recurrent` or `anchor-window`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Recurrent => "recurrent",
            Family::AnchorWindow => "anchor-window",
        }
    }

    /// Parses [`Family::name`].
    ///
    /// # Errors
    /// [`LearnedError::InvalidConfig`] listing the valid names.
    pub fn parse(s: &str) -> Result<Family, LearnedError> {
        match s.trim() {
            "recurrent" => Ok(Family::Recurrent),
            "anchor-window" => Ok(Family::AnchorWindow),
            other => Err(LearnedError::InvalidConfig(format!(
                "unknown family `{other}`; valid: recurrent, anchor-window"
            ))),
        }
    }
}

/// Behaviour-cloning settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Expert demonstrations to record (≥ 1; those that never reach the present are dropped).
    pub demos: usize,
    /// Optimizer steps (≥ 1), each over every demonstration (full batch).
    pub steps: usize,
    /// Seed of the demonstrations' scenes and of the weight initialization.
    pub seed: u64,
    /// AdamW learning rate (> 0, finite).
    pub lr: f64,
    /// Memory width (1 to 1024): the GRU's hidden size (recurrent), the observation
    /// embedding's width `D` (anchor-window).
    pub hidden: usize,
    /// Anchor-window: observation embeddings the window keeps (`W`, 1 to 256); unused by the
    /// recurrent family. 8 when `config.json` omits it (recurrent checkpoints need none).
    #[serde(default = "default_window")]
    pub window: usize,
    /// Width of the action head's hidden layer (1 to 4096).
    pub head: usize,
    /// Actions per chunk (1 to 64).
    pub chunk_len: usize,
    /// A history observation every this many steps, as the harness plays histories (≥ 1).
    pub obs_every: usize,
    /// Layout perturbation levels cycled over demonstrations (each 0–3).
    pub layout_levels: Vec<u8>,
    /// Queries recorded per demonstration after the present (≥ 1).
    pub max_queries: usize,
}

fn default_window() -> usize {
    8
}

impl Default for TrainConfig {
    /// 64 demonstrations, 300 steps, seed 0, learning rate 3·10⁻³, hidden 64, window 8, head 128,
    /// 12-action chunks, an observation every 4 steps (the harness's default), layout levels 0
    /// and 1, 16 queries.
    fn default() -> Self {
        TrainConfig {
            demos: 64,
            steps: 300,
            seed: 0,
            lr: 3e-3,
            hidden: 64,
            window: default_window(),
            head: 128,
            chunk_len: 12,
            obs_every: 4,
            layout_levels: vec![0, 1],
            max_queries: 16,
        }
    }
}

impl TrainConfig {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`LearnedError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<(), LearnedError> {
        let bad = |m: &str| Err(LearnedError::InvalidConfig(m.to_owned()));
        if self.demos == 0 || self.demos > 100_000 {
            return bad("demos must be in 1..=100000");
        }
        if self.steps == 0 || self.steps > 1_000_000 {
            return bad("steps must be in 1..=1000000");
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr must be finite and > 0");
        }
        if !(1..=1024).contains(&self.hidden) || !(1..=4096).contains(&self.head) {
            return bad("hidden must be in 1..=1024 and head in 1..=4096");
        }
        if !(1..=256).contains(&self.window) {
            return bad("window must be in 1..=256");
        }
        if !(1..=64).contains(&self.chunk_len) {
            return bad("chunk_len must be in 1..=64");
        }
        if self.obs_every == 0 || self.max_queries == 0 {
            return bad("obs_every and max_queries must be ≥ 1");
        }
        if self.layout_levels.is_empty() || self.layout_levels.iter().any(|&l| l > 3) {
            return bad("layout_levels must be non-empty, each in 0..=3");
        }
        Ok(())
    }
}

/// Native-episode qualification settings (seed 002 §IV-A: a policy is audited only if it does
/// the task natively).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualifyConfig {
    /// Native episodes (≥ 1).
    pub episodes: usize,
    /// Registered rate: a checkpoint whose success rate is below it is refused (in [0, 1]).
    pub threshold: f64,
    /// Seed of the qualification scenes (drawn in their own stream, disjoint from
    /// demonstrations, collections and intervention studies).
    pub seed: u64,
}

impl Default for QualifyConfig {
    /// 24 episodes, registered rate 0.5, seed 0.
    fn default() -> Self {
        QualifyConfig {
            episodes: 24,
            threshold: 0.5,
            seed: 0,
        }
    }
}

/// Everything that defines a checkpoint besides its weights (`config.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearnedConfig {
    /// [`CONFIG_SCHEMA`].
    pub schema: String,
    /// The family.
    pub family: Family,
    /// The memory task it was trained on (`put_back`, `swap`, `rearrange`).
    pub task: String,
    /// Perception-vector layout of the task's scene.
    pub layout: FeatureLayout,
    /// Network input size: the perception vector plus the block–tray planar distances.
    pub input_dim: usize,
    /// Training settings.
    pub train: TrainConfig,
    /// Qualification settings (the registered rate).
    pub qualify: QualifyConfig,
    /// Demonstrations that reached the present and were used.
    pub demos_used: usize,
    /// Final training loss (mean squared error on scaled actions).
    pub final_loss: f64,
}

impl LearnedConfig {
    /// The task as a [`TaskKind`].
    ///
    /// # Errors
    /// [`LearnedError::InvalidConfig`] for an unknown name.
    pub fn task_kind(&self) -> Result<TaskKind, LearnedError> {
        TaskKind::parse(&self.task).map_err(|e| LearnedError::InvalidConfig(e.to_string()))
    }
}

/// Network input size for `layout`: `len + n_blocks · n_trays`.
pub fn input_dim(layout: &FeatureLayout) -> usize {
    layout.len() + layout.n_blocks * layout.n_trays
}
