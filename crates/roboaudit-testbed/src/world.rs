//! The MuJoCo world: a compiled scene model, its data, named handles, action application and
//! state read-out. One [`World`] per episode; nothing is shared between worlds, which is what makes
//! results independent of how many episodes run in parallel.

use crate::error::{Result, TestbedError};
use crate::geom::{Quat, Vec3, quat_from_rpy, wrap_angle};
use crate::mjcf::{FINGER_OPEN, HAND_HOME, TCP_OFFSET, build_mjcf};
use crate::scene::{Placement, Scene};
use mujoco_rs::mujoco_c::mjtState;
use mujoco_rs::prelude::{MjData, MjModel, MjtObjBase};
use std::sync::Arc;

/// Physics steps per action (timestep 2 ms, so one action lasts 20 ms).
pub const SUBSTEPS: usize = 10;
/// Largest end-effector translation per action and axis (m); larger requests are clipped.
pub const MAX_DPOS: f64 = 0.015;
/// Largest end-effector rotation per action and axis (rad); larger requests are clipped.
pub const MAX_DROT: f64 = 0.15;
/// Roll and pitch of the end effector are kept within ±this (rad) of pointing straight down.
pub const MAX_TILT: f64 = 0.6;
/// Lever angle (rad) beyond which the door latch releases.
pub const LATCH_RELEASE_ANGLE: f64 = 0.5;
/// Workspace box of the tool-centre point (m): x, y, z ranges.
pub const WORKSPACE: [[f64; 2]; 3] = [[0.2, 0.8], [-0.45, 0.45], [0.0, 0.45]];
/// Number of action dimensions: `[dx, dy, dz, droll, dpitch, dyaw, gripper]`.
pub const ACTION_DIM: usize = 7;
/// The MuJoCo state components a snapshot holds (`mjSTATE_INTEGRATION`: time, qpos, qvel, act,
/// warm-start accelerations, controls, applied forces, mocap poses, equality activations, …).
pub const STATE_SPEC: u32 = mjtState::mjSTATE_INTEGRATION as u32;

/// An action: end-effector pose deltas (world frame) plus a gripper command.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Action {
    /// Translation of the tool-centre point target (m), clipped to ±[`MAX_DPOS`] per axis.
    pub dpos: [f64; 3],
    /// Roll, pitch, yaw increments (rad), clipped to ±[`MAX_DROT`].
    pub drot: [f64; 3],
    /// Gripper command in `[-1, 1]`: −1 fully open, +1 fully closed (clipped).
    pub gripper: f64,
}

impl Action {
    /// From a flat `[dx, dy, dz, droll, dpitch, dyaw, gripper]` vector.
    ///
    /// # Errors
    /// [`TestbedError::InvalidAction`] when the length is not [`ACTION_DIM`] or an entry is not finite.
    pub fn from_slice(v: &[f64]) -> Result<Action> {
        if v.len() != ACTION_DIM {
            return Err(TestbedError::InvalidAction(format!(
                "expected {ACTION_DIM} values, got {}",
                v.len()
            )));
        }
        let a = Action {
            dpos: [v[0], v[1], v[2]],
            drot: [v[3], v[4], v[5]],
            gripper: v[6],
        };
        a.check()?;
        Ok(a)
    }

    /// Flat form, inverse of [`Action::from_slice`].
    pub fn to_vec(&self) -> Vec<f64> {
        vec![
            self.dpos[0],
            self.dpos[1],
            self.dpos[2],
            self.drot[0],
            self.drot[1],
            self.drot[2],
            self.gripper,
        ]
    }

    fn check(&self) -> Result<()> {
        if self.to_vec().iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(TestbedError::InvalidAction("non-finite entry".into()))
        }
    }
}

/// A compiled scene model, shareable between episodes (each episode clones it).
#[derive(Debug, Clone)]
pub struct CompiledScene {
    /// The scene it was built from.
    pub scene: Scene,
    /// Offscreen buffer size (pixels, square) the model allows.
    pub render_size: usize,
    pub(crate) model: Arc<MjModel>,
    /// FNV-1a of the model's texture pixels, hashed once here: a renderer compares it at every
    /// frame to know whether its uploaded textures are this scene's.
    pub(crate) textures: u64,
}

impl CompiledScene {
    /// Compiles `scene` with an offscreen buffer of `render_size`² pixels (renders may be at most that big).
    ///
    /// # Errors
    /// [`TestbedError::Model`] when MuJoCo rejects the model.
    pub fn new(scene: &Scene, render_size: usize) -> Result<CompiledScene> {
        let xml = build_mjcf(scene, render_size);
        let model =
            MjModel::from_xml_string(&xml).map_err(|e| TestbedError::Model(format!("{e:?}")))?;
        Ok(CompiledScene {
            scene: scene.clone(),
            render_size: render_size.max(64),
            textures: roboaudit_types::seed::fnv1a64(model.tex_data()),
            model: Arc::new(model),
        })
    }

    /// The MJCF text of the model (for inspection).
    pub fn mjcf(&self) -> String {
        build_mjcf(&self.scene, self.render_size)
    }
}

/// Indices of named objects in the model.
#[derive(Debug, Clone)]
pub(crate) struct Handles {
    pub arm_qpos: [usize; 7],
    pub finger_qpos: [usize; 2],
    pub tcp_site: usize,
    pub block_body: Vec<usize>,
    pub block_qpos: Vec<usize>,
    pub block_dof: Vec<usize>,
    pub block_geom: Vec<usize>,
    pub door_qpos: Option<usize>,
    pub lever_qpos: Option<usize>,
    pub latch_eq: Option<usize>,
    pub lever_tip_site: Option<usize>,
    pub door_push_site: Option<usize>,
    pub scene_cam: usize,
    pub wrist_cam: usize,
}

fn id(m: &MjModel, t: MjtObjBase, kind: &'static str, name: &str) -> Result<usize> {
    m.name_to_id(t, name)
        .ok_or_else(|| TestbedError::MissingName {
            kind,
            name: name.to_string(),
        })
}

fn adr(v: i32) -> usize {
    usize::try_from(v).unwrap_or(0)
}

impl Handles {
    fn new(m: &MjModel, n_blocks: usize, door: bool) -> Result<Handles> {
        let jq = |name: &str| -> Result<usize> {
            let j = id(m, MjtObjBase::mjOBJ_JOINT, "joint", name)?;
            Ok(adr(m.jnt_qposadr()[j]))
        };
        let jd = |name: &str| -> Result<usize> {
            let j = id(m, MjtObjBase::mjOBJ_JOINT, "joint", name)?;
            Ok(adr(m.jnt_dofadr()[j]))
        };
        let mut arm_qpos = [0; 7];
        for (i, a) in arm_qpos.iter_mut().enumerate() {
            *a = jq(&format!("j{}", i + 1))?;
        }
        let site = |n: &str| id(m, MjtObjBase::mjOBJ_SITE, "site", n);
        Ok(Handles {
            arm_qpos,
            finger_qpos: [jq("finger_l")?, jq("finger_r")?],
            tcp_site: site("tcp")?,
            block_body: (0..n_blocks)
                .map(|i| id(m, MjtObjBase::mjOBJ_BODY, "body", &format!("block{i}")))
                .collect::<Result<_>>()?,
            block_qpos: (0..n_blocks)
                .map(|i| jq(&format!("block{i}_free")))
                .collect::<Result<_>>()?,
            block_dof: (0..n_blocks)
                .map(|i| jd(&format!("block{i}_free")))
                .collect::<Result<_>>()?,
            block_geom: (0..n_blocks)
                .map(|i| id(m, MjtObjBase::mjOBJ_GEOM, "geom", &format!("block{i}_geom")))
                .collect::<Result<_>>()?,
            door_qpos: door.then(|| jq("door_hinge")).transpose()?,
            lever_qpos: door.then(|| jq("lever_hinge")).transpose()?,
            latch_eq: door
                .then(|| id(m, MjtObjBase::mjOBJ_EQUALITY, "equality", "latch"))
                .transpose()?,
            lever_tip_site: door.then(|| site("lever_tip")).transpose()?,
            door_push_site: door.then(|| site("door_push")).transpose()?,
            scene_cam: id(m, MjtObjBase::mjOBJ_CAMERA, "camera", "scene_cam")?,
            wrist_cam: id(m, MjtObjBase::mjOBJ_CAMERA, "camera", "wrist_cam")?,
        })
    }
}

/// Pose of a rigid object.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pose {
    /// Position (m, world).
    pub pos: Vec3,
    /// Orientation `[w, x, y, z]`.
    pub quat: Quat,
}

/// The simulated world of one episode.
#[derive(Debug)]
pub struct World {
    pub(crate) data: MjData<Box<MjModel>>,
    pub(crate) h: Handles,
    /// Commanded tool-centre-point target (m).
    pub(crate) target_pos: Vec3,
    /// Commanded roll, pitch, yaw (rad).
    pub(crate) target_rpy: Vec3,
    /// Last gripper command in `[-1, 1]`.
    pub(crate) gripper_cmd: f64,
    /// [`CompiledScene`]'s texture hash (the world never changes its textures).
    pub(crate) textures: u64,
}

impl World {
    /// Creates the world from a compiled scene; `friction_scale` multiplies the sliding friction of
    /// every block (friction jitter). The arm starts at its home pose with the gripper open.
    ///
    /// # Errors
    /// [`TestbedError::MissingName`] when the model lacks an expected object (a generator bug), and
    /// [`TestbedError::InvalidParameter`] for a non-positive or non-finite `friction_scale`.
    pub fn new(compiled: &CompiledScene, friction_scale: f64) -> Result<World> {
        if !(friction_scale.is_finite() && friction_scale > 0.0) {
            return Err(TestbedError::InvalidParameter(format!(
                "friction scale {friction_scale} must be > 0"
            )));
        }
        let mut model: MjModel = (*compiled.model).clone();
        let fam = compiled.scene.family;
        let h = Handles::new(&model, fam.n_blocks(), compiled.scene.layout.door.is_some())?;
        for &g in &h.block_geom {
            if let Some(f) = model.geom_friction_mut().get_mut(g) {
                f[0] *= friction_scale;
            }
        }
        let data = MjData::new(Box::new(model));
        let mut w = World {
            data,
            h,
            target_pos: [HAND_HOME[0], HAND_HOME[1], HAND_HOME[2] - TCP_OFFSET],
            target_rpy: [0.0; 3],
            gripper_cmd: -1.0,
            textures: compiled.textures,
        };
        w.write_controls();
        w.data.forward();
        Ok(w)
    }

    /// Places block `i` at `p` resting on a surface of height `surface_z` (m), at rest.
    pub(crate) fn place_block(&mut self, i: usize, p: &Placement, surface_z: f64) {
        let Some(&qa) = self.h.block_qpos.get(i) else {
            return;
        };
        let Some(&da) = self.h.block_dof.get(i) else {
            return;
        };
        let q = quat_from_rpy(0.0, 0.0, p.yaw);
        let vals = [
            p.x,
            p.y,
            surface_z + crate::mjcf::BLOCK_HALF,
            q[0],
            q[1],
            q[2],
            q[3],
        ];
        self.data.qpos_mut()[qa..qa + 7].copy_from_slice(&vals);
        self.data.qvel_mut()[da..da + 6].fill(0.0);
        self.data.forward();
    }

    /// Applies an already-noised, unclipped action: updates the commanded pose (clipped to the limits
    /// and the workspace), runs [`SUBSTEPS`] physics steps, updates the latch and recomputes kinematics.
    pub fn apply(&mut self, a: &Action) {
        for ((t, d), ws) in self.target_pos.iter_mut().zip(a.dpos).zip(WORKSPACE) {
            *t = (*t + d.clamp(-MAX_DPOS, MAX_DPOS)).clamp(ws[0], ws[1]);
        }
        for (t, d) in self.target_rpy.iter_mut().zip(a.drot) {
            *t += d.clamp(-MAX_DROT, MAX_DROT);
        }
        self.target_rpy[0] = self.target_rpy[0].clamp(-MAX_TILT, MAX_TILT);
        self.target_rpy[1] = self.target_rpy[1].clamp(-MAX_TILT, MAX_TILT);
        self.target_rpy[2] = wrap_angle(self.target_rpy[2]);
        self.gripper_cmd = a.gripper.clamp(-1.0, 1.0);
        self.write_controls();
        for _ in 0..SUBSTEPS {
            self.data.step();
        }
        self.update_latch();
        // Kinematics of the final state, so that what is observed after a step equals what is observed
        // after restoring a snapshot of it (mj_forward leaves the integration state untouched).
        self.data.forward();
    }

    /// Runs `n` physics steps holding the current commands (used to settle at reset).
    pub fn settle(&mut self, n: usize) {
        for _ in 0..n {
            self.data.step();
        }
        self.data.forward();
    }

    fn write_controls(&mut self) {
        let q = quat_from_rpy(self.target_rpy[0], self.target_rpy[1], self.target_rpy[2]);
        // The mocap body is the hand frame; the tool-centre point is TCP_OFFSET along the hand's −z.
        let r = rot_z_axis(q);
        let hand = [
            self.target_pos[0] + TCP_OFFSET * r[0],
            self.target_pos[1] + TCP_OFFSET * r[1],
            self.target_pos[2] + TCP_OFFSET * r[2],
        ];
        if let Some(m) = self.data.mocap_pos_mut().get_mut(0) {
            *m = hand;
        }
        if let Some(m) = self.data.mocap_quat_mut().get_mut(0) {
            *m = q;
        }
        let open = FINGER_OPEN * (1.0 - self.gripper_cmd) * 0.5;
        let ctrl = self.data.ctrl_mut();
        for c in ctrl.iter_mut().take(2) {
            *c = open;
        }
    }

    fn update_latch(&mut self) {
        let (Some(lq), Some(eq)) = (self.h.lever_qpos, self.h.latch_eq) else {
            return;
        };
        let lever = self.data.qpos()[lq];
        if lever > LATCH_RELEASE_ANGLE
            && let Some(e) = self.data.eq_active_mut().get_mut(eq)
        {
            *e = false;
        }
    }

    /// The full MuJoCo integration state ([`STATE_SPEC`]).
    pub fn physics_state(&self) -> Vec<f64> {
        self.data.state(STATE_SPEC).into_vec()
    }

    /// Restores a state produced by [`World::physics_state`] and recomputes kinematics.
    ///
    /// # Errors
    /// [`TestbedError::SnapshotMismatch`] when the length does not fit this model.
    pub(crate) fn set_physics_state(&mut self, s: &[f64]) -> Result<()> {
        self.data
            .set_state(s, STATE_SPEC)
            .map_err(|e| TestbedError::SnapshotMismatch(format!("{e:?}")))?;
        self.data.forward();
        Ok(())
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.data.time()
    }

    /// Tool-centre-point pose (measured, not commanded).
    pub fn tcp_pose(&self) -> Pose {
        let s = self.h.tcp_site;
        let pos = self.data.site_xpos().get(s).copied().unwrap_or([0.0; 3]);
        let m = self
            .data
            .site_xmat()
            .get(s)
            .copied()
            .unwrap_or([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        Pose {
            pos,
            quat: mat_to_quat(&m),
        }
    }

    /// Commanded tool-centre-point position (m).
    pub fn commanded_tcp(&self) -> Vec3 {
        self.target_pos
    }

    /// Commanded roll, pitch, yaw (rad).
    pub fn commanded_rpy(&self) -> Vec3 {
        self.target_rpy
    }

    /// Last gripper command in `[-1, 1]`.
    pub fn gripper_command(&self) -> f64 {
        self.gripper_cmd
    }

    /// Arm joint positions (rad), j1..j7.
    pub fn arm_joints(&self) -> [f64; 7] {
        let q = self.data.qpos();
        self.h.arm_qpos.map(|a| q[a])
    }

    /// Gripper opening in `[0, 1]` (mean finger travel over its range).
    pub fn gripper_opening(&self) -> f64 {
        let q = self.data.qpos();
        (q[self.h.finger_qpos[0]] + q[self.h.finger_qpos[1]]) / (2.0 * FINGER_OPEN)
    }

    /// Pose of block `i`, `None` when there is no such block.
    pub fn block_pose(&self, i: usize) -> Option<Pose> {
        let b = *self.h.block_body.get(i)?;
        Some(Pose {
            pos: *self.data.xpos().get(b)?,
            quat: *self.data.xquat().get(b)?,
        })
    }

    /// Linear speed of block `i` (m/s).
    pub fn block_speed(&self, i: usize) -> Option<f64> {
        let d = *self.h.block_dof.get(i)?;
        let v = self.data.qvel();
        Some((v[d] * v[d] + v[d + 1] * v[d + 1] + v[d + 2] * v[d + 2]).sqrt())
    }

    /// Number of blocks.
    pub fn n_blocks(&self) -> usize {
        self.h.block_body.len()
    }

    /// Door hinge angle (rad, 0 closed, positive open), `None` without a door.
    pub fn door_angle(&self) -> Option<f64> {
        self.h.door_qpos.map(|a| self.data.qpos()[a])
    }

    /// Lever angle (rad, 0 up, positive pressed), `None` without a door.
    pub fn lever_angle(&self) -> Option<f64> {
        self.h.lever_qpos.map(|a| self.data.qpos()[a])
    }

    /// Whether the latch still holds the door, `None` without a door.
    pub fn latched(&self) -> Option<bool> {
        self.h
            .latch_eq
            .and_then(|e| self.data.eq_active().get(e).copied())
    }

    /// World position of the lever tip, `None` without a door.
    pub fn lever_tip(&self) -> Option<Vec3> {
        self.h
            .lever_tip_site
            .and_then(|s| self.data.site_xpos().get(s).copied())
    }

    /// World position of the push point on the door panel, `None` without a door.
    pub fn door_push_point(&self) -> Option<Vec3> {
        self.h
            .door_push_site
            .and_then(|s| self.data.site_xpos().get(s).copied())
    }
}

/// Third column of the rotation matrix of `q`: the hand's +z axis in world coordinates.
fn rot_z_axis(q: Quat) -> Vec3 {
    let [w, x, y, z] = q;
    let col = [
        2.0 * (x * z + w * y),
        2.0 * (y * z - w * x),
        1.0 - 2.0 * (x * x + y * y),
    ];
    [col[0], col[1], col[2]]
}

fn mat_to_quat(m: &[f64; 9]) -> Quat {
    // Shepperd's method on the row-major matrix.
    let tr = m[0] + m[4] + m[8];
    if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [
            0.25 * s,
            (m[7] - m[5]) / s,
            (m[2] - m[6]) / s,
            (m[3] - m[1]) / s,
        ]
    } else if m[0] > m[4] && m[0] > m[8] {
        let s = (1.0 + m[0] - m[4] - m[8]).sqrt() * 2.0;
        [
            (m[7] - m[5]) / s,
            0.25 * s,
            (m[1] + m[3]) / s,
            (m[2] + m[6]) / s,
        ]
    } else if m[4] > m[8] {
        let s = (1.0 + m[4] - m[0] - m[8]).sqrt() * 2.0;
        [
            (m[2] - m[6]) / s,
            (m[1] + m[3]) / s,
            0.25 * s,
            (m[5] + m[7]) / s,
        ]
    } else {
        let s = (1.0 + m[8] - m[0] - m[4]).sqrt() * 2.0;
        [
            (m[3] - m[1]) / s,
            (m[2] + m[6]) / s,
            (m[5] + m[7]) / s,
            0.25 * s,
        ]
    }
}
