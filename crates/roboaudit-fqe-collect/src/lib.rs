//! FQE ground truth on the testbed (SPEC.md §3, seed 003 RoboFQE): a push-suite LeRobot dataset from
//! a behaviour-policy mixture, target policies of designed quality, their actions at every dataset
//! frame (policy-actions files) and their true values by rollouts.
//!
//! Target policies are push controllers that are pure functions of the recorded observation
//! (proprioception and block poses) plus noise keyed by `(seed, stream, frame, sample)`: their action
//! at a dataset frame is exactly what they would do there when driving.
//!
//! Target policies may also be served over openpi's websocket protocol ([`served`],
//! [`collect_with`]): rolled out from the same initial states and queried at every dataset frame
//! with the same observation. A collection is resumable ([`open_work`]).
//!
//! ```no_run
//! use roboaudit_fqe_collect::{CollectConfig, collect::collect};
//! let cfg = CollectConfig::small().check()?;
//! let summary = collect(&cfg, std::path::Path::new("out"), &|_, _, _| {})?;
//! for p in &summary.truth.policies {
//!     println!("{}: V = {:.3}, SR = {:.3}", p.policy, p.values.suite_v_pi, p.values.suite_success_rate);
//! }
//! # Ok::<(), roboaudit_fqe_collect::CollectError>(())
//! ```

pub mod actions_file;
pub mod behaviour;
pub mod collect;
pub mod config;
pub mod dataset;
pub mod episodes;
pub mod error;
pub mod ground_truth;
pub mod obs;
pub mod policy;
pub mod request;
pub mod scenes;
pub mod served;
pub mod shard;
pub mod stamp;
pub mod targets;

pub use collect::{
    CollectSummary, Resumed, RunIdentity, Stage, WorkState, collect, collect_with, open_work,
};
pub use config::{CheckedConfig, CollectConfig, MAX_EPISODES, MAX_ROLLOUTS, MAX_SAMPLES};
pub use error::{CollectError, Result};
pub use ground_truth::GroundTruthFile;
pub use obs::{NoiseKey, Observation};
pub use policy::{PushParams, noisy_push_action, push_action};
pub use served::{ServedInfo, ServedTarget};
pub use targets::{TargetPolicy, standard_targets};
