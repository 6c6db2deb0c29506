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

use memory::SummaryLine;

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

/// One retrieval task of the demo in `audit.json`, with the collector's own types.
pub(crate) type DemoTask = roboaudit_report::demo::DemoTask<CollectConfig, LibraryStats>;

/// `audit.json` of the demo, as written.
pub(crate) type DemoReport = roboaudit_report::demo::DemoFile<CollectConfig, LibraryStats>;

pub(crate) use roboaudit_report::demo::{DEMO_SCHEMA, DemoScale, ReportOutcome};

impl From<Scale> for DemoScale {
    fn from(s: Scale) -> Self {
        match s {
            Scale::Standard => DemoScale::Standard,
            Scale::Small => DemoScale::Small,
        }
    }
}

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
        schema: DEMO_SCHEMA.to_owned(),
        scale: args.scale.into(),
        tasks,
        memory,
        memory_control: Some(control),
        fqe: Some(fqe),
        report: None,
    };
    let shared = roboaudit_report::build_report(&dirs)
        .context("cannot build the demo's report from its audit folders")?;
    roboaudit_report::write_report(&shared, out).context("cannot write the demo's report")?;
    let kind = "report".to_owned();
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
