//! Building one crossed pair on the testbed: two natural histories, their verified present, and
//! the reason a pair is excluded (decided before any policy query, never replaced).

use roboaudit_testbed::{
    Action, CompiledScene, Episode, EpisodeConfig, Expert, ExpertParams, SceneRenderer, Snapshot,
};
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::observe::{Tolerance, hidden, hidden_delta, hidden_mismatch, observe};
use crate::policy::Observation;
use crate::tasks::MemoryTask;

/// A detour route of the irrelevant-history control (seed 002 §III-C2): before the task starts,
/// the empty gripper visits a waypoint on one side of the table. It changes the history, never
/// the warranted branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// Waypoint at the robot's left (`y = +0.15 m`).
    Left,
    /// Waypoint at the robot's right (`y = −0.15 m`).
    Right,
}

impl Route {
    /// `left` or `right` (the records' `route` column).
    pub fn name(self) -> &'static str {
        match self {
            Route::Left => "left",
            Route::Right => "right",
        }
    }

    /// Parses [`Route::name`].
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] for any other string.
    pub fn parse(s: &str) -> Result<Route, HarnessError> {
        match s.trim() {
            "left" => Ok(Route::Left),
            "right" => Ok(Route::Right),
            _ => Err(HarnessError::InvalidConfig(format!(
                "unknown route `{s}`; valid: left, right"
            ))),
        }
    }

    /// The waypoint (m).
    pub fn waypoint(self) -> [f64; 3] {
        match self {
            Route::Left => [0.45, 0.15, 0.25],
            Route::Right => [0.45, -0.15, 0.25],
        }
    }
}

/// Largest number of detour actions.
const DETOUR_STEPS: usize = 40;

/// How a history is played: observation period, expert, detour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryPlan {
    /// A history observation every this many steps (≥ 1).
    pub obs_every: usize,
    /// Expert settings.
    pub expert: ExpertParams,
    /// Detour route before the task, if any.
    pub route: Option<Route>,
}

/// One natural history up to the audited present.
#[derive(Debug, Clone)]
pub struct History {
    /// The observations the policy folds into its memory (every `obs_every`-th step from the
    /// first, excluding the present).
    pub observations: Vec<Observation>,
    /// The episode at the present.
    pub present: Snapshot,
}

/// A pair that passed the present check.
#[derive(Debug, Clone)]
pub struct VerifiedPair {
    /// Histories `A` and `B`.
    pub histories: [History; 2],
    /// The shared present: history A's present state (history B's natural present agreed with it
    /// within the tolerance); each evaluator world restores it with its own remembered origins.
    pub present: Snapshot,
    /// The present packet (identical, bit for bit, in both worlds).
    pub packet: Observation,
    /// Origins of each world.
    pub origins: [Vec<usize>; 2],
    /// Measured hidden-physics difference of the natural presents: largest position difference
    /// (m) and largest joint difference (rad).
    pub hidden_delta: [f64; 2],
}

/// Runs the expert with `origins` until the present (after the `route` detour, if any),
/// observing every `obs_every` steps.
/// `Ok(None)` when the present is not reached within the task's step limit.
///
/// # Errors
/// Simulator and rendering failures.
pub fn run_history(
    compiled: &CompiledScene,
    task: &MemoryTask,
    episode_seed: u64,
    origins: &[usize],
    how: &HistoryPlan,
    renderer: Option<&mut SceneRenderer>,
) -> Result<Option<History>, HarnessError> {
    let HistoryPlan {
        obs_every,
        expert,
        route,
    } = *how;
    let cfg = EpisodeConfig {
        seed: episode_seed,
        memory_targets: Some(origins.to_vec()),
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(compiled, task.task(), &cfg)?;
    let mut ex = Expert::new(task.expert_task(), expert, episode_seed);
    let mut renderer = renderer;
    let mut observations = Vec::new();
    let every = obs_every.max(1);
    let mut detour = route.map(Route::waypoint);
    while ep.steps() < task.task().max_steps() {
        if task.at_present(&ep) {
            return Ok(Some(History {
                observations,
                present: ep.snapshot(),
            }));
        }
        if ep.steps() % every == 0 {
            observations.push(observe(&mut ep, renderer.as_deref_mut(), Vec::new())?);
        }
        if let Some(w) = detour {
            let c = ep.world().commanded_tcp();
            let d = [w[0] - c[0], w[1] - c[1], w[2] - c[2]];
            if ep.steps() >= DETOUR_STEPS || d.iter().all(|v| v.abs() < 0.003) {
                detour = None;
            } else {
                ep.step(&Action {
                    dpos: d,
                    drot: [0.0; 3],
                    gripper: -1.0,
                })?;
                continue;
            }
        }
        let a = ex.act(&ep);
        ep.step(&a)?;
    }
    Ok(None)
}

/// Restores `present` into `ep` as evaluator world with `origins`.
///
/// # Errors
/// Snapshot mismatch or invalid origins.
pub fn enter_world(
    ep: &mut Episode,
    present: &Snapshot,
    origins: &[usize],
) -> Result<(), HarnessError> {
    ep.restore(present)?;
    ep.set_memory_targets(origins)?;
    Ok(())
}

/// Verifies a pair: both histories reached the present, the hidden physical states of the two
/// natural presents agree within `tol`, and the packets built in the two evaluator worlds from
/// the shared present are bitwise equal. `Err(reason)` in the inner result excludes the pair.
///
/// # Errors
/// Simulator and rendering failures.
pub fn verify(
    compiled: &CompiledScene,
    task: &MemoryTask,
    histories: [Option<History>; 2],
    origins: [Vec<usize>; 2],
    tol: &Tolerance,
    mut renderer: Option<&mut SceneRenderer>,
) -> Result<Result<VerifiedPair, String>, HarnessError> {
    let [Some(a), Some(b)] = histories else {
        let which = if histories[0].is_none() { "A" } else { "B" };
        return Ok(Err(format!(
            "history {which} did not reach the present within {} steps",
            task.task().max_steps()
        )));
    };
    let cfg = EpisodeConfig {
        memory_targets: Some(origins[0].clone()),
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(compiled, task.task(), &cfg)?;
    enter_world(&mut ep, &b.present, &origins[1])?;
    let hidden_b = hidden(&ep);
    enter_world(&mut ep, &a.present, &origins[0])?;
    let hidden_a = hidden(&ep);
    if let Some(reason) = hidden_mismatch(&hidden_a, &hidden_b, tol) {
        return Ok(Err(format!("hidden physics: {reason}")));
    }
    let candidates = {
        let mut c = vec![task.branch(&origins[0]), task.branch(&origins[1])];
        c.sort_unstable();
        c
    };
    let packet_a = observe(&mut ep, renderer.as_deref_mut(), candidates.clone())?;
    enter_world(&mut ep, &a.present, &origins[1])?;
    let packet_b = observe(&mut ep, renderer, candidates)?;
    if packet_a.packet_bytes() != packet_b.packet_bytes() {
        return Ok(Err(
            "present packets differ between the evaluator worlds".into()
        ));
    }
    let present = a.present.clone();
    Ok(Ok(VerifiedPair {
        histories: [a, b],
        present,
        packet: packet_a,
        origins,
        hidden_delta: hidden_delta(&hidden_a, &hidden_b),
    }))
}
