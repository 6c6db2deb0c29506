//! `roboaudit demo` as a library: all three audits end to end on the built-in MuJoCo testbed,
//! then one report ([`run_demo`]). The caller parses its arguments into a [`DemoRequest`], shows
//! progress through a [`DemoObserver`], prints the [`DemoReport`] it gets back and maps a
//! [`DemoError`] to its exit code.
//!
//! Layout of the output folder (each audit folder is a valid input of `roboaudit report`):
//! - `retrieval/`: `audit.json` (`roboaudit.demo.v1`), `summary.md`, `runs/<task>/` (Stack and
//!   Door under Replay) and `runs/stack-policy/`, `runs/stack-policy-dr/` (Stack under Policy and
//!   Policy+DR, the trained policies in their `policies/`): seed 000 §II–V;
//! - `memory/<policy>/`: crossed-history records and their audit (SPEC §2) for the imperfect-recall
//!   `bank` policy and the `faithful` and `blind` calibrators; `memory/learned/`: the same for a
//!   learned anchor-window policy, its checkpoint and qualification in `memory/learned/policy/`;
//!   `memory/control/`: the irrelevant-history control (two detour routes) with `control.json`;
//! - `fqe/`: `fqe.json` and `summary.md` (linear, naive and a short neural fit, scored against the
//!   ground truth of `fqe/run/`, a small push-suite collection);
//! - `audit.json` (`roboaudit.demo.v1`: the retrieval tasks, plus the headline numbers of the
//!   memory and FQE audits), and the report: `index.html`, `report.md`, `report.json`.
//!
//! Reruns into the same folder reuse finished work: the retrieval collections resume, and the memory
//! and FQE stages skip a step whose `demo-stage.json` records the same settings and the fingerprints
//! of its outputs as they are (a result written there by another command is redone; [`stage`]).
//! Every stage is seeded, so a rerun writes the same bytes.

mod error;
mod fqe;
pub mod headline;
mod memory;
mod retrieval;
pub mod stage;

pub use error::DemoError;
pub use headline::render_headlines;
pub use roboaudit_report::demo::{DEMO_SCHEMA, DemoScale as Scale, ReportOutcome};

use roboaudit_retrieval_collect::{CollectConfig, LibraryStats};
use std::path::PathBuf;

/// One retrieval task of the demo in `audit.json`, with the collector's own types.
pub type DemoTask = roboaudit_report::demo::DemoTask<CollectConfig, LibraryStats>;

/// `audit.json` of the demo, as written.
pub type DemoReport = roboaudit_report::demo::DemoFile<CollectConfig, LibraryStats>;

/// Number of stages announced to the observer: one per retrieval collection, five memory
/// stages, two FQE stages, the report.
pub const STAGES: usize = retrieval::STAGES + 8;

/// The output folder of a demo when none is given.
pub const DEFAULT_OUT: &str = "roboaudit-demo";

/// A demo run. Each field's documentation is its command-line help.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct DemoRequest {
    /// Output folder; rerunning into it reuses finished stages.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DIR", default_value = DEFAULT_OUT)
    )]
    pub out: PathBuf,
    /// `standard` (a few minutes on 2 cores) or `small` (about a minute: fewer scenes, pairs,
    /// episodes and training steps, for a first look or a smoke test; the numbers are noisier).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = Scale::Standard))]
    pub scale: Scale,
}

/// Receives the demo's progress. Each method that returns an observer starts one step's
/// progress display; the step drops the returned observer when it ends, so an implementation
/// clears its display on drop.
pub trait DemoObserver {
    /// Stage `k` of `n` (1-based) starts; `what` says what it does.
    fn stage(&self, k: usize, n: usize, what: &str);
    /// A line for the user, with its `note: ` prefix.
    fn note(&self, line: &str);
    /// The retrieval collection of `task` (`stack`, `door`) starts.
    fn retrieval_collect(
        &self,
        task: &str,
    ) -> Box<dyn roboaudit_retrieval_collect::request::CollectObserver + '_>;
    /// A retrieval audit starts.
    fn retrieval_audit(&self) -> Box<dyn roboaudit_retrieval::request::AuditObserver + '_>;
    /// A memory collection of `total` routed pairs starts; `label` names it (`memory bank`).
    /// The returned function gets `(done, total)`.
    fn memory_collect(&self, label: &str, total: usize) -> Box<dyn FnMut(usize, usize) + '_>;
    /// The FQE collection starts; `label` names it.
    fn fqe_collect(
        &self,
        label: &str,
    ) -> Box<dyn roboaudit_fqe_collect::request::CollectObserver + '_>;
    /// The FQE fit (encoding, then fitting) starts.
    fn fqe_fit(&self) -> Box<dyn roboaudit_fqe::request::FitObserver + '_>;
}

/// `standard` or `small`, as `audit.json` writes it.
#[must_use]
pub fn scale_name(scale: Scale) -> &'static str {
    match scale {
        Scale::Standard => "standard",
        Scale::Small => "small",
    }
}

/// Runs the demo into `req.out`: the retrieval stage (stages 1–4), the memory stage (5–9), the
/// FQE stage (10–11), then the report (12): `report.json`, `report.md`, `index.html` and
/// `audit.json`, which it returns. Refuses an `out` holding a demo of another scale
/// ([`stage::check_scale`]) before any work; the caller refuses an `out` that is a file or holds
/// another command's results.
///
/// # Errors
/// [`DemoError`]: the failing pipeline's own request error, or the demo's own files.
pub fn run_demo(req: &DemoRequest, obs: &dyn DemoObserver) -> Result<DemoReport, DemoError> {
    stage::check_scale(&req.out, req.scale)?;
    roboaudit_data::atomic::create_dir(&req.out)?;
    let out = &req.out;
    let tasks = retrieval::run(out, req.scale, STAGES, obs)?;
    let first = retrieval::STAGES + 1;
    let (memory, control) = memory::run(out, req.scale, (first, STAGES), obs)?;
    let fqe = fqe::run(out, req.scale, (first + 5, STAGES), obs)?;
    obs.stage(STAGES, STAGES, "writing the report");

    let mut sources = vec!["retrieval".to_owned()];
    sources.extend(memory.iter().map(|m| m.dir.clone()));
    sources.push(control.dir.clone());
    sources.push("fqe".to_owned());
    let dirs: Vec<PathBuf> = sources.iter().map(|s| out.join(s)).collect();
    let mut report = DemoReport {
        schema: DEMO_SCHEMA.to_owned(),
        scale: req.scale,
        tasks,
        memory,
        memory_control: Some(control),
        fqe: Some(fqe),
        report: None,
    };
    let shared = roboaudit_report::build_report(&dirs).map_err(DemoError::BuildReport)?;
    roboaudit_report::write_report(&shared, out).map_err(DemoError::WriteReport)?;
    let kind = "report".to_owned();
    report.report = Some(ReportOutcome { sources, kind });
    let json = serde_json::to_vec_pretty(&report).map_err(DemoError::serialize("demo report"))?;
    roboaudit_data::atomic::write_atomic(&out.join("audit.json"), &json)?;
    Ok(report)
}
