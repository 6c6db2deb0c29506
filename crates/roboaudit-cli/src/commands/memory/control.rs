//! `roboaudit memory control`: the irrelevant-history control over routed records, through
//! [`roboaudit_memory_harness::request::control_into`].

use super::collect::request_error;
use anyhow::{Context, Result};
use roboaudit_memory_harness::request::{self, CONTROL_FILE};
use std::path::Path;

/// Runs the control on `records_path` and writes `out/control.json`.
pub fn run(records_path: &Path, plan_path: Option<&Path>, out: &Path) -> Result<()> {
    let plan = request::load_plan(plan_path, None)?;
    let records = request::read_checked(records_path, &plan, plan_path).map_err(request_error)?;
    let c = request::control_into(&records, &plan, out)
        .map_err(request_error)
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
