//! `roboaudit memory …`: the counterfactual memory audit (SPEC §2): collect crossed-history
//! records on the testbed, audit records from any harness, calibrate against known answers.

mod audit;
mod calibrate;
pub(crate) mod collect;
mod control;
mod intervene;
pub(crate) mod learned;
mod natural;

use crate::exit::Usage;
use anyhow::Result;
use roboaudit_memory_harness::HarnessError;
use roboaudit_memory_harness::intervene_shard::ShardRun;
use std::path::{Path, PathBuf};

use calibrate::CalibrateArgs;
use collect::CollectArgs;
use intervene::InterveneArgs;
use learned::TrainArgs;
use natural::NaturalArgs;

/// Memory-audit subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum MemoryCommand {
    /// Audit counterfactual-memory records: writes DIR/audit.json and DIR/summary.md.
    ///
    /// Refuses to write into a folder whose audit.json was produced under a different plan, and
    /// records whose plan_hash column names a different plan.
    Audit {
        /// Records (CSV, Parquet or JSONL), one row per (pair, memory, action seed, world): pair_id,
        /// memory (A|B), action_seed, world (A|B), progress_warranted, progress_other, value,
        /// action, present_equal [, route, stratum, plan_hash].
        #[arg(long, value_name = "FILE")]
        records: PathBuf,
        /// Preregistered plan (TOML: delta, seeds, distance, margins, eligibility, bootstrap).
        /// Without it the defaults of SPEC §2 apply, and the output says so.
        #[arg(long, value_name = "FILE")]
        plan: Option<PathBuf>,
        /// Output folder (created if missing); nothing is written there when the audit fails.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Bootstrap seed, overriding the plan's `bootstrap.seed` (it is part of the plan hash).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Cross histories on the testbed with a built-in policy: writes DIR/records.parquet (input of
    /// `memory audit`) and DIR/manifest.json (configuration, exclusions and why).
    Collect(CollectArgs),
    /// Run every calibrator (faithful, blind, anti, reused, random) through collect and audit;
    /// exits non-zero naming each calibrator whose known answer was not recovered.
    Calibrate(CalibrateArgs),
    /// Native-rollout interventions at the lift event: history replacement (own, donor same
    /// target, donor opposite target, clear) or restoration after an injected fault (none, anchor,
    /// full rebuild); writes DIR/interventions.json.
    Intervene(InterveneArgs),
    /// Natural-occurrence analysis: untreated native episodes, the fraction containing the
    /// audited decision type (registered, outcome-blind rule), and the remaining-step and
    /// final-success contrasts of a first direction toward the warranted tray, with episode
    /// bootstrap intervals within layout strata; observational, never pooled with the
    /// constructed pairs. Writes DIR/natural.json and DIR/natural.md.
    Natural(NaturalArgs),
    /// Train a learned memory policy by behaviour cloning on testbed demonstrations, save it
    /// (DIR/model.safetensors, DIR/config.json) and run its qualification episodes; audit it
    /// with `--policy learned:DIR`.
    Train(TrainArgs),
    /// Irrelevant-history control on records collected with `--routes left,right`: semantic
    /// effect per route (positive rule), nuisance and interaction equivalence (90% interval inside
    /// the plan's `margins.nuisance` / `margins.interaction`); writes DIR/control.json.
    Control {
        /// Routed records (from `memory collect --routes left,right`).
        #[arg(long, value_name = "FILE")]
        records: PathBuf,
        /// Preregistered plan (δ, margins, bootstrap); default: SPEC §2 defaults, margin 0.1.
        #[arg(long, value_name = "FILE")]
        plan: Option<PathBuf>,
        /// Output folder.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// Largest `--pairs` and `--episodes`: far beyond any run that finishes (each pair or episode
/// is several simulated episodes), small enough that the products of the counts cannot overflow.
pub(crate) const MAX_UNITS: usize = 100_000;
/// Largest number of action seeds (`--seeds`): every seed multiplies the simulated episodes.
pub(crate) const MAX_SEEDS: usize = 1_000;

/// Refuses a count outside `1..=max` (exit 2) naming the flag, before any work.
pub(crate) fn check_count(flag: &str, value: usize, max: usize) -> Result<()> {
    if !(1..=max).contains(&value) {
        return Err(Usage(format!("{flag} must be in 1..={max}, got {value}")).into());
    }
    Ok(())
}

/// Runs a memory subcommand.
pub fn run(cmd: MemoryCommand) -> Result<()> {
    match cmd {
        MemoryCommand::Audit {
            records,
            plan,
            out,
            seed,
        } => audit::run(&records, plan.as_deref(), &out, seed),
        MemoryCommand::Collect(args) => collect::run(&args),
        MemoryCommand::Calibrate(args) => calibrate::run(&args),
        MemoryCommand::Intervene(args) => intervene::run(&args),
        MemoryCommand::Natural(args) => natural::run(&args),
        MemoryCommand::Train(args) => learned::run_train(&args),
        MemoryCommand::Control { records, plan, out } => {
            control::run(&records, plan.as_deref(), &out)
        }
    }
}

/// One shard of a memory study (`memory intervene --shard`, `memory natural --shard`): `run`
/// keeps the shard's `unit`s of `total` in `out` behind a progress bar labelled `bar_label`, then
/// the shard's line is printed; nothing is assembled.
fn run_study_shard(
    out: &Path,
    shard: roboaudit_shard::Shard,
    (total, unit, bar_label): (usize, &str, &'static str),
    run: impl FnOnce(&mut dyn FnMut(usize, usize)) -> Result<ShardRun, HarnessError>,
) -> Result<()> {
    let started = std::time::Instant::now();
    let bar = crate::progress::bar(shard.job_count(total) as u64, bar_label);
    let result = run(&mut |d, _| bar.set_position(d as u64));
    bar.finish_and_clear();
    let run = result.map_err(collect::usage_or)?;
    crate::commands::shard::print_shard_done(
        shard,
        (run.owned, total, unit),
        out,
        run.resumed,
        started,
        None,
    )?;
    Ok(())
}

/// The bank policy's recall probability per tray index: `--reliability` when given, else the
/// bank's default (0.95, 0.95, 0.3). Given with another policy it is a usage error (exit 2): no
/// other policy reads it, and a run that silently ignored it would be labelled with a setting it
/// never used.
pub(crate) fn bank_reliability(given: Option<&[f64]>, policy: &str) -> Result<Vec<f64>> {
    match given {
        None => Ok(roboaudit_memory_harness::PolicyParams::default().reliability),
        Some(r) if policy == "bank" => Ok(r.to_vec()),
        Some(_) => Err(crate::exit::Usage(format!(
            "--reliability sets the bank policy's recall; --policy {policy} does not use it"
        ))
        .into()),
    }
}
