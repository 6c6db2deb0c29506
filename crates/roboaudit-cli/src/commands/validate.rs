//! `roboaudit validate KIND FILE`: reads an input file with the reader the audits use and reports
//! what it holds, or the reader's error (file, row, column; exit code 3). The Python writers
//! (`roboaudit.writers`) call it after writing, so a harness's file is checked by the same code
//! that will later read it.

use anyhow::Result;
use roboaudit_data::request::ValidateRequest;

/// Reads `request.file` as `request.kind` and prints one line: the file and how many rows it
/// holds.
///
/// # Errors
/// The reader's [`roboaudit_data::DataError`] (exit code 3); only the file's own checks run,
/// not the cross-file ones of a whole audit input.
pub fn run(request: &ValidateRequest) -> Result<()> {
    let summary = request.summary()?;
    outln!("ok: {}: {summary}", request.file.display())?;
    Ok(())
}
