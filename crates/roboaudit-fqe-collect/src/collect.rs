//! The whole collection into one folder: `dataset/` (LeRobot v3.0), `policies/<name>.parquet`,
//! `ground_truth.json` and `README.md`; while it runs, `.resume/` holds what a rerun of the same
//! identity ([`RunIdentity`]) needs to continue it.

use crate::actions_file::{dataset_stream, policy_actions, write_actions_parquet};
use crate::config::CheckedConfig;
use crate::dataset::{BehaviourSummary, plan_dataset, record_dataset_kept, summarize};
use crate::episodes::EPISODES_DIR;
use crate::error::CollectError;
use crate::error::{Result, encode_err, io_err};
use crate::ground_truth::{
    DatasetInfo, GroundTruthFile, PolicyTruth, PolicyValues, RolloutOutcome, RunInfo, TaskTruth,
    builtin_outcomes, builtin_truth, policy_seed, policy_truth, task_truth,
};
use crate::scenes::push_tasks;
use crate::served::{
    ServedInfo, ServedKeys, ServedLatency, ServedTarget, served_dir, served_rollouts,
};
use crate::stamp::{FileStamp, first_changed, stamp_dirs};
use roboaudit_policy_client::dataset_actions::{
    ActionsConfig, ActionsManifest, collect_actions, manifest_path,
};
use roboaudit_policy_client::{CAP_ACTION_SEED, CAP_RESET, LatencySummary};
use roboaudit_testbed::{WriteOptions, write_lerobot_v3_with};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Schema tag of `ground_truth.json`.
pub const SCHEMA: &str = roboaudit_fqe::ground_truth::GROUND_TRUTH_SCHEMA;
/// The image feature of the dataset (PNG in Parquet).
pub const IMAGE_KEY: &str = "observation.images.scene";

/// A stage of the collection, for progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Recording dataset episodes (count: episodes).
    Dataset,
    /// Writing the LeRobot dataset (count: 0 of 1, then 1 of 1).
    Writing,
    /// Computing policy-actions files (count: policies).
    Actions,
    /// Ground-truth rollouts (count: rollouts over all policies and tasks).
    GroundTruth,
    /// A served policy's rollouts, one at a time (count: its rollouts over all tasks).
    ServedGroundTruth,
    /// A served policy's actions at every dataset frame (count: dataset episodes).
    ServedActions,
}

/// What [`collect_with`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectSummary {
    /// The ground-truth file's content.
    pub truth: GroundTruthFile,
    /// Dataset episodes (the file's `n_dataset_episodes`).
    pub episodes: usize,
    /// What was taken from an interrupted run.
    pub resumed: Resumed,
}

/// What a run took from an interrupted run of the same configuration instead of redoing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resumed {
    /// The dataset and the built-in policy-actions files.
    pub dataset: bool,
    /// Dataset episodes kept by an interrupted run's recording stage (0 when `dataset`: the
    /// finished dataset was kept whole).
    pub dataset_episodes: usize,
    /// The built-in targets' rollouts.
    pub builtin_rollouts: bool,
    /// Served rollouts, over every served target.
    pub served_rollouts: usize,
}

fn readme(t: &GroundTruthFile, episodes: usize) -> String {
    let mut s = format!(
        "# FQE ground truth (roboaudit fqe collect)\n\n\
         - `dataset/`: LeRobot v3.0, {} episodes, {} frames of the four push tasks; images `{}` (PNG), \
         proprioception `{}`, actions `{}`, terminal success `{}` (latched; the last frame of an episode \
         holds its label).\n\
         - `policies/<name>.parquet`: per dataset frame (`index`), `sample` 0..M−1, `action` of the target \
         policy at that frame's observation.\n\
         - `ground_truth.json` (`{}`): per policy and task `v_pi` = mean γ^(T−1)·success and \
         `success_rate` over rollouts from the dataset's initial-state distribution; γ = {}.\n\n\
         | policy | V^π (suite) | SR (suite) | M |\n|---|---|---|---|\n",
        episodes,
        t.dataset.n_dataset_frames,
        t.run.image_key,
        t.run.state_key,
        t.run.action_key,
        t.run.success_key,
        SCHEMA,
        t.gamma
    );
    for p in &t.policies {
        s += &format!(
            "| {} | {:.3} | {:.3} | {} |\n",
            p.policy, p.values.suite_v_pi, p.values.suite_success_rate, p.values.samples
        );
    }
    s
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(io_err(path))
}

/// Name of the folder inside a collection's output folder that holds what a rerun needs to
/// resume it (removed when the collection finishes).
pub const RESUME_DIR: &str = ".resume";
/// The run's identity in [`RESUME_DIR`]: `{"fingerprint": …, "config": …, "targets": […]}`.
pub const RUN_FILE: &str = "run.json";

/// What identifies a run for resuming: the settings and the target names in output order
/// (built-in, then served; not the servers' addresses, which may change between runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// 64-bit FNV-1a of the JSON of `config` and `targets`, as 16 hex digits.
    pub fingerprint: String,
    /// The settings.
    pub config: crate::config::CollectConfig,
    /// Target names in output order.
    pub targets: Vec<String>,
}

impl RunIdentity {
    /// The identity of a run of `cfg` with served targets named `served` after `cfg.targets`.
    pub fn of(cfg: &CheckedConfig, served: &[String]) -> RunIdentity {
        let targets: Vec<String> = cfg
            .targets
            .iter()
            .map(|t| t.name.clone())
            .chain(served.iter().cloned())
            .collect();
        let json = serde_json::to_vec(&(&cfg.config, &targets)).unwrap_or_default();
        let h = roboaudit_types::seed::fnv1a64(&json);
        RunIdentity {
            fingerprint: format!("{h:016x}"),
            config: cfg.config.clone(),
            targets,
        }
    }
}

/// What [`open_work`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkState {
    /// No earlier run: a new folder.
    Fresh,
    /// An interrupted run of the same identity: it is continued.
    Resumed,
    /// A folder without a run's identity (cut off before it was written, so nothing was
    /// collected in it): removed, a new folder.
    Replaced,
}

/// Prepares `dir` as the work folder of a run: an interrupted run of the same [`RunIdentity`] is
/// kept for [`collect_with`] to continue; one of another identity is kept and refused; a folder
/// with no readable identity is removed. Writes the identity to `dir/.resume/run.json`.
///
/// # Errors
/// [`CollectError::OtherRun`] when `dir` holds an interrupted run of another identity;
/// [`CollectError::Io`].
pub fn open_work(dir: &Path, identity: &RunIdentity) -> Result<WorkState> {
    let run_file = dir.join(RESUME_DIR).join(RUN_FILE);
    let mut state = WorkState::Fresh;
    if dir.exists() {
        let old = std::fs::read(&run_file)
            .ok()
            .and_then(|b| serde_json::from_slice::<RunIdentity>(&b).ok());
        match old {
            Some(old) if old.fingerprint == identity.fingerprint => {
                return Ok(WorkState::Resumed);
            }
            Some(_) => {
                return Err(CollectError::OtherRun {
                    dir: dir.display().to_string(),
                });
            }
            None => {
                std::fs::remove_dir_all(dir).map_err(io_err(dir))?;
                state = WorkState::Replaced;
            }
        }
    }
    let resume = dir.join(RESUME_DIR);
    std::fs::create_dir_all(&resume).map_err(io_err(&resume))?;
    let json =
        serde_json::to_vec_pretty(identity).map_err(|e| encode_err(RUN_FILE)(e.to_string()))?;
    write_file(&run_file, &json)?;
    Ok(state)
}

/// The dataset stage's result, kept for a resumed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct DatasetStage {
    episodes: usize,
    frames: usize,
    behaviour: Vec<BehaviourSummary>,
    /// The dataset's and the built-in policy-actions files as the stage wrote them.
    #[serde(default)]
    files: Vec<FileStamp>,
}

/// The collection's LeRobot dataset folder, in the output folder.
const DATASET_DIR: &str = "dataset";
/// The collection's policy-actions folder, in the output folder.
const POLICIES_DIR: &str = "policies";

/// Runs the whole collection into `out` with built-in targets only (see [`collect_with`]).
///
/// # Errors
/// Testbed, I/O and encoding errors.
pub fn collect(
    cfg: &CheckedConfig,
    out: &Path,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> Result<CollectSummary> {
    collect_with(cfg, &mut [], out, progress)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        CollectError::Resume(format!(
            "{}: unreadable ({e}); remove the work folder",
            path.display()
        ))
    })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let json = serde_json::to_vec(value).map_err(|e| encode_err("resume state")(e.to_string()))?;
    crate::served::write_atomic(path, &json)
}

/// Runs the whole collection into `out` (created; the caller makes it atomic by writing to a
/// temporary folder and renaming): the built-in targets of `cfg`, then the `served` ones in
/// order. `progress(stage, done, total)` is called from worker threads.
///
/// Resumable: stages finished by an interrupted run into the same `out` (see [`open_work`])
/// are not redone: the dataset with the built-in policy-actions files, the built-in rollouts,
/// each served rollout and each served policy's finished episodes. The finished folder holds
/// the same bytes as an uninterrupted run's except the served policies' `url` and `latency`.
///
/// # Errors
/// Testbed, I/O and encoding errors; [`CollectError::Served`] for a served policy that fails.
pub fn collect_with(
    cfg: &CheckedConfig,
    served: &mut [ServedTarget],
    out: &Path,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> Result<CollectSummary> {
    let c = &cfg.config;
    let resume = out.join(RESUME_DIR);
    std::fs::create_dir_all(&resume).map_err(io_err(&resume))?;
    let mut resumed = Resumed::default();
    let ds = out.join(DATASET_DIR);
    let pol_dir = out.join(POLICIES_DIR);
    let stage_file = resume.join("dataset.json");
    // A kept stage whose files changed since it finished (truncated, edited, removed) is redone:
    // its output is deterministic, and a damaged file must not reach the finished collection.
    let kept = read_json::<DatasetStage>(&stage_file)?
        .filter(|d| !d.files.is_empty() && first_changed(out, &d.files).is_none());
    let dataset = if let Some(d) = kept {
        resumed.dataset = true;
        d
    } else {
        for d in [&ds, &pol_dir] {
            if d.exists() {
                std::fs::remove_dir_all(d).map_err(io_err(d))?;
            }
        }
        let plan = plan_dataset(cfg)?;
        // Each episode is kept as it is recorded: a run stopped here records only the rest.
        let kept_dir = resume.join(EPISODES_DIR);
        std::fs::create_dir_all(&kept_dir).map_err(io_err(&kept_dir))?;
        let (records, kept_episodes) =
            record_dataset_kept(cfg, &plan, Some(&kept_dir), &|d, n| {
                progress(Stage::Dataset, d, n);
            })?;
        resumed.dataset_episodes = kept_episodes;
        progress(Stage::Writing, 0, 1);
        let summary = write_lerobot_v3_with(&ds, &records, &WriteOptions { video: c.video })?;
        progress(Stage::Writing, 1, 1);
        std::fs::create_dir_all(&pol_dir).map_err(io_err(&pol_dir))?;
        for (k, t) in cfg.targets.iter().enumerate() {
            let m = cfg.samples_for(t);
            let acts = policy_actions(t, &records, m, c.seed, policy_seed(c.seed, &t.name));
            write_actions_parquet(&pol_dir.join(format!("{}.parquet", t.name)), &acts, m)?;
            progress(Stage::Actions, k + 1, cfg.targets.len());
        }
        let d = DatasetStage {
            episodes: summary.episodes,
            frames: summary.frames,
            behaviour: summarize(&plan, &records),
            files: stamp_dirs(out, &[DATASET_DIR, POLICIES_DIR])?,
        };
        write_json(&stage_file, &d)?;
        // The finished stage stands for its episodes now.
        std::fs::remove_dir_all(&kept_dir).map_err(io_err(&kept_dir))?;
        d
    };
    let builtin_file = resume.join("builtin.json");
    // Outcomes, not the truth itself: a JSON round trip of the floats would risk their bytes.
    let outcomes = if let Some(o) = read_json::<Vec<RolloutOutcome>>(&builtin_file)? {
        resumed.builtin_rollouts = true;
        o
    } else {
        let o = builtin_outcomes(cfg, &|d, n| progress(Stage::GroundTruth, d, n))?;
        write_json(&builtin_file, &o)?;
        o
    };
    let mut policies = builtin_truth(cfg, &outcomes);
    if !served.is_empty() {
        let lerobot = roboaudit_data::lerobot::LeRobotDataset::open(&ds)?;
        for t in served.iter_mut() {
            let (truth, n) = served_truth(cfg, t, &lerobot, &resume, &pol_dir, progress)?;
            resumed.served_rollouts += n;
            policies.push(truth);
        }
        for t in served.iter() {
            let from = served_dir(&resume, &t.name).join(ACTIONS_FILE);
            if from.exists() {
                std::fs::rename(&from, pol_dir.join(format!("{}.parquet", t.name)))
                    .map_err(io_err(&from))?;
            }
        }
    }
    let truth = GroundTruthFile {
        schema: SCHEMA.into(),
        gamma: c.gamma,
        run: RunInfo {
            seed: c.seed,
            dataset: DATASET_DIR.into(),
            image_key: IMAGE_KEY.into(),
            state_key: "observation.state".into(),
            action_key: "action".into(),
            success_key: "next.success".into(),
        },
        n_dataset_episodes: Some(dataset.episodes),
        dataset: DatasetInfo {
            n_dataset_frames: dataset.frames,
            behaviour: dataset.behaviour,
            actions_noise_stream: dataset_stream(c.seed),
        },
        policies,
    };
    let json = serde_json::to_string_pretty(&truth)
        .map_err(|e| encode_err("ground_truth.json")(e.to_string()))?;
    write_file(&out.join("ground_truth.json"), json.as_bytes())?;
    write_file(
        &out.join("README.md"),
        readme(&truth, dataset.episodes).as_bytes(),
    )?;
    std::fs::remove_dir_all(&resume).map_err(io_err(&resume))?;
    Ok(CollectSummary {
        truth,
        episodes: dataset.episodes,
        resumed,
    })
}

/// File name of a served policy's finished policy-actions file in its resume folder.
const ACTIONS_FILE: &str = "actions.parquet";

/// Rollouts, then actions at every dataset frame, of one served target.
fn served_truth(
    cfg: &CheckedConfig,
    t: &mut ServedTarget,
    lerobot: &roboaudit_data::lerobot::LeRobotDataset,
    resume: &Path,
    pol_dir: &Path,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> Result<(PolicyTruth, usize)> {
    let c = &cfg.config;
    let seed = policy_seed(c.seed, &t.name);
    let dir = served_dir(resume, &t.name);
    let (records, resumed) = served_rollouts(cfg, t, seed, &dir, &|d, n| {
        progress(Stage::ServedGroundTruth, d, n);
    })?;
    let actions_cfg = ActionsConfig {
        name: t.name.clone(),
        samples: c.samples,
        seed,
        image_feature: Some(IMAGE_KEY.into()),
        state_feature: Some("observation.state".into()),
        action_feature: "action".into(),
    };
    let out = dir.join(ACTIONS_FILE);
    let manifest_file = manifest_path(&out);
    let placed = pol_dir.join(format!("{}.parquet", t.name));
    let manifest = if let Some(m) = read_json::<ActionsManifest>(&manifest_file)?
        && (out.exists() || placed.exists())
    {
        m
    } else {
        collect_actions(lerobot, &mut t.client, &actions_cfg, &out, &mut |d, n| {
            progress(Stage::ServedActions, d, n);
        })
        .map_err(|source| CollectError::Served {
            policy: t.name.clone(),
            source: Box::new(source),
        })?
    };
    let tasks = push_tasks();
    let per = c.rollouts;
    let tt: Vec<TaskTruth> = tasks
        .iter()
        .enumerate()
        .map(|(k, &task)| {
            let outcomes: Vec<RolloutOutcome> = records[k * per..(k + 1) * per]
                .iter()
                .map(|r| r.outcome)
                .collect();
            task_truth(task, k, &outcomes, c.gamma)
        })
        .collect();
    let rtt: Vec<f64> = records
        .iter()
        .flat_map(|r| r.rtt_ms.iter().copied())
        .collect();
    let server: Vec<f64> = records
        .iter()
        .flat_map(|r| r.server_ms.iter().copied())
        .collect();
    let client = &t.client;
    let info = ServedInfo {
        url: client.url().to_owned(),
        capabilities: client.capabilities().to_vec(),
        reset: client.has(CAP_RESET),
        action_seeds: client.has(CAP_ACTION_SEED),
        keys: ServedKeys::of(client),
        action_horizon: records
            .iter()
            .map(|r| r.horizon)
            .max()
            .unwrap_or(0)
            .max(manifest.action_horizon),
        latency: ServedLatency {
            rollouts: LatencySummary::of(&rtt, &server),
            actions: manifest.latency.clone(),
            reconnections: records.iter().map(|r| r.reconnections).sum::<u64>()
                + manifest.reconnections,
        },
    };
    let values = |suite_v_pi, suite_success_rate| PolicyValues {
        samples: c.samples,
        stochastic: info.action_seeds,
        params: None,
        served: Some(info),
        suite_v_pi,
        suite_success_rate,
    };
    let description = "served policy (openpi websocket protocol)".to_owned();
    Ok((policy_truth(&t.name, description, values, tt), resumed))
}
