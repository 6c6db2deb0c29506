//! Recording episodes (images as PNG bytes, proprioception, privileged state, actions, outcomes) and
//! writing them as a LeRobot v3.0 dataset ([`write_lerobot_v3`]; cameras as MP4 video with
//! [`write_lerobot_v3_with`]).

mod lerobot;

pub use lerobot::{
    DatasetSummary, FPS, VIDEO_PATH, WriteOptions, write_lerobot_v3, write_lerobot_v3_with,
};

use crate::episode::Episode;
use crate::error::Result;
use crate::expert::Expert;
use crate::render::{CameraKind, SceneRenderer};
use crate::task::TaskKind;
use crate::world::Action;

/// One recorded frame: the observation before the action, the action, and what followed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Scene-camera image, PNG bytes.
    pub image_png: Vec<u8>,
    /// Wrist-camera image, PNG bytes, when recorded.
    pub wrist_png: Option<Vec<u8>>,
    /// Proprioception ([`crate::Proprio::to_vec`], 15 values).
    pub state: Vec<f32>,
    /// Privileged state: per block position (3) and quaternion (4), then door and lever angle when
    /// there is a door.
    pub env_state: Vec<f32>,
    /// The action taken ([`Action::to_vec`], 7 values).
    pub action: Vec<f32>,
    /// 1 at the step where the episode first succeeded, else 0.
    pub reward: f32,
    /// Success after the action (latched).
    pub success: bool,
    /// Episode over after the action.
    pub done: bool,
}

/// A recorded episode.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeRecord {
    /// Task (its instruction becomes the LeRobot task string).
    pub task: TaskKind,
    /// Scene id.
    pub scene_id: String,
    /// Episode seed.
    pub seed: u64,
    /// Frames in order.
    pub frames: Vec<Frame>,
}

impl EpisodeRecord {
    /// Whether the episode succeeded.
    pub fn success(&self) -> bool {
        self.frames.last().is_some_and(|f| f.success)
    }
}

/// The proprioceptive state of the episode's present as a frame records it (`observation.state`:
/// the proprio vector as `f32`).
#[must_use]
pub fn recorded_state(ep: &Episode) -> Vec<f32> {
    ep.proprio()
        .to_vec()
        .into_iter()
        .map(|x| x as f32)
        .collect()
}

/// The object state of the episode's present as a frame records it
/// (`observation.environment_state`, `f32`): each block's position (m) and quaternion
/// (w, x, y, z), 7 values a block in scene order, then the door and lever angles (rad) on the
/// articulated tasks.
#[must_use]
pub fn env_state(ep: &Episode) -> Vec<f32> {
    let p = ep.privileged();
    let mut v: Vec<f32> = Vec::new();
    for b in &p.blocks {
        v.extend(b.pos.iter().chain(&b.quat).map(|&x| x as f32));
    }
    if let (Some(d), Some(l)) = (p.door_angle, p.lever_angle) {
        v.push(d as f32);
        v.push(l as f32);
    }
    v
}

/// Runs `expert` in `ep` until done, rendering the scene camera (and the wrist camera when `wrist`)
/// before every action.
///
/// # Errors
/// Rendering and PNG errors, [`Episode::step`] errors.
pub fn record_expert_episode(
    ep: &mut Episode,
    expert: &mut Expert,
    renderer: &mut SceneRenderer,
    wrist: bool,
    seed: u64,
) -> Result<EpisodeRecord> {
    record_episode(ep, |e| expert.act(e), renderer, wrist, seed)
}

/// Runs `policy` in `ep` until done, recording every frame (see [`record_expert_episode`]).
///
/// # Errors
/// Rendering and PNG errors, [`Episode::step`] errors.
pub fn record_episode(
    ep: &mut Episode,
    mut policy: impl FnMut(&Episode) -> Action,
    renderer: &mut SceneRenderer,
    wrist: bool,
    seed: u64,
) -> Result<EpisodeRecord> {
    let mut frames = Vec::new();
    while !ep.done() {
        let image_png = renderer.render(ep, CameraKind::Scene)?.to_png()?;
        let wrist_png = if wrist {
            Some(renderer.render(ep, CameraKind::Wrist)?.to_png()?)
        } else {
            None
        };
        let state = recorded_state(ep);
        let env = env_state(ep);
        let was = ep.success();
        let a = policy(ep);
        let o = ep.step(&a)?;
        frames.push(Frame {
            image_png,
            wrist_png,
            state,
            env_state: env,
            action: a.to_vec().into_iter().map(|x| x as f32).collect(),
            reward: if o.success && !was { 1.0 } else { 0.0 },
            success: o.success,
            done: o.done,
        });
    }
    Ok(EpisodeRecord {
        task: ep.task(),
        scene_id: ep.scene().scene_id.clone(),
        seed,
        frames,
    })
}
