//! The memory stage (SPEC §2): crossed histories on `put_back` for the imperfect-recall `bank`
//! policy and the `faithful` and `blind` calibrators (known answers F = 1 and F = 0, so the report
//! shows what a memory-using and a memory-ignoring policy look like), each audited under the
//! SPEC §2 default plan; then the irrelevant-history control (`bank`, two detour routes).

use super::{Scale, mark_done, stage_done};
use crate::commands::memory::collect::{
    MANIFEST_FILE, RECORDS_FILE, collect_with_progress, request_error,
};
use crate::output;
use anyhow::{Context, Result};
use roboaudit_memory::{Estimate, Plan};
use roboaudit_memory_harness::request::{audit_into, control_into};
use roboaudit_memory_harness::{BuiltinPolicy, CollectConfig, PolicyKind, PolicyParams, Route};
use roboaudit_testbed::TaskKind;
use std::path::Path;

pub(crate) use roboaudit_report::demo::{ControlSummary, PolicySummary};

fn fmt_estimate(e: &Estimate) -> String {
    match (e.value, e.ci) {
        (Some(v), Some([lo, hi])) => format!("{v:+.3} [{lo:+.3}, {hi:+.3}]"),
        (Some(v), None) => format!("{v:+.3}"),
        _ => "undefined".to_owned(),
    }
}

/// One line of the demo's closing summary.
pub(super) trait SummaryLine {
    /// Prints the line.
    fn print(&self) -> Result<(), crate::stdout::StdoutError>;
}

impl SummaryLine for PolicySummary {
    /// One line of the demo's closing summary.
    fn print(&self) -> Result<(), crate::stdout::StdoutError> {
        // The same count as the progress lines (pairs asked for), with the exclusions named.
        let pairs = if self.n_excluded > 0 {
            format!(
                "{} of {} pairs ({} excluded by the present check)",
                self.n_pairs,
                self.n_pairs + self.n_excluded,
                self.n_excluded
            )
        } else {
            format!("{} pairs", self.n_pairs)
        };
        outln!(
            "  {:8} {pairs} × {} seeds: warranted choice {}  F {}  U1 {}  fully reliable {}/{}  F > 0: {}",
            self.policy,
            self.seeds,
            self.correct_choice_rate
                .map_or_else(|| "undefined".to_owned(), |v| format!("{v:.3}")),
            fmt_estimate(&self.faithfulness),
            fmt_estimate(&self.u1),
            self.reliable_pairs,
            self.n_pairs,
            match self.positive_rule {
                Some(true) => "yes",
                Some(false) => "no",
                None => "undefined",
            }
        )?;
        Ok(())
    }
}

impl SummaryLine for ControlSummary {
    /// One line of the demo's closing summary.
    fn print(&self) -> Result<(), crate::stdout::StdoutError> {
        let ci = |c: Option<[f64; 2]>| {
            c.map_or_else(
                || "undefined".to_owned(),
                |[lo, hi]| format!("[{lo:+.3}, {hi:+.3}]"),
            )
        };
        outln!(
            "  route control (bank, {} pairs × 2 routes): nuisance {:+.3} {}, interaction {:+.3} {} (90%, margin ±{}): {}",
            self.pairs,
            self.nuisance.0,
            ci(self.nuisance.1),
            self.interaction.0,
            ci(self.interaction.1),
            self.margin,
            if self.passed { "passed" } else { "not passed" }
        )?;
        Ok(())
    }
}

/// Pairs per policy, action seeds, pairs of the control.
fn sizes(scale: Scale) -> (usize, usize, usize) {
    match scale {
        Scale::Standard => (24, 3, 12),
        Scale::Small => (8, 2, 6),
    }
}

fn config(pairs: usize, seeds: usize, routes: Vec<Route>) -> CollectConfig {
    CollectConfig {
        task: TaskKind::PutBack,
        pairs,
        action_seeds: (0..seeds as u64).collect(),
        routes,
        ..CollectConfig::default()
    }
}

/// Collects into `dir` (or reuses a finished collection with the same settings) and returns the
/// records.
fn records(
    dir: &Path,
    cfg: &CollectConfig,
    kind: PolicyKind,
    label: &str,
) -> Result<Vec<roboaudit_data::MemoryRecord>> {
    // The bank's default recall (0.95, 0.95, 0.3) gives target-dependent failures; the
    // calibrators ignore it.
    let params = PolicyParams::default();
    let settings = serde_json::json!({ "collect": cfg, "policy": kind, "params": params });
    let records_path = dir.join(RECORDS_FILE);
    if stage_done(dir, &settings, &[RECORDS_FILE, MANIFEST_FILE]) {
        return Ok(roboaudit_data::read_memory_records(&records_path)?);
    }
    let mut policy =
        BuiltinPolicy::new(kind, params).map_err(crate::commands::memory::collect::usage_or)?;
    let run = collect_with_progress(cfg, &mut policy, label)?;
    output::ensure_dir(dir)?;
    // The records writer replaces the file; a stale stamp must not vouch for half-new outputs.
    let _ = std::fs::remove_file(dir.join(super::STAMP));
    roboaudit_data::write_memory_records(&records_path, &run.records)
        .with_context(|| format!("cannot write {}", records_path.display()))?;
    let json = serde_json::to_vec_pretty(&run.manifest).context("cannot serialize the manifest")?;
    output::write_atomic(&dir.join(MANIFEST_FILE), &json)?;
    mark_done(dir, &settings, &[RECORDS_FILE, MANIFEST_FILE])?;
    Ok(run.records)
}

/// Runs the memory stage into `DIR/memory/`. `stage(k, what)` announces stages 1 to 4.
pub(super) fn run(
    out: &Path,
    scale: Scale,
    stage: &mut dyn FnMut(usize, &str),
) -> Result<(Vec<PolicySummary>, ControlSummary)> {
    let (pairs, seeds, control_pairs) = sizes(scale);
    let plan = Plan::default();
    let mut summaries = Vec::new();
    for (k, kind) in [PolicyKind::Bank, PolicyKind::Faithful, PolicyKind::Blind]
        .into_iter()
        .enumerate()
    {
        let name = kind.name();
        stage(
            k + 1,
            &format!("memory audit, {name} policy: {pairs} pairs × {seeds} seeds"),
        );
        let rel = format!("memory/{name}");
        let dir = out.join(&rel);
        let recs = records(
            &dir,
            &config(pairs, seeds, Vec::new()),
            kind,
            &format!("memory {name}"),
        )?;
        let audit = audit_into(&recs, &plan, &dir).map_err(request_error)?;
        summaries.push(PolicySummary::from_audit(name, rel, seeds, &audit));
    }
    stage(
        4,
        &format!("memory audit, irrelevant-history control: {control_pairs} pairs × 2 routes"),
    );
    let rel = "memory/control".to_owned();
    let dir = out.join(&rel);
    let cfg = config(control_pairs, seeds, vec![Route::Left, Route::Right]);
    let recs = records(&dir, &cfg, PolicyKind::Bank, "memory control")?;
    audit_into(&recs, &plan, &dir).map_err(request_error)?;
    let c = control_into(&recs, &plan, &dir).map_err(request_error)?;
    let control = ControlSummary {
        dir: rel,
        pairs: control_pairs,
        nuisance: (c.nuisance.estimate, c.nuisance.ci),
        interaction: (c.interaction.estimate, c.interaction.ci),
        margin: c.nuisance.margin,
        passed: c.passed,
    };
    Ok((summaries, control))
}
