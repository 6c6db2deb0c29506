//! Episodes of the learned policies on the testbed: expert demonstrations for behaviour cloning
//! and native closed-loop rollouts for qualification, both played as the harness plays its
//! native interventions (seed 002 §III-D): the testbed expert runs the history up to the audited
//! present (the lift event), observed every `obs_every` steps; from there the decision segment
//! is the policy's (closed loop: observe the packet, query one chunk, execute it).
//!
//! In a demonstration the decision segment is the harness's scripted transport toward the
//! warranted branch (`roboaudit_memory_harness::builtin::transport_chunk`, no noise: the script
//! behind the audit's reference chunks), not the testbed expert's own continuation, because the
//! testbed's swap expert puts red in tray 1 whatever blue's origin (wrong for the three-tray swap
//! the harness crosses) and its rearrange expert goes on to block 1, which is no part of the
//! audited decision. Success of an episode is *decision success*: the held block released
//! inside the warranted tray before the task's step limit (on put_back this is the testbed's own
//! success predicate).

use roboaudit_memory_harness::builtin::transport_chunk;
use roboaudit_memory_harness::observe::observe;
use roboaudit_memory_harness::pairs::{History, HistoryPlan, enter_world, run_history};
use roboaudit_memory_harness::tasks::MemoryTask;
use roboaudit_memory_harness::{ACTION_DIM, MemoryPolicy, Observation, check_chunk};
use roboaudit_testbed::predicates::IN_TRAY_HALF;
use roboaudit_testbed::{Action, CompiledScene, Episode, EpisodeConfig, ExpertParams};
use roboaudit_types::seed::{Fnv1a, splitmix64};

use crate::error::LearnedError;

/// Which seeded stream an episode's scene is drawn from. Each stream hashes its own tag into
/// every seed and names its scenes with its own prefix (`d000`, `q000`), so demonstrations and
/// qualification episodes share no scene with each other or with `memory collect` (`p000`,
/// seeds `splitmix64(seed ^ splitmix64(i + 1))`) and `memory intervene` (`e000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Behaviour-cloning demonstrations.
    Demo,
    /// Qualification episodes.
    Qualify,
}

impl Stream {
    fn tag(self) -> (&'static str, &'static str) {
        match self {
            Stream::Demo => ("roboaudit.learned.demo", "d"),
            Stream::Qualify => ("roboaudit.learned.qualify", "q"),
        }
    }

    /// Layout seed and episode seed of episode `i` under master `seed`.
    pub fn seeds(self, seed: u64, i: usize) -> [u64; 2] {
        let (tag, _) = self.tag();
        let mut h = Fnv1a::new();
        h.write(tag.as_bytes()).write_u64(seed).write_u64(i as u64);
        let base = h.finish();
        [splitmix64(base), splitmix64(base ^ 0x51ed)]
    }

    /// Scene id of episode `i`.
    pub fn scene_id(self, i: usize) -> String {
        format!("{}{i:03}", self.tag().1)
    }
}

/// An episode's scene and expert history up to the audited present.
pub struct Setup {
    /// The compiled scene.
    pub compiled: CompiledScene,
    /// The task.
    pub task: MemoryTask,
    /// The world's origins.
    pub origins: Vec<usize>,
    /// The warranted branch (tray index).
    pub branch: usize,
    /// The expert history (observations and the present).
    pub history: History,
}

/// Builds episode `i` of `stream`: origins cycle through the task's crossed combinations (the
/// first history of the harness's pair `i`), so branches are balanced. `None` when the expert
/// does not reach the present within the step limit.
///
/// # Errors
/// Simulator failures.
pub fn setup(
    task: &MemoryTask,
    stream: Stream,
    seed: u64,
    i: usize,
    level: u8,
    obs_every: usize,
) -> Result<Option<Setup>, LearnedError> {
    let [layout_seed, episode_seed] = stream.seeds(seed, i);
    let scene = task.scene(&stream.scene_id(i), level, layout_seed)?;
    let compiled = CompiledScene::new(&scene, 64)?;
    let origins = task.origins(i)[0].clone();
    let plan = HistoryPlan {
        obs_every,
        expert: ExpertParams::default(),
        route: None,
    };
    let history = run_history(&compiled, task, episode_seed, &origins, &plan, None)?;
    Ok(history.map(|history| Setup {
        compiled,
        task: *task,
        branch: task.branch(&origins),
        origins,
        history,
    }))
}

/// The policy's input for an observation: the perception vector followed by the planar distance
/// (m) of every block to every tray, block-major (a fixed transform: which tray a block sits in
/// becomes one coordinate instead of a comparison the network must learn).
pub fn input_of(obs: &Observation) -> Vec<f32> {
    let l = obs.layout;
    let f = |i: usize| obs.features.get(i).copied().unwrap_or(0.0);
    let mut v = obs.features.clone();
    for b in 0..l.n_blocks {
        for t in 0..l.n_trays {
            let (bx, by) = (f(l.block(b)), f(l.block(b) + 1));
            let (tx, ty) = (f(l.tray(t)), f(l.tray(t) + 1));
            v.push((bx - tx).hypot(by - ty));
        }
    }
    v
}

/// Decision success: block 0 released (last gripper command open), resting inside tray
/// `branch` (centre within the testbed's in-tray half width along x and y, below 5 cm).
pub fn decision_success(ep: &Episode, branch: usize) -> bool {
    let Some(tray) = ep.scene().layout.trays.get(branch) else {
        return false;
    };
    ep.world().gripper_command() < 0.0
        && ep.world().block_pose(0).is_some_and(|p| {
            (p.pos[0] - tray.x).abs() < IN_TRAY_HALF
                && (p.pos[1] - tray.y).abs() < IN_TRAY_HALF
                && p.pos[2] < 0.05
        })
}

fn present_episode(s: &Setup) -> Result<Episode, LearnedError> {
    let cfg = EpisodeConfig {
        memory_targets: Some(s.origins.clone()),
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(&s.compiled, s.task.task(), &cfg)?;
    enter_world(&mut ep, &s.history.present, &s.origins)?;
    Ok(ep)
}

fn step_chunk(ep: &mut Episode, values: &[f32], branch: usize) -> Result<bool, LearnedError> {
    for a in values.chunks(ACTION_DIM) {
        if ep.steps() >= ep.task().max_steps() {
            return Ok(false);
        }
        let v: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
        ep.step(&Action::from_slice(&v)?)?;
        if decision_success(ep, branch) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// One demonstration: the inputs the policy would observe (history, then one per query) and
/// the target chunk of each query.
#[derive(Debug, Clone, PartialEq)]
pub struct Demo {
    /// Inputs ([`input_of`]) of the history observations.
    pub history: Vec<Vec<f32>>,
    /// Inputs of the query observations after the present, in order.
    pub queries: Vec<Vec<f32>>,
    /// Target chunk of each query (`chunk_len · ACTION_DIM` values).
    pub targets: Vec<Vec<f32>>,
    /// Whether the scripted continuation reached decision success.
    pub success: bool,
}

/// Records the demonstration of `s` (see the module docs): at most `max_queries` queries,
/// ending at decision success.
///
/// # Errors
/// Simulator failures.
pub fn record_demo(s: &Setup, chunk_len: usize, max_queries: usize) -> Result<Demo, LearnedError> {
    let history = s.history.observations.iter().map(input_of).collect();
    let mut ep = present_episode(s)?;
    let n_trays = ep.scene().layout.trays.len();
    let mut demo = Demo {
        history,
        queries: Vec::new(),
        targets: Vec::new(),
        success: false,
    };
    while demo.queries.len() < max_queries && ep.steps() < ep.task().max_steps() {
        let obs = observe(&mut ep, None, (0..n_trays).collect())?;
        let chunk = transport_chunk(&obs, s.branch, chunk_len, None);
        demo.queries.push(input_of(&obs));
        demo.targets.push(chunk.values.clone());
        if step_chunk(&mut ep, &chunk.values, s.branch)? {
            demo.success = true;
            break;
        }
    }
    Ok(demo)
}

/// A native closed-loop rollout of `policy` from the present of `s`: the memory is rebuilt from
/// the history, then observe → query (action seed `c`) → execute, until decision success or the
/// step limit. Returns decision success.
///
/// # Errors
/// Policy-contract and simulator failures.
pub fn rollout(s: &Setup, policy: &mut dyn MemoryPolicy) -> Result<bool, LearnedError> {
    policy.reset();
    for o in &s.history.observations {
        policy.observe(o)?;
    }
    let mut ep = present_episode(s)?;
    let n_trays = ep.scene().layout.trays.len();
    let mut c = 0u64;
    while ep.steps() < ep.task().max_steps() {
        let obs = observe(&mut ep, None, (0..n_trays).collect())?;
        policy.observe(&obs)?;
        let chunk = policy.act(&obs, c)?;
        check_chunk(policy, &chunk)?;
        if step_chunk(&mut ep, &chunk.values, s.branch)? {
            return Ok(true);
        }
        c += 1;
    }
    Ok(false)
}
