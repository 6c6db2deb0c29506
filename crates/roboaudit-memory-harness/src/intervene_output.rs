//! An intervention study's result files, `interventions.json` and `interventions.md`: written
//! by `memory intervene` and, with the same bytes, by the merge of its shards.

use std::path::{Path, PathBuf};

use crate::error::HarnessError;
use crate::intervals::RateInterval;
use crate::intervene::InterventionStudy;

/// File name of the study (JSON) inside the output folder.
pub const STUDY_FILE: &str = "interventions.json";
/// File name of the study's table (Markdown) inside the output folder.
pub const REPORT_FILE: &str = "interventions.md";

/// `0.833 [0.583, 1.000]`, or `–` where the rate does not apply.
fn rate(r: Option<RateInterval>) -> String {
    match r {
        None => roboaudit_types::NO_VALUE.to_owned(),
        Some(r) => match r.ci {
            Some([lo, hi]) => format!("{:.3} [{lo:.3}, {hi:.3}]", r.estimate),
            None => format!("{:.3} [undefined]", r.estimate),
        },
    }
}

/// Rows of (condition, n, counts, success, committed own, committed donor) for both renderings.
fn rows(study: &InterventionStudy) -> Vec<[String; 6]> {
    study
        .summary
        .iter()
        .map(|c| {
            let iv = study.intervals.iter().find(|i| i.condition == c.condition);
            [
                c.condition.clone(),
                c.n.to_string(),
                format!(
                    "{}/{}/{}/{}",
                    c.successes, c.committed_own, c.committed_donor, c.committed_none
                ),
                rate(iv.and_then(|i| i.success)),
                rate(iv.and_then(|i| i.committed_own)),
                rate(iv.and_then(|i| i.committed_donor)),
            ]
        })
        .collect()
}

const HEADER: [&str; 6] = [
    "condition",
    "n",
    "succ/own/donor/none",
    "success",
    "committed own",
    "committed donor",
];

/// The study as a fixed-width text table (one row per condition) followed by the note on its
/// intervals, for the terminal.
pub fn table(study: &InterventionStudy) -> String {
    let mut out = String::new();
    let line = |r: &[&str]| {
        format!(
            "{:<15} {:>3} {:>19}  {:<22} {:<22} {:<22}\n",
            r[0], r[1], r[2], r[3], r[4], r[5]
        )
    };
    out.push_str(&line(&HEADER));
    for r in rows(study) {
        let r: Vec<&str> = r.iter().map(String::as_str).collect();
        out.push_str(&line(&r));
    }
    out.push_str(&interval_note(study));
    out.push('\n');
    out
}

fn interval_note(study: &InterventionStudy) -> String {
    let b = &study.config.bootstrap;
    format!(
        "rates with {:.0}% layout-stratified bootstrap intervals (recipient clusters within layout levels, {} resamples, seed {})",
        b.level * 100.0,
        b.resamples,
        b.seed
    )
}

/// The study as the Markdown of [`REPORT_FILE`], for policy `policy`.
pub fn markdown(study: &InterventionStudy, policy: &str) -> String {
    let mut md = format!(
        "# Memory intervention: {} study\n\nPolicy `{policy}` on `{}`, {} recipients ({} skipped before any query).\n\n",
        study.study,
        study.config.cohort.task.name(),
        study.config.cohort.episodes - study.skipped,
        study.skipped
    );
    md.push_str(&format!("| {} |\n", HEADER.join(" | ")));
    md.push_str("|---|---:|---:|---|---|---|\n");
    for r in rows(study) {
        md.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    md.push_str(&format!("\n{}.\n", interval_note(study)));
    if let Some(ok) = study.own_reproduces_native {
        md.push_str(&format!(
            "\nOwn-history reconstruction reproduces the native memory: {ok}.\n"
        ));
    }
    md
}

/// Writes [`STUDY_FILE`] and [`REPORT_FILE`] of `study` (policy `policy`) into `out` together;
/// returns their paths.
///
/// # Errors
/// [`HarnessError::Partial`] when a file cannot be written.
pub fn write_study(
    out: &Path,
    study: &InterventionStudy,
    policy: &str,
) -> Result<(PathBuf, PathBuf), HarnessError> {
    let json_path = out.join(STUDY_FILE);
    let md_path = out.join(REPORT_FILE);
    let json = serde_json::to_vec_pretty(study).map_err(|e| HarnessError::Partial {
        path: json_path.display().to_string(),
        message: format!("cannot serialize the study: {e}"),
    })?;
    crate::output::write_together(&[
        (&json_path, &json),
        (&md_path, markdown(study, policy).as_bytes()),
    ])?;
    Ok((json_path, md_path))
}
