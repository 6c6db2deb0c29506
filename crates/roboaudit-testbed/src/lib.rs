//! Deterministic MuJoCo tabletop testbed of roboaudit.
//!
//! A 7-DoF arm whose hand is welded to a mocap target (end-effector pose control) with a parallel-jaw
//! gripper, blocks, trays, pads, a latched spring door and obstacles. Tasks: `stack`, `door`, the memory
//! tasks `put_back`, `swap`, `rearrange`, and a 12-task language suite of pick-place and push. Scenes
//! combine a physical [`scene::Layout`] (levels 0–3) with an [`scene::Appearance`] that never touches
//! physics. Episodes are bit-deterministic given scene, seed and actions, and can be snapshotted and
//! restored exactly. Source: seeds 000 §II (retrieval-audit testbed) and 002 §IV-A (memory tasks).
//!
//! ```no_run
//! use roboaudit_testbed::{Episode, EpisodeConfig, Expert, ExpertParams, TaskKind};
//! let task = TaskKind::Stack;
//! let mut ep = Episode::from_task(task, &EpisodeConfig { seed: 1, ..EpisodeConfig::default() })?;
//! let mut expert = Expert::new(task, ExpertParams::default(), 1);
//! while !ep.done() {
//!     let a = expert.act(&ep);
//!     ep.step(&a)?;
//! }
//! println!("success: {}", ep.success());
//! # Ok::<(), roboaudit_testbed::TestbedError>(())
//! ```

pub mod episode;
pub mod error;
pub mod expert;
pub mod geom;
pub mod mjcf;
pub mod predicates;
pub mod record;
pub mod render;
pub mod replay;
pub mod request;
mod request_summary;
pub mod scene;
pub mod world;

pub use episode::{Episode, EpisodeConfig, Privileged, Proprio, Snapshot, StepOutcome};
pub use error::{Result, TestbedError};
pub use expert::{Anchor, Expert, ExpertParamError, ExpertParams};
pub use record::{
    EpisodeRecord, Frame, WriteOptions, record_episode, record_expert_episode, write_lerobot_v3,
    write_lerobot_v3_with,
};
pub use render::{CameraKind, Image, SceneRenderer};
pub use replay::{Experience, ReplayPolicy, Retarget, Waypoint, execute};
pub use roboaudit_types::task::{self, Color, Family, PushDir, TaskKind, UnknownTask};
pub use scene::{Appearance, Layout, Perturbation, Scene, SceneSet, SceneSetSpec};
pub use world::{Action, CompiledScene, Pose, World};
