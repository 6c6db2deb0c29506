//! `report.md`: the document as GitHub-flavoured Markdown (figures become their captions; the
//! plots themselves are in `index.html`).

use crate::doc::{Block, document};
use crate::model::Report;
use std::fmt::Write;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Renders `report` as Markdown.
pub(crate) fn render(report: &Report) -> String {
    let mut o = String::new();
    for block in document(report) {
        match block {
            Block::Heading { level, text, .. } => {
                let _ = writeln!(o, "{} {text}\n", "#".repeat(usize::from(level)));
            }
            Block::Para(t) => {
                let _ = writeln!(o, "{t}\n");
            }
            Block::Note(t) => {
                let _ = writeln!(o, "*{t}*\n");
            }
            Block::Warning(t) => {
                let _ = writeln!(o, "> **Warning:** {}\n", t.replace('\n', " "));
            }
            Block::Table { header, rows } => {
                let _ = writeln!(
                    o,
                    "| {} |",
                    header
                        .iter()
                        .map(|h| cell(h))
                        .collect::<Vec<_>>()
                        .join(" | ")
                );
                let align: Vec<&str> = (0..header.len())
                    .map(|i| if i == 0 { ":---" } else { "---:" })
                    .collect();
                let _ = writeln!(o, "|{}|", align.join("|"));
                for row in rows {
                    let _ = writeln!(
                        o,
                        "| {} |",
                        row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
                    );
                }
                o.push('\n');
            }
            Block::Figure(i) => {
                if let Some(p) = report.plots.get(i) {
                    if p.available {
                        let _ = writeln!(
                            o,
                            "**Figure ({}): {}.** {} *Axes: {} (horizontal), {} (vertical); drawn in index.html.*\n",
                            p.id, p.title, p.caption, p.x_label, p.y_label
                        );
                    } else {
                        let _ = writeln!(
                            o,
                            "*Plot skipped ({}): {}.*\n",
                            p.title,
                            p.note.as_deref().unwrap_or("no data")
                        );
                    }
                }
            }
        }
    }
    o
}
