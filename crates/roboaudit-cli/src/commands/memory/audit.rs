//! `roboaudit memory audit` and `memory control`: SPEC §2 and the irrelevant-history control
//! over records any harness can write, through [`roboaudit_memory_harness::request`]'s
//! `audit_file` and `control_into`.

use super::collect::request_error;
use crate::output;
use anyhow::{Context, Result};
use roboaudit_memory_harness::request::{self, AuditOptions, CONTROL_FILE, ControlOptions};

/// Audits the records under the plan (or the SPEC §2 defaults) into the output folder.
pub fn run(args: &AuditOptions) -> Result<()> {
    let (records_path, plan_path, out) = (&args.records, args.plan.as_deref(), &args.out);
    let plan = request::load_plan(plan_path, args.seed)?;
    output::refuse_out_file(out)?;
    // An FQE result folder's summary.md would be replaced by ours (a foreign audit.json is
    // refused by the plan check of the pipeline, with its own message).
    output::refuse_foreign_results(out, &[("fqe.json", &[])])?;
    let audit = request::audit_file(records_path, &plan, plan_path, out).map_err(request_error)?;
    out!("{}", request::audit_text(&audit, &plan.hash(), out))?;
    Ok(())
}

/// Runs the control on the routed records and writes `OUT/control.json`.
pub fn control(args: &ControlOptions) -> Result<()> {
    let (records_path, plan_path, out) = (&args.records, args.plan.as_deref(), &args.out);
    let plan = request::load_plan(plan_path, None)?;
    output::refuse_out_file(out)?;
    let records = request::read_checked(records_path, &plan, plan_path).map_err(request_error)?;
    let c = request::control_into(&records, &plan, out)
        .map_err(request_error)
        .with_context(|| format!("control over {}", records_path.display()))?;
    out!("{}", roboaudit_memory::render_control_text(&c))?;
    outln!("wrote {}", out.join(CONTROL_FILE).display())?;
    Ok(())
}
