//! The audited decision of each memory task: which histories a pair crosses, when the present is
//! reached, and which branch each history warrants.
//!
//! - `put_back`: history `m` starts with the block in tray `t_m`; the expert takes it to the
//!   inspection pad, goes home, comes back, grasps and lifts it. The present is the first step at
//!   which the lifted block's centre is above [`LIFT_Z`] after phase 1; branch = `t_m`.
//! - `rearrange`: as put_back with two blocks and two pads: history `m` has origins
//!   `(t_m, u_m)`; the present is block 0 lifted from its pad after phase 1; branch = `t_m`.
//! - `swap`: not supported. The testbed fixes swap's origins (`[0, 1]`), so no two lawful
//!   histories warrant different branches at one present.

use roboaudit_testbed::{Episode, TaskKind};

use crate::error::HarnessError;

/// Height (m) above which the held block counts as lifted: the present of put_back and rearrange.
pub const LIFT_Z: f64 = 0.12;

/// A task the harness can cross.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryTask {
    task: TaskKind,
}

impl MemoryTask {
    /// The memory task for `task`.
    ///
    /// # Errors
    /// [`HarnessError::UnsupportedTask`] for swap (see the module docs) and non-memory tasks.
    pub fn new(task: TaskKind) -> Result<MemoryTask, HarnessError> {
        match task {
            TaskKind::PutBack | TaskKind::Rearrange => Ok(MemoryTask { task }),
            TaskKind::Swap => Err(HarnessError::UnsupportedTask(
                "swap: the testbed fixes swap's origin trays ([0, 1]), so no two lawful histories warrant different branches at one present; use put_back or rearrange".into(),
            )),
            other => Err(HarnessError::UnsupportedTask(format!(
                "{} has no memory decision; use put_back or rearrange",
                other.name()
            ))),
        }
    }

    /// The testbed task.
    pub fn task(&self) -> TaskKind {
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

    /// The branch (tray index) that origins `o` warrant at the present.
    pub fn branch(&self, o: &[usize]) -> usize {
        o.get(self.held_block()).copied().unwrap_or(0)
    }

    /// Whether `ep` has reached the audited present.
    pub fn at_present(&self, ep: &Episode) -> bool {
        let w = ep.world();
        ep.at_return_phase()
            && w.gripper_command() > 0.0
            && w.block_pose(self.held_block())
                .is_some_and(|p| p.pos[2] > LIFT_Z)
    }
}
