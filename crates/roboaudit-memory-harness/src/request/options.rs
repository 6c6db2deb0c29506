//! What a user gives the memory commands (`memory collect`, `calibrate`, `intervene`, `natural`,
//! `audit`, `control`), one type per command, and the checked requests built from them. With
//! the `clap` feature each type derives [`clap::Args`]: its field docs are the options' help.

use super::collect::{MAX_UNITS, action_seeds, check_count, check_harness};
use super::policy::PolicySpec;
use super::study::{StudySettings, intervention_config, natural_config};
use super::{CollectRequest, RequestError};
use crate::builtin::PolicyParams;
use crate::collect::{CollectConfig, Reuse};
use crate::intervene::{InterventionConfig, StudyKind};
use crate::natural::NaturalConfig;
use crate::observe::Tolerance;
use roboaudit_memory::Plan;
use roboaudit_policy_client::ServedOptions;
use roboaudit_testbed::{ExpertParams, TaskKind};
use std::path::PathBuf;

/// Harness settings shared by `collect` and `calibrate`: the task, the layouts and histories,
/// the present check (position tolerance in m, joint tolerance in rad), the expert's skill in
/// [0, 1], the optional camera size (16 to 2048 pixels) and the built-in policies' chunks
/// (1 to 1,000 actions) and noise (m).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HarnessOptions {
    /// Memory task: put_back, swap (three-tray variant, see the harness README) or rearrange.
    #[cfg_attr(feature = "clap", arg(long, default_value = "put_back"))]
    pub task: String,
    /// Master seed of layouts and episodes.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().seed))]
    pub seed: u64,
    /// Layout levels cycled over pairs (comma-separated, each 0–3); the level is the stratum.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', default_value = "0,1")
    )]
    pub layout_levels: Vec<u8>,
    /// A history observation every this many steps.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().obs_every))]
    pub obs_every: usize,
    /// Present check: largest hidden position difference of the natural presents (m).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = Tolerance::default().position_m))]
    pub tol_position: f64,
    /// Present check: largest hidden joint-angle difference of the natural presents (rad).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = Tolerance::default().joint_rad))]
    pub tol_joint: f64,
    /// Skill of the expert that plays the histories, in [0, 1] (grasp/place errors of
    /// (1 − skill)·2 cm; lower skill makes more pairs fail the present check).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = ExpertParams::default().skill))]
    pub expert_skill: f64,
    /// Render the scene camera into every observation at this size (pixels, 16 to 2048; needs EGL).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(16..=2048)
        )
    )]
    pub render_size: Option<usize>,
    /// Actions per chunk (1 to 1,000).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PolicyParams::default().chunk_len))]
    pub chunk_len: usize,
    /// Per-action translation noise of the built-in policies (m).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PolicyParams::default().noise_std))]
    pub noise_std: f64,
}

impl HarnessOptions {
    /// The collect configuration for `pairs` pairs and `seeds`, checked by [`check_harness`]
    /// after the task's name.
    ///
    /// # Errors
    /// [`RequestError::Task`] for an unknown task; [`RequestError::Usage`] naming `--pairs` or
    /// `--expert-skill`.
    pub fn config(&self, pairs: usize, seeds: Vec<u64>) -> Result<CollectConfig, RequestError> {
        let task = TaskKind::parse(&self.task)?;
        check_harness(pairs, self.expert_skill)?;
        Ok(CollectConfig {
            task,
            pairs,
            action_seeds: seeds,
            seed: self.seed,
            layout_levels: self.layout_levels.clone(),
            obs_every: self.obs_every,
            tolerance: Tolerance {
                position_m: self.tol_position,
                joint_rad: self.tol_joint,
            },
            expert: ExpertParams {
                skill: self.expert_skill,
                noise: 0.0,
            },
            render_size: self.render_size,
            reuse: Reuse::Never,
            routes: Vec::new(),
            plan_hash: None,
        })
    }

    /// Built-in policy settings `params` with this chunk length and noise and the bank's
    /// `policy_seed`.
    pub fn params(&self, params: PolicyParams, policy_seed: u64) -> PolicyParams {
        PolicyParams {
            chunk_len: self.chunk_len,
            noise_std: self.noise_std,
            seed: policy_seed,
            ..params
        }
    }
}

/// Loads the plan at `path` when given.
fn load(path: Option<&PathBuf>) -> Result<Option<Plan>, RequestError> {
    Ok(path.map(Plan::load).transpose()?)
}

/// What `memory collect` is given: the policy (built-in, `learned:DIR` or served), the pairs
/// (1 to [`MAX_UNITS`]) and action seeds (1 to [`super::MAX_SEEDS`]), the bank's recall per
/// tray index (each in [0, 1]), routes, plan, output folder, shard and harness settings.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CollectOptions {
    /// Built-in policy (faithful, blind, anti, random or bank), a trained checkpoint
    /// (learned:DIR, from `memory train`; qualified first), or a served one: ws://HOST:PORT
    /// or NAME=ws://HOST:PORT (openpi's websocket protocol; the server must declare the
    /// roboaudit `reset` capability, see the policy-client README).
    #[cfg_attr(feature = "clap", arg(long, default_value = "bank"))]
    pub policy: String,
    /// Served-policy settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub served: ServedOptions,
    /// Pairs to construct (1 to 100,000; excluded pairs count and are never replaced).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().pairs))]
    pub pairs: usize,
    /// Number of registered action seeds (0..N, N from 1 to 1,000; 3 when neither this nor a
    /// plan gives them); a plan's own seeds take precedence.
    #[cfg_attr(feature = "clap", arg(long))]
    pub seeds: Option<usize>,
    /// Bank policy only: recall probability per tray index, each in [0, 1] (comma-separated;
    /// the last one repeats) [default: 0.95,0.95,0.3].
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub reliability: Option<Vec<f64>>,
    /// Bank policy: seed of its recall draws.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PolicyParams::default().seed))]
    pub policy_seed: u64,
    /// Irrelevant-history control: collect every pair once per detour route (`left,right`);
    /// read the result with `memory control`.
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub routes: Vec<String>,
    /// Preregistered plan: its seeds are the action seeds and its hash goes into every record.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub plan: Option<PathBuf>,
    /// Output folder (created if missing); an existing records file is never overwritten.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Collect only shard I of N (0-based; base pairs p with p mod N = I) into --out with a
    /// shard.json, e.g. a Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge`
    /// joins the shards into the records and manifest an unsharded run writes. Built-in
    /// policies only.
    #[cfg_attr(feature = "clap", arg(long, value_name = "I/N"))]
    pub shard: Option<roboaudit_shard::Shard>,
    /// Harness settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub harness: HarnessOptions,
}

impl CollectOptions {
    /// The checked collection ([`CollectRequest::new`]), the policy named and its settings: the
    /// plan is loaded, the action seeds drawn from it ([`action_seeds`]), the harness settings
    /// checked ([`HarnessOptions::config`]) and the reliability refused for any policy but the
    /// bank ([`PolicySpec::bank_params`]).
    ///
    /// # Errors
    /// [`RequestError::Memory`] for a plan that cannot be read; otherwise as the functions named.
    pub fn request(&self) -> Result<(CollectRequest, PolicySpec, PolicyParams), RequestError> {
        let plan = load(self.plan.as_ref())?;
        let seeds = action_seeds(self.seeds, plan.as_ref())?;
        let cfg = self.harness.config(self.pairs, seeds)?;
        let spec = PolicySpec::parse(&self.policy);
        let (out, shard) = (self.out.clone(), self.shard);
        let req = CollectRequest::new(cfg, plan.as_ref(), &self.routes, out, shard, &spec)?;
        let params = spec.bank_params(self.reliability.as_deref())?;
        let params = self.harness.params(params, self.policy_seed);
        Ok((req, spec, params))
    }
}

/// What `memory calibrate` is given: pairs per calibrator (1 to [`MAX_UNITS`]), action seeds
/// `0..N` (N from 1 to [`super::MAX_SEEDS`], checked by [`check_count`] before anything else),
/// the plan, the output folder, the calibrators played by served policies and the harness
/// settings.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CalibrateOptions {
    /// Pairs per calibrator (1 to 100,000).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 12))]
    pub pairs: usize,
    /// Number of action seeds (0..N, N from 1 to 1,000).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 2))]
    pub seeds: usize,
    /// Plan of the audits (bootstrap settings, δ); default: SPEC §2 defaults.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub plan: Option<PathBuf>,
    /// Write DIR/calibration.json.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: Option<PathBuf>,
    /// A calibrator played by a served policy, as CALIBRATOR=ws://HOST:PORT (repeatable; e.g.
    /// faithful=ws://127.0.0.1:8000): only the named calibrators run, each through the wire,
    /// and their known answers must come back.
    #[cfg_attr(feature = "clap", arg(long, value_name = "CALIBRATOR=URL"))]
    pub served: Vec<String>,
    /// Served-policy settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub served_args: ServedOptions,
    /// Harness settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub harness: HarnessOptions,
}

impl CalibrateOptions {
    /// The plan (the SPEC §2 defaults without one), the validated collect configuration of
    /// every calibrator and the built-in calibrators' settings (recall 1, policy seed 0).
    ///
    /// # Errors
    /// [`RequestError::Memory`] for a plan that cannot be read; as [`HarnessOptions::config`];
    /// [`RequestError::Harness`] when [`CollectConfig::validate`] refuses the configuration.
    pub fn request(&self) -> Result<(CollectConfig, Plan, PolicyParams), RequestError> {
        let plan = load(self.plan.as_ref())?.unwrap_or_default();
        let cfg = self
            .harness
            .config(self.pairs, (0..self.seeds as u64).collect())?;
        cfg.validate()?;
        let reliability = PolicyParams {
            reliability: vec![1.0],
            ..PolicyParams::default()
        };
        Ok((cfg, plan, self.harness.params(reliability, 0)))
    }
}

/// What `memory intervene` is given: the study, the policy, the task, recipient episodes (1 to
/// [`MAX_UNITS`]), the restoration's fault chunks ([`super::study::check_fault_chunks`]), the
/// bank's recall, the bootstrap of the intervals, the output folder and shard.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct InterveneOptions {
    /// `replacement` (own, donor same, donor opposite, clear) or `restoration` (none, anchor, full).
    #[cfg_attr(feature = "clap", arg(long))]
    pub study: String,
    /// Built-in policy (faithful, blind, anti, random or bank), a trained checkpoint
    /// (learned:DIR, from `memory train`; qualified first), or a served one: ws://HOST:PORT
    /// or NAME=ws://HOST:PORT, whose server declares the roboaudit capabilities `reset`,
    /// `memory_get` and `memory_set` (see the policy-client README).
    #[cfg_attr(feature = "clap", arg(long, default_value = "bank"))]
    pub policy: String,
    /// Served-policy settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub served: ServedOptions,
    /// Memory task: put_back, rearrange or swap (the three-tray swap, judged by the harness's
    /// own success predicate).
    #[cfg_attr(feature = "clap", arg(long, default_value = "put_back"))]
    pub task: String,
    /// Recipient episodes (1 to 100,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = InterventionConfig::default().cohort.episodes)
    )]
    pub episodes: usize,
    /// Master seed of layouts and episodes.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = InterventionConfig::default().cohort.seed))]
    pub seed: u64,
    /// Restoration only: chunks run with the cleared bank before the restoration query (at
    /// least 1, at most the chunks an episode of the task can run; a study whose episode ends
    /// before the restoration query fails rather than report an unrestored condition)
    /// [default: 1].
    #[cfg_attr(feature = "clap", arg(long))]
    pub fault_chunks: Option<usize>,
    /// Bank policy only: recall probability per tray index, each in [0, 1] (comma-separated;
    /// the last one repeats) [default: 0.95,0.95,0.3].
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub reliability: Option<Vec<f64>>,
    /// Bootstrap resamples of the layout-stratified intervals (100 to 1,000,000).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            default_value_t = crate::intervals::BootstrapSettings::default().resamples,
            value_parser =
                clap::builder::RangedU64ValueParser::<usize>::new().range(100..=1_000_000)
        )
    )]
    pub resamples: usize,
    /// Seed of the bootstrap resampling.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            default_value_t = crate::intervals::BootstrapSettings::default().seed
        )
    )]
    pub bootstrap_seed: u64,
    /// Output folder: DIR/interventions.json and DIR/interventions.md.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Run only shard I of N (0-based; recipients e with e mod N = I) into --out with a
    /// shard.json, resumably, e.g. a Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`;
    /// `roboaudit merge` joins the shards into the interventions.json and interventions.md an
    /// unsharded run writes. Built-in policies only.
    #[cfg_attr(feature = "clap", arg(long, value_name = "I/N"))]
    pub shard: Option<roboaudit_shard::Shard>,
}

impl InterveneOptions {
    /// The task, with the episode count checked (1 to [`MAX_UNITS`]); a caller checks the
    /// output folder after this and before [`InterveneOptions::request`].
    ///
    /// # Errors
    /// [`RequestError::Task`] for an unknown task, [`RequestError::Usage`] naming `--episodes`.
    pub fn task(&self) -> Result<TaskKind, RequestError> {
        study_task(&self.task, self.episodes)
    }

    /// The study of `task` checked before any policy is opened: the policy named, its settings,
    /// the study's kind and configuration ([`intervention_config`]).
    ///
    /// # Errors
    /// [`RequestError::Usage`] as [`PolicySpec::bank_params`] and [`intervention_config`].
    pub fn request(
        &self,
        task: TaskKind,
    ) -> Result<(PolicySpec, PolicyParams, StudyKind, InterventionConfig), RequestError> {
        let spec = PolicySpec::parse(&self.policy);
        let params = spec.bank_params(self.reliability.as_deref())?;
        let settings = StudySettings {
            episodes: self.episodes,
            seed: self.seed,
            resamples: self.resamples,
            bootstrap_seed: self.bootstrap_seed,
        };
        let policy = (&spec, &params, self.shard.is_some());
        let (kind, cfg) =
            intervention_config(&self.study, task, &settings, self.fault_chunks, policy)?;
        Ok((spec, params, kind, cfg))
    }
}

/// What `memory natural` is given: the policy, the task, natural episodes (1 to
/// [`MAX_UNITS`]), the bank's recall, the bootstrap of the episode intervals, the output folder
/// and shard.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct NaturalOptions {
    /// Built-in policy (faithful, blind, anti, random or bank), a trained checkpoint
    /// (learned:DIR, from `memory train`; qualified first), or a served one: ws://HOST:PORT or
    /// NAME=ws://HOST:PORT (its server needs only the roboaudit capability `reset`: the policy
    /// observes the history natively).
    #[cfg_attr(feature = "clap", arg(long, default_value = "bank"))]
    pub policy: String,
    /// Served-policy settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub served: ServedOptions,
    /// Memory task: put_back, rearrange or swap (the three-tray swap, judged by the harness's
    /// own success predicate).
    #[cfg_attr(feature = "clap", arg(long, default_value = "put_back"))]
    pub task: String,
    /// Natural episodes (1 to 100,000).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = NaturalConfig::default().cohort.episodes))]
    pub episodes: usize,
    /// Master seed of the natural episodes' own scene and history stream.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = NaturalConfig::default().cohort.seed))]
    pub seed: u64,
    /// Bank policy only: recall probability per tray index, each in [0, 1] (comma-separated;
    /// the last one repeats) [default: 0.95,0.95,0.3].
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub reliability: Option<Vec<f64>>,
    /// Bootstrap resamples of the episode intervals (100 to 1,000,000).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            default_value_t = crate::intervals::BootstrapSettings::default().resamples,
            value_parser =
                clap::builder::RangedU64ValueParser::<usize>::new().range(100..=1_000_000)
        )
    )]
    pub resamples: usize,
    /// Seed of the bootstrap resampling.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            default_value_t = crate::intervals::BootstrapSettings::default().seed
        )
    )]
    pub bootstrap_seed: u64,
    /// Output folder: DIR/natural.json and DIR/natural.md (it may be a memory audit's folder: the
    /// combined report then shows the natural study with that audit).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Run only shard I of N (0-based; episodes e with e mod N = I) into --out with a
    /// shard.json, resumably, e.g. a Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`;
    /// `roboaudit merge` joins the shards into the natural.json and natural.md an unsharded run
    /// writes. Built-in and learned policies only.
    #[cfg_attr(feature = "clap", arg(long, value_name = "I/N"))]
    pub shard: Option<roboaudit_shard::Shard>,
}

impl NaturalOptions {
    /// The task, with the episode count checked (1 to [`MAX_UNITS`]); a caller checks the
    /// output folder after this and before [`NaturalOptions::request`].
    ///
    /// # Errors
    /// [`RequestError::Task`] for an unknown task, [`RequestError::Usage`] naming `--episodes`.
    pub fn task(&self) -> Result<TaskKind, RequestError> {
        study_task(&self.task, self.episodes)
    }

    /// The study of `task` checked before a learned policy is qualified or a server reached:
    /// the policy named, its settings and the study's configuration ([`natural_config`]).
    ///
    /// # Errors
    /// [`RequestError::Usage`] as [`PolicySpec::bank_params`]; as [`natural_config`].
    pub fn request(
        &self,
        task: TaskKind,
    ) -> Result<(PolicySpec, PolicyParams, NaturalConfig), RequestError> {
        let spec = PolicySpec::parse(&self.policy);
        let params = spec.bank_params(self.reliability.as_deref())?;
        let settings = StudySettings {
            episodes: self.episodes,
            seed: self.seed,
            resamples: self.resamples,
            bootstrap_seed: self.bootstrap_seed,
        };
        let cfg = natural_config(task, &settings, &spec, self.shard.is_some())?;
        Ok((spec, params, cfg))
    }
}

/// What `memory audit` is given: the records, the plan (the SPEC §2 defaults without one,
/// [`super::load_plan`]), the output folder and a bootstrap seed overriding the plan's.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct AuditOptions {
    /// Records (CSV, Parquet or JSONL), one row per (pair, memory, action seed, world): pair_id,
    /// memory (A|B), action_seed, world (A|B), progress_warranted, progress_other, value,
    /// action, present_equal [, route, stratum, plan_hash].
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub records: PathBuf,
    /// Preregistered plan (TOML: delta, seeds, distance, margins, eligibility, bootstrap).
    /// Without it the defaults of SPEC §2 apply, and the output says so.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub plan: Option<PathBuf>,
    /// Output folder (created if missing); nothing is written there when the audit fails.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Bootstrap seed, overriding the plan's `bootstrap.seed` (it is part of the plan hash).
    #[cfg_attr(feature = "clap", arg(long))]
    pub seed: Option<u64>,
}

/// What `memory control` is given: routed records, the plan (the SPEC §2 defaults without one)
/// and the output folder.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ControlOptions {
    /// Routed records (from `memory collect --routes left,right`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub records: PathBuf,
    /// Preregistered plan (δ, margins, bootstrap); default: SPEC §2 defaults, margin 0.1.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub plan: Option<PathBuf>,
    /// Output folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
}

/// A study's task and episode count as the command line gives them, checked: the task parsed,
/// the episodes 1 to [`MAX_UNITS`].
fn study_task(task: &str, episodes: usize) -> Result<TaskKind, RequestError> {
    let task = TaskKind::parse(task)?;
    check_count("--episodes", episodes, MAX_UNITS)?;
    Ok(task)
}
