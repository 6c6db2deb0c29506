//! The report as a sequence of blocks (headings, paragraphs, tables, figures) that the Markdown
//! and HTML renderers both draw, so the two never disagree on a number.

mod fqe;
mod mechanisms;
mod memory;
mod retrieval;

use crate::model::{Report, SourceKind};
use roboaudit_types::NO_VALUE;

/// One block of the document.
pub(crate) enum Block {
    /// A heading; level 2 and 3 headings with an id enter the table of contents.
    Heading { level: u8, id: String, text: String },
    /// A paragraph of plain text.
    Para(String),
    /// A short note (smaller, grey in HTML).
    Note(String),
    /// A table; the first column is left-aligned, the others right-aligned.
    Table {
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    /// A warning the reader must see (a box in HTML, a blockquote in Markdown).
    Warning(String),
    /// The plot `report.plots[index]`.
    Figure(usize),
}

/// `x` with 3 decimals; a value that rounds to zero prints `0.000`, never `-0.000`.
pub(crate) fn fixed3(x: f64) -> String {
    let s = format!("{x:.3}");
    if s == "-0.000" { "0.000".to_owned() } else { s }
}

/// `0.123`, or `–` when undefined.
pub(crate) fn num(v: Option<f64>) -> String {
    v.map_or_else(|| NO_VALUE.to_owned(), fixed3)
}

/// `[0.100, 0.300]`, or `–`.
pub(crate) fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(
        || NO_VALUE.to_owned(),
        |[lo, hi]| format!("[{}, {}]", fixed3(lo), fixed3(hi)),
    )
}

/// `12.5 %`.
pub(crate) fn pct(v: f64) -> String {
    format!("{:.1} %", v * 100.0)
}

pub(crate) fn heading(level: u8, id: &str, text: impl Into<String>) -> Block {
    Block::Heading {
        level,
        id: id.to_owned(),
        text: text.into(),
    }
}

pub(crate) fn table(header: &[&str], rows: Vec<Vec<String>>) -> Block {
    Block::Table {
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

/// Figures of the section `section`, in catalogue order.
pub(crate) fn figures(report: &Report, section: &str) -> Vec<Block> {
    report
        .plots
        .iter()
        .enumerate()
        .filter(|(_, p)| p.section == section)
        .map(|(i, _)| Block::Figure(i))
        .collect()
}

fn kind_name(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::RetrievalAudit => "retrieval audit",
        SourceKind::Demo => "demo (retrieval audits per task)",
        SourceKind::RetrievalRun => "retrieval run folder",
        SourceKind::MemoryAudit => "memory audit",
        SourceKind::Fqe => "fitted Q evaluation",
    }
}

/// The whole document.
pub(crate) fn document(report: &Report) -> Vec<Block> {
    let mut out = vec![
        heading(1, "top", "roboaudit report"),
        Block::Para(format!(
            "{} retrieval audit(s), {} memory audit(s) and {} fitted Q evaluation(s); {} plot(s) drawn, {} skipped for missing data. Every number comes from report.json, which holds each audit's own report unchanged.",
            report.retrieval.len(),
            report.memory.len(),
            report.fqe.len(),
            report.plots.iter().filter(|p| p.available).count(),
            report.plots.iter().filter(|p| !p.available).count(),
        )),
        table(
            &["input folder", "holds"],
            report
                .sources
                .iter()
                .map(|s| {
                    vec![
                        s.path.display().to_string(),
                        s.kinds
                            .iter()
                            .map(|k| kind_name(*k))
                            .collect::<Vec<_>>()
                            .join(", "),
                    ]
                })
                .collect(),
        ),
    ];
    out.extend(report.notes.iter().map(|n| Block::Warning(n.clone())));
    out.extend(mechanisms::blocks(report));
    for s in &report.retrieval {
        out.extend(retrieval::blocks(report, s));
    }
    for s in &report.memory {
        out.extend(memory::blocks(report, s));
    }
    for s in &report.fqe {
        out.extend(fqe::blocks(report, s));
    }
    out
}
