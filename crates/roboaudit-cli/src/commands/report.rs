//! `roboaudit report DIR...`: one report (JSON, Markdown, self-contained HTML) from any set of audit outputs.

use crate::progress;
use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `roboaudit report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Audit output folders (retrieval or demo `audit.json`, memory audit `audit.json`,
    /// `fqe.json`) and retrieval run folders (for the transfer matrix), any number.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Output folder for `report.json`, `report.md` and `index.html`.
    #[arg(long, value_name = "DIR", default_value = "roboaudit-report")]
    pub out: PathBuf,
}

/// Runs `roboaudit report`: input errors exit with code 3, write errors with 1.
pub fn run(args: &ReportArgs) -> Result<()> {
    let spinner = progress::spinner("reading audit outputs");
    let report = roboaudit_report::build_report(&args.dirs)?;
    spinner.set_message("drawing plots");
    roboaudit_report::write_report(&report, &args.out)?;
    spinner.finish_and_clear();
    let drawn = report.plots.iter().filter(|p| p.available).count();
    for p in report.plots.iter().filter(|p| !p.available) {
        eprintln!(
            "note: plot {} skipped: {}",
            p.id,
            p.note.as_deref().unwrap_or("no data")
        );
    }
    println!(
        "{} retrieval, {} memory, {} FQE section(s); {drawn} of {} plots drawn",
        report.retrieval.len(),
        report.memory.len(),
        report.fqe.len(),
        report.plots.len()
    );
    println!(
        "wrote {}, {} and {}",
        args.out.join("report.json").display(),
        args.out.join("report.md").display(),
        args.out.join("index.html").display()
    );
    Ok(())
}
