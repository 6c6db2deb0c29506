//! The behaviour mixture that collects the offline dataset (seed 003 §3.1: data from teleoperators,
//! scripted controllers and earlier policies, with unknown action probabilities): the testbed's
//! scripted expert at three noise levels, push controllers, and failing policies.

use crate::obs::{NoiseKey, Observation, normal, rng_for};
use crate::policy::{PushParams, noisy_push_action};
use rand_chacha::ChaCha8Rng;
use roboaudit_testbed::world::{MAX_DPOS, MAX_DROT};
use roboaudit_testbed::{Action, Episode, Expert, ExpertParams, PushDir, TaskKind};
use serde::{Deserialize, Serialize};

/// A behaviour policy of the mixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BehaviourKind {
    /// The testbed's scripted expert, no noise, perfect skill.
    Expert,
    /// Scripted expert with 4 mm action noise and skill 0.9 (push point off by ≈ 2 mm).
    ExpertNoisy,
    /// Scripted expert with 10 mm action noise and skill 0.7.
    ExpertVeryNoisy,
    /// Push controller with 3 mm noise (the controller family of the target policies).
    Controller,
    /// Push controller at half speed with 5 mm noise.
    ControllerSlow,
    /// Push controller aiming 3.5 cm off-centre with 3 mm noise (mostly fails).
    ControllerOffset,
    /// Scripted expert pushing the block the opposite way (fails).
    WrongDirection,
    /// Smooth random motion with the gripper closed (fails).
    RandomWalk,
}

impl BehaviourKind {
    /// Every kind with its share of the dataset's episodes (shares sum to 1).
    pub const MIXTURE: [(BehaviourKind, f64); 8] = [
        (BehaviourKind::Expert, 0.2),
        (BehaviourKind::ExpertNoisy, 0.15),
        (BehaviourKind::ExpertVeryNoisy, 0.15),
        (BehaviourKind::Controller, 0.15),
        (BehaviourKind::ControllerSlow, 0.1),
        (BehaviourKind::ControllerOffset, 0.075),
        (BehaviourKind::WrongDirection, 0.1),
        (BehaviourKind::RandomWalk, 0.075),
    ];

    /// Stable snake-case name.
    pub fn name(self) -> &'static str {
        match self {
            BehaviourKind::Expert => "expert",
            BehaviourKind::ExpertNoisy => "expert_noisy",
            BehaviourKind::ExpertVeryNoisy => "expert_very_noisy",
            BehaviourKind::Controller => "controller",
            BehaviourKind::ControllerSlow => "controller_slow",
            BehaviourKind::ControllerOffset => "controller_offset",
            BehaviourKind::WrongDirection => "wrong_direction",
            BehaviourKind::RandomWalk => "random_walk",
        }
    }

    /// How many episodes of each kind a dataset of `n` episodes holds: the shares of [`Self::MIXTURE`]
    /// rounded by largest remainder (ties to the earlier kind), summing to `n`.
    pub fn counts(n: usize) -> Vec<(BehaviourKind, usize)> {
        let exact: Vec<f64> = Self::MIXTURE.iter().map(|(_, w)| w * n as f64).collect();
        let mut c: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
        let mut rest = n - c.iter().sum::<usize>();
        let mut order: Vec<usize> = (0..c.len()).collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        for k in order {
            if rest == 0 {
                break;
            }
            c[k] += 1;
            rest -= 1;
        }
        Self::MIXTURE.iter().map(|(k, _)| *k).zip(c).collect()
    }
}

fn opposite(d: PushDir) -> PushDir {
    match d {
        PushDir::Left => PushDir::Right,
        PushDir::Right => PushDir::Left,
        PushDir::Forward => PushDir::Backward,
        PushDir::Backward => PushDir::Forward,
    }
}

/// Clips an action to the testbed's limits (the world clips the same way, so the motion is unchanged);
/// the dataset then records the command the robot executed, in one action space for every behaviour.
pub fn clip_action(a: Action) -> Action {
    Action {
        dpos: a.dpos.map(|v| v.clamp(-MAX_DPOS, MAX_DPOS)),
        drot: a.drot.map(|v| v.clamp(-MAX_DROT, MAX_DROT)),
        gripper: a.gripper.clamp(-1.0, 1.0),
    }
}

/// A behaviour policy driving one episode (it may keep state, unlike target policies).
#[derive(Debug)]
pub enum BehaviourPolicy {
    /// A scripted expert (possibly for the wrong task).
    Scripted(Box<Expert>),
    /// A push controller with its noise seed.
    Controller {
        /// Parameters.
        params: PushParams,
        /// Noise seed.
        seed: u64,
    },
    /// Smooth random motion.
    Random {
        /// Its generator.
        rng: Box<ChaCha8Rng>,
        /// Present velocity command (m per action).
        vel: [f64; 3],
    },
}

impl BehaviourPolicy {
    /// The policy of `kind` for an episode of `task`, seeded by `seed`.
    pub fn new(kind: BehaviourKind, task: TaskKind, seed: u64) -> BehaviourPolicy {
        let scripted = |t: TaskKind, noise: f64, skill: f64| {
            BehaviourPolicy::Scripted(Box::new(Expert::new(
                t,
                ExpertParams { skill, noise },
                seed,
            )))
        };
        let ctrl = |params: PushParams| BehaviourPolicy::Controller { params, seed };
        let d = PushParams::default();
        match kind {
            BehaviourKind::Expert => scripted(task, 0.0, 1.0),
            BehaviourKind::ExpertNoisy => scripted(task, 0.004, 0.9),
            BehaviourKind::ExpertVeryNoisy => scripted(task, 0.01, 0.7),
            BehaviourKind::Controller => ctrl(PushParams { noise: 0.003, ..d }),
            BehaviourKind::ControllerSlow => ctrl(PushParams {
                speed: 0.5,
                noise: 0.005,
                ..d
            }),
            BehaviourKind::ControllerOffset => ctrl(PushParams {
                bias: 0.035,
                noise: 0.003,
                ..d
            }),
            BehaviourKind::WrongDirection => {
                let wrong = match task {
                    TaskKind::Push { block, dir } => TaskKind::Push {
                        block,
                        dir: opposite(dir),
                    },
                    other => other,
                };
                scripted(wrong, 0.002, 1.0)
            }
            BehaviourKind::RandomWalk => BehaviourPolicy::Random {
                rng: Box::new(rng_for(seed, &[0x5241_4e44])),
                vel: [0.0; 3],
            },
        }
    }

    /// The (clipped) action at the episode's present state.
    pub fn act(&mut self, ep: &Episode) -> Action {
        let a = match self {
            BehaviourPolicy::Scripted(e) => e.act(ep),
            BehaviourPolicy::Controller { params, seed } => {
                let key = NoiseKey {
                    stream: *seed,
                    frame: ep.steps() as u64,
                    sample: 0,
                };
                noisy_push_action(params, ep.task(), &Observation::of_episode(ep), *seed, key)
            }
            BehaviourPolicy::Random { rng, vel } => {
                let z = ep.proprio().ee.pos[2];
                for (k, v) in vel.iter_mut().enumerate() {
                    // Drift back towards a mid height so the walk explores the table, not the ceiling.
                    let pull = if k == 2 { 0.1 * (0.08 - z) } else { 0.0 };
                    *v = 0.85 * *v + 0.004 * normal(rng) + pull;
                }
                Action {
                    dpos: *vel,
                    drot: [0.0; 3],
                    gripper: 1.0,
                }
            }
        };
        clip_action(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_shares_and_sum_to_n() {
        let c = BehaviourKind::counts(750);
        assert_eq!(c.iter().map(|(_, n)| n).sum::<usize>(), 750);
        assert_eq!(c[0], (BehaviourKind::Expert, 150));
        // 0.075 · 750 = 56.25 and 0.15 · 750 = 112.5: largest remainders go to the 112.5s first.
        let total_exact: f64 = BehaviourKind::MIXTURE.iter().map(|(_, w)| w).sum();
        assert!((total_exact - 1.0).abs() < 1e-12);
        assert_eq!(c[1].1 + c[2].1 + c[3].1, 113 + 113 + 112);
        for n in [0, 1, 7, 16, 101] {
            assert_eq!(
                BehaviourKind::counts(n)
                    .iter()
                    .map(|(_, k)| k)
                    .sum::<usize>(),
                n
            );
        }
    }

    #[test]
    fn clip_keeps_actions_within_the_testbed_limits() {
        let a = clip_action(Action {
            dpos: [0.3, -0.3, 0.001],
            drot: [0.0, 1.0, -1.0],
            gripper: 3.0,
        });
        assert_eq!(a.dpos, [MAX_DPOS, -MAX_DPOS, 0.001]);
        assert_eq!(a.drot, [0.0, MAX_DROT, -MAX_DROT]);
        assert_eq!(a.gripper, 1.0);
    }
}
