//! Scripted experts: for each task a sequence of macros (pick-place, press lever, push…) expanded into
//! waypoints from the privileged state when each macro starts.

use crate::episode::Episode;
use crate::geom::{Vec3, wrap_angle, yaw_of};
use crate::mjcf::BLOCK_HALF;
use crate::scene::rng::{normal, stream};
use crate::task::{PushDir, TaskKind};
use crate::world::{Action, MAX_DPOS};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Expert quality settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ExpertParams {
    /// Skill in `[0, 1]`: grasp and place points are off by Gaussian errors of standard deviation
    /// `(1 − skill) · 2 cm` per axis, drawn once per macro.
    pub skill: f64,
    /// Standard deviation of Gaussian noise added to every commanded translation (m).
    pub noise: f64,
}

impl Default for ExpertParams {
    fn default() -> Self {
        ExpertParams {
            skill: 1.0,
            noise: 0.0,
        }
    }
}

/// A field of [`ExpertParams`] out of its bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {message}")]
pub struct ExpertParamError {
    /// The field at fault: `skill` or `noise`.
    pub field: &'static str,
    /// Its bound and value, e.g. `must be in [0, 1], got 2`.
    pub message: String,
}

impl ExpertParams {
    /// Checks the bounds: `skill` in `[0, 1]`, `noise` finite and ≥ 0 (m).
    ///
    /// # Errors
    /// [`ExpertParamError`] naming the first field out of bounds.
    pub fn validate(&self) -> Result<(), ExpertParamError> {
        if !(0.0..=1.0).contains(&self.skill) {
            return Err(ExpertParamError {
                field: "skill",
                message: format!("must be in [0, 1], got {}", self.skill),
            });
        }
        if !(self.noise.is_finite() && self.noise >= 0.0) {
            return Err(ExpertParamError {
                field: "noise",
                message: format!("must be finite and ≥ 0 (m), got {}", self.noise),
            });
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dest {
    Tray(usize),
    Pad(usize),
    OnBlock(usize),
    OriginTray(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Macro {
    PickPlace(usize, Dest),
    Home,
    PressLever,
    PushDoor,
    Push(usize, PushDir),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Prim {
    Goto {
        target: Vec3,
        yaw: f64,
        grip: f64,
        tol: f64,
        max: usize,
    },
    Hold {
        grip: f64,
        steps: usize,
    },
    PushFollow {
        block: usize,
        dir: PushDir,
        start: [f64; 2],
        max: usize,
    },
}

const TRANSPORT_Z: f64 = 0.2;
const TRAY_FLOOR: f64 = 0.006;
const HOME: Vec3 = [0.45, 0.0, 0.2];
const OPEN: f64 = -1.0;
const CLOSED: f64 = 1.0;

/// A scripted expert for one episode.
#[derive(Debug, Clone)]
pub struct Expert {
    task: TaskKind,
    params: ExpertParams,
    rng: ChaCha8Rng,
    macros: VecDeque<Macro>,
    prims: VecDeque<Prim>,
    /// What each queued primitive's target is relative to (parallel to `prims`).
    anchors: VecDeque<Anchor>,
    prim_steps: usize,
    last_anchor: Anchor,
}

/// The object a waypoint of the expert is placed relative to; replay retargets paths by the
/// displacement of these anchors between scenes ([`crate::replay`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Anchor {
    /// A fixed world point (home pose).
    World,
    /// Block `i` (its position at the start of the episode).
    Block(usize),
    /// Tray `i`.
    Tray(usize),
    /// Pad `i`.
    Pad(usize),
    /// The door's lever tip (closed door).
    LeverTip,
    /// The push point on the closed door panel.
    DoorPush,
}

fn plan(task: TaskKind) -> Vec<Macro> {
    use Macro::*;
    match task {
        TaskKind::Stack => vec![PickPlace(0, Dest::OnBlock(1)), Home],
        TaskKind::Door => vec![PressLever, PushDoor, Home],
        TaskKind::PutBack => vec![
            PickPlace(0, Dest::Pad(0)),
            Home,
            PickPlace(0, Dest::OriginTray(0)),
            Home,
        ],
        TaskKind::Swap => vec![
            PickPlace(0, Dest::Pad(0)),
            PickPlace(1, Dest::Tray(0)),
            PickPlace(0, Dest::Tray(1)),
            Home,
        ],
        TaskKind::Rearrange => vec![
            PickPlace(0, Dest::Pad(0)),
            PickPlace(1, Dest::Pad(1)),
            Home,
            PickPlace(0, Dest::OriginTray(0)),
            PickPlace(1, Dest::OriginTray(1)),
            Home,
        ],
        TaskKind::PickPlace { block, tray } => {
            vec![PickPlace(block.index(), Dest::Tray(tray.index())), Home]
        }
        TaskKind::Push { block, dir } => vec![Push(block.index(), dir), Home],
    }
}

/// Gripper yaw that aligns the fingers with a block of yaw `y` (the nearest multiple of π/2).
fn grasp_yaw(y: f64) -> f64 {
    let q = std::f64::consts::FRAC_PI_2;
    let r = y - q * (y / q).round();
    wrap_angle(r)
}

impl Expert {
    /// An expert for `task` with its own seed (skill errors and action noise).
    pub fn new(task: TaskKind, params: ExpertParams, seed: u64) -> Expert {
        Expert {
            task,
            params,
            rng: stream(seed, "expert", 0),
            macros: plan(task).into(),
            prims: VecDeque::new(),
            anchors: VecDeque::new(),
            prim_steps: 0,
            last_anchor: Anchor::World,
        }
    }

    /// The anchor of the primitive that produced the last action of [`Expert::act`].
    pub fn current_anchor(&self) -> Anchor {
        self.last_anchor
    }

    /// The task it solves.
    pub fn task(&self) -> TaskKind {
        self.task
    }

    fn err(&mut self) -> [f64; 2] {
        let s = (1.0 - self.params.skill.clamp(0.0, 1.0)) * 0.02;
        [s * normal(&mut self.rng), s * normal(&mut self.rng)]
    }

    fn expand(&mut self, m: Macro, ep: &Episode) {
        let before = self.prims.len();
        let (first, rest, split) = match m {
            Macro::Home => (Anchor::World, Anchor::World, 0),
            Macro::PickPlace(b, dest) => {
                let d = match dest {
                    Dest::Tray(t) => Anchor::Tray(t),
                    Dest::OriginTray(k) => {
                        Anchor::Tray(ep.progress().origins.get(k).copied().unwrap_or(0))
                    }
                    Dest::Pad(k) => Anchor::Pad(k),
                    Dest::OnBlock(o) => Anchor::Block(o),
                };
                (Anchor::Block(b), d, 5)
            }
            Macro::PressLever => (Anchor::LeverTip, Anchor::LeverTip, 0),
            Macro::PushDoor => (Anchor::DoorPush, Anchor::DoorPush, 0),
            Macro::Push(b, _) => (Anchor::Block(b), Anchor::Block(b), 0),
        };
        self.expand_prims(m, ep);
        for k in 0..self.prims.len() - before {
            self.anchors.push_back(if k < split { first } else { rest });
        }
    }

    fn expand_prims(&mut self, m: Macro, ep: &Episode) {
        let w = ep.world();
        let layout = &ep.scene().layout;
        let goto = |target: Vec3, yaw: f64, grip: f64, tol: f64| Prim::Goto {
            target,
            yaw,
            grip,
            tol,
            max: 80,
        };
        match m {
            Macro::Home => self.prims.push_back(goto(HOME, 0.0, OPEN, 0.03)),
            Macro::PickPlace(b, dest) => {
                let Some(p) = w.block_pose(b) else { return };
                let yaw = grasp_yaw(yaw_of(p.quat));
                let e = self.err();
                let (bx, by) = (p.pos[0] + e[0], p.pos[1] + e[1]);
                let (dx, dy, surface) = match dest {
                    Dest::Tray(t) => layout
                        .trays
                        .get(t)
                        .map_or((HOME[0], HOME[1], 0.0), |t| (t.x, t.y, TRAY_FLOOR)),
                    Dest::OriginTray(k) => {
                        let t = ep.progress().origins.get(k).copied().unwrap_or(0);
                        layout
                            .trays
                            .get(t)
                            .map_or((HOME[0], HOME[1], 0.0), |t| (t.x, t.y, TRAY_FLOOR))
                    }
                    Dest::Pad(k) => layout
                        .pads
                        .get(k)
                        .map_or((HOME[0], HOME[1], 0.0), |p| (p.x, p.y, 0.0)),
                    Dest::OnBlock(o) => w.block_pose(o).map_or((HOME[0], HOME[1], 0.0), |q| {
                        (q.pos[0], q.pos[1], q.pos[2] + BLOCK_HALF)
                    }),
                };
                let e2 = self.err();
                let (dx, dy) = (dx + e2[0], dy + e2[1]);
                let grasp_z = p.pos[2] + 0.002;
                self.prims.extend([
                    goto([bx, by, TRANSPORT_Z], yaw, OPEN, 0.02),
                    goto([bx, by, grasp_z + 0.06], yaw, OPEN, 0.01),
                    goto([bx, by, grasp_z], yaw, OPEN, 0.006),
                    Prim::Hold {
                        grip: CLOSED,
                        steps: 8,
                    },
                    goto([bx, by, TRANSPORT_Z], yaw, CLOSED, 0.02),
                    goto([dx, dy, TRANSPORT_Z], yaw, CLOSED, 0.01),
                    goto([dx, dy, surface + BLOCK_HALF + 0.008], yaw, CLOSED, 0.006),
                    Prim::Hold {
                        grip: OPEN,
                        steps: 6,
                    },
                    goto([dx, dy, TRANSPORT_Z], yaw, OPEN, 0.03),
                ]);
            }
            Macro::PressLever => {
                let Some(t) = w.lever_tip() else { return };
                self.prims.extend([
                    goto([t[0], t[1], t[2] + 0.08], 0.0, CLOSED, 0.01),
                    Prim::Goto {
                        target: [t[0], t[1], t[2] - 0.035],
                        yaw: 0.0,
                        grip: CLOSED,
                        tol: 0.008,
                        max: 25,
                    },
                    Prim::Hold {
                        grip: CLOSED,
                        steps: 4,
                    },
                    goto([t[0], t[1], t[2] + 0.09], 0.0, CLOSED, 0.02),
                ]);
            }
            Macro::PushDoor => {
                let Some(p) = w.door_push_point() else { return };
                // Approach and push along the closed panel's normal, so a yawed door opens as far.
                let psi = ep.scene().layout.door.map_or(0.0, |d| d.yaw);
                let (nx, ny) = (psi.cos(), psi.sin());
                self.prims.extend([
                    goto(
                        [p[0] - 0.08 * nx, p[1] - 0.08 * ny, 0.25],
                        0.0,
                        CLOSED,
                        0.015,
                    ),
                    goto(
                        [p[0] - 0.08 * nx, p[1] - 0.08 * ny, 0.05],
                        0.0,
                        CLOSED,
                        0.01,
                    ),
                    Prim::Goto {
                        target: [p[0] + 0.16 * nx, p[1] + 0.16 * ny, 0.05],
                        yaw: 0.0,
                        grip: CLOSED,
                        tol: 0.01,
                        max: 60,
                    },
                ]);
            }
            Macro::Push(b, dir) => {
                let Some(p) = w.block_pose(b) else { return };
                let u = dir.unit();
                let back = 0.06;
                let (sx, sy) = (p.pos[0] - u[0] * back, p.pos[1] - u[1] * back);
                self.prims.extend([
                    goto([sx, sy, TRANSPORT_Z], 0.0, CLOSED, 0.02),
                    goto([sx, sy, 0.022], 0.0, CLOSED, 0.006),
                    Prim::PushFollow {
                        block: b,
                        dir,
                        start: [p.pos[0], p.pos[1]],
                        max: 60,
                    },
                    goto(
                        [p.pos[0] + u[0] * 0.06, p.pos[1] + u[1] * 0.06, TRANSPORT_Z],
                        0.0,
                        CLOSED,
                        0.03,
                    ),
                ]);
            }
        }
    }

    /// The next action for the episode's present state. After the plan is finished it holds still.
    pub fn act(&mut self, ep: &Episode) -> Action {
        for _ in 0..8 {
            if self.prims.is_empty() {
                match self.macros.pop_front() {
                    Some(m) => {
                        self.expand(m, ep);
                        self.prim_steps = 0;
                        continue;
                    }
                    None => {
                        return Action {
                            gripper: ep.world().gripper_command(),
                            ..Action::default()
                        };
                    }
                }
            }
            let Some(prim) = self.prims.front().copied() else {
                continue;
            };
            match self.prim_action(prim, ep) {
                Some(a) => {
                    self.prim_steps += 1;
                    self.last_anchor = self.anchors.front().copied().unwrap_or(Anchor::World);
                    return self.noisy(a);
                }
                None => {
                    self.prims.pop_front();
                    self.anchors.pop_front();
                    self.prim_steps = 0;
                }
            }
        }
        Action {
            gripper: ep.world().gripper_command(),
            ..Action::default()
        }
    }

    fn noisy(&mut self, mut a: Action) -> Action {
        if self.params.noise > 0.0 {
            for k in 0..3 {
                a.dpos[k] += self.params.noise * normal(&mut self.rng);
            }
        }
        a
    }

    /// `None` when the primitive is complete.
    fn prim_action(&self, prim: Prim, ep: &Episode) -> Option<Action> {
        let w = ep.world();
        let cmd = w.commanded_tcp();
        let cyaw = w.commanded_rpy()[2];
        match prim {
            Prim::Goto {
                target,
                yaw,
                grip,
                tol,
                max,
            } => {
                let d = [target[0] - cmd[0], target[1] - cmd[1], target[2] - cmd[2]];
                let dyaw = wrap_angle(yaw - cyaw);
                // Actuation noise keeps the command within a few millimetres of the target, never exactly on it.
                let reached_cmd = d.iter().all(|v| v.abs() < 0.003) && dyaw.abs() < 0.03;
                let tcp = w.tcp_pose().pos;
                let err = ((tcp[0] - target[0]).powi(2)
                    + (tcp[1] - target[1]).powi(2)
                    + (tcp[2] - target[2]).powi(2))
                .sqrt();
                if (reached_cmd && err < tol) || self.prim_steps >= max {
                    return None;
                }
                Some(Action {
                    dpos: d,
                    drot: [0.0, 0.0, dyaw],
                    gripper: grip,
                })
            }
            Prim::Hold { grip, steps } => (self.prim_steps < steps).then_some(Action {
                dpos: [0.0; 3],
                drot: [0.0; 3],
                gripper: grip,
            }),
            Prim::PushFollow {
                block,
                dir,
                start,
                max,
            } => {
                let p = w.block_pose(block)?.pos;
                let u = dir.unit();
                let along = (p[0] - start[0]) * u[0] + (p[1] - start[1]) * u[1];
                if along >= 0.125 || self.prim_steps >= max {
                    return None;
                }
                // Keep the fingers just behind the block's current centre: pushing through the centre
                // corrects sideways drift.
                let t = [p[0] - u[0] * 0.02, p[1] - u[1] * 0.02, 0.022];
                let d = [t[0] - cmd[0], t[1] - cmd[1], t[2] - cmd[2]];
                let d = d.map(|v| v.clamp(-0.6 * MAX_DPOS, 0.6 * MAX_DPOS));
                Some(Action {
                    dpos: d,
                    drot: [0.0, 0.0, wrap_angle(-cyaw)],
                    gripper: CLOSED,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grasp_yaw_picks_the_nearest_face() {
        assert!((grasp_yaw(0.3) - 0.3).abs() < 1e-12);
        assert!((grasp_yaw(1.4) - (1.4 - std::f64::consts::FRAC_PI_2)).abs() < 1e-12);
        assert!(grasp_yaw(-2.0).abs() <= std::f64::consts::FRAC_PI_4 + 1e-12);
    }

    #[test]
    fn params_out_of_bounds_name_their_field() {
        ExpertParams::default().validate().unwrap();
        let bad = |skill, noise| ExpertParams { skill, noise }.validate().unwrap_err();
        assert_eq!(bad(2.0, 0.0).to_string(), "skill must be in [0, 1], got 2");
        assert_eq!(bad(f64::NAN, 0.0).field, "skill");
        assert_eq!(bad(1.0, -0.1).field, "noise");
        assert_eq!(bad(1.0, f64::INFINITY).field, "noise");
    }
}
