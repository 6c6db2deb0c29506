//! `roboaudit demo`: all three audits end to end on the built-in MuJoCo testbed, then one report.
//!
//! Layout of `--out DIR` (each audit folder is a valid input of `roboaudit report`):
//! - `retrieval/`: `audit.json` (`roboaudit.demo.v1`, Stack and Door), `summary.md`, `runs/<task>/`
//!   (the collections: seed 000 §II–V, Replay);
//! - `memory/<policy>/`: crossed-history records and their audit (SPEC §2) for the imperfect-recall
//!   `bank` policy and the `faithful` and `blind` calibrators; `memory/control/`: the
//!   irrelevant-history control (two detour routes) with `control.json`;
//! - `fqe/`: `fqe.json` and `summary.md` (linear, naive and a short neural fit, scored against the
//!   ground truth of `fqe/run/`, a small push-suite collection);
//! - `audit.json` (`roboaudit.demo.v1`: the retrieval tasks as before, plus the headline numbers of
//!   the memory and FQE audits), and the report: `index.html`, `report.md`, `report.json`.
//!
//! Reruns into the same folder reuse finished work: the retrieval collections resume, and the memory
//! and FQE stages skip a step whose `demo-stage.json` records the same settings and the fingerprints
//! of its outputs as they are (a result written there by another command is redone). Every stage is seeded, so a rerun writes the same bytes.

mod fqe;
mod memory;
mod retrieval;

use crate::output;
use anyhow::{Context, Result, bail};
use roboaudit_retrieval_collect::{CollectConfig, LibraryStats};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `roboaudit demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output folder; rerunning into it reuses finished stages.
    #[arg(long, value_name = "DIR", default_value = "roboaudit-demo")]
    pub out: PathBuf,
    /// `standard` (a few minutes on 2 cores) or `small` (about a minute: fewer scenes, pairs,
    /// episodes and training steps, for a first look or a smoke test; the numbers are noisier).
    #[arg(long, value_enum, default_value_t = Scale::Standard)]
    pub scale: Scale,
}

/// Size of the demo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// The default sizes.
    Standard,
    /// About a quarter of the work.
    Small,
}

impl Scale {
    fn name(self) -> &'static str {
        match self {
            Scale::Standard => "standard",
            Scale::Small => "small",
        }
    }
}

/// One retrieval task of the demo in `audit.json`.
#[derive(Debug, Serialize)]
pub(crate) struct DemoTask {
    /// Task name.
    pub task: String,
    /// The collection settings.
    pub collection: CollectConfig,
    /// Library acceptance statistics.
    pub library: LibraryStats,
    /// Run folder of the collection, relative to the folder of the `audit.json` holding it.
    pub run_dir: String,
    /// The audit.
    pub audit: roboaudit_retrieval::AuditReport,
}

/// `audit.json` of the demo (`roboaudit.demo.v1`). The retrieval part (`tasks`) keeps the layout of
/// the retrieval-only demo; `scale`, `memory`, `memory_control`, `fqe` and `report` were added.
#[derive(Debug, Serialize)]
pub(crate) struct DemoReport {
    /// `roboaudit.demo.v1`.
    pub schema: &'static str,
    /// Demo size.
    pub scale: Scale,
    /// Retrieval audits: Stack, then Door.
    pub tasks: Vec<DemoTask>,
    /// Memory audits, one per policy (absent in `retrieval/audit.json`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<memory::PolicySummary>,
    /// The irrelevant-history control.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_control: Option<memory::ControlSummary>,
    /// The FQE headline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fqe: Option<fqe::FqeSummary>,
    /// Folders rendered into the report, relative to the demo folder; `null` in
    /// `retrieval/audit.json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<ReportOutcome>,
}

/// What became of the shared report.
#[derive(Debug, Serialize)]
pub(crate) struct ReportOutcome {
    /// Audit folders rendered, relative to the demo folder.
    pub sources: Vec<String>,
    /// Always `report`: `index.html`, `report.md` and `report.json` written by `roboaudit-report`.
    pub kind: &'static str,
}

/// Schema tag of the demo's `audit.json` files (top level and `retrieval/`).
pub(crate) const DEMO_SCHEMA: &str = "roboaudit.demo.v1";

/// File that records the settings a finished stage ran with, and the fingerprints of its outputs.
const STAMP: &str = "demo-stage.json";

/// 64-bit FNV-1a (hex) of a stage output's bytes, or `None` when it cannot be read.
fn fingerprint(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| roboaudit_fqe::fingerprint(&b))
}

/// The stamp of a stage run with `settings` whose `outputs` (relative to `dir`) are as they are now;
/// `None` when one of them cannot be read.
fn stamp(dir: &Path, settings: &serde_json::Value, outputs: &[&str]) -> Option<serde_json::Value> {
    let mut prints = serde_json::Map::new();
    for f in outputs {
        prints.insert((*f).to_owned(), fingerprint(&dir.join(f))?.into());
    }
    Some(serde_json::json!({ "settings": settings, "outputs": prints }))
}

/// True when `dir` holds a stamp of `settings` and every file in `outputs` (relative to `dir`) still
/// has the bytes the stage wrote. The settings alone would vouch for anything written there since,
/// e.g. an `fqe fit --out DIR/fqe` of another dataset presented under the demo's headline; such a
/// stage is redone, with a note on stderr since the replaced file was someone's result.
fn stage_done(dir: &Path, settings: &serde_json::Value, outputs: &[&str]) -> bool {
    let Ok(text) = std::fs::read(dir.join(STAMP)) else {
        return false;
    };
    let Ok(found) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return false;
    };
    if found.get("settings") != Some(settings) {
        return false;
    }
    if stamp(dir, settings, outputs).is_some_and(|now| now == found) {
        return true;
    }
    eprintln!(
        "note: {} holds outputs the demo did not write ({}); redoing this stage",
        dir.display(),
        outputs.join(", ")
    );
    false
}

/// Writes the stamp of a finished stage (last, so that an interrupted stage is redone), with the
/// fingerprints of its `outputs` (relative to `dir`), which must all be written.
fn mark_done(dir: &Path, settings: &serde_json::Value, outputs: &[&str]) -> Result<()> {
    let Some(stamp) = stamp(dir, settings, outputs) else {
        bail!(
            "cannot read back the outputs of the stage in {} ({})",
            dir.display(),
            outputs.join(", ")
        );
    };
    let json = serde_json::to_vec_pretty(&stamp).context("cannot serialize the stage settings")?;
    output::write_atomic(&dir.join(STAMP), &json)
}

/// Announces stage `k` of `n` on stderr (a log line, not a progress bar: it stays in CI logs).
fn stage(k: usize, n: usize, started: Instant, what: &str) {
    eprintln!(
        "[{k}/{n}] {what} (at {:.0} s)",
        started.elapsed().as_secs_f64()
    );
}

/// Refuses a folder that holds a demo of another scale: its runs could not be reused.
fn check_scale(out: &Path, scale: Scale) -> Result<()> {
    let Ok(text) = std::fs::read(out.join("audit.json")) else {
        return Ok(());
    };
    let found = serde_json::from_slice::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("scale").and_then(|s| s.as_str()).map(str::to_owned));
    match found {
        Some(s) if s != scale.name() => bail!(crate::exit::Usage(format!(
            "{} holds a --scale {s} demo; rerun with --scale {s} or choose another --out",
            out.display()
        ))),
        _ => Ok(()),
    }
}

/// Number of stages announced on stderr.
const STAGES: usize = 9;

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    output::refuse_out_file(&args.out)?;
    // A demo rerun replaces its own results; anyone else's audit or report in --out is refused
    // before any stage runs.
    output::refuse_foreign_results(
        &args.out,
        &[
            ("audit.json", &[DEMO_SCHEMA]),
            ("retrieval/audit.json", &[DEMO_SCHEMA]),
            ("report.json", &[roboaudit_report::SCHEMA]),
        ],
    )?;
    check_scale(&args.out, args.scale)?;
    output::ensure_dir(&args.out)?;
    let started = Instant::now();
    let out = &args.out;

    let tasks = retrieval::run(out, args.scale, &mut |k, what| {
        stage(k, STAGES, started, what);
    })?;
    let (memory, control) = memory::run(out, args.scale, &mut |k, what| {
        stage(k + 2, STAGES, started, what);
    })?;
    let fqe = fqe::run(out, args.scale, &mut |k, what| {
        stage(k + 6, STAGES, started, what);
    })?;
    stage(9, STAGES, started, "writing the report");

    let mut sources = vec!["retrieval".to_owned()];
    sources.extend(memory.iter().map(|m| m.dir.clone()));
    sources.push(control.dir.clone());
    sources.push("fqe".to_owned());
    let dirs: Vec<PathBuf> = sources.iter().map(|s| out.join(s)).collect();
    let mut report = DemoReport {
        schema: DEMO_SCHEMA,
        scale: args.scale,
        tasks,
        memory,
        memory_control: Some(control),
        fqe: Some(fqe),
        report: None,
    };
    let shared = roboaudit_report::build_report(&dirs)
        .context("cannot build the demo's report from its audit folders")?;
    roboaudit_report::write_report(&shared, out).context("cannot write the demo's report")?;
    let kind = "report";
    report.report = Some(ReportOutcome { sources, kind });
    let json = serde_json::to_vec_pretty(&report).context("cannot serialize the demo report")?;
    output::write_atomic(&out.join("audit.json"), &json)?;

    print_headlines(&report)?;
    let page = out.join("index.html");
    outln!(
        "wrote {} (report.md, report.json) and {} in {:.0} s; open {} in a browser",
        out.join("audit.json").display(),
        page.display(),
        started.elapsed().as_secs_f64(),
        page.display()
    )?;
    Ok(())
}

fn print_headlines(report: &DemoReport) -> Result<(), crate::stdout::StdoutError> {
    outln!("retrieval audit (success rates over query scenes):")?;
    for t in &report.tasks {
        retrieval::print_headline(t)?;
    }
    outln!("counterfactual memory audit (put_back, pair-bootstrap 95% intervals):")?;
    for m in &report.memory {
        m.print()?;
    }
    if let Some(c) = &report.memory_control {
        c.print()?;
    }
    if let Some(f) = &report.fqe {
        fqe::print(f)?;
    }
    Ok(())
}
