//! `roboaudit memory intervene`: native-rollout history replacement and restoration.

use super::collect::usage_or;
use crate::exit::Usage;
use crate::{output, progress};
use anyhow::{Context, Result};
use roboaudit_memory_harness::intervene::{
    InterventionConfig, replacement_study, restoration_study,
};
use roboaudit_memory_harness::{BuiltinPolicy, PolicyKind, PolicyParams};
use roboaudit_testbed::TaskKind;
use std::path::PathBuf;

/// Arguments of `memory intervene`.
#[derive(clap::Args, Debug)]
pub struct InterveneArgs {
    /// `replacement` (own, donor same, donor opposite, clear) or `restoration` (none, anchor, full).
    #[arg(long)]
    pub study: String,
    /// Built-in policy: faithful, blind, anti, random or bank.
    #[arg(long, default_value = "bank")]
    pub policy: String,
    /// Memory task: put_back or rearrange.
    #[arg(long, default_value = "put_back")]
    pub task: String,
    /// Recipient episodes.
    #[arg(long, default_value_t = 12)]
    pub episodes: usize,
    /// Master seed of layouts and episodes.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Restoration: chunks run with the cleared bank before the restoration query.
    #[arg(long, default_value_t = 1)]
    pub fault_chunks: usize,
    /// Bank policy: recall probability per tray index (comma-separated; the last one repeats).
    #[arg(long, value_delimiter = ',', default_value = "0.95,0.95,0.3")]
    pub reliability: Vec<f64>,
    /// Output folder: DIR/interventions.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs `memory intervene`.
pub fn run(args: &InterveneArgs) -> Result<()> {
    let cfg = InterventionConfig {
        task: TaskKind::parse(&args.task)?,
        episodes: args.episodes,
        seed: args.seed,
        fault_chunks: args.fault_chunks,
        ..InterventionConfig::default()
    };
    let kind = PolicyKind::parse(&args.policy).map_err(usage_or)?;
    let params = PolicyParams {
        reliability: args.reliability.clone(),
        ..PolicyParams::default()
    };
    let mut policy = BuiltinPolicy::new(kind, params).map_err(usage_or)?;
    let spinner = progress::spinner("running continuations");
    let study = match args.study.as_str() {
        "replacement" => replacement_study(&cfg, &mut policy),
        "restoration" => restoration_study(&cfg, &mut policy),
        other => {
            return Err(Usage(format!(
                "unknown study `{other}`; valid: replacement, restoration"
            ))
            .into());
        }
    }
    .map_err(usage_or)?;
    spinner.finish_and_clear();
    println!(
        "{} study, {} on {}: {} recipients ({} skipped before any query)",
        study.study,
        kind.name(),
        cfg.task.name(),
        cfg.episodes - study.skipped,
        study.skipped
    );
    println!(
        "{:<16} {:>4} {:>8} {:>12} {:>14} {:>10}",
        "condition", "n", "success", "commit own", "commit donor", "no commit"
    );
    for c in &study.summary {
        println!(
            "{:<16} {:>4} {:>8} {:>12} {:>14} {:>10}",
            c.condition, c.n, c.successes, c.committed_own, c.committed_donor, c.committed_none
        );
    }
    if let Some(ok) = study.own_reproduces_native {
        println!("own-history reconstruction reproduces the native memory: {ok}");
    }
    output::ensure_dir(&args.out)?;
    let path = args.out.join("interventions.json");
    let json = serde_json::to_vec_pretty(&study).context("cannot serialize the study")?;
    output::write_atomic(&path, &json)?;
    println!("wrote {}", path.display());
    Ok(())
}
