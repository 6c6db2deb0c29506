//! The audited decision of each memory task: which histories a pair crosses, when the present is
//! reached, and which branch each history warrants.
//!
//! - `put_back`: history `m` starts with the block in tray `t_m`; the expert takes it to the
//!   inspection pad, goes home, comes back, grasps and lifts it. The present is the first step at
//!   which the lifted block's centre is above [`LIFT_Z`] after phase 1; branch = `t_m`.
//! - `rearrange`: as put_back with two blocks and two pads: history `m` has origins
//!   `(t_m, u_m)`; the present is block 0 lifted from its pad after phase 1; branch = `t_m`.
//! - `swap`: red starts in tray 0 and blue in tray `b_m` (1 or 2); the testbed's swap expert
//!   takes red to the buffer pad, blue to red's tray 0, then grasps and lifts red. The present is
//!   the first step with blue in tray 0 and red held above [`LIFT_Z`]; branch = `b_m`, the tray
//!   blue started in, where the swap puts red. The testbed's own swap scene cannot carry this
//!   decision: it has two trays, so at any such present blue sits in red's origin and the only
//!   other tray (the answer) is the only empty one — visible, not remembered, for every pair of
//!   histories (fixing its origins to `[0, 1]` is not the obstacle; two trays are). The harness
//!   therefore plays swap in the three-tray scene of the rearrange family (two blocks, red and
//!   blue; pad 0 as the buffer) through the public testbed API: episodes run as
//!   [`TaskKind::Rearrange`] with origins `[0, b_m]` (only the block placement and the world
//!   label use them) and the histories are played by the testbed's [`TaskKind::Swap`] expert,
//!   whose plan up to the present (red → pad, blue → tray 0, grasp red) is the swap for both
//!   origins. At the present trays 1 and 2 are both empty, so only memory tells them apart. The
//!   scene lists its trays middle first ([`MemoryTask::scene`]): red's origin, where blue goes,
//!   is the middle tray, and the two branches are the outer trays, in directions 78° apart
//!   from the buffer pad (with the listed order the branches would be the adjacent middle and
//!   outer trays, 27° apart, and one chunk would hardly tell them apart). The
//!   testbed's swap predicate fixes the trays of its two-tray scene, and the rearrange predicate
//!   the episodes run under needs a phase 1 this history never completes, so native rollouts
//!   judge this variant by the harness's own predicate ([`MemoryTask::accomplished`]): red in
//!   the tray blue started in, blue in red's origin, gripper released.

use roboaudit_testbed::{Episode, Perturbation, Scene, TaskKind};

use crate::error::HarnessError;

/// Height (m) above which the held block counts as lifted: the present of put_back and rearrange.
pub const LIFT_Z: f64 = 0.12;

/// Half width (m) of the region of a tray that counts as inside (the testbed's predicate value).
const IN_TRAY_HALF: f64 = roboaudit_testbed::predicates::IN_TRAY_HALF;

/// A task the harness can cross.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryTask {
    task: TaskKind,
}

impl MemoryTask {
    /// The memory task for `task`.
    ///
    /// # Errors
    /// [`HarnessError::UnsupportedTask`] for non-memory tasks.
    pub fn new(task: TaskKind) -> Result<MemoryTask, HarnessError> {
        match task {
            TaskKind::PutBack | TaskKind::Rearrange | TaskKind::Swap => Ok(MemoryTask { task }),
            other => Err(HarnessError::UnsupportedTask(format!(
                "{} has no memory decision; use put_back, swap or rearrange",
                other.name()
            ))),
        }
    }

    /// The audited task (`put_back`, `swap` or `rearrange`).
    pub fn kind(&self) -> TaskKind {
        self.task
    }

    /// The testbed task the episodes run (scene family, origin validation, step limit): the
    /// audited task, except [`TaskKind::Rearrange`] for swap (see the module docs).
    pub fn task(&self) -> TaskKind {
        match self.task {
            TaskKind::Swap => TaskKind::Rearrange,
            t => t,
        }
    }

    /// The scene of pair or episode `id`: [`Scene::from_draws`] of the episode task's family with
    /// a layout perturbation at `level` (0–3) and `layout_seed`; for swap, trays 0 and 1 of the
    /// drawn layout trade places in the list (same physical scene, see the module docs).
    ///
    /// # Errors
    /// Testbed errors of [`Scene::from_draws`].
    pub fn scene(&self, id: &str, level: u8, layout_seed: u64) -> Result<Scene, HarnessError> {
        let mut scene = Scene::from_draws(
            self.task().family(),
            id,
            Perturbation::Layout,
            level,
            layout_seed,
            0,
            0,
        )?;
        if self.task == TaskKind::Swap && scene.layout.trays.len() >= 2 {
            scene.layout.trays.swap(0, 1);
        }
        Ok(scene)
    }

    /// The task whose testbed expert plays the histories (the audited task).
    pub fn expert_task(&self) -> TaskKind {
        self.task
    }

    /// The block whose destination is the audited decision.
    pub fn held_block(&self) -> usize {
        0
    }

    /// Origin pairs `(A, B)` crossed by pair `i`, cycling through every ordered combination
    /// whose held-block origins differ, so targets are balanced across memories.
    pub fn origins(&self, i: usize) -> [Vec<usize>; 2] {
        let combos: Vec<[Vec<usize>; 2]> = match self.task {
            // Red always starts in tray 0 (the testbed's swap expert brings blue there).
            TaskKind::Swap => vec![[vec![0, 1], vec![0, 2]], [vec![0, 2], vec![0, 1]]],
            TaskKind::Rearrange => {
                let singles: Vec<Vec<usize>> = (0..3)
                    .flat_map(|a| (0..3).filter(move |&b| b != a).map(move |b| vec![a, b]))
                    .collect();
                let mut v = Vec::new();
                for a in &singles {
                    for b in &singles {
                        if a[0] != b[0] {
                            v.push([a.clone(), b.clone()]);
                        }
                    }
                }
                v
            }
            _ => (0..3)
                .flat_map(|a| {
                    (0..3)
                        .filter(move |&b| b != a)
                        .map(move |b| [vec![a], vec![b]])
                })
                .collect(),
        };
        combos[i % combos.len()].clone()
    }

    /// The branch (tray index) that origins `o` warrant at the present: the held block's origin,
    /// or for swap the other block's origin (`o[1]`).
    pub fn branch(&self, o: &[usize]) -> usize {
        let k = match self.task {
            TaskKind::Swap => 1,
            _ => self.held_block(),
        };
        o.get(k).copied().unwrap_or(0)
    }

    /// Whether the audited task is accomplished in `ep` at this step: for put_back and rearrange
    /// the testbed's predicate (latched by the episode, [`Episode::success`]); for swap, the
    /// three-tray variant's predicate, red (block 0) in the tray blue started in
    /// (`ep.progress().origins[1]`, the branch), blue (block 1) in red's origin tray 0, both
    /// resting there by the testbed's *in tray* test, gripper released (command ≤ 0), as the
    /// testbed's own swap predicate reads its two trays. Not latched: the caller keeps the
    /// first step it holds.
    pub fn accomplished(&self, ep: &Episode) -> bool {
        if self.task != TaskKind::Swap {
            return ep.success();
        }
        let Some(&branch) = ep.progress().origins.get(1) else {
            return false;
        };
        let s = ep.state_view();
        s.gripper_cmd <= 0.0 && s.in_tray(0, branch) && s.in_tray(1, 0)
    }

    /// Whether `ep` has reached the audited present.
    pub fn at_present(&self, ep: &Episode) -> bool {
        let w = ep.world();
        if self.task == TaskKind::Swap {
            let Some(tray) = ep.scene().layout.trays.first() else {
                return false;
            };
            // Blue resting in red's origin (tray 0), red held and lifted off the buffer pad.
            let blue_in_tray = w.block_pose(1).is_some_and(|p| {
                (p.pos[0] - tray.x).abs() < IN_TRAY_HALF
                    && (p.pos[1] - tray.y).abs() < IN_TRAY_HALF
                    && p.pos[2] < 0.05
            });
            return blue_in_tray
                && w.gripper_command() > 0.0
                && w.block_pose(self.held_block())
                    .is_some_and(|p| p.pos[2] > LIFT_Z);
        }
        ep.at_return_phase()
            && w.gripper_command() > 0.0
            && w.block_pose(self.held_block())
                .is_some_and(|p| p.pos[2] > LIFT_Z)
    }
}
