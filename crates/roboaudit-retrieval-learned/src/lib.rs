//! Policy reuse for the retrieval audit (seed 000 §II, "Policy" and "Policy+DR"): every library
//! experience becomes a behaviour-cloned closed-loop image policy trained on that experience's
//! own demonstration (Policy+DR: and its domain-randomized re-runs), run with rendering at every
//! step; a policy that does not reproduce its demonstration in its own base scene is rejected
//! like a failed recording (seed 000 §VII).
//!
//! - [`frames`]: observations (32×32 RGB scene camera, proprioception, episode clock) and the
//!   samples of a demonstration, re-run with rendering and checked against the recording.
//! - [`dr`]: the demonstrations of a Policy+DR policy, re-recorded under seeded appearance draws
//!   and layout jitter.
//! - [`model`]: three strided convolutions, a visual feature (the policy encoder), a two-layer
//!   head predicting the commanded pose after the step.
//! - [`train()`]: Adam (full batch or seeded mini-batches) on normalized targets; CPU, `f32`,
//!   seeded (same seed → same weights bytes).
//! - [`checkpoint`]: `model.safetensors` + `config.json`, checked on load, SHA-256 of each.
//! - [`policy`]: closed-loop execution.
//! - [`reuse`]: the `policy` and `policy-dr` mechanisms of `retrieval collect` (training,
//!   own-base acceptance, execution in every query scene).
//! - [`request`]: the `retrieval collect` pipeline with its mechanism chosen, and the policies'
//!   own-base checks as the CLI prints them.

pub mod checkpoint;
pub mod config;
pub mod dr;
pub mod error;
pub mod frames;
pub mod model;
pub mod policy;
pub mod request;
pub mod reuse;
pub mod train;

pub use config::{DomainRandomization, PolicyConfig, TrainConfig};
pub use error::{PolicyError, Result};
pub use frames::{Camera, Observation, Sample, demonstration, with_camera};
pub use policy::ImagePolicy;
pub use reuse::{POLICIES_DIR, POLICY_ENCODER, PolicyReuse};
pub use train::{Provenance, Trained, train};
