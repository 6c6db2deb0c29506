//! Episodes: a world, a task, seeded noise and exact snapshots.

use crate::error::{Result, TestbedError};
use crate::predicates::{StateView, TaskProgress, success, update_progress};
use crate::scene::rng::{normal, stream, uniform};
use crate::scene::{Placement, Scene};
use crate::task::{Family, TaskKind};
use crate::world::{Action, CompiledScene, Pose, World};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Height of a tray floor above the table (m).
const TRAY_FLOOR: f64 = 0.006;
/// Physics steps run at reset so that objects settle before the first action.
const SETTLE_STEPS: usize = 50;

/// Per-episode settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeConfig {
    /// Seed of every random draw of the episode (friction jitter, memory origins, actuation noise).
    pub seed: u64,
    /// Standard deviation of the Gaussian noise added to each commanded translation (m per action,
    /// ≥ 0); rotations get 5× this in radians.
    pub actuation_noise: f64,
    /// Block friction is scaled by a factor drawn uniformly from `[1 − j, 1 + j]`, `j` in `[0, 0.5]`.
    pub friction_jitter: f64,
    /// Memory tasks: origin trays to use instead of drawing them from the seed (put_back: 1 entry
    /// in 0..3; swap: must be `[0, 1]`; rearrange: 2 distinct entries in 0..3).
    pub memory_targets: Option<Vec<usize>>,
}

impl Default for EpisodeConfig {
    fn default() -> Self {
        EpisodeConfig {
            seed: 0,
            actuation_noise: 0.0005,
            friction_jitter: 0.1,
            memory_targets: None,
        }
    }
}

/// What a step reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// Number of actions taken so far.
    pub step: usize,
    /// The success predicate held at some step so far (it latches).
    pub success: bool,
    /// Success or the step limit reached.
    pub done: bool,
}

/// Proprioception: what a policy may always see besides images.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Proprio {
    /// Arm joint angles j1..j7 (rad).
    pub joint_pos: [f64; 7],
    /// Tool-centre-point pose (measured).
    pub ee: Pose,
    /// Gripper opening in `[0, 1]` (1 = fully open).
    pub gripper: f64,
}

impl Proprio {
    /// Length of [`Proprio::to_vec`].
    pub const DIM: usize = 15;

    /// Flat form: 7 joints, 3 position, 4 quaternion, 1 gripper.
    pub fn to_vec(&self) -> Vec<f64> {
        let mut v = self.joint_pos.to_vec();
        v.extend(self.ee.pos);
        v.extend(self.ee.quat);
        v.push(self.gripper);
        v
    }
}

/// Privileged state (object poses and articulation); policies never see it unless asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Privileged {
    /// Block poses.
    pub blocks: Vec<Pose>,
    /// Block speeds (m/s).
    pub block_speeds: Vec<f64>,
    /// Door hinge angle (rad).
    pub door_angle: Option<f64>,
    /// Lever angle (rad).
    pub lever_angle: Option<f64>,
    /// Latch engaged.
    pub latched: Option<bool>,
    /// Lever tip position.
    pub lever_tip: Option<[f64; 3]>,
    /// Push point on the door panel.
    pub door_push_point: Option<[f64; 3]>,
}

/// Everything needed to continue an episode exactly: MuJoCo integration state (including mocap poses,
/// warm-start accelerations and equality activations), commanded pose, task progress and RNG.
#[derive(Debug, Clone)]
pub struct Snapshot {
    physics: Vec<f64>,
    target_pos: [f64; 3],
    target_rpy: [f64; 3],
    gripper_cmd: f64,
    progress: TaskProgress,
    rng: ChaCha8Rng,
    step: usize,
    succeeded: bool,
    task: TaskKind,
    scene_id: String,
}

impl Snapshot {
    /// Actions taken when the snapshot was taken.
    pub fn step(&self) -> usize {
        self.step
    }

    /// The MuJoCo integration state.
    pub fn physics(&self) -> &[f64] {
        &self.physics
    }
}

/// One episode of a task in a scene.
#[derive(Debug)]
pub struct Episode {
    world: World,
    task: TaskKind,
    scene: Scene,
    progress: TaskProgress,
    rng: ChaCha8Rng,
    step: usize,
    succeeded: bool,
    noise: f64,
}

fn validate_targets(task: TaskKind, t: &[usize]) -> Result<()> {
    let ok = match task {
        TaskKind::PutBack => t.len() == 1 && t[0] < 3,
        TaskKind::Swap => t == [0, 1],
        TaskKind::Rearrange => t.len() == 2 && t[0] < 3 && t[1] < 3 && t[0] != t[1],
        _ => t.is_empty(),
    };
    if ok {
        Ok(())
    } else {
        Err(TestbedError::InvalidParameter(format!(
            "memory targets {t:?} do not fit {}",
            task.name()
        )))
    }
}

impl Episode {
    /// Starts an episode of `task` in a compiled scene.
    ///
    /// # Errors
    /// [`TestbedError::InvalidParameter`] when the scene's family is not the task's, a noise setting is
    /// out of range, or memory targets do not fit the task; errors of [`World::new`].
    pub fn new(compiled: &CompiledScene, task: TaskKind, cfg: &EpisodeConfig) -> Result<Episode> {
        if compiled.scene.family != task.family() {
            return Err(TestbedError::InvalidParameter(format!(
                "scene family {:?} does not fit task {}",
                compiled.scene.family,
                task.name()
            )));
        }
        if !(cfg.actuation_noise.is_finite() && cfg.actuation_noise >= 0.0) {
            return Err(TestbedError::InvalidParameter(
                "actuation_noise must be finite and ≥ 0".into(),
            ));
        }
        if !(0.0..=0.5).contains(&cfg.friction_jitter) {
            return Err(TestbedError::InvalidParameter(
                "friction_jitter must be in [0, 0.5]".into(),
            ));
        }
        let mut rng = stream(cfg.seed, "episode", 0);
        let friction = 1.0 + cfg.friction_jitter * uniform(&mut rng, -1.0, 1.0);
        let mut world = World::new(compiled, friction)?;
        let drawn_origins = match task {
            TaskKind::PutBack => vec![(uniform(&mut rng, 0.0, 3.0) as usize).min(2)],
            TaskKind::Swap => vec![0, 1],
            TaskKind::Rearrange => {
                let a = (uniform(&mut rng, 0.0, 3.0) as usize).min(2);
                let b = (a + 1 + (uniform(&mut rng, 0.0, 2.0) as usize).min(1)) % 3;
                vec![a, b]
            }
            _ => vec![],
        };
        let origins = match &cfg.memory_targets {
            Some(t) => {
                validate_targets(task, t)?;
                t.clone()
            }
            None => drawn_origins,
        };
        let layout = &compiled.scene.layout;
        if matches!(
            task.family(),
            Family::PutBack | Family::Swap | Family::Rearrange
        ) {
            for (b, &o) in origins.iter().enumerate() {
                if let Some(t) = layout.trays.get(o) {
                    world.place_block(
                        b,
                        &Placement {
                            x: t.x,
                            y: t.y,
                            yaw: 0.0,
                        },
                        TRAY_FLOOR,
                    );
                }
            }
        }
        world.settle(SETTLE_STEPS);
        let push_start = match task {
            TaskKind::Push { block, .. } => world
                .block_pose(block.index())
                .map(|p| [p.pos[0], p.pos[1]]),
            _ => None,
        };
        Ok(Episode {
            world,
            task,
            scene: compiled.scene.clone(),
            progress: TaskProgress {
                origins,
                phase1_done: false,
                push_start,
            },
            rng,
            step: 0,
            succeeded: false,
            noise: cfg.actuation_noise,
        })
    }

    /// Starts an episode of `task` in the default scene of its family (compiled for 128-pixel renders).
    ///
    /// # Errors
    /// As [`CompiledScene::new`] and [`Episode::new`].
    pub fn from_task(task: TaskKind, cfg: &EpisodeConfig) -> Result<Episode> {
        let c = CompiledScene::new(&Scene::default_for(task.family()), 128)?;
        Episode::new(&c, task, cfg)
    }

    /// Takes one action (see [`Action`] for units and limits): seeded actuation noise is added, the
    /// commanded pose moves, the physics runs [`crate::world::SUBSTEPS`] steps and the predicate is checked.
    /// Stepping a finished episode is allowed and keeps simulating.
    ///
    /// # Errors
    /// [`TestbedError::InvalidAction`] for a non-finite entry.
    pub fn step(&mut self, a: &Action) -> Result<StepOutcome> {
        if !a.to_vec().iter().all(|v| v.is_finite()) {
            return Err(TestbedError::InvalidAction("non-finite entry".into()));
        }
        // Always draw the six normals so the RNG stream does not depend on the noise setting.
        let mut n = [0.0; 6];
        for v in &mut n {
            *v = normal(&mut self.rng);
        }
        let mut noisy = *a;
        for k in 0..3 {
            noisy.dpos[k] += self.noise * n[k];
            noisy.drot[k] += 5.0 * self.noise * n[k + 3];
        }
        self.world.apply(&noisy);
        self.step += 1;
        let view = self.state_view();
        update_progress(self.task, &view, &mut self.progress);
        if success(self.task, &view, &self.progress) {
            self.succeeded = true;
        }
        Ok(StepOutcome {
            step: self.step,
            success: self.succeeded,
            done: self.done(),
        })
    }

    /// Whether the success predicate has held at some step.
    pub fn success(&self) -> bool {
        self.succeeded
    }

    /// Whether the predicate holds now (unlike [`Episode::success`], does not latch).
    pub fn success_now(&self) -> bool {
        success(self.task, &self.state_view(), &self.progress)
    }

    /// Success or step limit ([`TaskKind::max_steps`]) reached.
    pub fn done(&self) -> bool {
        self.succeeded || self.step >= self.task.max_steps()
    }

    /// Actions taken so far.
    pub fn steps(&self) -> usize {
        self.step
    }

    /// The task.
    pub fn task(&self) -> TaskKind {
        self.task
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    pub(crate) fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// Task progress (memory origins, phase flags).
    pub fn progress(&self) -> &TaskProgress {
        &self.progress
    }

    /// Memory tasks: the phase-1 (blocks on pads) flag; the return decision comes after it.
    pub fn at_return_phase(&self) -> bool {
        self.progress.phase1_done
    }

    /// Memory tasks: replaces the remembered origins while keeping the physical present bit-identical
    /// (used to cross a present with another history).
    ///
    /// # Errors
    /// [`TestbedError::InvalidParameter`] when the targets do not fit the task.
    pub fn set_memory_targets(&mut self, targets: &[usize]) -> Result<()> {
        validate_targets(self.task, targets)?;
        self.progress.origins = targets.to_vec();
        Ok(())
    }

    /// The state the success predicates read.
    pub fn state_view(&self) -> StateView {
        let w = &self.world;
        let n = w.n_blocks();
        StateView {
            blocks: (0..n)
                .filter_map(|i| w.block_pose(i))
                .map(|p| p.pos)
                .collect(),
            block_speeds: (0..n).filter_map(|i| w.block_speed(i)).collect(),
            trays: self.scene.layout.trays.iter().map(|t| [t.x, t.y]).collect(),
            pads: self.scene.layout.pads.iter().map(|p| [p.x, p.y]).collect(),
            door_angle: w.door_angle(),
            gripper_cmd: w.gripper_command(),
        }
    }

    /// Proprioception.
    pub fn proprio(&self) -> Proprio {
        Proprio {
            joint_pos: self.world.arm_joints(),
            ee: self.world.tcp_pose(),
            gripper: self.world.gripper_opening(),
        }
    }

    /// Privileged state.
    pub fn privileged(&self) -> Privileged {
        let w = &self.world;
        let n = w.n_blocks();
        Privileged {
            blocks: (0..n).filter_map(|i| w.block_pose(i)).collect(),
            block_speeds: (0..n).filter_map(|i| w.block_speed(i)).collect(),
            door_angle: w.door_angle(),
            lever_angle: w.lever_angle(),
            latched: w.latched(),
            lever_tip: w.lever_tip(),
            door_push_point: w.door_push_point(),
        }
    }

    /// Captures the whole episode state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            physics: self.world.physics_state(),
            target_pos: self.world.target_pos,
            target_rpy: self.world.target_rpy,
            gripper_cmd: self.world.gripper_cmd,
            progress: self.progress.clone(),
            rng: self.rng.clone(),
            step: self.step,
            succeeded: self.succeeded,
            task: self.task,
            scene_id: self.scene.scene_id.clone(),
        }
    }

    /// Restores a snapshot of an episode of the same task and scene; continuing from it is bit-identical
    /// to never having stopped.
    ///
    /// # Errors
    /// [`TestbedError::SnapshotMismatch`] when the task, scene id or state size differ.
    pub fn restore(&mut self, s: &Snapshot) -> Result<()> {
        if s.task != self.task || s.scene_id != self.scene.scene_id {
            return Err(TestbedError::SnapshotMismatch(format!(
                "snapshot of {} in scene {}, episode of {} in scene {}",
                s.task.name(),
                s.scene_id,
                self.task.name(),
                self.scene.scene_id
            )));
        }
        self.world.set_physics_state(&s.physics)?;
        self.world.target_pos = s.target_pos;
        self.world.target_rpy = s.target_rpy;
        self.world.gripper_cmd = s.gripper_cmd;
        self.progress = s.progress.clone();
        self.rng = s.rng.clone();
        self.step = s.step;
        self.succeeded = s.succeeded;
        Ok(())
    }
}
