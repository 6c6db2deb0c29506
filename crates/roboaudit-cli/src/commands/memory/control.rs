//! `roboaudit memory control`: the irrelevant-history control over routed records.

use crate::output;
use anyhow::{Context, Result};
use roboaudit_memory::{Plan, RouteControl, route_control};
use std::path::Path;

/// Runs the control on `records_path` and writes `out/control.json`.
pub fn run(records_path: &Path, plan_path: Option<&Path>, out: &Path) -> Result<()> {
    let plan = match plan_path {
        Some(p) => Plan::load(p)?,
        None => Plan::default(),
    };
    let records = roboaudit_data::read_memory_records(records_path)?;
    roboaudit_memory::check_records_plan(&records, &plan.hash(), records_path)?;
    if let Some(p) = plan_path {
        roboaudit_memory::check_excluded_pairs(&records, &plan).map_err(|e| e.in_plan_file(p))?;
    }
    let c = control_into(&records, &plan, out)
        .with_context(|| format!("control over {}", records_path.display()))?;
    for s in &c.semantic {
        let ci = s
            .faithfulness
            .ci
            .map_or("undefined".to_owned(), |[lo, hi]| {
                format!("[{lo:.3}, {hi:.3}]")
            });
        outln!(
            "route {:<6} {} pairs  F {} {ci}  positive rule {}",
            s.name,
            s.n_pairs,
            s.faithfulness
                .value
                .map_or("undefined".to_owned(), |v| format!("{v:.3}")),
            match s.positive_rule.passed {
                Some(true) => "passed",
                Some(false) => "failed",
                None => "undefined",
            }
        )?;
    }
    for (name, e) in [("nuisance", &c.nuisance), ("interaction", &c.interaction)] {
        let ci = e.ci.map_or("undefined".to_owned(), |[lo, hi]| {
            format!("[{lo:.3}, {hi:.3}]")
        });
        outln!(
            "{name:<12} {:.3} {ci} ({:.0}%) margin ±{} ({}): {}",
            e.estimate,
            e.level * 100.0,
            e.margin,
            c.margin_source,
            if e.equivalent {
                "equivalent to zero"
            } else {
                "not shown equivalent"
            }
        )?;
    }
    outln!("control {}", if c.passed { "passed" } else { "failed" })?;
    outln!("wrote {}", out.join(CONTROL_FILE).display())?;
    Ok(())
}

/// File name of the control inside its output folder.
pub(crate) const CONTROL_FILE: &str = "control.json";

/// Runs the control on routed `records` and writes `out/control.json`.
pub(crate) fn control_into(
    records: &[roboaudit_data::MemoryRecord],
    plan: &Plan,
    out: &Path,
) -> Result<RouteControl> {
    let c = route_control(records, plan)?;
    output::ensure_dir(out)?;
    let json = serde_json::to_vec_pretty(&c).context("cannot serialize the control")?;
    output::write_atomic(&out.join(CONTROL_FILE), &json)?;
    Ok(c)
}
