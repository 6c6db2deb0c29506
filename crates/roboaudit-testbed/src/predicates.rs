//! Success predicates, as pure functions of a [`StateView`] so they can be checked on hand-built states.
//!
//! Common terms (all distances in metres, table top at z = 0):
//! - *released*: the last gripper command is ≤ 0 (opening or open);
//! - *at rest*: the block's linear speed is below [`REST_SPEED`] m/s;
//! - *in tray t*: block centre within [`IN_TRAY_HALF`] of the tray centre along x and y, centre below
//!   z = 0.05 (resting in it, not held above it), at rest;
//! - *on pad p*: block centre within 0.03 of the pad centre in the plane, centre below z = 0.03, at rest.
//!
//! Task predicates:
//! - `stack`: red centre within 0.02 of blue's in the plane, red above blue by 0.035–0.045 (one block
//!   height ± 5 mm), blue on the table (z < 0.03), both at rest, released;
//! - `door`: hinge angle ≥ [`DOOR_OPEN_ANGLE`] rad;
//! - `pick_place`: the block in the tray, released;
//! - `push`: displacement from the start along the direction ≥ [`PUSH_DISTANCE`], sideways ≤ 0.05, the
//!   block on the table (z < 0.03);
//! - `put_back`: the block has been on the pad and released (phase 1), and is now in its origin tray,
//!   released;
//! - `swap`: red in tray B (1) and blue in tray A (0), released;
//! - `rearrange`: both blocks have been on their pads at once and released (phase 1), and each is now
//!   in its origin tray, released.

use crate::geom::Vec3;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Speed below which a block counts as at rest (m/s).
pub const REST_SPEED: f64 = 0.05;
/// Half width of the region of a tray that counts as inside (m).
pub const IN_TRAY_HALF: f64 = 0.05;
/// Door angle that counts as open (rad), about 52°: wide enough that a push must go deep, or land
/// near the hinge, to open the damped door (a shallow push far from the hinge does not).
pub const DOOR_OPEN_ANGLE: f64 = 0.9;
/// Push distance of the push tasks (m).
pub const PUSH_DISTANCE: f64 = 0.10;

/// The state the predicates read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateView {
    /// Block centres (m), block `i` coloured [`crate::Family::block_color`]`(i)`.
    pub blocks: Vec<Vec3>,
    /// Block linear speeds (m/s).
    pub block_speeds: Vec<f64>,
    /// Tray centres in the plane.
    pub trays: Vec<[f64; 2]>,
    /// Pad centres in the plane.
    pub pads: Vec<[f64; 2]>,
    /// Door hinge angle (rad), if any.
    pub door_angle: Option<f64>,
    /// Last gripper command in `[-1, 1]`.
    pub gripper_cmd: f64,
}

/// Progress of a task that the predicates need besides the present state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TaskProgress {
    /// Memory tasks: origin tray of each block (the thing to remember).
    pub origins: Vec<usize>,
    /// Memory tasks: phase 1 (blocks on pads) has been completed.
    pub phase1_done: bool,
    /// Push tasks: block position at the start of the episode.
    pub push_start: Option<[f64; 2]>,
}

impl StateView {
    fn released(&self) -> bool {
        self.gripper_cmd <= 0.0
    }

    fn at_rest(&self, b: usize) -> bool {
        self.block_speeds.get(b).is_some_and(|s| *s < REST_SPEED)
    }

    /// Whether block `b` is in tray `t`.
    pub fn in_tray(&self, b: usize, t: usize) -> bool {
        match (self.blocks.get(b), self.trays.get(t)) {
            (Some(p), Some(c)) => {
                (p[0] - c[0]).abs() <= IN_TRAY_HALF
                    && (p[1] - c[1]).abs() <= IN_TRAY_HALF
                    && p[2] < 0.05
                    && self.at_rest(b)
            }
            _ => false,
        }
    }

    /// Whether block `b` is on pad `p`.
    pub fn on_pad(&self, b: usize, p: usize) -> bool {
        match (self.blocks.get(b), self.pads.get(p)) {
            (Some(x), Some(c)) => {
                (x[0] - c[0]).hypot(x[1] - c[1]) <= 0.03 && x[2] < 0.03 && self.at_rest(b)
            }
            _ => false,
        }
    }
}

/// Updates the phase flags of memory tasks from the present state (call after every step).
pub fn update_progress(task: TaskKind, s: &StateView, p: &mut TaskProgress) {
    if p.phase1_done {
        return;
    }
    p.phase1_done = match task {
        TaskKind::PutBack => s.released() && s.on_pad(0, 0),
        TaskKind::Rearrange => s.released() && s.on_pad(0, 0) && s.on_pad(1, 1),
        _ => false,
    };
}

/// Whether `task` is accomplished in state `s` given progress `p` (see the module docs).
pub fn success(task: TaskKind, s: &StateView, p: &TaskProgress) -> bool {
    match task {
        TaskKind::Stack => {
            let (Some(a), Some(b)) = (s.blocks.first(), s.blocks.get(1)) else {
                return false;
            };
            let dz = a[2] - b[2];
            (a[0] - b[0]).hypot(a[1] - b[1]) <= 0.02
                && (0.035..=0.045).contains(&dz)
                && b[2] < 0.03
                && s.at_rest(0)
                && s.at_rest(1)
                && s.released()
        }
        TaskKind::Door => s.door_angle.is_some_and(|a| a >= DOOR_OPEN_ANGLE),
        TaskKind::PickPlace { block, tray } => {
            s.released() && s.in_tray(block.index(), tray.index())
        }
        TaskKind::Push { block, dir } => {
            let (Some(x), Some(st)) = (s.blocks.get(block.index()), p.push_start) else {
                return false;
            };
            let u = dir.unit();
            let d = [x[0] - st[0], x[1] - st[1]];
            let along = d[0] * u[0] + d[1] * u[1];
            let side = (d[0] * u[1] - d[1] * u[0]).abs();
            along >= PUSH_DISTANCE && side <= 0.05 && x[2] < 0.03
        }
        TaskKind::PutBack => {
            p.phase1_done && s.released() && p.origins.first().is_some_and(|&o| s.in_tray(0, o))
        }
        TaskKind::Swap => s.released() && s.in_tray(0, 1) && s.in_tray(1, 0),
        TaskKind::Rearrange => {
            p.phase1_done
                && s.released()
                && p.origins.len() == 2
                && p.origins.iter().enumerate().all(|(b, &o)| s.in_tray(b, o))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{Color, PushDir};

    fn view(blocks: Vec<Vec3>) -> StateView {
        StateView {
            block_speeds: vec![0.0; blocks.len()],
            blocks,
            trays: vec![[0.6, -0.2], [0.6, 0.0], [0.6, 0.2]],
            pads: vec![[0.38, 0.0], [0.38, 0.12]],
            door_angle: None,
            gripper_cmd: -1.0,
        }
    }

    #[test]
    fn stack_needs_alignment_height_rest_and_release() {
        let mut s = view(vec![[0.5, 0.1, 0.06], [0.5, 0.1, 0.02]]);
        let p = TaskProgress::default();
        assert!(success(TaskKind::Stack, &s, &p));
        s.blocks[0] = [0.515, 0.1, 0.06];
        assert!(success(TaskKind::Stack, &s, &p));
        s.blocks[0] = [0.525, 0.1, 0.06]; // 2.5 cm off
        assert!(!success(TaskKind::Stack, &s, &p));
        s.blocks[0] = [0.5, 0.1, 0.07]; // hovering
        assert!(!success(TaskKind::Stack, &s, &p));
        s.blocks[0] = [0.5, 0.1, 0.06];
        s.gripper_cmd = 1.0; // still held
        assert!(!success(TaskKind::Stack, &s, &p));
        s.gripper_cmd = -1.0;
        s.block_speeds[0] = 0.2; // falling
        assert!(!success(TaskKind::Stack, &s, &p));
        // Blue on red is not red on blue.
        let s2 = view(vec![[0.5, 0.1, 0.02], [0.5, 0.1, 0.06]]);
        assert!(!success(TaskKind::Stack, &s2, &p));
    }

    #[test]
    fn door_threshold() {
        let mut s = view(vec![]);
        // Threshold raised from 0.5 to 0.9 rad with the damped door (issue 5: informative door matrix).
        s.door_angle = Some(0.89);
        assert!(!success(TaskKind::Door, &s, &TaskProgress::default()));
        s.door_angle = Some(0.9);
        assert!(success(TaskKind::Door, &s, &TaskProgress::default()));
    }

    #[test]
    fn pick_place_checks_the_named_tray() {
        let t = TaskKind::PickPlace {
            block: Color::Green,
            tray: Color::Blue,
        };
        let mut s = view(vec![
            [0.4, -0.2, 0.02],
            [0.6, 0.2, 0.026],
            [0.4, 0.1, 0.02],
            [0.4, 0.2, 0.02],
        ]);
        assert!(success(t, &s, &TaskProgress::default()));
        s.blocks[1] = [0.6, 0.0, 0.026]; // green tray instead of blue
        assert!(!success(t, &s, &TaskProgress::default()));
        s.blocks[1] = [0.6, 0.2, 0.1]; // above the tray
        assert!(!success(t, &s, &TaskProgress::default()));
    }

    #[test]
    fn push_measures_along_and_sideways() {
        let t = TaskKind::Push {
            block: Color::Red,
            dir: PushDir::Right,
        };
        let p = TaskProgress {
            push_start: Some([0.4, -0.2]),
            ..Default::default()
        };
        let mut s = view(vec![[0.42, -0.31, 0.02]]);
        assert!(success(t, &s, &p));
        s.blocks[0] = [0.47, -0.31, 0.02]; // 7 cm sideways
        assert!(!success(t, &s, &p));
        s.blocks[0] = [0.4, -0.29, 0.02]; // only 9 cm
        assert!(!success(t, &s, &p));
    }

    #[test]
    fn put_back_needs_phase_one_and_the_origin_tray() {
        let mut s = view(vec![[0.38, 0.0, 0.02]]);
        let mut p = TaskProgress {
            origins: vec![2],
            ..Default::default()
        };
        update_progress(TaskKind::PutBack, &s, &mut p);
        assert!(p.phase1_done);
        s.blocks[0] = [0.6, 0.2, 0.026];
        assert!(success(TaskKind::PutBack, &s, &p));
        s.blocks[0] = [0.6, 0.0, 0.026]; // wrong tray
        assert!(!success(TaskKind::PutBack, &s, &p));
        let fresh = TaskProgress {
            origins: vec![2],
            ..Default::default()
        };
        s.blocks[0] = [0.6, 0.2, 0.026]; // never inspected
        assert!(!success(TaskKind::PutBack, &s, &fresh));
    }

    #[test]
    fn swap_and_rearrange() {
        let mut s = view(vec![[0.6, 0.0, 0.026], [0.6, -0.2, 0.026]]);
        s.trays = vec![[0.6, -0.2], [0.6, 0.0]];
        assert!(success(TaskKind::Swap, &s, &TaskProgress::default()));
        s.blocks.swap(0, 1);
        assert!(!success(TaskKind::Swap, &s, &TaskProgress::default()));
        let mut r = view(vec![[0.38, 0.0, 0.02], [0.38, 0.12, 0.02]]);
        let mut p = TaskProgress {
            origins: vec![1, 0],
            ..Default::default()
        };
        update_progress(TaskKind::Rearrange, &r, &mut p);
        assert!(p.phase1_done);
        r.blocks = vec![[0.6, 0.0, 0.026], [0.6, -0.2, 0.026]];
        assert!(success(TaskKind::Rearrange, &r, &p));
        r.blocks.swap(0, 1);
        assert!(!success(TaskKind::Rearrange, &r, &p));
    }
}
