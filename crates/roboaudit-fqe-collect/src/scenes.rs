//! Initial states: the push tasks and the seeded scene and episode draws shared by the dataset and
//! the ground-truth rollouts (the same distribution, so that estimates from the dataset's initial
//! frames target the rollouts' values; seed 003 §3.3 names a mismatch here as an error source).

use crate::error::Result;
use crate::obs::{mix, rng_for};
use rand::RngExt;
use roboaudit_testbed::{
    CompiledScene, Episode, EpisodeConfig, Family, Perturbation, Scene, TaskKind,
};

/// The four push tasks of the language suite, in dataset task-index order.
pub fn push_tasks() -> Vec<TaskKind> {
    TaskKind::language_suite()
        .into_iter()
        .filter(|t| matches!(t, TaskKind::Push { .. }))
        .collect()
}

/// Which draw an initial state belongs to: dataset episodes and rollouts use disjoint streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Dataset episode `i`.
    Dataset(u64),
    /// Ground-truth rollout `r` of task `k` (shared by every target policy: common initial states).
    Rollout {
        /// Task position in [`push_tasks`].
        task: u64,
        /// Rollout number.
        rollout: u64,
    },
}

/// An initial state: a scene (layout level `level`, canonical appearance) and an episode seed.
#[derive(Debug, Clone, PartialEq)]
pub struct InitialState {
    /// Scene.
    pub scene: Scene,
    /// Episode seed (friction jitter and actuation noise of the testbed).
    pub episode_seed: u64,
}

impl InitialState {
    /// The initial state of a stream under `seed`.
    ///
    /// # Errors
    /// [`crate::CollectError::Testbed`] when `level > 3`.
    pub fn draw(seed: u64, level: u8, stream: Stream) -> Result<InitialState> {
        let (tag, a, b, id) = match stream {
            Stream::Dataset(i) => (1u64, i, 0u64, format!("d{i:05}")),
            Stream::Rollout { task, rollout } => {
                (2, task, rollout, format!("r{task}_{rollout:04}"))
            }
        };
        let mut rng = rng_for(seed, &[0x0053_4345_4e45, tag, a, b]);
        let layout_seed: u64 = rng.random();
        let episode_seed = mix(rng.random::<u64>());
        let scene = Scene::from_draws(
            Family::Language,
            &id,
            Perturbation::Layout,
            level,
            layout_seed,
            0,
            0,
        )?;
        Ok(InitialState {
            scene,
            episode_seed,
        })
    }

    /// Starts an episode of `task` here, compiled for renders of up to `render_size` pixels.
    ///
    /// # Errors
    /// Testbed errors (model compilation, family mismatch).
    pub fn start(&self, task: TaskKind, render_size: usize) -> Result<Episode> {
        let compiled = CompiledScene::new(&self.scene, render_size)?;
        Ok(Episode::new(
            &compiled,
            task,
            &EpisodeConfig {
                seed: self.episode_seed,
                ..EpisodeConfig::default()
            },
        )?)
    }
}
