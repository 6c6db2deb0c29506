//! Served target policies: policies queried over openpi's websocket protocol
//! (`roboaudit-policy-client`) instead of computed in process (SPEC.md §3 ground truth;
//! docs/methods.md §3).
//!
//! A served target gets the same two things as a built-in one: rollouts from the common initial
//! states ([`crate::ground_truth::rollout_initial`]), and its actions at every dataset frame (the
//! policy-actions file, through `dataset_actions::collect_actions`). Both see the same
//! observation ([`observation`]):
//!
//! | key (default; the server's metadata may rename it) | value |
//! |---|---|
//! | `observation/image` (role `image`) | the scene camera, uint8 HWC, `image_size`² (the very RGB the dataset stores as PNG) |
//! | `observation/state` (role `state`) | the 15 proprioception values as float32 (`observation.state`) |
//! | `observation/environment_state` (role `environment_state`) | the 28 block-pose values as float32 (`observation.environment_state`) |
//! | `prompt` (role `prompt`) | the task instruction |
//! | `roboaudit/action_seed` | with the `action_seed` capability: [`rollout_action_seed`] in rollouts, `dataset_actions::action_seed` at dataset frames |
//!
//! Answers must be `(horizon, 7)` testbed actions `[dx, dy, dz, droll, dpitch, dyaw, gripper]`
//! (m, rad, gripper in `[−1, 1]`; the testbed clips them) with finite values. The first action of
//! every answered chunk is executed (receding horizon), which is exactly the action the
//! policy-actions file records at a frame, so the ground truth is the value of the policy that
//! file describes. With the `reset` capability every rollout starts with a `reset`.
//!
//! Rollouts run one at a time over the policy's one connection; each finished rollout is written
//! atomically to the run's resume folder, so a server that dies mid-run loses at most the rollout
//! in progress.

use crate::config::CheckedConfig;
use crate::error::{CollectError, Result, encode_err, io_err};
use crate::ground_truth::{RolloutOutcome, rollout_initial, rollout_with};
use crate::obs::Observation;
use crate::scenes::push_tasks;
use roboaudit_policy_client::dataset_actions::{
    DEFAULT_ENVIRONMENT_STATE_KEY, DEFAULT_IMAGE_KEY, DEFAULT_PROMPT_KEY, DEFAULT_STATE_KEY,
};
use roboaudit_policy_client::{
    ACTION_SEED_KEY, CAP_ACTION_SEED, CAP_RESET, Field, LatencySummary, NdArray, PolicyClient,
    PolicyClientError,
};
use roboaudit_testbed::world::ACTION_DIM;
use roboaudit_testbed::{Action, CameraKind, Episode, SceneRenderer, TaskKind};
use roboaudit_types::seed::splitmix64;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A served target policy: its name (unique among the targets; the policy-actions file stem) and
/// a connection to its server.
#[derive(Debug)]
pub struct ServedTarget {
    /// Name, also `policies/<name>.parquet`'s stem.
    pub name: String,
    /// The connection.
    pub client: PolicyClient,
}

/// The observation keys a served policy receives (from its metadata's `observation_keys`, else
/// the defaults of `dataset_actions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedKeys {
    /// Scene camera (uint8 HWC).
    pub image: String,
    /// Proprioception (15 float32).
    pub state: String,
    /// Block poses (28 float32).
    pub environment_state: String,
    /// Task instruction (text).
    pub prompt: String,
}

impl ServedKeys {
    /// The keys `client`'s server asks for.
    pub fn of(client: &PolicyClient) -> ServedKeys {
        let key = |role: &str, default: &str| {
            client
                .observation_key(role)
                .unwrap_or_else(|| default.to_owned())
        };
        ServedKeys {
            image: key("image", DEFAULT_IMAGE_KEY),
            state: key("state", DEFAULT_STATE_KEY),
            environment_state: key("environment_state", DEFAULT_ENVIRONMENT_STATE_KEY),
            prompt: key("prompt", DEFAULT_PROMPT_KEY),
        }
    }
}

/// Query latency of a served target over the whole run (resumed work included) and the
/// reconnections it needed: everything here varies from run to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedLatency {
    /// Round trips of the rollouts' queries (median, p95 in ms).
    pub rollouts: LatencySummary,
    /// Round trips of the dataset-frame queries (the policy-actions file).
    pub actions: LatencySummary,
    /// Reconnections after a dropped connection.
    pub reconnections: u64,
}

/// How a served target was queried (`served` in its `ground_truth.json` entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedInfo {
    /// The server's address (the last run's, when the run was resumed).
    pub url: String,
    /// The roboaudit capabilities its metadata declares.
    pub capabilities: Vec<String>,
    /// Whether every rollout and every episode pass began with a `reset`.
    pub reset: bool,
    /// Whether queries carried action seeds.
    pub action_seeds: bool,
    /// The observation keys.
    pub keys: ServedKeys,
    /// Actions per answer (the first of each is executed and recorded).
    pub action_horizon: usize,
    /// Query latency and reconnections.
    pub latency: ServedLatency,
}

/// What one finished served rollout leaves in the resume folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RolloutRecord {
    pub outcome: RolloutOutcome,
    pub horizon: usize,
    pub rtt_ms: Vec<f64>,
    pub server_ms: Vec<f64>,
    pub reconnections: u64,
}

/// The action seed of step `step` of the rollout whose episode seed is `episode_seed`, for a
/// policy whose noise seed is `policy_seed` ([`crate::ground_truth::policy_seed`]): SplitMix64 of
/// the three, in `0..=i64::MAX`.
pub fn rollout_action_seed(policy_seed: u64, episode_seed: u64, step: usize) -> i64 {
    let h = splitmix64(splitmix64(policy_seed ^ splitmix64(episode_seed)) ^ step as u64);
    (h >> 1) as i64
}

/// The observation map of one query: `image` (RGB bytes, `size`² × 3), `obs`, the task's
/// instruction and, when given, the action seed, under `keys`.
pub fn observation(
    keys: &ServedKeys,
    image: &[u8],
    size: usize,
    obs: &Observation,
    task: TaskKind,
    seed: Option<i64>,
) -> Vec<(String, Field)> {
    let mut m = vec![
        (
            keys.image.clone(),
            Field::Array(NdArray::from_u8(vec![size, size, 3], image.to_vec())),
        ),
        (
            keys.state.clone(),
            Field::Array(NdArray::from_f32(vec![obs.state.len()], &obs.state)),
        ),
        (
            keys.environment_state.clone(),
            Field::Array(NdArray::from_f32(vec![obs.env.len()], &obs.env)),
        ),
        (keys.prompt.clone(), Field::Text(task.instruction())),
    ];
    if let Some(s) = seed {
        m.push((ACTION_SEED_KEY.into(), Field::Int(s)));
    }
    m
}

/// Resume folder of a served target's rollouts and actions.
pub(crate) fn served_dir(resume: &Path, name: &str) -> PathBuf {
    resume.join("served").join(name)
}

fn rollout_path(dir: &Path, task: usize, rollout: usize) -> PathBuf {
    dir.join(format!("rollout-{task}-{rollout:06}.json"))
}

/// Writes `bytes` to `path` atomically ([`roboaudit_data::atomic::write_atomic`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    roboaudit_data::atomic::write_atomic(path, bytes).map_err(|e| {
        let source = e
            .source
            .unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::IsADirectory));
        io_err(&e.path)(source)
    })
}

/// Plays one rollout of `target` (no retry).
#[allow(clippy::too_many_arguments)]
fn play(
    cfg: &CheckedConfig,
    target: &mut ServedTarget,
    keys: &ServedKeys,
    policy_seed: u64,
    k: usize,
    task: TaskKind,
    r: usize,
    record: &mut RolloutRecord,
) -> Result<RolloutOutcome> {
    let name = target.name.clone();
    let served = |source| CollectError::Served {
        policy: name.clone(),
        source: Box::new(source),
    };
    let client = &mut target.client;
    let initial = rollout_initial(cfg, k, r)?;
    let size = cfg.config.image_size;
    let at = |t: usize| format!("task {} ({}) rollout {r} step {t}", k, task.name());
    if client.has(CAP_RESET) {
        client
            .reset(&format!("task {k} ({}) rollout {r} (reset)", task.name()))
            .map_err(served)?;
    }
    let seeded = client.has(CAP_ACTION_SEED);
    let mut renderer: Option<SceneRenderer> = None;
    let render_size = size.max(crate::ground_truth::ROLLOUT_RENDER_SIZE);
    rollout_with(task, &initial, render_size, &mut |ep: &mut Episode, t| {
        let r_ = match renderer.as_mut() {
            Some(r_) => r_,
            None => renderer.insert(SceneRenderer::new(ep, size)?),
        };
        let image = r_.render(ep, CameraKind::Scene)?;
        let obs = Observation::of_episode(ep);
        let seed = seeded.then(|| rollout_action_seed(policy_seed, initial.episode_seed, t));
        let step = at(t);
        let reply = client
            .infer(observation(keys, &image.rgb, size, &obs, task, seed), &step)
            .map_err(served)?;
        if reply.dim != ACTION_DIM {
            return Err(served(PolicyClientError::Actions {
                url: client.url().to_owned(),
                step,
                message: format!(
                    "actions have shape ({}, {}); the testbed's actions are {ACTION_DIM} wide \
                     [dx, dy, dz, droll, dpitch, dyaw, gripper]",
                    reply.horizon, reply.dim
                ),
            }));
        }
        record.horizon = record.horizon.max(reply.horizon);
        record.rtt_ms.push(reply.round_trip_ms);
        if let Some(ms) = reply.infer_ms {
            record.server_ms.push(ms);
        }
        let a: Vec<f64> = reply.first().iter().map(|&x| f64::from(x)).collect();
        Ok(Action::from_slice(&a)?)
    })
}

/// What a resumed served target must still declare: the interrupted run's rollouts were played
/// with these capabilities and keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ServerIdentity {
    capabilities: Vec<String>,
    keys: ServedKeys,
}

/// Records the server's capabilities and keys in `dir`, or checks them against an interrupted
/// run's: rollouts played under other ones would mix two policies' outcomes.
fn check_server(dir: &Path, target: &ServedTarget, keys: &ServedKeys) -> Result<()> {
    let now = ServerIdentity {
        capabilities: target.client.capabilities().to_vec(),
        keys: keys.clone(),
    };
    let path = dir.join("server.json");
    if path.exists() {
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        let before: Option<ServerIdentity> = serde_json::from_slice(&bytes).ok();
        if before.as_ref() != Some(&now) {
            return Err(CollectError::Resume(format!(
                "served policy {}: the server at {} declares other capabilities or observation keys \
                 ({}) than in the interrupted run kept in {}; serve the same policy, or remove \
                 that folder to start over",
                target.name,
                target.client.url(),
                serde_json::to_string(&now).unwrap_or_default(),
                dir.display()
            )));
        }
        return Ok(());
    }
    let json = serde_json::to_vec(&now).map_err(|e| encode_err("server.json")(e.to_string()))?;
    write_atomic(&path, &json)
}

/// Rolls `target` out `rollouts` times per push task, sequentially, keeping each finished
/// rollout in `dir` and skipping those already there. A rollout whose connection was replaced
/// mid-way is played again once from its `reset` (the server lost its history). Returns the
/// records in (task, rollout) order and how many were resumed; `progress(done, total)` counts
/// rollouts.
pub(crate) fn served_rollouts(
    cfg: &CheckedConfig,
    target: &mut ServedTarget,
    policy_seed: u64,
    dir: &Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<RolloutRecord>, usize)> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let keys = ServedKeys::of(&target.client);
    check_server(dir, target, &keys)?;
    let tasks = push_tasks();
    let total = tasks.len() * cfg.config.rollouts;
    let mut records = Vec::with_capacity(total);
    let mut resumed = 0;
    for (k, &task) in tasks.iter().enumerate() {
        for r in 0..cfg.config.rollouts {
            let path = rollout_path(dir, k, r);
            if path.exists() {
                let bytes = std::fs::read(&path).map_err(io_err(&path))?;
                let rec: RolloutRecord = serde_json::from_slice(&bytes).map_err(|e| {
                    CollectError::Resume(format!(
                        "{}: not a rollout record ({e}); remove the work folder",
                        path.display()
                    ))
                })?;
                records.push(rec);
                resumed += 1;
                progress(records.len(), total);
                continue;
            }
            let gen0 = target.client.generation();
            let mut attempt = 0;
            let rec = loop {
                let start = target.client.generation();
                let mut rec = RolloutRecord {
                    outcome: RolloutOutcome {
                        success: false,
                        steps: 0,
                    },
                    horizon: 0,
                    rtt_ms: Vec::new(),
                    server_ms: Vec::new(),
                    reconnections: 0,
                };
                rec.outcome = play(cfg, target, &keys, policy_seed, k, task, r, &mut rec)?;
                if target.client.generation() == start
                    || attempt == 1
                    || !target.client.has(CAP_RESET)
                {
                    rec.reconnections = target.client.generation() - gen0;
                    break rec;
                }
                attempt += 1;
            };
            let json = serde_json::to_vec(&rec)
                .map_err(|e| encode_err("a rollout record")(e.to_string()))?;
            write_atomic(&path, &json)?;
            records.push(rec);
            progress(records.len(), total);
        }
    }
    Ok((records, resumed))
}
