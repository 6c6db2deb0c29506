//! `roboaudit memory collect`: crossed pairs on the testbed with a built-in, learned or served
//! policy, through [`roboaudit_memory_harness::request::collect_request`].

use crate::exit::{InvalidInput, Usage};
use crate::progress;
use anyhow::Result;
use roboaudit_memory::Plan;
use roboaudit_memory_harness::request::{
    self, CollectRequest, Collected, PolicySpec, RequestError, ServedSettings,
};
use roboaudit_memory_harness::{CollectConfig, HarnessError, PolicyParams, Reuse, Tolerance};
use roboaudit_testbed::{ExpertParams, TaskKind};
use std::path::PathBuf;
use std::time::Instant;

/// Harness settings shared by `collect` and `calibrate`.
#[derive(clap::Args, Debug, Clone)]
pub struct HarnessArgs {
    /// Memory task: put_back, swap (three-tray variant, see the harness README) or rearrange.
    #[arg(long, default_value = "put_back")]
    pub task: String,
    /// Master seed of layouts and episodes.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Layout levels cycled over pairs (comma-separated, each 0–3); the level is the stratum.
    #[arg(long, value_delimiter = ',', default_value = "0,1")]
    pub layout_levels: Vec<u8>,
    /// A history observation every this many steps.
    #[arg(long, default_value_t = 4)]
    pub obs_every: usize,
    /// Present check: largest hidden position difference of the natural presents (m).
    #[arg(long, default_value_t = 0.01)]
    pub tol_position: f64,
    /// Present check: largest hidden joint-angle difference of the natural presents (rad).
    #[arg(long, default_value_t = 0.05)]
    pub tol_joint: f64,
    /// Skill of the expert that plays the histories, in [0, 1] (grasp/place errors of
    /// (1 − skill)·2 cm; lower skill makes more pairs fail the present check).
    #[arg(long, default_value_t = 1.0)]
    pub expert_skill: f64,
    /// Render the scene camera into every observation at this size (pixels, 16 to 2048; needs EGL).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(16..=2048))]
    pub render_size: Option<usize>,
    /// Actions per chunk (1 to 1,000).
    #[arg(long, default_value_t = 12)]
    pub chunk_len: usize,
    /// Per-action translation noise of the built-in policies (m).
    #[arg(long, default_value_t = 0.002)]
    pub noise_std: f64,
}

impl HarnessArgs {
    /// The collect configuration for `pairs` pairs and `seeds`, checked by
    /// [`request::check_harness`] (exit 2 naming `--pairs` or `--expert-skill`).
    pub fn config(&self, pairs: usize, seeds: Vec<u64>) -> Result<CollectConfig> {
        let task = TaskKind::parse(&self.task)?;
        request::check_harness(pairs, self.expert_skill).map_err(request_error)?;
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

/// Where a served policy is and how long to wait for it.
#[derive(clap::Args, Debug, Clone)]
pub struct ServedArgs {
    /// Served policies: longest wait for one answer, in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// Served policies: allow a server that is not on this machine's loopback.
    #[arg(long)]
    pub allow_remote_policy: bool,
}

impl ServedArgs {
    /// The settings the harness connects with (checked when a served policy is connected).
    pub fn settings(&self) -> ServedSettings {
        ServedSettings {
            timeout_s: self.timeout,
            allow_remote: self.allow_remote_policy,
        }
    }
}

/// Arguments of `memory collect`.
#[derive(clap::Args, Debug)]
pub struct CollectArgs {
    /// Built-in policy (faithful, blind, anti, random or bank), a trained checkpoint
    /// (learned:DIR, from `memory train`; qualified first), or a served one: ws://HOST:PORT
    /// or NAME=ws://HOST:PORT (openpi's websocket protocol; the server must declare the
    /// roboaudit `reset` capability, see the policy-client README).
    #[arg(long, default_value = "bank")]
    pub policy: String,
    /// Served-policy settings.
    #[command(flatten)]
    pub served: ServedArgs,
    /// Pairs to construct (1 to 100,000; excluded pairs count and are never replaced).
    #[arg(long, default_value_t = 64)]
    pub pairs: usize,
    /// Number of registered action seeds (0..N, N from 1 to 1,000); a plan's own seeds take
    /// precedence.
    #[arg(long)]
    pub seeds: Option<usize>,
    /// Bank policy only: recall probability per tray index, each in [0, 1] (comma-separated;
    /// the last one repeats) [default: 0.95,0.95,0.3].
    #[arg(long, value_delimiter = ',')]
    pub reliability: Option<Vec<f64>>,
    /// Bank policy: seed of its recall draws.
    #[arg(long, default_value_t = 0)]
    pub policy_seed: u64,
    /// Irrelevant-history control: collect every pair once per detour route (`left,right`);
    /// read the result with `memory control`.
    #[arg(long, value_delimiter = ',')]
    pub routes: Vec<String>,
    /// Preregistered plan: its seeds are the action seeds and its hash goes into every record.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Output folder (created if missing); an existing records file is never overwritten.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Collect only shard I of N (0-based; base pairs p with p mod N = I) into --out with a
    /// shard.json, e.g. a Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge`
    /// joins the shards into the records and manifest an unsharded run writes. Built-in
    /// policies only.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<roboaudit_shard::Shard>,
    /// Harness settings.
    #[command(flatten)]
    pub harness: HarnessArgs,
}

/// Maps configuration errors of the harness to usage errors (exit 2), and unwraps the audit's
/// own errors so that invalid records or plans keep their exit 3 (the harness wraps them
/// transparently, which hides them from the exit-code lookup).
pub fn usage_or(err: HarnessError) -> anyhow::Error {
    match err {
        HarnessError::InvalidConfig(_) | HarnessError::UnsupportedTask(_) => {
            Usage(err.to_string()).into()
        }
        HarnessError::Memory(e) => e.into(),
        HarnessError::ForeignPartial { .. } => InvalidInput(err.to_string()).into(),
        HarnessError::Served(e) => crate::commands::fqe_actions::classify(e),
        HarnessError::Shard(e) => crate::commands::shard::exit_error(e),
        other => other.into(),
    }
}

/// A memory pipeline's error with its exit code: the harness's as [`usage_or`], the wrapped
/// plan, data and write errors as causes of their own (their kind sets the code).
pub fn request_error(err: RequestError) -> anyhow::Error {
    match err {
        RequestError::Usage(m) => Usage(m).into(),
        RequestError::Harness(e) => usage_or(e),
        RequestError::Memory(e) => e.into(),
        RequestError::Data(e) => e.into(),
        RequestError::Write(e) => e.into(),
        other => other.into(),
    }
}

/// Runs `memory collect`.
pub fn run(args: &CollectArgs) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    let plan = args.plan.as_deref().map(Plan::load).transpose()?;
    let seeds = request::action_seeds(args.seeds, plan.as_ref()).map_err(request_error)?;
    let cfg = args.harness.config(args.pairs, seeds)?;
    let spec = PolicySpec::parse(&args.policy);
    let (out, shard) = (args.out.clone(), args.shard);
    let req = CollectRequest::new(cfg, plan.as_ref(), &args.routes, out, shard, &spec)
        .map_err(request_error)?;
    let params = spec
        .bank_params(args.reliability.as_deref())
        .map_err(request_error)?;
    let params = args.harness.params(params, args.policy_seed);
    let mut opened = super::open(&spec, req.config.task, params, &args.served, false)?;
    crate::output::ensure_dir(&args.out)?;
    let started = Instant::now();
    let bar = progress::bar(req.total_pairs() as u64, "");
    bar.set_message("crossing histories: pairs");
    let identity = opened.identity.clone();
    let run = request::collect_request(&req, opened.as_policy(), &identity, &mut |d, n| {
        // A shard's bar counts the pairs it owns, which only the harness knows.
        if shard.is_some() {
            bar.set_length(n as u64);
        }
        bar.set_position(d as u64);
    });
    bar.finish_and_clear();
    let (run, resumed) = match run.map_err(request_error)? {
        Collected::Shard { shard, run } => {
            let counts = (run.owned, req.config.pairs, "pairs");
            let (out, resumed) = (&args.out, run.resumed);
            crate::commands::shard::print_shard_done(shard, counts, out, resumed, started, None)?;
            return Ok(());
        }
        Collected::Whole { run, resumed } => (*run, resumed),
    };
    let seconds = started.elapsed().as_secs_f64();
    if let Some(line) = req.resumed_line(resumed) {
        outln!("{line}")?;
    }
    let summary = req.write_whole(&run, opened.served(), seconds);
    out!("{}", summary.map_err(request_error)?)?;
    Ok(())
}
