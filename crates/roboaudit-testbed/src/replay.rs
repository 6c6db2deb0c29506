//! Experiences for the retrieval audit: an expert demonstration recorded in its base scene and
//! executed in other scenes by open-loop path retargeting (seed 000 §II, "Replay"). The commanded
//! tool-centre-point path is stored relative to anchors (blocks, trays, pads, lever, door); in a query
//! scene waypoints are shifted by anchor displacements measured once at the start ([`Retarget`]).
//! Orientation and gripper timing are replayed as recorded; nothing looks at images, so replay is
//! camera-independent.

use crate::episode::{Episode, EpisodeConfig};
use crate::error::Result;
use crate::expert::{Anchor, Expert, ExpertParams};
use crate::geom::{Vec3, wrap_angle};
use crate::task::TaskKind;
use crate::world::{Action, CompiledScene};
use serde::{Deserialize, Serialize};

/// One recorded step of an experience.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Waypoint {
    /// What the waypoint is relative to.
    pub anchor: Anchor,
    /// Commanded tool-centre point after the step, minus the anchor's start position in the base scene (m).
    pub offset: Vec3,
    /// Commanded yaw (rad).
    pub yaw: f64,
    /// Gripper command in `[-1, 1]`.
    pub gripper: f64,
}

/// A library item of the retrieval audit: a demonstration and where it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experience {
    /// Task.
    pub task: TaskKind,
    /// Scene the demonstration was recorded in.
    pub base_scene_id: String,
    /// Seed of the recording episode.
    pub seed: u64,
    /// Whether the recording itself succeeded.
    pub recorded_success: bool,
    /// The path, one waypoint per action.
    pub waypoints: Vec<Waypoint>,
    /// Anchor start positions in the base scene.
    pub base_anchors: Vec<(Anchor, Vec3)>,
}

/// How a path is moved into a query scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Retarget {
    /// The whole path moves with the first object it manipulates (the paper-style Replay: succeeds
    /// where the other objects stand where they stood in the base scene relative to it).
    FirstAnchor,
    /// Every waypoint moves with its own anchor (nearly expert-level transfer; a reference).
    PerAnchor,
}

/// Start position of an anchor in an episode, `None` when the scene has no such object.
pub fn anchor_position(ep: &Episode, a: Anchor) -> Option<Vec3> {
    let l = &ep.scene().layout;
    match a {
        Anchor::World => Some([0.0; 3]),
        Anchor::Block(i) => ep.world().block_pose(i).map(|p| p.pos),
        Anchor::Tray(i) => l.trays.get(i).map(|t| [t.x, t.y, 0.0]),
        Anchor::Pad(i) => l.pads.get(i).map(|p| [p.x, p.y, 0.0]),
        Anchor::LeverTip => ep.world().lever_tip(),
        Anchor::DoorPush => ep.world().door_push_point(),
    }
}

fn anchors_of(ep: &Episode) -> Vec<(Anchor, Vec3)> {
    let mut all = vec![Anchor::World, Anchor::LeverTip, Anchor::DoorPush];
    all.extend((0..4).map(Anchor::Block));
    all.extend((0..3).map(Anchor::Tray));
    all.extend((0..2).map(Anchor::Pad));
    all.into_iter()
        .filter_map(|a| anchor_position(ep, a).map(|p| (a, p)))
        .collect()
}

fn lookup(table: &[(Anchor, Vec3)], a: Anchor) -> Vec3 {
    table
        .iter()
        .find(|(b, _)| *b == a)
        .map_or([0.0; 3], |(_, p)| *p)
}

impl Experience {
    /// Records the expert in `base` with episode config `cfg` (its seed names the experience).
    ///
    /// # Errors
    /// Errors of [`Episode::new`] and [`Episode::step`].
    pub fn record(
        base: &CompiledScene,
        task: TaskKind,
        cfg: &EpisodeConfig,
        params: ExpertParams,
    ) -> Result<Experience> {
        let mut ex = Expert::new(task, params, cfg.seed);
        Experience::record_with(base, task, cfg, |ep| {
            let a = ex.act(ep);
            (a, ex.current_anchor())
        })
    }

    /// Records any demonstrator in `base`: `demo` returns, for the present state, the next action and
    /// the anchor that action is relative to (so a demonstrator other than [`Expert`], e.g. one with a
    /// per-experience style, gives an experience that replays like an expert one). Runs until the
    /// episode is done (success or [`TaskKind::max_steps`]).
    ///
    /// # Errors
    /// Errors of [`Episode::new`] and [`Episode::step`] (e.g. a non-finite action).
    pub fn record_with(
        base: &CompiledScene,
        task: TaskKind,
        cfg: &EpisodeConfig,
        mut demo: impl FnMut(&Episode) -> (Action, Anchor),
    ) -> Result<Experience> {
        let mut ep = Episode::new(base, task, cfg)?;
        let start = anchors_of(&ep);
        let mut waypoints = Vec::new();
        while !ep.done() {
            let (a, anchor) = demo(&ep);
            ep.step(&a)?;
            let c = ep.world().commanded_tcp();
            let o = lookup(&start, anchor);
            waypoints.push(Waypoint {
                anchor,
                offset: [c[0] - o[0], c[1] - o[1], c[2] - o[2]],
                yaw: ep.world().commanded_rpy()[2],
                gripper: ep.world().gripper_command(),
            });
        }
        Ok(Experience {
            task,
            base_scene_id: base.scene.scene_id.clone(),
            seed: cfg.seed,
            recorded_success: ep.success(),
            waypoints,
            base_anchors: start,
        })
    }

    /// A replay policy for an episode that has not stepped yet (anchors are measured now).
    pub fn replay_in(&self, ep: &Episode, mode: Retarget) -> ReplayPolicy {
        let table = anchors_of(ep);
        let first = self
            .waypoints
            .iter()
            .map(|w| w.anchor)
            .find(|a| *a != Anchor::World);
        let path = self
            .waypoints
            .iter()
            .map(|w| {
                // Base-scene absolute waypoint, moved by the displacement of the anchor that carries it.
                let base = lookup(&self.base_anchors, w.anchor);
                let carrier = match (mode, first) {
                    _ if w.anchor == Anchor::World => Anchor::World,
                    (Retarget::FirstAnchor, Some(f)) => f,
                    _ => w.anchor,
                };
                let q = lookup(&table, carrier);
                let b = lookup(&self.base_anchors, carrier);
                let t = [0, 1, 2].map(|k| w.offset[k] + base[k] + q[k] - b[k]);
                (t, w.yaw, w.gripper)
            })
            .collect();
        ReplayPolicy { path, t: 0 }
    }
}

/// Open-loop execution of a retargeted path: at step `t` it commands waypoint `t` (translations beyond
/// the per-action limit are clipped by the world, so a lagging command catches up over later steps);
/// after the path it holds still.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayPolicy {
    path: Vec<(Vec3, f64, f64)>,
    t: usize,
}

impl ReplayPolicy {
    /// The next action.
    pub fn act(&mut self, ep: &Episode) -> Action {
        let w = ep.world();
        let Some(&(target, yaw, grip)) = self.path.get(self.t) else {
            return Action {
                gripper: w.gripper_command(),
                ..Action::default()
            };
        };
        self.t += 1;
        let c = w.commanded_tcp();
        Action {
            dpos: [target[0] - c[0], target[1] - c[1], target[2] - c[2]],
            drot: [0.0, 0.0, wrap_angle(yaw - w.commanded_rpy()[2])],
            gripper: grip,
        }
    }
}

/// Executes `exp` in `query` with episode config `cfg` and returns whether the task succeeded.
///
/// # Errors
/// Errors of [`Episode::new`] and [`Episode::step`].
pub fn execute(
    exp: &Experience,
    query: &CompiledScene,
    cfg: &EpisodeConfig,
    mode: Retarget,
) -> Result<bool> {
    let mut ep = Episode::new(query, exp.task, cfg)?;
    let mut pol = exp.replay_in(&ep, mode);
    while !ep.done() {
        let a = pol.act(&ep);
        ep.step(&a)?;
    }
    Ok(ep.success())
}
