//! What `roboaudit report` says about a report it wrote: notes for stderr, counts and files for
//! stdout (the CLI prints them; nothing is printed here).

use std::fmt::Write as _;
use std::path::Path;

use crate::model::Report;

impl Report {
    /// The report's notes, then one note per plot skipped with its reason (`no data` when it
    /// has none); each line starts with `note: ` and ends in a newline.
    #[must_use]
    pub fn notes_text(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        for p in self.plots.iter().filter(|p| !p.available) {
            let _ = writeln!(
                out,
                "note: plot {} skipped: {}",
                p.id,
                p.note.as_deref().unwrap_or("no data")
            );
        }
        out
    }

    /// Sections per audit and plots drawn, then the three files [`crate::write_report`]
    /// wrote into `out`; each line ends in a newline.
    #[must_use]
    pub fn summary(&self, out: &Path) -> String {
        let drawn = self.plots.iter().filter(|p| p.available).count();
        format!(
            "{} retrieval, {} memory, {} FQE section(s); {drawn} of {} plots drawn\nwrote {}, {} and {}\n",
            self.retrieval.len(),
            self.memory.len(),
            self.fqe.len(),
            self.plots.len(),
            out.join("report.json").display(),
            out.join("report.md").display(),
            out.join("index.html").display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_report_counts_nothing_and_names_its_files() {
        let report: Report = serde_json::from_value(serde_json::json!({
            "schema": crate::SCHEMA, "sources": [], "retrieval": [], "memory": [], "fqe": [],
            "plots": [], "notes": ["a folder given twice is reported once"]
        }))
        .unwrap();
        assert_eq!(
            report.summary(Path::new("rep")),
            "0 retrieval, 0 memory, 0 FQE section(s); 0 of 0 plots drawn\nwrote rep/report.json, rep/report.md and rep/index.html\n"
        );
        assert_eq!(
            report.notes_text(),
            "note: a folder given twice is reported once\n"
        );
    }
}
