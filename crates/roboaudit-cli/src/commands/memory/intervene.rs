//! `roboaudit memory intervene`: native-rollout history replacement and restoration.

use super::collect::request_error;
use crate::{output, progress};
use anyhow::Result;
use roboaudit_memory_harness::intervene_shard;
use roboaudit_memory_harness::request::study::{self, StudySettings};
use roboaudit_memory_harness::request::{self, MAX_UNITS, PolicySpec};
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

/// Runs `memory intervene`.
pub fn run(args: &InterveneArgs) -> Result<()> {
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
    let policy = (&spec, &params, args.shard.is_some());
    let (kind, cfg) =
        study::intervention_config(&args.study, task, &settings, args.fault_chunks, policy)
            .map_err(request_error)?;
    let mut opened = super::open(&spec, task, params, &args.served, true)?;
    let name = opened.as_policy().name();
    if let Some(shard) = args.shard {
        let identity = opened.identity.clone();
        let (policy, out) = (opened.as_policy(), &args.out);
        return super::run_study_shard(
            out,
            shard,
            (cfg.episodes, "recipients", "recipients"),
            |on| intervene_shard::run_shard(kind, &cfg, policy, &identity, out, shard, on),
        );
    }
    intervene_shard::refuse_shard_folder(&args.out).map_err(super::collect::usage_or)?;
    let spinner = progress::spinner("running continuations");
    let result = study::intervention_study(kind, &cfg, opened.as_policy());
    spinner.finish_and_clear();
    let result = result.map_err(request_error)?;
    out!(
        "{}",
        study::intervention_text(&result, &name, &cfg, opened.served())
    )?;
    let wrote = study::write_intervention(&args.out, &result, &name).map_err(request_error)?;
    outln!("{wrote}")?;
    Ok(())
}
