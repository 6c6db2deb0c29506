//! `roboaudit report DIR...`: one report (JSON, Markdown, self-contained HTML) from any set of audit outputs.

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `roboaudit report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Audit output folders (retrieval `audit.json`, memory audit report, `fqe.json`), any number.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Output folder for `report.json`, `report.md` and `index.html`.
    #[arg(long, value_name = "DIR", default_value = "roboaudit-report")]
    pub out: PathBuf,
}

/// Runs `roboaudit report`.
pub fn run(args: &ReportArgs) -> Result<()> {
    let report = roboaudit_report::build_report(&args.dirs)?;
    roboaudit_report::write_report(&report, &args.out)?;
    Ok(())
}
