//! `roboaudit memory natural`: the natural-occurrence analysis (docs/methods.md §2.10):
//! untreated native episodes, the fraction containing the audited decision type, and the
//! observational remaining-step and final-success contrasts; writes natural.json and natural.md.

use super::collect::usage_or;
use crate::exit::Usage;
use crate::{output, progress};
use anyhow::Result;
use roboaudit_memory::natural::text_summary;
use roboaudit_memory_harness::intervals::BootstrapSettings;
use roboaudit_memory_harness::natural::{NaturalConfig, natural_study, prepare, write_study};
use roboaudit_memory_harness::natural_shard;
use roboaudit_memory_harness::{BuiltinPolicy, MemoryPolicy, PolicyKind, PolicyParams};
use roboaudit_testbed::TaskKind;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `memory natural`.
#[derive(clap::Args, Debug)]
pub struct NaturalArgs {
    /// Built-in policy (faithful, blind, anti, random or bank), a trained checkpoint
    /// (learned:DIR, from `memory train`; qualified first), or a served one: ws://HOST:PORT or
    /// NAME=ws://HOST:PORT (its server needs only the roboaudit capability `reset`: the policy
    /// observes the history natively).
    #[arg(long, default_value = "bank")]
    pub policy: String,
    /// Served-policy settings.
    #[command(flatten)]
    pub served: super::collect::ServedArgs,
    /// Memory task: put_back, rearrange or swap (the three-tray swap, judged by the harness's
    /// own success predicate).
    #[arg(long, default_value = "put_back")]
    pub task: String,
    /// Natural episodes (1 to 100,000).
    #[arg(long, default_value_t = 96)]
    pub episodes: usize,
    /// Master seed of the natural episodes' own scene and history stream.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Bank policy only: recall probability per tray index, each in [0, 1] (comma-separated;
    /// the last one repeats) [default: 0.95,0.95,0.3].
    #[arg(long, value_delimiter = ',')]
    pub reliability: Option<Vec<f64>>,
    /// Bootstrap resamples of the episode intervals (100 to 1,000,000).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(100..=1_000_000))]
    pub resamples: usize,
    /// Seed of the bootstrap resampling.
    #[arg(long, default_value_t = 0)]
    pub bootstrap_seed: u64,
    /// Output folder: DIR/natural.json and DIR/natural.md (it may be a memory audit's folder: the
    /// combined report then shows the natural study with that audit).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run only shard I of N (0-based; episodes e with e mod N = I) into --out with a
    /// shard.json, resumably, e.g. a Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`;
    /// `roboaudit merge` joins the shards into the natural.json and natural.md an unsharded run
    /// writes. Built-in and learned policies only.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<roboaudit_shard::Shard>,
}

/// Runs `memory natural`.
pub fn run(args: &NaturalArgs) -> Result<()> {
    let task = TaskKind::parse(&args.task)?;
    super::check_count("--episodes", args.episodes, super::MAX_UNITS)?;
    output::refuse_out_file(&args.out)?;
    let params = PolicyParams {
        reliability: super::bank_reliability(args.reliability.as_deref(), &args.policy)?,
        ..PolicyParams::default()
    };
    let cfg = NaturalConfig {
        task,
        episodes: args.episodes,
        seed: args.seed,
        bootstrap: BootstrapSettings {
            resamples: args.resamples,
            seed: args.bootstrap_seed,
            ..BootstrapSettings::default()
        },
        ..NaturalConfig::default()
    };
    // Refuse a bad configuration before a learned policy is qualified or a server reached.
    prepare(&cfg).map_err(usage_or)?;
    if args.shard.is_some() && super::collect::is_served(&args.policy) {
        return Err(Usage(
            "--shard takes built-in and learned policies only: a served policy's answers cannot be shown to be the same in every shard's process; run it unsharded".into(),
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
        served.insert(args.served.connect(&args.policy, params.chunk_len)?)
    } else if let Some((l, _)) = learned.as_mut() {
        l
    } else {
        let kind = PolicyKind::parse(&args.policy).map_err(usage_or)?;
        builtin.insert(BuiltinPolicy::new(kind, params).map_err(usage_or)?)
    };
    let started = Instant::now();
    if let Some(shard) = args.shard {
        return super::run_study_shard(
            &args.out,
            shard,
            (cfg.episodes, "episodes", "natural episodes"),
            |on_episode| {
                natural_shard::run_shard(&cfg, policy, &identity, &args.out, shard, on_episode)
            },
        );
    }
    natural_shard::refuse_shard_folder(&args.out).map_err(usage_or)?;
    let bar = progress::bar(cfg.episodes as u64, "natural episodes");
    let study = natural_study(&cfg, policy, &mut |d, _| bar.set_position(d as u64));
    bar.finish_and_clear();
    let study = study.map_err(usage_or)?;
    if let Some(p) = &served {
        outln!("{}", super::collect::latency_line(p))?;
    }
    outln!(
        "natural study, {} on {}: {} episodes in {:.1} s",
        study.policy,
        cfg.task.name(),
        cfg.episodes,
        started.elapsed().as_secs_f64()
    )?;
    out!("{}", text_summary(&study))?;
    output::ensure_dir(&args.out)?;
    let (path, md_path) = write_study(&args.out, &study).map_err(usage_or)?;
    outln!("wrote {} and {}", path.display(), md_path.display())?;
    Ok(())
}
