//! The files of a fit, written by every caller the same way: `fqe.json` (the [`FqeReport`]) and
//! `summary.md` ([`render_markdown`]), as one set.

use std::path::Path;

use roboaudit_data::atomic::{WriteError, create_dir, write_all_atomic};

use crate::report::FqeReport;
use crate::summary::render_markdown;

/// File name of the report (`roboaudit.fqe.v1`, [`crate::SCHEMA`]) in a fit's folder.
pub const REPORT_FILE: &str = "fqe.json";
/// File name of the report's Markdown rendering in a fit's folder.
pub const SUMMARY_FILE: &str = "summary.md";

/// Writes `dir/fqe.json` (the report as pretty-printed JSON) and `dir/summary.md`, creating
/// `dir` when missing. Both are staged and renamed into place together
/// ([`roboaudit_data::atomic::write_all_atomic`]): a killed or failed write leaves the previous
/// files as they were, so `fqe evaluate` and `report` never read half a fit.
///
/// # Errors
/// [`WriteError`] naming the file or folder: `dir` cannot be created, a file cannot be written,
/// or the report cannot be encoded as JSON.
pub fn write_report(dir: &Path, report: &FqeReport) -> Result<(), WriteError> {
    create_dir(dir)?;
    let file = dir.join(REPORT_FILE);
    let json = serde_json::to_vec_pretty(report).map_err(|e| WriteError {
        message: format!("cannot serialize the FQE report for {}", file.display()),
        path: file.clone(),
        source: Some(std::io::Error::other(e)),
    })?;
    write_all_atomic(&[
        (&file, &json),
        (&dir.join(SUMMARY_FILE), render_markdown(report).as_bytes()),
    ])
}
