//! Natural-occurrence episodes on the testbed (docs/methods.md §2.10; SPEC.md §2 natural-rollout
//! tests; seed 002 §IV-D3).
//!
//! Episode `i` draws its scene and origins as an intervention recipient does, but from its own
//! seeded stream ([`episode_seeds`], scene ids `n000`, …), so no natural episode reuses a scene
//! of `memory collect` (`p…`), `memory intervene` (`e…`), or the learned policies'
//! demonstrations and qualification (`d…`, `q…`). The expert plays the episode's own history to
//! the audited present (no crossing, no replacement); the policy observes that history into its
//! memory, natively; at the present the registered rule ([`DECISION_RULE`]) decides from the
//! scene state alone whether the episode contains the audited decision type; then the policy
//! continues closed loop, untreated, to success or the step limit, read out as the
//! interventions are (first direction, committed target, official success) plus the steps from
//! the present to the end. [`roboaudit_memory::natural::analyze_natural`] does the rest.

use std::path::{Path, PathBuf};

use roboaudit_testbed::predicates::IN_TRAY_HALF;
use roboaudit_testbed::{CompiledScene, Episode, EpisodeConfig, ExpertParams};
use roboaudit_types::seed::{Fnv1a, splitmix64};

use crate::error::HarnessError;
use crate::intervene::continue_unhooked;
use crate::pairs::{HistoryPlan, enter_world, run_history};
use crate::policy::MemoryPolicy;
use crate::tasks::MemoryTask;
pub use roboaudit_memory::natural::{
    COHORT_NOTE, CohortSettings, DECISION_RULE, NATURAL_SCHEMA, NaturalConfig, NaturalEpisode,
    NaturalStudy, analyze_natural, markdown,
};

/// File name of the study (JSON) inside the output folder.
pub const STUDY_FILE: &str = "natural.json";
/// File name of the study's summary (Markdown) inside the output folder: not `summary.md`, which
/// a memory audit writes, so a natural study can sit beside the audit it belongs to (the
/// combined report reads `natural.json` there).
pub const SUMMARY_FILE: &str = "natural.md";

/// Tag hashed into every natural episode's seeds.
const STREAM_TAG: &str = "roboaudit.memory.natural";

/// Height (m) below which a block counts as resting in a tray, as the testbed's predicates read
/// *in tray*.
const REST_Z: f64 = 0.05;

/// Layout seed and episode (history) seed of natural episode `i` under master `seed`: FNV-1a of
/// [`STREAM_TAG`], `seed` and `i`, then splitmix64, a stream of its own.
pub fn episode_seeds(seed: u64, i: usize) -> [u64; 2] {
    let mut h = Fnv1a::new();
    h.write(STREAM_TAG.as_bytes())
        .write_u64(seed)
        .write_u64(i as u64);
    let base = h.finish();
    [splitmix64(base), splitmix64(base ^ 0x51ed)]
}

/// Trays no block rests in (ascending): no block centre within the tray's half width along x
/// and y with its height below 5 cm. A held, lifted block rests nowhere.
pub fn empty_trays(ep: &Episode) -> Vec<usize> {
    let w = ep.world();
    ep.scene()
        .layout
        .trays
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            !(0..w.n_blocks()).any(|b| {
                w.block_pose(b).is_some_and(|p| {
                    (p.pos[0] - t.x).abs() < IN_TRAY_HALF
                        && (p.pos[1] - t.y).abs() < IN_TRAY_HALF
                        && p.pos[2] < REST_Z
                })
            })
        })
        .map(|(i, _)| i)
        .collect()
}

/// The registered rule: the warranted tray is a candidate (empty) and is not the only one.
pub fn contains_decision(candidates: &[usize], warranted: usize) -> bool {
    candidates.contains(&warranted) && candidates.len() >= 2
}

/// Checks `cfg` and returns its task.
///
/// # Errors
/// [`HarnessError::UnsupportedTask`] for tasks without a memory decision;
/// [`HarnessError::InvalidConfig`] for zero episodes or `obs_every`, no layout level, a level
/// above 3, or bootstrap settings out of range.
pub fn prepare(cfg: &NaturalConfig) -> Result<MemoryTask, HarnessError> {
    let task = crate::intervene::native_rollout_task(
        cfg.cohort.task,
        cfg.cohort.episodes,
        cfg.cohort.obs_every,
        &cfg.cohort.layout_levels,
    )?;
    let b = &cfg.bootstrap;
    let resamples_ok = (1..=roboaudit_memory::MAX_RESAMPLES).contains(&b.resamples);
    if !(resamples_ok && b.level > 0.0 && b.level < 1.0) {
        return Err(HarnessError::InvalidConfig(
            "bootstrap resamples must be in 1..=1,000,000 and the level in (0, 1)".into(),
        ));
    }
    Ok(task)
}

/// Runs natural episode `index` of a study whose configuration [`prepare`] accepted. The policy
/// is reset first, so the episode depends on the configuration and `index` only.
///
/// # Errors
/// [`HarnessError::InvalidConfig`] without layout levels; policy-contract and simulator errors.
pub fn run_episode(
    cfg: &NaturalConfig,
    task: &MemoryTask,
    index: usize,
    policy: &mut dyn MemoryPolicy,
) -> Result<NaturalEpisode, HarnessError> {
    let id = format!("n{index:03}");
    let level = cfg
        .cohort
        .layout_levels
        .get(index % cfg.cohort.layout_levels.len().max(1))
        .copied()
        .ok_or_else(|| HarnessError::InvalidConfig("layout_levels must be non-empty".into()))?;
    let [layout_seed, episode_seed] = episode_seeds(cfg.cohort.seed, index);
    let scene = task.scene(&id, level, layout_seed)?;
    let compiled = CompiledScene::new(&scene, 64)?;
    let origins = task.origins(index)[0].clone();
    let warranted = task.branch(&origins);
    let plan = HistoryPlan {
        obs_every: cfg.cohort.obs_every,
        expert: ExpertParams::default(),
        route: None,
    };
    let mut record = NaturalEpisode {
        id,
        stratum: format!("level{level}"),
        reached_present: false,
        warranted,
        candidates: Vec::new(),
        contains_decision: false,
        present_step: None,
        first_direction: None,
        committed: None,
        success: None,
        remaining_steps: None,
    };
    let Some(history) = run_history(&compiled, task, episode_seed, &origins, &plan, None)? else {
        return Ok(record);
    };
    let ep_cfg = EpisodeConfig {
        seed: episode_seed,
        memory_targets: Some(origins.clone()),
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(&compiled, task.task(), &ep_cfg)?;
    // The snapshot carries the episode's step count and random state: the continuation is the
    // episode the history began.
    enter_world(&mut ep, &history.present, &origins)?;
    let present_step = ep.steps();
    record.reached_present = true;
    record.candidates = empty_trays(&ep);
    record.contains_decision = contains_decision(&record.candidates, warranted);
    record.present_step = Some(present_step);
    policy.reset();
    for o in &history.observations {
        policy.observe(o)?;
    }
    let (success, committed, first) =
        continue_unhooked(&mut ep, task, policy, cfg.cohort.action_seed)?;
    record.first_direction = first;
    record.committed = committed;
    record.success = Some(success);
    record.remaining_steps = Some(ep.steps().saturating_sub(present_step));
    Ok(record)
}

/// Runs every natural episode of `cfg` with `policy` and analyzes them; `progress(done, total)`
/// is called after each episode.
///
/// # Errors
/// Configuration ([`prepare`]), policy-contract, simulator and bootstrap errors.
pub fn natural_study(
    cfg: &NaturalConfig,
    policy: &mut dyn MemoryPolicy,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<NaturalStudy, HarnessError> {
    let task = prepare(cfg)?;
    let mut episodes = Vec::with_capacity(cfg.cohort.episodes);
    for i in 0..cfg.cohort.episodes {
        episodes.push(run_episode(cfg, &task, i, policy)?);
        progress(i + 1, cfg.cohort.episodes);
    }
    assemble_study(cfg, policy.name(), episodes)
}

/// The study of `cfg` from its episodes, in index order (`episodes[i]` is episode `i`), run by
/// the policy named `policy`: the analysis is computed from all of them at once, so a study
/// assembled from shards ([`crate::natural_shard`]) is the unsharded one, byte for byte.
///
/// # Errors
/// Bootstrap errors.
pub fn assemble_study(
    cfg: &NaturalConfig,
    policy: String,
    episodes: Vec<NaturalEpisode>,
) -> Result<NaturalStudy, HarnessError> {
    let analysis = analyze_natural(&episodes, &cfg.bootstrap)?;
    Ok(NaturalStudy {
        schema: NATURAL_SCHEMA.into(),
        policy,
        cohort: COHORT_NOTE.into(),
        decision_rule: DECISION_RULE.into(),
        config: cfg.clone(),
        analysis,
        episodes,
    })
}

/// Writes [`STUDY_FILE`] and [`SUMMARY_FILE`] of `study` into `out` together (both or neither);
/// returns their paths.
///
/// # Errors
/// [`HarnessError::Partial`] when a file cannot be written.
pub fn write_study(out: &Path, study: &NaturalStudy) -> Result<(PathBuf, PathBuf), HarnessError> {
    let json_path = out.join(STUDY_FILE);
    let md_path = out.join(SUMMARY_FILE);
    let json = serde_json::to_vec_pretty(study)
        .map_err(|e| HarnessError::partial(&json_path, "serialize the study", e))?;
    crate::output::write_together(&[(&json_path, &json), (&md_path, markdown(study).as_bytes())])?;
    Ok((json_path, md_path))
}
