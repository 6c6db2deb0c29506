//! The offline dataset: a plan of episodes (task, behaviour, initial state) and their recording with
//! scene-camera images, in parallel (rayon), deterministic whatever the thread count.

use crate::behaviour::{BehaviourKind, BehaviourPolicy};
use crate::config::CheckedConfig;
use crate::episodes::{read_episode, write_episode};
use crate::error::Result;
use crate::obs::rng_for;
use crate::scenes::{InitialState, Stream, push_tasks};
use rand::RngExt;
use rayon::prelude::*;
use roboaudit_testbed::{EpisodeRecord, SceneRenderer, TaskKind, record_episode};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One planned dataset episode.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEpisode {
    /// Episode index in the dataset.
    pub index: usize,
    /// Task (episode `i` gets push task `i mod 4`, so task indices follow [`push_tasks`]).
    pub task: TaskKind,
    /// Behaviour policy.
    pub behaviour: BehaviourKind,
    /// Initial state.
    pub initial: InitialState,
}

/// The plan of a dataset: behaviour kinds in the counts of [`BehaviourKind::counts`], shuffled with
/// the seed, tasks round-robin.
///
/// # Errors
/// Testbed errors from [`InitialState::draw`].
pub fn plan_dataset(cfg: &CheckedConfig) -> Result<Vec<PlannedEpisode>> {
    let c = &cfg.config;
    let mut kinds: Vec<BehaviourKind> = BehaviourKind::counts(c.episodes)
        .into_iter()
        .flat_map(|(k, n)| std::iter::repeat_n(k, n))
        .collect();
    // Fisher–Yates with the seed, so behaviours are spread over tasks and indices.
    let mut rng = rng_for(c.seed, &[0x004d_4958]);
    for i in (1..kinds.len()).rev() {
        let j = rng.random_range(0..=i);
        kinds.swap(i, j);
    }
    let tasks = push_tasks();
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, behaviour)| {
            Ok(PlannedEpisode {
                index: i,
                task: tasks[i % tasks.len()],
                behaviour,
                initial: InitialState::draw(c.seed, c.layout_level, Stream::Dataset(i as u64))?,
            })
        })
        .collect()
}

/// Records one planned episode with `image_size`² scene-camera PNGs.
///
/// # Errors
/// Testbed errors (compilation, rendering, stepping).
pub fn record_planned(p: &PlannedEpisode, image_size: usize) -> Result<EpisodeRecord> {
    let mut ep = p.initial.start(p.task, image_size)?;
    let mut renderer = SceneRenderer::new(&ep, image_size)?;
    let mut policy = BehaviourPolicy::new(p.behaviour, p.task, p.initial.episode_seed);
    Ok(record_episode(
        &mut ep,
        |e| policy.act(e),
        &mut renderer,
        false,
        p.initial.episode_seed,
    )?)
}

/// Records every planned episode in parallel; `progress(done, total)` is called after each episode.
/// The output is in plan order and does not depend on the number of threads.
///
/// # Errors
/// The first testbed error, in plan order.
pub fn record_dataset(
    cfg: &CheckedConfig,
    plan: &[PlannedEpisode],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<EpisodeRecord>> {
    record_dataset_kept(cfg, plan, None, progress).map(|(records, _)| records)
}

/// [`record_dataset`] keeping each episode in `kept` (a folder, see [`crate::episodes`]) as soon
/// as it is recorded, and taking the intact ones an earlier run kept there instead of recording
/// them again; with `None`, nothing is kept. Returns the records in plan order and how many were
/// taken from `kept`; the records are the same either way.
///
/// # Errors
/// The first testbed error, in plan order; [`crate::CollectError::Io`] when an episode cannot
/// be kept.
pub fn record_dataset_kept(
    cfg: &CheckedConfig,
    plan: &[PlannedEpisode],
    kept: Option<&Path>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<EpisodeRecord>, usize)> {
    let done = AtomicUsize::new(0);
    let reused = AtomicUsize::new(0);
    let records = plan
        .par_iter()
        .map(|p| {
            let r = match kept.and_then(|dir| read_episode(dir, p)) {
                Some(r) => {
                    reused.fetch_add(1, Ordering::Relaxed);
                    Ok(r)
                }
                None => record_planned(p, cfg.config.image_size).and_then(|r| {
                    if let Some(dir) = kept {
                        write_episode(dir, p.index, &r)?;
                    }
                    Ok(r)
                }),
            };
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, plan.len());
            r
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((records, reused.into_inner()))
}

/// Per behaviour kind: episodes, successes and frames in the recorded dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BehaviourSummary {
    /// Behaviour kind name.
    pub behaviour: String,
    /// Episodes.
    pub episodes: usize,
    /// Successful episodes.
    pub successes: usize,
    /// Frames.
    pub frames: usize,
}

/// Summarizes the recorded dataset by behaviour kind (in [`BehaviourKind::MIXTURE`] order).
pub fn summarize(plan: &[PlannedEpisode], records: &[EpisodeRecord]) -> Vec<BehaviourSummary> {
    BehaviourKind::MIXTURE
        .iter()
        .map(|(k, _)| {
            let eps: Vec<&EpisodeRecord> = plan
                .iter()
                .zip(records)
                .filter(|(p, _)| p.behaviour == *k)
                .map(|(_, r)| r)
                .collect();
            BehaviourSummary {
                behaviour: k.name().into(),
                episodes: eps.len(),
                successes: eps.iter().filter(|r| r.success()).count(),
                frames: eps.iter().map(|r| r.frames.len()).sum(),
            }
        })
        .collect()
}
