//! Push controllers that are pure functions of the recorded observation ([`Observation`]) plus seeded
//! noise: the building block of target policies and of part of the behaviour mixture.
//!
//! The controller moves above a point 6 cm behind the block (at the approach height), descends
//! there, then pushes through the block's centre along the task's direction; when it is low but not
//! behind the block it lifts. Unlike the testbed's scripted expert it keeps no phase: every branch is
//! decided from the present tool-centre point and block position, which is what lets a policy-actions
//! file hold its action at any dataset frame.

use crate::obs::{NoiseKey, Observation, normal, rng_for};
use roboaudit_testbed::world::{MAX_DPOS, MAX_DROT};
use roboaudit_testbed::{Action, PushDir, TaskKind};
use serde::{Deserialize, Serialize};

/// Height of the tool-centre point while pushing (m): the fingertips just above the table.
const PUSH_Z: f64 = 0.022;
/// Below this height the controller is "low" (pushing or lifting) (m).
const LOW_Z: f64 = 0.05;
/// Distance of the approach point behind the block centre (m).
const BEHIND: f64 = 0.06;
/// Horizontal tolerance for descending onto the approach point (m).
const DESCEND_TOL: f64 = 0.015;
/// Proportional gain on the measured position error: below 1 because the hand lags its command.
const KP: f64 = 0.8;

/// Parameters of a push controller (each a physical quantity; see the field docs for units).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PushParams {
    /// Speed cap as a fraction of the testbed's translation limit (1.5 cm per action), in `(0, 1]`.
    pub speed: f64,
    /// Standard deviation of Gaussian noise added to each translation component (m per action), ≥ 0.
    pub noise: f64,
    /// Sideways offset of the push line from the block centre (m); off-centre pushes rotate the block
    /// and drift sideways.
    pub bias: f64,
    /// Push direction relative to the task's, in quarter turns counter-clockwise (0 = the task's
    /// direction, 2 = the opposite one).
    pub quarter_turns: u8,
    /// Gripper command in `[−1, 1]` (+1 closed, as the fingers push best; −1 open).
    pub gripper: f64,
    /// Height at which the controller travels to the approach point (m), in `[0.08, 0.4]`.
    pub approach_z: f64,
    /// Hand yaw the controller turns to (rad).
    pub yaw: f64,
}

impl Default for PushParams {
    /// A clean expert: full speed, no noise, no bias, gripper closed, approach at 20 cm, yaw 0.
    fn default() -> Self {
        PushParams {
            speed: 1.0,
            noise: 0.0,
            bias: 0.0,
            quarter_turns: 0,
            gripper: 1.0,
            approach_z: 0.2,
            yaw: 0.0,
        }
    }
}

impl PushParams {
    /// Checks ranges: `speed` in `(0, 1]`, `noise` finite and ≥ 0, `|bias| ≤ 0.1`, `gripper` in
    /// `[−1, 1]`, `approach_z` in `[0.08, 0.4]`, `yaw` finite.
    ///
    /// # Errors
    /// A message naming the first value out of range.
    pub fn check(&self) -> Result<(), String> {
        if !(self.speed > 0.0 && self.speed <= 1.0) {
            return Err(format!("speed {} is not in (0, 1]", self.speed));
        }
        if !(self.noise.is_finite() && self.noise >= 0.0) {
            return Err(format!("noise {} is not finite and ≥ 0", self.noise));
        }
        if self.bias.is_nan() || self.bias.abs() > 0.1 {
            return Err(format!("bias {} is not in [−0.1, 0.1]", self.bias));
        }
        if !(-1.0..=1.0).contains(&self.gripper) {
            return Err(format!("gripper {} is not in [−1, 1]", self.gripper));
        }
        if !(0.08..=0.4).contains(&self.approach_z) {
            return Err(format!(
                "approach_z {} is not in [0.08, 0.4]",
                self.approach_z
            ));
        }
        if !self.yaw.is_finite() {
            return Err("yaw is not finite".into());
        }
        Ok(())
    }

    /// Whether the controller draws noise (then its policy-actions file holds several samples).
    pub fn is_stochastic(&self) -> bool {
        self.noise > 0.0
    }
}

/// The block a push task moves and its direction; `None` for other tasks.
pub fn push_target(task: TaskKind) -> Option<(usize, PushDir)> {
    match task {
        TaskKind::Push { block, dir } => Some((block.index(), dir)),
        _ => None,
    }
}

fn rotate(u: [f64; 2], quarter_turns: u8) -> [f64; 2] {
    let mut v = u;
    for _ in 0..quarter_turns % 4 {
        v = [-v[1], v[0]];
    }
    v
}

fn wrap(a: f64) -> f64 {
    let t = std::f64::consts::TAU;
    let r = (a + std::f64::consts::PI).rem_euclid(t) - std::f64::consts::PI;
    if r <= -std::f64::consts::PI { r + t } else { r }
}

/// The noise-free action of a push controller at an observation (see the module docs for the branches).
/// For a task that is not a push, or an observation without the block, it holds still.
pub fn push_action(p: &PushParams, task: TaskKind, obs: &Observation) -> Action {
    let hold = Action {
        gripper: p.gripper,
        ..Action::default()
    };
    let Some((bi, dir)) = push_target(task) else {
        return hold;
    };
    let Some(b) = obs.block(bi) else {
        return hold;
    };
    let u = rotate(dir.unit(), p.quarter_turns);
    let n = [-u[1], u[0]];
    let tcp = obs.tcp();
    let rel = [tcp[0] - b[0], tcp[1] - b[1]];
    let along = rel[0] * u[0] + rel[1] * u[1];
    let side = rel[0] * n[0] + rel[1] * n[1] - p.bias;
    let behind = [
        b[0] - u[0] * BEHIND + n[0] * p.bias,
        b[1] - u[1] * BEHIND + n[1] * p.bias,
    ];
    let cap = p.speed * MAX_DPOS;
    let (target, cap) = if tcp[2] < LOW_Z {
        if along < -0.005 && side.abs() < 0.02 {
            // Push through the centre: the fingers aim 2 cm behind it, slower than travel.
            let t = [
                b[0] - u[0] * 0.02 + n[0] * p.bias,
                b[1] - u[1] * 0.02 + n[1] * p.bias,
                PUSH_Z,
            ];
            (t, 0.6 * cap)
        } else {
            ([tcp[0], tcp[1], p.approach_z], cap)
        }
    } else {
        let dxy = (behind[0] - tcp[0]).hypot(behind[1] - tcp[1]);
        if dxy < DESCEND_TOL {
            ([behind[0], behind[1], PUSH_Z], cap)
        } else if tcp[2] < p.approach_z - 0.03 {
            ([tcp[0], tcp[1], p.approach_z], cap)
        } else {
            ([behind[0], behind[1], p.approach_z], cap)
        }
    };
    let dpos = [0, 1, 2].map(|k| (KP * (target[k] - tcp[k])).clamp(-cap, cap));
    let dyaw = wrap(p.yaw - obs.tcp_yaw()).clamp(-MAX_DROT, MAX_DROT);
    Action {
        dpos,
        drot: [0.0, 0.0, dyaw],
        gripper: p.gripper,
    }
}

/// The action of a push controller with its seeded noise: [`push_action`] plus Gaussian noise of
/// standard deviation `p.noise` on each translation, clipped to the testbed's limits (±1.5 cm).
/// The noise is a pure function of `(seed, key)`.
pub fn noisy_push_action(
    p: &PushParams,
    task: TaskKind,
    obs: &Observation,
    seed: u64,
    key: NoiseKey,
) -> Action {
    let mut a = push_action(p, task, obs);
    if p.noise > 0.0 {
        let mut rng = rng_for(seed, &[key.stream, key.frame, key.sample]);
        for v in &mut a.dpos {
            *v = (*v + p.noise * normal(&mut rng)).clamp(-MAX_DPOS, MAX_DPOS);
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarter_turns_rotate_counter_clockwise() {
        assert_eq!(rotate([1.0, 0.0], 1), [-0.0, 1.0]);
        assert_eq!(rotate([1.0, 0.0], 2), [-1.0, -0.0]);
        assert_eq!(rotate([0.0, 1.0], 4), [0.0, 1.0]);
    }

    #[test]
    fn wrap_maps_into_half_open_interval() {
        assert!((wrap(3.0 * std::f64::consts::PI) - std::f64::consts::PI).abs() < 1e-12);
        assert!((wrap(-0.5) + 0.5).abs() < 1e-12);
        assert!((wrap(7.0) - (7.0 - std::f64::consts::TAU)).abs() < 1e-12);
    }
}
