//! `roboaudit memory intervene`: native-rollout history replacement and restoration.

use super::collect::usage_or;
use crate::exit::Usage;
use crate::{output, progress};
use anyhow::Result;
use roboaudit_memory_harness::intervals::BootstrapSettings;
use roboaudit_memory_harness::intervene::{
    InterventionConfig, StudyKind, replacement_study, restoration_study,
};
use roboaudit_memory_harness::intervene_output::{table, write_study};
use roboaudit_memory_harness::intervene_shard;
use roboaudit_memory_harness::{
    BuiltinPolicy, MemoryPolicy, PolicyKind, PolicyParams, ServedPolicy,
};
use roboaudit_testbed::TaskKind;
use std::path::PathBuf;

/// Arguments of `memory intervene`.
#[derive(clap::Args, Debug)]
pub struct InterveneArgs {
    /// `replacement` (own, donor same, donor opposite, clear) or `restoration` (none, anchor, full).
    #[arg(long)]
    pub study: String,
    /// Built-in policy (faithful, blind, anti, random or bank), a trained checkpoint
    /// (learned:DIR, from `memory train`; qualified first), or a served one: ws://HOST:PORT
    /// or NAME=ws://HOST:PORT, whose server declares the roboaudit capabilities `reset`,
    /// `memory_get` and `memory_set` (see the policy-client README).
    #[arg(long, default_value = "bank")]
    pub policy: String,
    /// Served-policy settings.
    #[command(flatten)]
    pub served: super::collect::ServedArgs,
    /// Memory task: put_back, rearrange or swap (the three-tray swap, judged by the harness's
    /// own success predicate).
    #[arg(long, default_value = "put_back")]
    pub task: String,
    /// Recipient episodes (1 to 100,000).
    #[arg(long, default_value_t = 12)]
    pub episodes: usize,
    /// Master seed of layouts and episodes.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Restoration only: chunks run with the cleared bank before the restoration query (at
    /// least 1, at most the chunks an episode of the task can run; a study whose episode ends
    /// before the restoration query fails rather than report an unrestored condition)
    /// [default: 1].
    #[arg(long)]
    pub fault_chunks: Option<usize>,
    /// Bank policy only: recall probability per tray index, each in [0, 1] (comma-separated;
    /// the last one repeats) [default: 0.95,0.95,0.3].
    #[arg(long, value_delimiter = ',')]
    pub reliability: Option<Vec<f64>>,
    /// Bootstrap resamples of the layout-stratified intervals (100 to 1,000,000).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(100..=1_000_000))]
    pub resamples: usize,
    /// Seed of the bootstrap resampling.
    #[arg(long, default_value_t = 0)]
    pub bootstrap_seed: u64,
    /// Output folder: DIR/interventions.json and DIR/interventions.md.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run only shard I of N (0-based; recipients e with e mod N = I) into --out with a
    /// shard.json, resumably, e.g. a Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`;
    /// `roboaudit merge` joins the shards into the interventions.json and interventions.md an
    /// unsharded run writes. Built-in policies only.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<roboaudit_shard::Shard>,
}

/// Connects to a served policy and refuses it (exit 2) unless its memory is native: the
/// interventions replace and restore named memory components, which needs `memory_get` and
/// `memory_set`.
fn connect_served(args: &InterveneArgs, chunk_len: usize) -> Result<ServedPolicy> {
    let policy = args.served.connect(&args.policy, chunk_len)?;
    if !policy.has_native_memory() {
        let c = policy.client();
        return Err(Usage(format!(
            "memory intervene cannot run the served policy at {}: native interventions replace and restore named memory components, which needs the roboaudit capabilities memory_get and memory_set, and the server declares only {:?}; memory collect and memory calibrate need only reset",
            c.url(),
            c.capabilities()
        ))
        .into());
    }
    Ok(policy)
}

/// Runs `memory intervene`.
pub fn run(args: &InterveneArgs) -> Result<()> {
    let task = TaskKind::parse(&args.task)?;
    super::check_count("--episodes", args.episodes, super::MAX_UNITS)?;
    crate::output::refuse_out_file(&args.out)?;
    let params = PolicyParams {
        reliability: super::bank_reliability(args.reliability.as_deref(), &args.policy)?,
        ..PolicyParams::default()
    };
    let fault_chunks = match (args.study.as_str(), args.fault_chunks) {
        ("restoration", given) => {
            let chunks = given.unwrap_or(1);
            check_fault_chunks(chunks, task, params.chunk_len)?;
            chunks
        }
        ("replacement", Some(_)) => {
            return Err(Usage(
                "--fault-chunks sets the restoration study's fault; --study replacement injects none"
                    .into(),
            )
            .into());
        }
        _ => 1,
    };
    let cfg = InterventionConfig {
        task,
        episodes: args.episodes,
        seed: args.seed,
        fault_chunks,
        bootstrap: BootstrapSettings {
            resamples: args.resamples,
            seed: args.bootstrap_seed,
            ..BootstrapSettings::default()
        },
        ..InterventionConfig::default()
    };
    let kind = match args.study.as_str() {
        "replacement" => StudyKind::Replacement,
        "restoration" => StudyKind::Restoration,
        other => {
            return Err(Usage(format!(
                "unknown study `{other}`; valid: replacement, restoration"
            ))
            .into());
        }
    };
    if args.shard.is_some() && super::collect::is_served(&args.policy) {
        return Err(Usage(
            "--shard takes built-in policies only: a served policy's answers cannot be shown to be the same in every shard's process; run it unsharded".into(),
        )
        .into());
    }
    let mut learned = super::learned::open(&args.policy, cfg.task)?;
    let identity = match &learned {
        Some((_, id)) => id.clone(),
        None => serde_json::json!({ "builtin": &params }),
    };
    let mut served = None;
    let mut builtin = None;
    let policy: &mut dyn MemoryPolicy = if super::collect::is_served(&args.policy) {
        served.insert(connect_served(args, params.chunk_len)?)
    } else if let Some((l, _)) = learned.as_mut() {
        l
    } else {
        let kind = PolicyKind::parse(&args.policy).map_err(usage_or)?;
        builtin.insert(BuiltinPolicy::new(kind, params).map_err(usage_or)?)
    };
    let name = policy.name();
    if let Some(shard) = args.shard {
        return super::run_study_shard(
            &args.out,
            shard,
            (cfg.episodes, "recipients", "recipients"),
            |on_recipient| {
                intervene_shard::run_shard(
                    kind,
                    &cfg,
                    policy,
                    &identity,
                    &args.out,
                    shard,
                    on_recipient,
                )
            },
        );
    }
    intervene_shard::refuse_shard_folder(&args.out).map_err(usage_or)?;
    let spinner = progress::spinner("running continuations");
    let study = match kind {
        StudyKind::Replacement => replacement_study(&cfg, policy),
        StudyKind::Restoration => restoration_study(&cfg, policy),
    }
    .map_err(usage_or)?;
    spinner.finish_and_clear();
    if let Some(p) = &served {
        outln!("{}", super::collect::latency_line(p))?;
    }
    outln!(
        "{} study, {} on {}: {} recipients ({} skipped before any query)",
        study.study,
        name,
        cfg.task.name(),
        cfg.episodes - study.skipped,
        study.skipped
    )?;
    out!("{}", table(&study))?;
    if let Some(ok) = study.own_reproduces_native {
        outln!("own-history reconstruction reproduces the native memory: {ok}")?;
    }
    output::ensure_dir(&args.out)?;
    let (path, md_path) = write_study(&args.out, &study, &name).map_err(usage_or)?;
    outln!("wrote {} and {}", path.display(), md_path.display())?;
    Ok(())
}

/// Refuses a `--fault-chunks` that cannot lead to a restoration: 0 (the restoration would
/// coincide with the fault) or more chunks than the task's step limit allows at all. A value in
/// range can still exceed what an episode runs after its lift event; the study then fails.
fn check_fault_chunks(fault_chunks: usize, task: TaskKind, chunk_len: usize) -> Result<()> {
    let max = task
        .max_steps()
        .div_ceil(chunk_len.max(1))
        .saturating_sub(1)
        .max(1);
    if !(1..=max).contains(&fault_chunks) {
        return Err(Usage(format!(
            "--fault-chunks must be in 1..={max} for {} (its episodes end after at most {} steps of {chunk_len}-action chunks, and the restoration query must come after the fault chunks), got {fault_chunks}",
            task.name(),
            task.max_steps()
        ))
        .into());
    }
    Ok(())
}
