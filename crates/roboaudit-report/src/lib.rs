//! One report for every roboaudit audit (scaffold; the report helper fills this in).

use std::path::{Path, PathBuf};

/// Errors of report building and rendering.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A folder holds no audit output this crate knows.
    #[error("{0}: no audit output found (expected audit.json, fqe.json or a memory audit report)")]
    NoAudit(PathBuf),
}

/// The report of a set of audit output folders.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// Audit output folders, in the order given.
    pub sources: Vec<PathBuf>,
}

/// Reads every audit output under `dirs` into one report.
///
/// # Errors
/// [`ReportError::NoAudit`] when a folder holds no known audit output.
pub fn build_report(dirs: &[PathBuf]) -> Result<Report, ReportError> {
    match dirs.first() {
        Some(d) => Err(ReportError::NoAudit(d.clone())),
        None => Ok(Report {
            sources: Vec::new(),
        }),
    }
}

/// Writes `report.json`, `report.md` and `index.html` into `out` (atomically, each file).
///
/// # Errors
/// Not yet implemented: always [`ReportError::NoAudit`].
pub fn write_report(_report: &Report, out: &Path) -> Result<(), ReportError> {
    Err(ReportError::NoAudit(out.to_path_buf()))
}
