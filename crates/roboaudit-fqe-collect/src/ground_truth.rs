//! Ground truth by rollouts (SPEC.md §3): each target policy drives `rollouts` episodes per push task
//! from the same initial-state distribution as the dataset; `V^π = mean γ^{T−1}·success` and
//! `SR = mean success`, with `T` the number of actions (frames) of the episode.

use crate::config::CheckedConfig;
use crate::dataset::BehaviourSummary;
use crate::error::Result;
use crate::obs::{NoiseKey, Observation, mix};
use crate::scenes::{InitialState, Stream, push_tasks};
use crate::served::ServedInfo;
use crate::targets::TargetPolicy;
use rayon::prelude::*;
use roboaudit_fqe::ground_truth::{GroundTruth, TruthExtras, TruthPolicy, TruthTask};
use roboaudit_testbed::{Action, Episode, TaskKind};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The outcome of one rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutOutcome {
    /// The task succeeded.
    pub success: bool,
    /// Actions taken (`T`, the number of frames a recording would hold).
    pub steps: usize,
}

/// Noise seed of a target policy: its name hashed with the collection seed, so adding a policy does
/// not change the others' noise.
pub fn policy_seed(seed: u64, name: &str) -> u64 {
    name.bytes()
        .fold(mix(seed ^ 0x504f_4c49_4359), |h, b| mix(h ^ u64::from(b)))
}

/// Compile-time render size of the scenes built-in rollouts run in (they render nothing; the size
/// only bounds the offscreen buffer, not the physics).
pub const ROLLOUT_RENDER_SIZE: usize = 64;

/// Drives one episode of `task` from `initial` until done: at every step `actor(episode, t)`
/// (with `t` = actions taken so far) returns the action to execute. The scene is compiled for
/// renders of up to `render_size` pixels, so an actor may render the episode's camera.
///
/// # Errors
/// Testbed errors, and the first error of `actor` (the rollout stops there).
pub fn rollout_with(
    task: TaskKind,
    initial: &InitialState,
    render_size: usize,
    actor: &mut dyn FnMut(&mut Episode, usize) -> Result<Action>,
) -> Result<RolloutOutcome> {
    let mut ep = initial.start(task, render_size)?;
    while !ep.done() {
        let t = ep.steps();
        let a = actor(&mut ep, t)?;
        ep.step(&a)?;
    }
    Ok(RolloutOutcome {
        success: ep.success(),
        steps: ep.steps(),
    })
}

/// Runs `policy` on `task` from `initial` until done (through [`rollout_with`]). Its noise at
/// step `t` is keyed by `(episode seed, t, sample 0)`.
///
/// # Errors
/// Testbed errors.
pub fn rollout(
    policy: &TargetPolicy,
    task: TaskKind,
    initial: &InitialState,
    seed: u64,
) -> Result<RolloutOutcome> {
    rollout_with(task, initial, ROLLOUT_RENDER_SIZE, &mut |ep, t| {
        let key = NoiseKey {
            stream: initial.episode_seed,
            frame: t as u64,
            sample: 0,
        };
        Ok(policy.act(task, &Observation::of_episode(ep), seed, key))
    })
}

/// The initial state of rollout `rollout` of push task `task` (its position in
/// [`crate::scenes::push_tasks`]): the same for every target policy, built-in or served.
///
/// # Errors
/// Testbed errors from [`InitialState::draw`].
pub fn rollout_initial(cfg: &CheckedConfig, task: usize, rollout: usize) -> Result<InitialState> {
    InitialState::draw(
        cfg.config.seed,
        cfg.config.layout_level,
        Stream::Rollout {
            task: task as u64,
            rollout: rollout as u64,
        },
    )
}

/// What `fqe collect` adds to the documented fields of `ground_truth.json`
/// ([`roboaudit_fqe::ground_truth`]), slot by slot, in the order it writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collected;

impl TruthExtras for Collected {
    type Run = RunInfo;
    type Dataset = DatasetInfo;
    type About = PolicyAbout;
    type Values = PolicyValues;
    type Name = TaskName;
    type Spread = TaskSpread;
}

/// `ground_truth.json` as `fqe collect` writes it.
pub type GroundTruthFile = GroundTruth<Collected>;
/// Ground truth of one policy, as `fqe collect` writes it.
pub type PolicyTruth = TruthPolicy<Collected>;
/// Ground truth of one policy on one task, as `fqe collect` writes it.
pub type TaskTruth = TruthTask<Collected>;

/// The collection's settings (after `gamma`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Collection seed.
    pub seed: u64,
    /// Dataset folder, relative to the output folder.
    pub dataset: String,
    /// Image feature of the dataset.
    pub image_key: String,
    /// Proprioception feature (15 values).
    pub state_key: String,
    /// Action feature (7 values: dx, dy, dz, droll, dpitch, dyaw, gripper).
    pub action_key: String,
    /// Success label feature (terminal, latched).
    pub success_key: String,
}

/// The recorded dataset (after `n_dataset_episodes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    /// Dataset frames.
    pub n_dataset_frames: usize,
    /// Behaviour mixture as recorded.
    pub behaviour: Vec<BehaviourSummary>,
    /// Noise stream of the policy-actions files (see `actions_file::dataset_stream`).
    pub actions_noise_stream: u64,
}

/// What a target policy is (after its `policy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyAbout {
    /// What it is.
    pub description: String,
}

/// How a target policy was queried and its suite values (after its `actions_file`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyValues {
    /// Action samples per frame in its policy-actions file.
    pub samples: usize,
    /// Whether the policy draws noise: a built-in's noise σ > 0; a served policy's declared
    /// `action_seed` capability (a served policy that samples without declaring it is reported
    /// deterministic, as nothing on the wire tells).
    pub stochastic: bool,
    /// Controller parameters of a built-in target (absent for a served one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<crate::policy::PushParams>,
    /// How a served target was queried (absent for a built-in one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<ServedInfo>,
    /// Mean over tasks of `v_pi` (tasks weigh equally), in `[0, 1]`.
    pub suite_v_pi: f64,
    /// Mean over tasks of `success_rate`, in `[0, 1]`.
    pub suite_success_rate: f64,
}

/// The testbed's name of a task (after its `task_index`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskName {
    /// Testbed task name (`push:<block>:<dir>`).
    pub task_name: String,
}

/// The spread of a task's rollouts (after its `success_rate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpread {
    /// Standard error of `v_pi` (sample standard deviation / √n; 0 when n = 1).
    pub v_pi_se: f64,
    /// Mean episode length in actions.
    pub mean_steps: f64,
}

/// A policy's ground truth from its per-task values `tasks`: `actions_file` is
/// `policies/<policy>.parquet`, and the suite values are the means over tasks.
pub(crate) fn policy_truth(
    policy: &str,
    description: String,
    values: impl FnOnce(f64, f64) -> PolicyValues,
    tasks: Vec<TaskTruth>,
) -> PolicyTruth {
    let nt = tasks.len().max(1) as f64;
    let suite_v_pi = tasks.iter().map(|x| x.v_pi).sum::<f64>() / nt;
    let suite_success_rate = tasks.iter().map(|x| x.success_rate).sum::<f64>() / nt;
    PolicyTruth {
        policy: policy.to_owned(),
        about: PolicyAbout { description },
        actions_file: Some(format!("policies/{policy}.parquet")),
        values: values(suite_v_pi, suite_success_rate),
        tasks,
    }
}

/// Ground truth of one task from its rollouts' outcomes (task `k` of [`push_tasks`]).
pub(crate) fn task_truth(
    task: TaskKind,
    k: usize,
    outcomes: &[RolloutOutcome],
    gamma: f64,
) -> TaskTruth {
    let n = outcomes.len();
    let v: Vec<f64> = outcomes
        .iter()
        .map(|o| {
            if o.success {
                gamma.powi(i32::try_from(o.steps.saturating_sub(1)).unwrap_or(i32::MAX))
            } else {
                0.0
            }
        })
        .collect();
    let nf = n.max(1) as f64;
    let mean = v.iter().sum::<f64>() / nf;
    let se = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0)).sqrt() / nf.sqrt()
    } else {
        0.0
    };
    TaskTruth {
        task: task.instruction(),
        task_index: Some(k),
        name: TaskName {
            task_name: task.name(),
        },
        v_pi: mean,
        success_rate: outcomes.iter().filter(|o| o.success).count() as f64 / nf,
        spread: TaskSpread {
            v_pi_se: se,
            mean_steps: outcomes.iter().map(|o| o.steps as f64).sum::<f64>() / nf,
        },
        n_episodes: Some(n as u64),
    }
}

/// Rolls out every target policy `rollouts` times per push task, in parallel; `progress(done, total)`
/// counts rollouts. Every policy starts from the same initial states (common random numbers).
///
/// # Errors
/// The first testbed error.
pub fn ground_truth(
    cfg: &CheckedConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<PolicyTruth>> {
    Ok(builtin_truth(cfg, &builtin_outcomes(cfg, progress)?))
}

/// The outcomes of [`ground_truth`]'s rollouts, policy-major, then task, then rollout.
///
/// # Errors
/// The first testbed error.
pub fn builtin_outcomes(
    cfg: &CheckedConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<RolloutOutcome>> {
    let c = &cfg.config;
    let tasks = push_tasks();
    let mut jobs = Vec::new();
    for (pi, _) in cfg.targets.iter().enumerate() {
        for (k, _) in tasks.iter().enumerate() {
            for r in 0..c.rollouts {
                jobs.push((pi, k, r));
            }
        }
    }
    let done = AtomicUsize::new(0);
    jobs.par_iter()
        .map(|&(pi, k, r)| {
            let initial = rollout_initial(cfg, k, r)?;
            let t = &cfg.targets[pi];
            let o = rollout(t, tasks[k], &initial, policy_seed(c.seed, &t.name));
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            o
        })
        .collect()
}

/// The built-in targets' ground truth from their rollouts' `outcomes` (as [`builtin_outcomes`]
/// orders them).
pub fn builtin_truth(cfg: &CheckedConfig, outcomes: &[RolloutOutcome]) -> Vec<PolicyTruth> {
    let c = &cfg.config;
    let tasks = push_tasks();
    let per_task = c.rollouts;
    cfg.targets
        .iter()
        .enumerate()
        .map(|(pi, t)| {
            let tt: Vec<TaskTruth> = tasks
                .iter()
                .enumerate()
                .map(|(k, &task)| {
                    let from = (pi * tasks.len() + k) * per_task;
                    task_truth(task, k, &outcomes[from..from + per_task], c.gamma)
                })
                .collect();
            let values = |suite_v_pi, suite_success_rate| PolicyValues {
                samples: cfg.samples_for(t),
                stochastic: t.is_stochastic(),
                params: Some(t.params),
                served: None,
                suite_v_pi,
                suite_success_rate,
            };
            policy_truth(&t.name, t.description.clone(), values, tt)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v_pi_discounts_by_length_minus_one() {
        let task = TaskKind::language_suite()[8];
        let o = [
            RolloutOutcome {
                success: true,
                steps: 1,
            },
            RolloutOutcome {
                success: true,
                steps: 3,
            },
            RolloutOutcome {
                success: false,
                steps: 160,
            },
            RolloutOutcome {
                success: true,
                steps: 2,
            },
        ];
        let t = task_truth(task, 0, &o, 0.5);
        // (0.5^0 + 0.5^2 + 0 + 0.5^1) / 4 = 1.75 / 4
        assert!((t.v_pi - 0.4375).abs() < 1e-15);
        assert!((t.success_rate - 0.75).abs() < 1e-15);
        assert!((t.spread.mean_steps - 41.5).abs() < 1e-12);
        // sample sd of [1, .25, 0, .5] = sqrt(((.5625)+(.0625)+(.1914..)+(.0039..))/3)
        let m = 0.4375f64;
        let var = [1.0f64, 0.25, 0.0, 0.5]
            .iter()
            .map(|x| (x - m).powi(2))
            .sum::<f64>()
            / 3.0;
        assert!((t.spread.v_pi_se - var.sqrt() / 2.0).abs() < 1e-15);
    }
}
