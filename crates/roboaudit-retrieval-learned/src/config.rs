//! A policy checkpoint's configuration (`config.json` beside `model.safetensors`): the declared
//! observation and action layout, the network sizes and the training settings. The types and
//! their checks live in [`roboaudit_encoders::policy`] (the `embed` command's policy encoder
//! reads the same file, as one type); this module re-exports them and adds what only training
//! needs: the render side and each mechanism's settings.

pub use roboaudit_encoders::policy::{
    CONFIG_FILE, CONFIG_SCHEMA, DomainRandomization, IMAGE_SIDE, LOW_DIM, PolicyConfig, TARGET_DIM,
    TrainConfig, WEIGHTS_FILE,
};

/// Side (pixels) of the scene-camera render, 2×2 average-pooled to [`IMAGE_SIDE`].
pub const RENDER_SIDE: usize = 64;

/// The domain randomization of `task` (`stack`, `door`): 4 appearance draws each; Stack blocks
/// jittered by up to 1 cm (its demonstrator plans every macro from the blocks' measured poses),
/// Door none (README: why).
pub fn dr_for_task(task: &str) -> DomainRandomization {
    DomainRandomization {
        draws: 4,
        layout_jitter: if task == "stack" { 0.01 } else { 0.0 },
    }
}

/// The Policy+DR settings of `task` (`stack`, `door`): the default network and 2500 Adam steps in
/// seeded mini-batches of 64 samples (the demonstration and its re-runs hold about five times the
/// samples of one demonstration; README: measured fit and training time), with [`dr_for_task`].
pub fn policy_dr(task: &str) -> TrainConfig {
    TrainConfig {
        steps: 2500,
        batch: Some(64),
        dr: Some(dr_for_task(task)),
        ..TrainConfig::default()
    }
}
