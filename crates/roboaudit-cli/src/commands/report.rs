//! `roboaudit report DIR...`: one report (JSON, Markdown, self-contained HTML) from any set of audit outputs.

use crate::{output, progress};
use anyhow::Result;
use roboaudit_report::request::ReportOptions;

/// Runs `roboaudit report`: an `--out` that exists and is not a folder exits with code 2 before
/// anything is read, input errors with 3, write errors with 1. A folder given twice is reported
/// once, with a note on stderr.
pub fn run(args: &ReportOptions) -> Result<()> {
    output::refuse_out_file(&args.out)?;
    // report.json records every input folder as JSON text, which cannot hold a non-UTF-8 name.
    for dir in args.dirs.iter().chain([&args.out]) {
        if dir.to_str().is_none() {
            return Err(crate::exit::Usage(format!(
                "{} is not a UTF-8 path (report.json records paths as text); rename it",
                dir.display()
            ))
            .into());
        }
    }
    // A demo folder holds a report too (same schema), so it may be re-rendered in place; a
    // folder holding an audit takes only a report that includes that audit, else the report
    // beside it would stop describing it.
    output::refuse_foreign_results(&args.out, &[("report.json", &[roboaudit_report::SCHEMA])])?;
    let audit = ["audit.json", "fqe.json"]
        .into_iter()
        .find(|f| args.out.join(f).is_file());
    if let Some(audit) = audit
        && !args
            .dirs
            .iter()
            .any(|d| crate::paths::same_file(d, &args.out))
    {
        return Err(crate::exit::Usage(format!(
            "--out {} holds an audit ({audit}) whose report would be replaced by a report of other folders; choose another output folder, or include {} among the inputs to re-render its report",
            args.out.display(),
            args.out.display()
        ))
        .into());
    }
    let spinner = progress::spinner("reading audit outputs");
    let report = roboaudit_report::build_report(&args.dirs)?;
    spinner.set_message("drawing plots");
    roboaudit_report::write_report(&report, &args.out)?;
    spinner.finish_and_clear();
    eprint!("{}", report.notes_text());
    out!("{}", report.summary(&args.out))?;
    Ok(())
}
