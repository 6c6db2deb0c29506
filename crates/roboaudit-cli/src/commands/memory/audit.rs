//! `roboaudit memory audit`: SPEC §2 over records any harness can write, through
//! [`roboaudit_memory_harness::request::audit_file`].

use crate::output;
use anyhow::Result;
use roboaudit_memory::PlanSource;
use roboaudit_memory_harness::request::{self, SUMMARY_FILE};
use std::path::Path;

/// Audits `records_path` under the plan (or the SPEC §2 defaults) into `out`.
pub fn run(
    records_path: &Path,
    plan_path: Option<&Path>,
    out: &Path,
    seed: Option<u64>,
) -> Result<()> {
    let plan = request::load_plan(plan_path, seed)?;
    let hash = plan.hash();
    output::refuse_out_file(out)?;
    // An FQE result folder's summary.md would be replaced by ours (a foreign audit.json is
    // refused by the plan check of the pipeline, with its own message).
    output::refuse_foreign_results(out, &[("fqe.json", &[])])?;
    let audit = request::audit_file(records_path, &plan, plan_path, out)
        .map_err(super::collect::request_error)?;
    let audit_path = out.join(roboaudit_memory::AUDIT_FILE);
    let summary_path = out.join(SUMMARY_FILE);
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
