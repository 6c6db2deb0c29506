//! `roboaudit memory natural`: the natural-occurrence analysis (docs/methods.md §2.10):
//! untreated native episodes, the fraction containing the audited decision type, and the
//! observational remaining-step and final-success contrasts; writes natural.json and natural.md.

use super::collect::request_error;
use crate::{output, progress};
use anyhow::Result;
use roboaudit_memory_harness::natural::natural_study;
use roboaudit_memory_harness::natural_shard;
use roboaudit_memory_harness::request::study::{self, StudySettings};
use roboaudit_memory_harness::request::{self, MAX_UNITS, PolicySpec};
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
    request::check_count("--episodes", args.episodes, MAX_UNITS).map_err(request_error)?;
    output::refuse_out_file(&args.out)?;
    let spec = PolicySpec::parse(&args.policy);
    let params = spec
        .bank_params(args.reliability.as_deref())
        .map_err(request_error)?;
    let settings = StudySettings {
        episodes: args.episodes,
        seed: args.seed,
        resamples: args.resamples,
        bootstrap_seed: args.bootstrap_seed,
    };
    // Refuse a bad configuration before a learned policy is qualified or a server reached.
    let cfg = study::natural_config(task, &settings, &spec, args.shard.is_some())
        .map_err(request_error)?;
    let mut opened = super::open(&spec, task, params, &args.served, false)?;
    let started = Instant::now();
    if let Some(shard) = args.shard {
        let identity = opened.identity.clone();
        let (policy, out) = (opened.as_policy(), &args.out);
        return super::run_study_shard(
            out,
            shard,
            (cfg.episodes, "episodes", "natural episodes"),
            |on| natural_shard::run_shard(&cfg, policy, &identity, out, shard, on),
        );
    }
    natural_shard::refuse_shard_folder(&args.out).map_err(super::collect::usage_or)?;
    let bar = progress::bar(cfg.episodes as u64, "natural episodes");
    let result = natural_study(&cfg, opened.as_policy(), &mut |d, _| {
        bar.set_position(d as u64);
    });
    bar.finish_and_clear();
    let result = result.map_err(super::collect::usage_or)?;
    let seconds = started.elapsed().as_secs_f64();
    out!("{}", study::natural_text(&result, seconds, opened.served()))?;
    outln!(
        "{}",
        study::write_natural(&args.out, &result).map_err(request_error)?
    )?;
    Ok(())
}
