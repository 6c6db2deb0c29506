//! The whole collection into one folder: `dataset/` (LeRobot v3.0), `policies/<name>.parquet`,
//! `ground_truth.json` and `README.md`.

use crate::actions_file::{dataset_stream, policy_actions, write_actions_parquet};
use crate::config::CheckedConfig;
use crate::dataset::{BehaviourSummary, plan_dataset, record_dataset, summarize};
use crate::error::{Result, encode_err, io_err};
use crate::ground_truth::{PolicyTruth, ground_truth, policy_seed};
use roboaudit_testbed::write_lerobot_v3;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Schema tag of `ground_truth.json`.
pub const SCHEMA: &str = "roboaudit.fqe.ground_truth.v1";
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
}

/// The content of `ground_truth.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundTruthFile {
    /// [`SCHEMA`].
    pub schema: String,
    /// Discount per frame.
    pub gamma: f64,
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
    /// Dataset episodes.
    pub n_dataset_episodes: usize,
    /// Dataset frames.
    pub n_dataset_frames: usize,
    /// Behaviour mixture as recorded.
    pub behaviour: Vec<BehaviourSummary>,
    /// Noise stream of the policy-actions files (see `actions_file::dataset_stream`).
    pub actions_noise_stream: u64,
    /// Per target policy.
    pub policies: Vec<PolicyTruth>,
}

/// What [`collect`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectSummary {
    /// The ground-truth file's content.
    pub truth: GroundTruthFile,
}

fn readme(t: &GroundTruthFile) -> String {
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
        t.n_dataset_episodes,
        t.n_dataset_frames,
        t.image_key,
        t.state_key,
        t.action_key,
        t.success_key,
        SCHEMA,
        t.gamma
    );
    for p in &t.policies {
        s += &format!(
            "| {} | {:.3} | {:.3} | {} |\n",
            p.policy, p.suite_v_pi, p.suite_success_rate, p.samples
        );
    }
    s
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(io_err(path))
}

/// Runs the whole collection into `out` (created; the caller makes it atomic by writing to a
/// temporary folder and renaming). `progress(stage, done, total)` is called from worker threads.
///
/// # Errors
/// Testbed, I/O and encoding errors.
pub fn collect(
    cfg: &CheckedConfig,
    out: &Path,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> Result<CollectSummary> {
    let c = &cfg.config;
    let plan = plan_dataset(cfg)?;
    let records = record_dataset(cfg, &plan, &|d, n| progress(Stage::Dataset, d, n))?;
    progress(Stage::Writing, 0, 1);
    let ds = out.join("dataset");
    let summary = write_lerobot_v3(&ds, &records)?;
    progress(Stage::Writing, 1, 1);
    let pol_dir = out.join("policies");
    std::fs::create_dir_all(&pol_dir).map_err(io_err(&pol_dir))?;
    for (k, t) in cfg.targets.iter().enumerate() {
        let m = cfg.samples_for(t);
        let acts = policy_actions(t, &records, m, c.seed, policy_seed(c.seed, &t.name));
        write_actions_parquet(&pol_dir.join(format!("{}.parquet", t.name)), &acts, m)?;
        progress(Stage::Actions, k + 1, cfg.targets.len());
    }
    let policies = ground_truth(cfg, &|d, n| progress(Stage::GroundTruth, d, n))?;
    let truth = GroundTruthFile {
        schema: SCHEMA.into(),
        gamma: c.gamma,
        seed: c.seed,
        dataset: "dataset".into(),
        image_key: IMAGE_KEY.into(),
        state_key: "observation.state".into(),
        action_key: "action".into(),
        success_key: "next.success".into(),
        n_dataset_episodes: summary.episodes,
        n_dataset_frames: summary.frames,
        behaviour: summarize(&plan, &records),
        actions_noise_stream: dataset_stream(c.seed),
        policies,
    };
    let json = serde_json::to_string_pretty(&truth)
        .map_err(|e| encode_err("ground_truth.json")(e.to_string()))?;
    write_file(&out.join("ground_truth.json"), json.as_bytes())?;
    write_file(&out.join("README.md"), readme(&truth).as_bytes())?;
    Ok(CollectSummary { truth })
}
