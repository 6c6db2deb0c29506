//! `roboaudit memory audit`: SPEC §2 over records any harness can write.

use crate::output;
use anyhow::{Context, Result};
use roboaudit_memory::{Plan, PlanSource};
use std::path::Path;

/// Audits `records_path` under the plan (or the SPEC §2 defaults) into `out`.
pub fn run(
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
    output::refuse_out_file(out)?;
    // An FQE result folder's summary.md would be replaced by ours (a foreign audit.json is
    // refused by the plan check below, with its own message).
    output::refuse_foreign_results(out, &[("fqe.json", &[])])?;
    roboaudit_memory::check_output_plan(out, &hash)?;
    let records = roboaudit_data::read_memory_records(records_path)?;
    roboaudit_memory::check_records_plan(&records, &hash, records_path)?;
    if let Some(p) = plan_path {
        roboaudit_memory::check_excluded_pairs(&records, &plan).map_err(|e| e.in_plan_file(p))?;
    }
    let audit = audit_into(&records, &plan, out)?;
    let audit_path = out.join(roboaudit_memory::AUDIT_FILE);
    let summary_path = out.join("summary.md");
    outln!("{}", roboaudit_memory::render_compact_table(&audit))?;
    if audit.plan_source == PlanSource::Defaults {
        outln!("note: no --plan given; the defaults of docs/methods.md §2 apply (plan {hash})")?;
    }
    outln!(
        "wrote {} and {}",
        audit_path.display(),
        summary_path.display()
    )?;
    Ok(())
}

/// Audits `records` under `plan` and writes `out/audit.json` and `out/summary.md` (refusing a
/// folder whose audit ran under another plan).
pub(crate) fn audit_into(
    records: &[roboaudit_data::MemoryRecord],
    plan: &Plan,
    out: &Path,
) -> Result<roboaudit_memory::MemoryAudit> {
    roboaudit_memory::check_output_plan(out, &plan.hash())?;
    let audit = roboaudit_memory::analyze(records, plan).context("memory audit failed")?;
    let json = serde_json::to_vec_pretty(&audit).context("cannot serialize the audit")?;
    let summary = roboaudit_memory::render_summary_markdown(&audit);
    output::ensure_dir(out)?;
    output::write_all_atomic(&[
        (&out.join(roboaudit_memory::AUDIT_FILE), &json),
        (&out.join("summary.md"), summary.as_bytes()),
    ])?;
    Ok(audit)
}
