//! `roboaudit memory collect`: crossed pairs on the testbed with a built-in, learned or served
//! policy, through [`roboaudit_memory_harness::request::collect_request`].

use crate::exit::{InvalidInput, Usage};
use crate::progress;
use anyhow::Result;
use roboaudit_memory::Plan;
use roboaudit_memory_harness::output::RECORDS_FILE;
use roboaudit_memory_harness::request::{self, CollectRequest, Collected, RequestError};
use roboaudit_memory_harness::{
    BuiltinPolicy, CollectConfig, HarnessError, MemoryPolicy, PolicyKind, PolicyParams, Reuse,
    Route, ServedPolicy, Tolerance, output, resume,
};
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
    /// The collect configuration for `pairs` pairs and `seeds`; `pairs` is checked against
    /// [`super::MAX_UNITS`] (exit 2 naming `--pairs`).
    pub fn config(&self, pairs: usize, seeds: Vec<u64>) -> Result<CollectConfig> {
        let task = TaskKind::parse(&self.task)?;
        super::check_count("--pairs", pairs, super::MAX_UNITS)?;
        if !(0.0..=1.0).contains(&self.expert_skill) {
            return Err(Usage("--expert-skill must be in [0, 1]".into()).into());
        }
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

    /// Built-in policy settings with the bank's `reliability` and `policy_seed`.
    pub fn params(&self, reliability: Vec<f64>, policy_seed: u64) -> PolicyParams {
        PolicyParams {
            chunk_len: self.chunk_len,
            noise_std: self.noise_std,
            reliability,
            seed: policy_seed,
            ..PolicyParams::default()
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
    /// Connects to `spec` (`ws://HOST:PORT` or `NAME=ws://HOST:PORT`) as a memory policy with
    /// `chunk_len` actions per chunk unless the server declares its `action_horizon`. Refusals
    /// (no `reset`, a bad address) are usage errors (exit 2).
    pub fn connect(&self, spec: &str, chunk_len: usize) -> Result<ServedPolicy> {
        let (name, url) = served_spec(spec);
        let config =
            crate::commands::fqe_actions::client_config(self.timeout, self.allow_remote_policy)?;
        let client = roboaudit_policy_client::PolicyClient::connect(&url, config)
            .map_err(crate::commands::fqe_actions::classify)?;
        ServedPolicy::new(&name, client, chunk_len).map_err(|e| Usage(e.to_string()).into())
    }
}

/// `(name, url)` of a served policy given as `ws://…` (named by its address) or `NAME=ws://…`.
pub fn served_spec(spec: &str) -> (String, String) {
    match spec.split_once('=') {
        Some((n, u)) if !n.is_empty() && u.starts_with("ws://") => (n.to_owned(), u.to_owned()),
        _ => (spec.to_owned(), spec.to_owned()),
    }
}

/// `served policy URL: N queries, latency median …, p95 …`.
pub fn latency_line(p: &ServedPolicy) -> String {
    let l = p.client().latency();
    let ms = |v: Option<f64>| {
        v.map_or(roboaudit_types::NO_VALUE.to_owned(), |x| {
            format!("{x:.2} ms")
        })
    };
    format!(
        "served policy {}: {} queries, latency median {}, p95 {}",
        p.client().url(),
        l.queries,
        ms(l.median_ms),
        ms(l.p95_ms)
    )
}

/// Whether a `--policy` value names a served policy.
pub fn is_served(spec: &str) -> bool {
    spec.starts_with("ws://") || served_spec(spec).1 != spec
}

/// For a served policy, the manifest's `served_policy` field: its address, capabilities,
/// metadata, reconnections and query latency (median, p95).
pub fn served_field(served: Option<&ServedPolicy>) -> Option<(&'static str, serde_json::Value)> {
    served.map(|p| {
        let c = p.client();
        (
            "served_policy",
            serde_json::json!({
                "url": c.url(),
                "capabilities": c.capabilities(),
                "metadata": c.metadata().to_json(),
                "reconnections": c.generation().saturating_sub(1),
                "latency": c.latency(),
            }),
        )
    })
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

fn seeds(args: &CollectArgs, plan: Option<&Plan>) -> Result<Vec<u64>> {
    let registered: Vec<i64> = plan.map(|p| p.seeds.clone()).unwrap_or_default();
    if registered.is_empty() {
        let n = args.seeds.unwrap_or(3);
        super::check_count("--seeds", n, super::MAX_SEEDS)?;
        return Ok((0..n as u64).collect());
    }
    if args.seeds.is_some_and(|n| n != registered.len()) {
        return Err(Usage(format!(
            "--seeds {} disagrees with the plan's {} registered seeds; drop --seeds",
            args.seeds.unwrap_or(0),
            registered.len()
        ))
        .into());
    }
    registered
        .iter()
        .map(|&s| u64::try_from(s).map_err(|_| Usage(format!("plan seed {s} is negative")).into()))
        .collect()
}

/// Runs `memory collect`.
pub fn run(args: &CollectArgs) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    let plan = args.plan.as_deref().map(Plan::load).transpose()?;
    let mut cfg = args
        .harness
        .config(args.pairs, seeds(args, plan.as_ref())?)?;
    cfg.plan_hash = plan.as_ref().map(Plan::hash);
    cfg.routes = args
        .routes
        .iter()
        .map(|r| Route::parse(r))
        .collect::<Result<_, _>>()
        .map_err(usage_or)?;
    cfg.validate().map_err(usage_or)?;
    let records_path = args.out.join(RECORDS_FILE);
    request::refuse_existing_records(&args.out).map_err(request_error)?;
    let mut builtin = None;
    let mut served = None;
    if is_served(&args.policy) && args.shard.is_some() {
        return Err(Usage(
            "--shard takes built-in policies only: a served policy's manifest records its server's latency, which differs per shard, so the merge could not equal an unsharded run; collect it unsharded (it resumes)".into(),
        )
        .into());
    }
    let reliability = super::bank_reliability(args.reliability.as_deref(), &args.policy)?;
    let mut learned = super::learned::open(&args.policy, cfg.task)?;
    if is_served(&args.policy) {
        served = Some(args.served.connect(&args.policy, args.harness.chunk_len)?);
    } else if learned.is_none() {
        let kind = PolicyKind::parse(&args.policy).map_err(usage_or)?;
        let params = args.harness.params(reliability, args.policy_seed);
        builtin = Some(BuiltinPolicy::new(kind, params).map_err(usage_or)?);
    }
    // What else identifies the policy, beyond its name, spec and chunk length: a resumed
    // collection must be of the same policy.
    let identity = match (&learned, &builtin, &served) {
        (Some((_, id)), _, _) => id.clone(),
        (None, Some(b), _) => serde_json::json!({ "builtin": b.params() }),
        (None, None, Some(s)) => serde_json::json!({ "served": s.client().capabilities() }),
        (None, None, None) => return Err(Usage("no policy".into()).into()),
    };
    let policy: &mut dyn MemoryPolicy = match (&mut builtin, &mut served, &mut learned) {
        (_, _, Some((l, _))) => l,
        (Some(b), _, _) => b,
        (None, Some(s), None) => s,
        (None, None, None) => return Err(Usage("no policy".into()).into()),
    };

    crate::output::ensure_dir(&args.out)?;
    let started = Instant::now();
    let total = cfg.pairs.saturating_mul(cfg.routes.len().max(1));
    let bar = progress::bar(total as u64, "");
    bar.set_message("crossing histories: pairs");
    let sharded = args.shard.is_some();
    let req = CollectRequest {
        config: cfg,
        out: args.out.clone(),
        shard: args.shard,
    };
    let run = request::collect_request(&req, policy, &identity, &mut |d, n| {
        // A shard's bar counts the pairs it owns, which only the harness knows.
        if sharded {
            bar.set_length(n as u64);
        }
        bar.set_position(d as u64);
    });
    bar.finish_and_clear();
    let cfg = &req.config;
    let (run, resumed) = match run.map_err(request_error)? {
        Collected::Shard { shard, run } => {
            crate::commands::shard::print_shard_done(
                shard,
                (run.owned, cfg.pairs, "pairs"),
                &args.out,
                run.resumed,
                started,
                None,
            )?;
            return Ok(());
        }
        Collected::Whole { run, resumed } => (*run, resumed),
    };
    let seconds = started.elapsed().as_secs_f64();
    if resumed > 0 {
        outln!(
            "resumed {resumed} of {} pairs kept in {}",
            cfg.pairs,
            args.out.join(resume::PARTIAL_DIR).display()
        )?;
    }

    let manifest_path = output::write_collection(&args.out, &run, served_field(served.as_ref()))
        .map_err(usage_or)?;
    let m = &run.manifest;
    outln!(
        "{} on {}: {} pairs × {} seeds, {} excluded (never replaced), in {seconds:.1} s",
        m.policy,
        cfg.task.name(),
        m.n_pairs,
        cfg.action_seeds.len(),
        m.n_excluded
    )?;
    for e in &m.excluded {
        outln!("  excluded {}: {}", e.pair_id, e.reason)?;
    }
    if let Some(p) = &served {
        outln!("{}", latency_line(p))?;
    }
    outln!(
        "wrote {} and {}",
        records_path.display(),
        manifest_path.display()
    )?;
    Ok(())
}
