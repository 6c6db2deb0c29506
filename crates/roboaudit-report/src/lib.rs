//! One report for every roboaudit audit: the retrieval audit (SPEC.md §1), the counterfactual
//! memory audit (§2) and fitted Q evaluation (§3).
//!
//! [`build_report`] reads any set of audit output folders — `audit.json` of `retrieval audit`,
//! `memory audit` or `demo`, `fqe.json` of `fqe fit`, and retrieval run folders (for the
//! transfer matrix) — into one serializable [`Report`] that keeps each audit's own report
//! unchanged. [`write_report`] renders it to `report.json`, `report.md` and one self-contained
//! `index.html` (inline CSS and SVG plots drawn with plotters, no scripts, no network), each
//! written atomically. [`Report::summary`] and [`Report::notes_text`] say what was written.
//!
//! ```no_run
//! use std::path::{Path, PathBuf};
//! let report = roboaudit_report::build_report(&[PathBuf::from("roboaudit-demo")])?;
//! for plot in report.plots.iter().filter(|p| !p.available) {
//!     println!("skipped {}: {:?}", plot.id, plot.note);
//! }
//! roboaudit_report::write_report(&report, Path::new("report"))?;
//! # Ok::<(), roboaudit_report::ReportError>(())
//! ```

pub mod demo;
mod detect;
mod doc;
mod error;
mod frames;
mod html;
mod markdown;
mod model;
mod plots;
pub mod request;
mod summary;
mod transfer;

pub use error::ReportError;
pub use frames::THUMBNAIL_HEIGHT;
pub use model::{
    FqeSection, FrameStrip, MemorySection, PlotKind, PlotSpec, Report, RetrievalSection, SCHEMA,
    Source, SourceKind, TaskFrames, TaskMechanism, Thumbnail, TransferMatrix,
};

use std::path::{Path, PathBuf};

/// Reads every audit output under `dirs` (in order) into one report.
///
/// Each folder may hold `audit.json` (schema `roboaudit.retrieval.v1`, `roboaudit.demo.v1` or
/// `roboaudit.memory.v1`; a memory audit's `control.json`, `interventions.json` and
/// `natural.json` beside it are included), `fqe.json` (`roboaudit.fqe.v1`), or be a retrieval run folder (scenes and
/// executions), whose transfer matrix goes to the retrieval audit it reproduces. A retrieval
/// audit without a run folder among `dirs` takes its matrix from its own folder or the parent
/// (the demo's from `runs/<task>/`); otherwise its heat map is skipped with a note. An empty
/// `dirs` gives an empty report.
///
/// # Errors
/// [`ReportError::NotAFolder`], [`ReportError::NoAudit`] for a folder with nothing known,
/// [`ReportError::Json`] / [`ReportError::Schema`] for a malformed or foreign file (line and
/// column named), [`ReportError::Data`] / [`ReportError::Matrix`] for a damaged run folder (file,
/// row and column, or the missing cell named), [`ReportError::UnmatchedRun`] for a run folder no
/// audit matches, [`ReportError::Read`] when a file cannot be read.
pub fn build_report(dirs: &[PathBuf]) -> Result<Report, ReportError> {
    detect::build(dirs)
}

/// Renders `report` as Markdown (the same tables as the HTML page; figures as captions).
pub fn render_markdown(report: &Report) -> String {
    markdown::render(report)
}

/// Renders `report` as one self-contained HTML page with inline SVG plots.
///
/// # Errors
/// [`ReportError::Plot`] when the SVG backend fails.
pub fn render_html(report: &Report) -> Result<String, ReportError> {
    html::render(report)
}

/// Writes `report.json`, `report.md` and `index.html` into `out` (created if missing) as one
/// set ([`roboaudit_data::atomic::write_all_atomic`]: all three staged before any is renamed),
/// so a failed render or write leaves `out` as it was.
///
/// # Errors
/// [`ReportError::Plot`] when a plot cannot be drawn, [`ReportError::Write`] when `out` or a
/// file cannot be written.
pub fn write_report(report: &Report, out: &Path) -> Result<(), ReportError> {
    let json = serde_json::to_vec_pretty(report).map_err(|e| ReportError::Write {
        path: out.join("report.json"),
        source: std::io::Error::other(e),
    })?;
    let markdown = markdown::render(report);
    let html = html::render(report)?;
    let files = [
        (out.join("report.json"), json),
        (out.join("report.md"), markdown.into_bytes()),
        (out.join("index.html"), html.into_bytes()),
    ];
    let files: Vec<(&Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    roboaudit_data::atomic::write_all_atomic(&files).map_err(|e| ReportError::Write {
        path: e.path,
        source: e
            .source
            .unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::IsADirectory)),
    })
}
