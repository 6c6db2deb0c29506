//! `fqe collect --shard I/N`: the built-in targets' ground-truth rollouts as a sharded job list.
//!
//! Job `j` is the block of `rollouts` rollouts of target `j / 4` on push task `j mod 4` (the
//! order of [`crate::ground_truth::builtin_outcomes`]); shard `I/N` runs the blocks with
//! `j mod N = I` and keeps each as `rollouts/block-{j:06}.json` (its outcomes, written
//! atomically: a rerun of the shard skips the blocks already there). `.resume/run.json`, the
//! run's identity, is the same in every shard. A rollout depends on the configuration, its
//! target, task and index only, so the blocks are the unsharded run's outcomes whatever `N`.
//!
//! `roboaudit merge` copies the blocks into one folder and [`finish_merged`] completes it as an
//! unsharded run resumed after its rollouts: it records the dataset and the policy-actions
//! files (not sharded: the merge job does this, give it the cores), then writes
//! `ground_truth.json` and `README.md`, the bytes an unsharded `fqe collect` writes.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use roboaudit_shard::{JobFiles, Shard, ShardManifest, config_hash};

use crate::collect::{RESUME_DIR, RUN_FILE, RunIdentity, collect_with};
use crate::config::CheckedConfig;
use crate::error::{CollectError, Result, io_err};
use crate::ground_truth::{RolloutOutcome, policy_seed, rollout, rollout_initial};
use crate::scenes::push_tasks;

/// The collection's name in configuration hashes and shard manifests.
pub const COLLECTION: &str = "fqe-collect";
/// Folder of a shard's rollout blocks inside its output folder.
pub const ROLLOUT_DIR: &str = "rollouts";
/// Name of the built-in outcomes a resumed run takes instead of rolling out again.
const BUILTIN_FILE: &str = "builtin.json";

fn block_files() -> JobFiles {
    JobFiles {
        dir: ROLLOUT_DIR.into(),
        prefix: "block-".into(),
        width: 6,
        suffix: ".json".into(),
        companions: Vec::new(),
    }
}

fn resume_err(path: &Path, message: impl std::fmt::Display) -> CollectError {
    CollectError::Resume(format!("{}: {message}", path.display()))
}

fn json<T: serde::Serialize>(what: &str, value: &T, pretty: bool) -> Result<Vec<u8>> {
    let r = if pretty {
        serde_json::to_vec_pretty(value)
    } else {
        serde_json::to_vec(value)
    };
    r.map_err(|e| crate::error::encode_err(what)(e.to_string()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    roboaudit_shard::write_atomic(path, bytes).map_err(|(_, e)| io_err(path)(e))
}

/// What one shard holds after [`collect_shard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardRun {
    /// Rollout blocks (target × task) the shard owns.
    pub owned: usize,
    /// Of them, blocks kept by an earlier, interrupted run of this shard.
    pub resumed: usize,
    /// Blocks of the whole collection.
    pub total: usize,
}

/// Shard `shard` of the built-in targets' ground-truth rollouts of `cfg` into `out` (see the
/// module docs). `progress(done, total)` counts the shard's rollouts, from worker threads.
///
/// # Errors
/// [`CollectError::Shard`] when `out` holds another shard, another configuration's shard or an
/// unsharded run; testbed and I/O errors.
pub fn collect_shard(
    cfg: &CheckedConfig,
    out: &Path,
    shard: Shard,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<ShardRun> {
    let c = &cfg.config;
    let tasks = push_tasks();
    let identity = RunIdentity::of(cfg, &[]);
    let total = cfg.targets.len() * tasks.len();
    let manifest = ShardManifest {
        schema: roboaudit_shard::SHARD_SCHEMA.into(),
        collection: COLLECTION.into(),
        config_hash: config_hash(COLLECTION, &identity)?,
        shard,
        total_jobs: total,
        job_files: block_files(),
        shared_files: vec![format!("{RESUME_DIR}/{RUN_FILE}")],
        unit: "rollouts".into(),
        total_units: total * c.rollouts,
        units_per_job: c.rollouts,
    };
    let resume = out.join(RESUME_DIR);
    let blocks = out.join(ROLLOUT_DIR);
    for d in [&resume, &blocks] {
        std::fs::create_dir_all(d).map_err(io_err(d))?;
    }
    ShardManifest::claim(out, Some(&manifest))?;
    let run_file = resume.join(RUN_FILE);
    if !run_file.is_file() {
        write(&run_file, &json(RUN_FILE, &identity, true)?)?;
    }
    let done = block_files().present(out)?;
    let todo: Vec<usize> = shard
        .jobs(total)
        .filter(|j| done.binary_search(j).is_err())
        .collect();
    let rollouts = todo.len() * c.rollouts;
    let counter = AtomicUsize::new(0);
    for &j in &todo {
        let (t, k) = (&cfg.targets[j / tasks.len()], j % tasks.len());
        let outcomes = (0..c.rollouts)
            .into_par_iter()
            .map(|r| {
                let o = rollout(
                    t,
                    tasks[k],
                    &rollout_initial(cfg, k, r)?,
                    policy_seed(c.seed, &t.name),
                );
                progress(counter.fetch_add(1, Ordering::Relaxed) + 1, rollouts);
                o
            })
            .collect::<Result<Vec<RolloutOutcome>>>()?;
        let path = out.join(block_files().relative(j));
        write(&path, &json("a rollout block", &outcomes, false)?)?;
    }
    let owned = shard.job_count(total);
    Ok(ShardRun {
        owned,
        resumed: owned - todo.len(),
        total,
    })
}

/// Why the file at `path` is not a rollout block, or `None` when it reads as one: the
/// [`roboaudit_shard::PartCheck`] that `roboaudit status` and `roboaudit merge` apply in each
/// shard folder, so a block [`finish_merged`] could not read is refused before the merge, naming
/// the shard's own file (its length is checked against the configuration when merged).
#[must_use]
pub fn part_problem(_job: usize, path: &Path) -> Option<String> {
    match std::fs::read(path) {
        Err(e) => Some(format!("cannot be read ({e})")),
        Ok(bytes) => serde_json::from_slice::<Vec<RolloutOutcome>>(&bytes)
            .err()
            .map(|e| format!("is not a rollout block ({e})")),
    }
}

/// The merge's finishing step for `fqe collect` shards (`roboaudit merge`, through
/// [`roboaudit_shard::merge_with`]): joins the merged rollout blocks in `merged` into the
/// built-in outcomes, then completes the folder with [`collect_with`] as a run resumed after its
/// rollouts (dataset, policy-actions files, `ground_truth.json`, `README.md`).
///
/// # Errors
/// [`CollectError::Resume`] naming a block or `run.json` that does not read or does not fit
/// the configuration; testbed and I/O errors of the dataset stage.
pub fn finish_merged(merged: &Path) -> Result<()> {
    let resume = merged.join(RESUME_DIR);
    let run_file = resume.join(RUN_FILE);
    let bytes = std::fs::read(&run_file).map_err(io_err(&run_file))?;
    let identity: RunIdentity = serde_json::from_slice(&bytes)
        .map_err(|e| resume_err(&run_file, format!("not an fqe collect run ({e})")))?;
    let cfg = identity.config.check()?;
    if RunIdentity::of(&cfg, &[]) != identity {
        return Err(resume_err(
            &run_file,
            "its targets or fingerprint are not this roboaudit's built-in ones (another version?)",
        ));
    }
    let total = cfg.targets.len() * push_tasks().len();
    let mut outcomes = Vec::with_capacity(total * cfg.config.rollouts);
    for j in 0..total {
        let path = merged.join(block_files().relative(j));
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        let block: Vec<RolloutOutcome> = serde_json::from_slice(&bytes).map_err(|e| {
            resume_err(
                &path,
                format!("not a rollout block ({e}); delete it and rerun its shard"),
            )
        })?;
        if block.len() != cfg.config.rollouts {
            return Err(resume_err(
                &path,
                format!(
                    "{} rollouts, the configuration has {}; delete it and rerun its shard",
                    block.len(),
                    cfg.config.rollouts
                ),
            ));
        }
        outcomes.extend(block);
    }
    write(
        &resume.join(BUILTIN_FILE),
        &json(BUILTIN_FILE, &outcomes, false)?,
    )?;
    let blocks = merged.join(ROLLOUT_DIR);
    std::fs::remove_dir_all(&blocks).map_err(io_err(&blocks))?;
    collect_with(&cfg, &mut [], merged, &|_, _, _| {})?;
    Ok(())
}
