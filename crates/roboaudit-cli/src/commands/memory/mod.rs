//! `roboaudit memory …`: the counterfactual memory audit (SPEC §2): collect crossed-history
//! records on the testbed, audit records from any harness, calibrate against known answers.

mod audit;
mod calibrate;
pub(crate) mod collect;
mod intervene;
pub(crate) mod learned;
mod natural;

use anyhow::Result;
use roboaudit_memory_harness::intervene_shard::ShardRun;
use roboaudit_memory_harness::request::{
    AuditOptions, CalibrateOptions, CollectOptions, ControlOptions, InterveneOptions,
    NaturalOptions, PolicySpec, ServedOptions,
};
use roboaudit_memory_harness::{HarnessError, PolicyParams};
use roboaudit_memory_learned::request::{OpenError, Opened, TrainOptions, open_policy};
use roboaudit_testbed::TaskKind;
use std::path::Path;

/// Memory-audit subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum MemoryCommand {
    /// Audit counterfactual-memory records: writes DIR/audit.json and DIR/summary.md.
    ///
    /// Refuses to write into a folder whose audit.json was produced under a different plan, and
    /// records whose plan_hash column names a different plan.
    Audit(AuditOptions),
    /// Cross histories on the testbed with a built-in policy: writes DIR/records.parquet (input of
    /// `memory audit`) and DIR/manifest.json (configuration, exclusions and why).
    Collect(CollectOptions),
    /// Run every calibrator (faithful, blind, anti, reused, random) through collect and audit;
    /// exits non-zero naming each calibrator whose known answer was not recovered.
    Calibrate(CalibrateOptions),
    /// Native-rollout interventions at the lift event: history replacement (own, donor same
    /// target, donor opposite target, clear) or restoration after an injected fault (none, anchor,
    /// full rebuild); writes DIR/interventions.json.
    Intervene(InterveneOptions),
    /// Natural-occurrence analysis: untreated native episodes, the fraction containing the
    /// audited decision type (registered, outcome-blind rule), and the remaining-step and
    /// final-success contrasts of a first direction toward the warranted tray, with episode
    /// bootstrap intervals within layout strata; observational, never pooled with the
    /// constructed pairs. Writes DIR/natural.json and DIR/natural.md.
    Natural(NaturalOptions),
    /// Train a learned memory policy by behaviour cloning on testbed demonstrations, save it
    /// (DIR/model.safetensors, DIR/config.json) and run its qualification episodes; audit it
    /// with `--policy learned:DIR`.
    Train(TrainOptions),
    /// Irrelevant-history control on records collected with `--routes left,right`: semantic
    /// effect per route (positive rule), nuisance and interaction equivalence (90% interval inside
    /// the plan's `margins.nuisance` / `margins.interaction`); writes DIR/control.json.
    Control(ControlOptions),
}

/// Runs a memory subcommand.
pub fn run(cmd: MemoryCommand) -> Result<()> {
    match cmd {
        MemoryCommand::Audit(args) => audit::run(&args),
        MemoryCommand::Collect(args) => collect::run(&args),
        MemoryCommand::Calibrate(args) => calibrate::run(&args),
        MemoryCommand::Intervene(args) => intervene::run(&args),
        MemoryCommand::Natural(args) => natural::run(&args),
        MemoryCommand::Train(args) => learned::run_train(&args),
        MemoryCommand::Control(args) => audit::control(&args),
    }
}

/// Opens the policy `spec` ([`open_policy`]) and prints a learned policy's qualification line.
fn open(
    spec: &PolicySpec,
    task: TaskKind,
    params: PolicyParams,
    served: &ServedOptions,
    native: bool,
) -> Result<Opened> {
    let opened = open_policy(spec, task, params, served, native).map_err(|e| match e {
        OpenError::Request(e) => collect::request_error(*e),
        OpenError::Learned(e) => learned::map_err(*e),
    })?;
    if let Some(note) = &opened.note {
        outln!("{note}")?;
    }
    Ok(opened)
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
