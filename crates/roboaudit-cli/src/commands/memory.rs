//! `roboaudit memory …`: the counterfactual memory audit (SPEC §2) over records any harness can write.

use crate::output;
use anyhow::{Context, Result};
use roboaudit_memory::{Plan, PlanSource};
use std::path::{Path, PathBuf};

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
}

/// Runs a memory subcommand.
pub fn run(cmd: MemoryCommand) -> Result<()> {
    match cmd {
        MemoryCommand::Audit {
            records,
            plan,
            out,
            seed,
        } => audit(&records, plan.as_deref(), &out, seed),
    }
}

fn audit(
    records_path: &Path,
    plan_path: Option<&Path>,
    out: &Path,
    seed: Option<u64>,
) -> Result<()> {
    let mut plan = match plan_path {
        Some(path) => Plan::load(path)?,
        None => Plan::default(),
    };
    if let Some(seed) = seed {
        plan.bootstrap.seed = seed;
    }
    let hash = plan.hash();
    roboaudit_memory::check_output_plan(out, &hash)?;
    let records = roboaudit_data::read_memory_records(records_path)?;
    roboaudit_memory::check_records_plan(&records, &hash, records_path)?;
    let audit = roboaudit_memory::analyze(&records, &plan).context("memory audit failed")?;

    let json = serde_json::to_vec_pretty(&audit).context("cannot serialize the audit")?;
    let summary = roboaudit_memory::render_summary_markdown(&audit);
    output::ensure_dir(out)?;
    let audit_path = out.join(roboaudit_memory::AUDIT_FILE);
    let summary_path = out.join("summary.md");
    output::write_atomic(&audit_path, &json)?;
    output::write_atomic(&summary_path, summary.as_bytes())?;
    println!("{}", roboaudit_memory::render_compact_table(&audit));
    if audit.plan_source == PlanSource::Defaults {
        println!("note: no --plan given; the defaults of SPEC §2 apply (plan {hash})");
    }
    println!(
        "wrote {} and {}",
        audit_path.display(),
        summary_path.display()
    );
    Ok(())
}
