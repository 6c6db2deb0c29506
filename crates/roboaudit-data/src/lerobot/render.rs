//! Terminal rendering of an [`InspectReport`].

use std::fmt::Write as _;

use super::inspect::InspectReport;

/// Renders `report` as plain text for a terminal: a header block, features, videos, labels,
/// and the problems with their files.
pub fn render_inspect(report: &InspectReport) -> String {
    let mut s = String::new();
    let opt = |v: Option<u64>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
    let _ = writeln!(s, "LeRobot dataset {}", report.dir.display());
    let _ = writeln!(s, "  version    {}", report.version.as_str());
    let _ = writeln!(
        s,
        "  robot      {}",
        report.robot_type.as_deref().unwrap_or("(not given)")
    );
    let _ = writeln!(s, "  fps        {}", report.fps);
    let _ = writeln!(
        s,
        "  episodes   {} in metadata, {} in data (total_episodes {})",
        report.episodes,
        report.episodes_in_data,
        opt(report.total_episodes)
    );
    let lengths = report
        .episode_length_range
        .map(|(a, b)| format!(", episode length {a}..={b}"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "  frames     {} rows in {} data file(s) (total_frames {}){lengths}",
        report.frames,
        report.data_files,
        opt(report.total_frames)
    );
    let _ = writeln!(s, "  tasks      {}", report.tasks.len());
    for task in report.tasks.iter().take(5) {
        let _ = writeln!(s, "    [{}] {}", task.index, task.task);
    }
    if report.tasks.len() > 5 {
        let _ = writeln!(s, "    ... {} more", report.tasks.len() - 5);
    }
    let _ = writeln!(s, "features");
    let width = report
        .features
        .iter()
        .map(|f| f.name.len())
        .max()
        .unwrap_or(0);
    for f in &report.features {
        let shape: Vec<String> = f.shape.iter().map(ToString::to_string).collect();
        let mut line = format!(
            "  {:<width$}  {:<8} [{}]",
            f.name,
            f.dtype,
            shape.join(", ")
        );
        if let Some(layout) = f.layout {
            let _ = write!(line, " {}", format!("{layout:?}").to_ascii_uppercase());
        }
        if let Some(storage) = &f.storage {
            let _ = write!(line, "  {storage}");
        }
        if let Some(note) = &f.note {
            let _ = write!(line, "  ({note})");
        }
        let _ = writeln!(s, "{line}");
    }
    if !report.videos.is_empty() {
        let _ = writeln!(s, "videos");
        for v in &report.videos {
            let _ = writeln!(
                s,
                "  {}: {} of {} file(s) present, codec declared {}, found {}",
                v.feature,
                v.files_present,
                v.files_expected,
                v.declared_codec.as_deref().unwrap_or("?"),
                v.found_codec
                    .as_deref()
                    .unwrap_or(roboaudit_types::NO_VALUE)
            );
        }
    }
    let _ = writeln!(s, "labels");
    for (column, hits) in &report.labels.success_columns {
        let _ = writeln!(
            s,
            "  {column}: true in {hits} of {} episodes",
            report.episodes_in_data
        );
    }
    if let Some(r) = &report.labels.reward {
        let _ = writeln!(
            s,
            "  {}: min {:.4}, max {:.4}, mean {:.4}, non-zero on {} frames, last-frame max {:.4}{}",
            r.column,
            r.min,
            r.max,
            r.mean,
            r.nonzero_frames,
            r.max_last,
            if r.binary { " (binary)" } else { " (dense)" }
        );
    }
    if let Some(d) = report.labels.done_frames {
        let _ = writeln!(s, "  done frames: {d}");
    }
    let _ = writeln!(s, "  verdict: {}", report.labels.verdict);
    if report.problems.is_empty() {
        let _ = writeln!(s, "problems: none");
    } else {
        // Whether any problem stops the fit, so that a list of harmless ones does not read as
        // a failed check.
        let blocking = match report.blocking_problems {
            0 => "none stops `fqe fit`".to_owned(),
            n => format!("{n} stop `fqe fit`"),
        };
        let _ = writeln!(s, "problems ({}; {blocking})", report.problems.len());
        for p in &report.problems {
            let mut place = Vec::new();
            if let Some(e) = p.episode {
                place.push(format!("episode {e}"));
            }
            if let Some(r) = p.row {
                place.push(format!("row {r}"));
            }
            let file = p.file.display().to_string();
            if !file.is_empty() {
                place.push(file);
            }
            let place = if place.is_empty() {
                String::new()
            } else {
                format!(" [{}]", place.join(", "))
            };
            let _ = writeln!(s, "  - {}{place}", p.message);
        }
    }
    s
}
