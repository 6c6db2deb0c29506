//! Target policies: push controllers of designed, clearly different quality (SPEC.md §3 ground truth;
//! seed 003 §4 evaluates several policies per suite, and Appendix A.4 a policy far from the data).

use crate::obs::{NoiseKey, Observation};
use crate::policy::{PushParams, noisy_push_action};
use roboaudit_testbed::{Action, TaskKind};
use serde::{Deserialize, Serialize};

/// A named target policy: a push controller evaluated with its own noise seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetPolicy {
    /// Name, also the policy-actions file stem (`policies/<name>.parquet`).
    pub name: String,
    /// What it is and why it is in the set.
    pub description: String,
    /// Controller parameters.
    pub params: PushParams,
}

impl TargetPolicy {
    /// The action at an observation; its noise is a pure function of `(seed, key)`.
    pub fn act(&self, task: TaskKind, obs: &Observation, seed: u64, key: NoiseKey) -> Action {
        noisy_push_action(&self.params, task, obs, seed, key)
    }

    /// Whether it draws noise.
    pub fn is_stochastic(&self) -> bool {
        self.params.is_stochastic()
    }
}

fn target(name: &str, description: &str, params: PushParams) -> TargetPolicy {
    TargetPolicy {
        name: name.into(),
        description: description.into(),
        params,
    }
}

/// The standard set of seven target policies, in designed order of `V^π` from best to worst except
/// for `far_from_data`, whose value is whatever its unusual pose gives (measured, not designed):
/// `expert`, `noisy_low` (σ = 3 mm), `noisy_high` (σ = 6 mm), `slow` (35 % speed: succeeds as often as
/// the expert but late, so it ranks lower by `V^π` than by SR), `offset` (pushes 2 cm off-centre:
/// partial success), `far_from_data` (open gripper, hand turned 0.4 rad, approach at 32 cm: actions and
/// states the behaviour data never shows), `reversed` (pushes the wrong way: never succeeds).
pub fn standard_targets() -> Vec<TargetPolicy> {
    let d = PushParams::default();
    vec![
        target("expert", "push controller, full speed, no noise", d),
        target(
            "noisy_low",
            "push controller with 3 mm Gaussian action noise",
            PushParams { noise: 0.003, ..d },
        ),
        target(
            "noisy_high",
            "push controller with 6 mm Gaussian action noise",
            PushParams { noise: 0.006, ..d },
        ),
        target(
            "slow",
            "push controller at 35% speed: high success rate, late success (low V)",
            PushParams { speed: 0.35, ..d },
        ),
        target(
            "offset",
            "push controller aiming 2 cm off the block centre: the block turns and drifts sideways",
            PushParams { bias: 0.02, ..d },
        ),
        target(
            "far_from_data",
            "push controller with the gripper half open, hand turned 0.4 rad and a 32 cm approach: \
             actions and states outside the behaviour data (coverage failure, seed 003 App. A.4)",
            PushParams {
                gripper: FAR_GRIPPER,
                yaw: 0.4,
                approach_z: 0.32,
                ..d
            },
        ),
        target(
            "reversed",
            "push controller pushing the opposite way: never succeeds",
            PushParams {
                quarter_turns: 2,
                ..d
            },
        ),
    ]
}

/// Gripper command of `far_from_data` (the behaviour data always pushes with +1).
const FAR_GRIPPER: f64 = 0.0;
