//! `collect`: crossed pairs on the testbed → one [`MemoryRecord`] per (pair, memory, action seed,
//! world) (SPEC.md §2; seed 002 §III-A).
//!
//! Per pair: draw a layout, run the expert under both histories to the present, verify the present
//! (exclusion is decided here, before any query, and an excluded pair is never replaced), run the
//! reference chunks, query the frozen policy once per memory and action seed (memory set through
//! [`MemoryPolicy::set_memory`], the same seed for both memories), execute every saved chunk from
//! the shared present in both evaluator worlds, and record progress and value.

use roboaudit_data::{MemoryLabel, MemoryRecord};
use roboaudit_testbed::{
    CompiledScene, Episode, EpisodeConfig, ExpertParams, SceneRenderer, TaskKind,
};
use roboaudit_types::seed::splitmix64;
use serde::{Deserialize, Serialize};

use crate::builtin::transport_chunk;
use crate::error::HarnessError;
use crate::execute::{execute, progress, tray_distance};
use crate::observe::Tolerance;
use crate::pairs::{HistoryPlan, Route, VerifiedPair, run_history, verify};
use crate::policy::{ActionChunk, MemoryPolicy, MemorySpec, check_chunk};
use crate::tasks::MemoryTask;

/// Schema tag of [`Manifest`].
pub const MANIFEST_SCHEMA: &str = "roboaudit.memory_collect.v1";

/// Smallest progress (m) the reference chunk must make toward a branch for the pair to be usable.
pub const MIN_REFERENCE_PROGRESS: f64 = 0.001;

/// Whether each memory gets its own chunk, or one genuine chunk is reused for both labels (the
/// pseudo-memory calibrator of SPEC.md §2: F = U1 = 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// Query each memory (the audit).
    Never,
    /// Query only memory A on even pairs and B on odd pairs; use that chunk for both labels.
    Balanced,
}

/// Settings of a collection run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectConfig {
    /// `put_back`, `swap` (three-tray variant, [`crate::tasks`]) or `rearrange`.
    pub task: TaskKind,
    /// Pairs to construct (≥ 1), excluded ones included.
    pub pairs: usize,
    /// Registered action seeds (non-empty, distinct, ≤ i64::MAX).
    pub action_seeds: Vec<u64>,
    /// Master seed of layouts and episodes.
    pub seed: u64,
    /// Layout levels cycled over pairs (each 0–3); the level is the pair's stratum.
    pub layout_levels: Vec<u8>,
    /// A history observation every this many steps (≥ 1).
    pub obs_every: usize,
    /// Hidden-physics tolerance of the present check.
    pub tolerance: Tolerance,
    /// Expert that plays the histories.
    pub expert: ExpertParams,
    /// Render the scene camera into every observation at this size (pixels); `None`: no frames.
    pub render_size: Option<usize>,
    /// Chunk reuse (calibration only).
    pub reuse: Reuse,
    /// Irrelevant-history control: every pair is collected once per route (pair id
    /// `p000-left`, …, `route` column set); empty = no detour.
    #[serde(default)]
    pub routes: Vec<Route>,
    /// Plan hash written into every record (`None`: column omitted).
    pub plan_hash: Option<String>,
}

impl Default for CollectConfig {
    /// put_back, 64 pairs, seeds 0..3, layout levels 0 and 1, an observation every 4 steps.
    fn default() -> Self {
        CollectConfig {
            task: TaskKind::PutBack,
            pairs: 64,
            action_seeds: vec![0, 1, 2],
            seed: 0,
            layout_levels: vec![0, 1],
            obs_every: 4,
            tolerance: Tolerance::default(),
            expert: ExpertParams::default(),
            render_size: None,
            reuse: Reuse::Never,
            routes: Vec::new(),
            plan_hash: None,
        }
    }
}

/// An excluded pair and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairExclusion {
    /// The pair.
    pub pair_id: String,
    /// The failed check.
    pub reason: String,
}

/// Provenance of a collection (written beside the records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_SCHEMA`].
    pub schema: String,
    /// The policy's name.
    pub policy: String,
    /// Its declared memory.
    pub memory_spec: MemorySpec,
    /// Actions per chunk.
    pub chunk_len: usize,
    /// The configuration.
    pub config: CollectConfig,
    /// Pairs constructed (× routes).
    pub n_pairs: usize,
    /// Pairs excluded by the present check (never replaced).
    pub n_excluded: usize,
    /// Which and why.
    pub excluded: Vec<PairExclusion>,
    /// Largest hidden-physics difference between the natural presents over the verified pairs:
    /// position (m) and joint angle (rad); zeros when no pair was verified.
    pub max_hidden_delta: [f64; 2],
    /// Chunk executions whose final physics differed between the two evaluator worlds (must be 0:
    /// the world label reaches only the evaluator).
    pub world_physics_mismatches: usize,
}

/// Records and manifest of a run.
#[derive(Debug, Clone)]
pub struct Collection {
    /// One record per (pair, memory, action seed, world), pairs in order.
    pub records: Vec<MemoryRecord>,
    /// Provenance.
    pub manifest: Manifest,
}

impl CollectConfig {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] naming the field; [`HarnessError::UnsupportedTask`].
    pub fn validate(&self) -> Result<MemoryTask, HarnessError> {
        let task = MemoryTask::new(self.task)?;
        let bad = |m: String| Err(HarnessError::InvalidConfig(m));
        if self.pairs == 0 {
            return bad("pairs must be ≥ 1".into());
        }
        let mut seeds = self.action_seeds.clone();
        seeds.sort_unstable();
        seeds.dedup();
        if seeds.is_empty() || seeds.len() != self.action_seeds.len() {
            return bad("action seeds must be non-empty and distinct".into());
        }
        if seeds.iter().any(|&s| i64::try_from(s).is_err()) {
            return bad("action seeds must be ≤ i64::MAX".into());
        }
        if self.layout_levels.is_empty() || self.layout_levels.iter().any(|&l| l > 3) {
            return bad("layout levels must be non-empty, each in 0..=3".into());
        }
        if self.routes.len() == 1 {
            return bad(
                "the irrelevant-history control needs two detour routes (--routes left,right); one route alone changes every pair's history without anything to compare it with".into(),
            );
        }
        if (1..self.routes.len()).any(|k| self.routes[..k].contains(&self.routes[k])) {
            return bad("routes must be distinct".into());
        }
        if self.obs_every == 0 {
            return bad("obs_every must be ≥ 1".into());
        }
        let t = self.tolerance;
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !ok(t.position_m) || !ok(t.joint_rad) {
            return bad("tolerances must be finite and ≥ 0".into());
        }
        Ok(task)
    }
}

/// Runs the harness with `policy` (see the module docs). `on_pair(done, total)` is called after
/// each pair.
///
/// # Errors
/// [`HarnessError::InvalidConfig`] / [`HarnessError::UnsupportedTask`] for the configuration;
/// [`HarnessError::Policy`] when the policy breaks its contract; simulator failures.
pub fn collect(
    cfg: &CollectConfig,
    policy: &mut dyn MemoryPolicy,
    on_pair: &mut dyn FnMut(usize, usize),
) -> Result<Collection, HarnessError> {
    let task = cfg.validate()?;
    let per_pair = cfg.routes.len().max(1);
    let mut parts = Vec::with_capacity(cfg.pairs);
    for i in 0..cfg.pairs {
        parts.push(collect_pair(cfg, &task, i, policy)?);
        on_pair((i + 1) * per_pair, cfg.pairs * per_pair);
    }
    Ok(assemble(cfg, policy, parts))
}

/// Everything base pair `index` contributes (one crossed pair per route): a collection is the
/// concatenation of its pairs' parts in index order, so a pair can be collected, kept and
/// resumed on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct PairPart {
    /// Base pair index (`p{index:03}`).
    pub index: usize,
    /// Its records: (route, memory, action seed, world) rows, as in [`Collection::records`].
    pub records: Vec<MemoryRecord>,
    /// Its excluded pairs (per route).
    pub excluded: Vec<PairExclusion>,
    /// Largest hidden-state difference at its verified presents: `[position m, joint rad]`.
    pub max_hidden_delta: [f64; 2],
    /// Its chunks whose two worlds' physics differed after execution.
    pub world_physics_mismatches: usize,
}

/// Collects base pair `i` under every route of `cfg` (the loop body of [`collect`]).
///
/// # Errors
/// As [`collect`].
pub fn collect_pair(
    cfg: &CollectConfig,
    task: &MemoryTask,
    i: usize,
    policy: &mut dyn MemoryPolicy,
) -> Result<PairPart, HarnessError> {
    let routes: Vec<Option<Route>> = if cfg.routes.is_empty() {
        vec![None]
    } else {
        cfg.routes.iter().copied().map(Some).collect()
    };
    let mut part = PairPart {
        index: i,
        records: Vec::new(),
        excluded: Vec::new(),
        max_hidden_delta: [0.0; 2],
        world_physics_mismatches: 0,
    };
    let base_id = format!("p{i:03}");
    let level = cfg.layout_levels[i % cfg.layout_levels.len()];
    let stratum = format!("level{level}");
    let scene = task.scene(
        &base_id,
        level,
        splitmix64(cfg.seed ^ splitmix64(i as u64 + 1)),
    )?;
    let compiled = CompiledScene::new(&scene, cfg.render_size.unwrap_or(64))?;
    let mut renderer = match cfg.render_size {
        Some(size) => {
            let ep = Episode::new(&compiled, task.task(), &EpisodeConfig::default())?;
            Some(SceneRenderer::new(&ep, size)?)
        }
        None => None,
    };
    let episode_seed = splitmix64(cfg.seed.wrapping_add(0x51ed) ^ splitmix64(i as u64));
    for &route in &routes {
        let pair_id = match route {
            Some(r) => format!("{base_id}-{}", r.name()),
            None => base_id.clone(),
        };
        let origins = task.origins(i);
        let mut hist = [None, None];
        for m in 0..2 {
            hist[m] = run_history(
                &compiled,
                task,
                episode_seed,
                &origins[m],
                &HistoryPlan {
                    obs_every: cfg.obs_every,
                    expert: cfg.expert,
                    route,
                },
                renderer.as_mut(),
            )?;
        }
        let verdict = verify(
            &compiled,
            task,
            hist,
            origins,
            &cfg.tolerance,
            renderer.as_mut(),
        )?;
        let outcome = match verdict {
            Ok(pair) => {
                let d = &mut part.max_hidden_delta;
                *d = [
                    d[0].max(pair.hidden_delta[0]),
                    d[1].max(pair.hidden_delta[1]),
                ];
                query_pair(cfg, task, &compiled, &pair, policy, i)?
            }
            Err(reason) => Err(reason),
        };
        let rows = match outcome {
            Ok((rows, bad_worlds)) => {
                part.world_physics_mismatches += bad_worlds;
                rows
            }
            Err(reason) => {
                part.excluded.push(PairExclusion {
                    pair_id: pair_id.clone(),
                    reason,
                });
                placeholders(cfg, policy.chunk_len())
            }
        };
        for mut r in rows {
            r.pair_id.clone_from(&pair_id);
            r.stratum = Some(stratum.clone());
            r.route = route.map(|x| x.name().to_owned());
            r.plan_hash.clone_from(&cfg.plan_hash);
            part.records.push(r);
        }
    }
    Ok(part)
}

/// The collection of `parts` (every base pair of `cfg`, in index order) by `policy`.
pub fn assemble(
    cfg: &CollectConfig,
    policy: &dyn MemoryPolicy,
    parts: Vec<PairPart>,
) -> Collection {
    assemble_parts(
        cfg,
        policy.name(),
        policy.memory_spec(),
        policy.chunk_len(),
        parts,
    )
}

/// [`assemble`] from the policy's name, memory spec and chunk length (what its manifest records)
/// instead of the policy itself.
pub fn assemble_parts(
    cfg: &CollectConfig,
    policy: String,
    memory_spec: crate::policy::MemorySpec,
    chunk_len: usize,
    parts: Vec<PairPart>,
) -> Collection {
    let mut records = Vec::new();
    let mut excluded = Vec::new();
    let mut max_delta = [0.0f64; 2];
    let mut mismatches = 0;
    for p in parts {
        records.extend(p.records);
        excluded.extend(p.excluded);
        max_delta = [
            max_delta[0].max(p.max_hidden_delta[0]),
            max_delta[1].max(p.max_hidden_delta[1]),
        ];
        mismatches += p.world_physics_mismatches;
    }
    Collection {
        records,
        manifest: Manifest {
            schema: MANIFEST_SCHEMA.into(),
            policy,
            memory_spec,
            chunk_len,
            config: cfg.clone(),
            n_pairs: cfg.pairs * cfg.routes.len().max(1),
            n_excluded: excluded.len(),
            excluded,
            max_hidden_delta: max_delta,
            world_physics_mismatches: mismatches,
        },
    }
}

/// Rows of an excluded pair: never queried, zero actions, `present_equal = false`.
fn placeholders(cfg: &CollectConfig, chunk_len: usize) -> Vec<MemoryRecord> {
    let mut out = Vec::new();
    for &seed in &cfg.action_seeds {
        for memory in MemoryLabel::BOTH {
            for world in MemoryLabel::BOTH {
                out.push(MemoryRecord {
                    pair_id: String::new(),
                    memory,
                    action_seed: i64::try_from(seed).unwrap_or(i64::MAX),
                    world,
                    progress_warranted: 0.0,
                    progress_other: 0.0,
                    value: 0.0,
                    action: vec![0.0; chunk_len.max(1) * crate::policy::ACTION_DIM],
                    present_equal: false,
                    route: None,
                    stratum: None,
                    plan_hash: None,
                });
            }
        }
    }
    out
}

type PairRows = Result<(Vec<MemoryRecord>, usize), String>;

/// Reference chunks, queries and executions of a verified pair. `Err(reason)` when a reference
/// chunk makes no progress (an outcome-blind exclusion: no policy action has been seen yet).
fn query_pair(
    cfg: &CollectConfig,
    task: &MemoryTask,
    compiled: &CompiledScene,
    pair: &VerifiedPair,
    policy: &mut dyn MemoryPolicy,
    index: usize,
) -> Result<PairRows, HarnessError> {
    let held = task.held_block();
    let branches = [task.branch(&pair.origins[0]), task.branch(&pair.origins[1])];
    let ep_cfg = EpisodeConfig {
        memory_targets: Some(pair.origins[0].clone()),
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(compiled, task.task(), &ep_cfg)?;
    crate::pairs::enter_world(&mut ep, &pair.present, &pair.origins[0])?;
    let start = ep
        .world()
        .block_pose(held)
        .map_or([f64::NAN; 2], |p| [p.pos[0], p.pos[1]]);
    // d0 and the reference distance per world's branch.
    let mut d0 = [0.0; 2];
    let mut d_ref = [0.0; 2];
    for w in 0..2 {
        let reference = transport_chunk(&pair.packet, branches[w], policy.chunk_len(), None);
        let out = execute(&mut ep, &pair.present, &pair.origins[w], &reference, held)?;
        d0[w] = tray_distance(&ep, start, branches[w]);
        d_ref[w] = tray_distance(&ep, out.block_xy, branches[w]);
        // NaN distances fail too.
        if (d0[w] - d_ref[w]).is_nan() || d0[w] - d_ref[w] < MIN_REFERENCE_PROGRESS {
            return Ok(Err(format!(
                "the reference chunk toward tray {} brought the block {:.4} m closer (< {MIN_REFERENCE_PROGRESS} m)",
                branches[w],
                d0[w] - d_ref[w]
            )));
        }
    }
    let mut memories = Vec::with_capacity(2);
    for h in &pair.histories {
        policy.reset();
        for obs in &h.observations {
            policy.observe(obs)?;
        }
        memories.push(policy.memory()?);
    }
    let mut rows = Vec::new();
    let mut bad_worlds = 0;
    for &seed in &cfg.action_seeds {
        let mut chunks: Vec<ActionChunk> = Vec::with_capacity(2);
        for (m, state) in memories.iter().enumerate() {
            let source = match cfg.reuse {
                Reuse::Never => m,
                Reuse::Balanced => index % 2,
            };
            if cfg.reuse == Reuse::Balanced && m != source {
                continue;
            }
            policy.set_memory(state)?;
            let chunk = policy.act(&pair.packet, seed)?;
            check_chunk(policy, &chunk)?;
            chunks.push(chunk);
        }
        if chunks.len() == 1 {
            chunks.push(chunks[0].clone());
        }
        for (m, memory) in MemoryLabel::BOTH.into_iter().enumerate() {
            let outs = [
                execute(&mut ep, &pair.present, &pair.origins[0], &chunks[m], held)?,
                execute(&mut ep, &pair.present, &pair.origins[1], &chunks[m], held)?,
            ];
            if outs[0].physics_bits != outs[1].physics_bits {
                bad_worlds += 1;
            }
            for (w, world) in MemoryLabel::BOTH.into_iter().enumerate() {
                let prog = |b: usize| {
                    progress(
                        d0[b],
                        tray_distance(&ep, outs[w].block_xy, branches[b]),
                        d_ref[b],
                    )
                };
                let (pw, po) = (prog(w), prog(1 - w));
                if !(pw.is_finite() && po.is_finite()) {
                    return Err(HarnessError::InvalidConfig(
                        "non-finite progress (the held block left the simulation)".into(),
                    ));
                }
                rows.push(MemoryRecord {
                    pair_id: String::new(),
                    memory,
                    action_seed: i64::try_from(seed).unwrap_or(i64::MAX),
                    world,
                    progress_warranted: pw,
                    progress_other: po,
                    value: pw.clamp(0.0, 1.0),
                    action: chunks[m].values.clone(),
                    present_equal: true,
                    route: None,
                    stratum: None,
                    plan_hash: None,
                });
            }
        }
    }
    Ok(Ok((rows, bad_worlds)))
}
