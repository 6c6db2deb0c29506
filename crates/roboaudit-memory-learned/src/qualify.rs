//! Qualification before the audit (seed 002 §IV-A: the audited policies are the ones that do
//! the task): a checkpoint runs native closed-loop episodes of its task ([`crate::episodes`],
//! decision success) from the qualification stream, whose scenes no demonstration, collection or
//! intervention study draws; below its registered rate it is refused.

use std::path::Path;

use roboaudit_memory_harness::tasks::MemoryTask;
use roboaudit_testbed::TaskKind;
use serde::{Deserialize, Serialize};

use crate::checkpoint::{load, weights_hash, write_atomic};
use crate::config::{QUALIFICATION_FILE, QualifyConfig};
use crate::episodes::{Stream, rollout, setup};
use crate::error::LearnedError;
use crate::policy::LearnedPolicy;

/// A qualification result (`qualification.json` in the checkpoint folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qualification {
    /// The task.
    pub task: String,
    /// The settings (registered rate, seed).
    pub config: QualifyConfig,
    /// Episodes whose expert history reached the present (the others are skipped before any
    /// query and not counted).
    pub episodes: usize,
    /// Of those, decision successes.
    pub successes: usize,
    /// `successes / episodes` (0 when no episode ran).
    pub rate: f64,
    /// Whether `successes ≥ threshold · episodes` (compared exactly on counts).
    pub passed: bool,
    /// FNV-1a of the weights file it qualified.
    pub weights_fnv: String,
}

/// Checks ranges.
///
/// # Errors
/// [`LearnedError::InvalidConfig`] naming the field.
pub fn validate(q: &QualifyConfig) -> Result<(), LearnedError> {
    if q.episodes == 0 || q.episodes > 100_000 {
        return Err(LearnedError::InvalidConfig(
            "qualification episodes must be in 1..=100000".into(),
        ));
    }
    if !(0.0..=1.0).contains(&q.threshold) {
        return Err(LearnedError::InvalidConfig(
            "qualification threshold must be in [0, 1]".into(),
        ));
    }
    Ok(())
}

/// Runs the qualification episodes of `policy` on `task`; `on_episode(done, total)` after each.
///
/// # Errors
/// Policy-contract and simulator failures.
pub fn qualify(
    policy: &mut LearnedPolicy,
    task: TaskKind,
    q: &QualifyConfig,
    weights_fnv: String,
    on_episode: &mut dyn FnMut(usize, usize),
) -> Result<Qualification, LearnedError> {
    validate(q)?;
    let mt = MemoryTask::new(task)?;
    let levels = policy.trained().config.train.layout_levels.clone();
    let obs_every = policy.trained().config.train.obs_every;
    let (mut episodes, mut successes) = (0usize, 0usize);
    for i in 0..q.episodes {
        let level = levels[i % levels.len()];
        if let Some(s) = setup(&mt, Stream::Qualify, q.seed, i, level, obs_every)? {
            episodes += 1;
            successes += usize::from(rollout(&s, policy)?);
        }
        on_episode(i + 1, q.episodes);
    }
    // successes / episodes ≥ threshold, on counts: threshold is a registered decimal, compared
    // after scaling the count (exact for every rate a count of episodes can reach).
    let passed = episodes > 0 && successes as f64 >= q.threshold * episodes as f64;
    Ok(Qualification {
        task: task.name(),
        config: q.clone(),
        episodes,
        successes,
        rate: if episodes == 0 {
            0.0
        } else {
            successes as f64 / episodes as f64
        },
        passed,
        weights_fnv,
    })
}

/// Qualifies the checkpoint in `dir` (its registered settings) and writes
/// `qualification.json` beside it.
///
/// # Errors
/// As [`load`] and [`qualify`]; [`LearnedError::Write`].
pub fn qualify_dir(
    dir: &Path,
    on_episode: &mut dyn FnMut(usize, usize),
) -> Result<Qualification, LearnedError> {
    let trained = load(dir)?;
    let task = trained.config.task_kind()?;
    let q = trained.config.qualify.clone();
    let mut policy = LearnedPolicy::new(trained);
    let result = qualify(&mut policy, task, &q, weights_hash(dir)?, on_episode)?;
    let json = serde_json::to_vec_pretty(&result).map_err(|e| LearnedError::Write {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    write_atomic(&dir.join(QUALIFICATION_FILE), &json)?;
    Ok(result)
}

/// Opens the checkpoint in `dir` for an audit of `task`: loads and checks it, refuses another
/// task, reads its qualification (running it when `qualification.json` is missing or was made
/// for other weights) and refuses a checkpoint below its registered rate.
///
/// # Errors
/// [`LearnedError::Checkpoint`] (bad files, another task), [`LearnedError::NotQualified`].
pub fn open_for_audit(
    dir: &Path,
    task: TaskKind,
) -> Result<(LearnedPolicy, Qualification), LearnedError> {
    let trained = load(dir)?;
    if trained.config.task_kind()? != task {
        return Err(LearnedError::checkpoint(
            &dir.join(crate::config::CONFIG_FILE),
            format!(
                "checkpoint trained on {}, not {} (train one with `roboaudit memory train --task {}`)",
                trained.config.task,
                task.name(),
                task.name()
            ),
        ));
    }
    let hash = weights_hash(dir)?;
    let qpath = dir.join(QUALIFICATION_FILE);
    let cached: Option<Qualification> = std::fs::read_to_string(&qpath)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|q: &Qualification| {
            q.weights_fnv == hash && q.config == trained.config.qualify && q.task == task.name()
        });
    let q = match cached {
        Some(q) => q,
        None => qualify_dir(dir, &mut |_, _| {})?,
    };
    if !q.passed {
        return Err(LearnedError::NotQualified {
            path: dir.display().to_string(),
            task: q.task,
            successes: q.successes,
            episodes: q.episodes,
            rate: q.rate,
            threshold: q.config.threshold,
        });
    }
    Ok((LearnedPolicy::new(trained), q))
}
