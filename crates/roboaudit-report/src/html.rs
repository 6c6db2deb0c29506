//! `index.html`: one self-contained page (inline CSS and SVG, no scripts, no network), a table of
//! contents, the tables and the plots of the document.

use crate::ReportError;
use crate::doc::{Block, document};
use crate::model::Report;
use std::fmt::Write;

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:860px;margin:2em auto;padding:0 1em;color:#222;line-height:1.5;background:#fff}\
h1{font-size:1.7em;margin-bottom:.2em}h2{margin-top:2.2em;padding-bottom:.2em;border-bottom:2px solid #4e79a7}h3{margin-top:1.6em;color:#333}\
table{border-collapse:collapse;margin:.7em 0;font-size:.84em;font-variant-numeric:tabular-nums;width:100%}td{white-space:nowrap}td.wrap{white-space:normal}.scroll{overflow-x:auto}\
th,td{padding:.3em .55em;border-bottom:1px solid #e6e6e6;text-align:right;vertical-align:top}\
th:first-child,td:first-child{text-align:left}th{background:#f3f5f8;font-weight:600}\
tr:hover td{background:#fafbfd}\
.note{color:#555;font-size:.88em}\
nav.toc{background:#f7f8fa;border:1px solid #e3e6ea;border-radius:6px;padding:.6em 1.2em;margin:1.2em 0;font-size:.92em}\
nav.toc ul{margin:.2em 0;padding-left:1.2em}nav.toc li{margin:.1em 0}\
figure{margin:1.4em 0;padding:0}figure svg{display:block;max-width:100%;height:auto;border:1px solid #eee;border-radius:4px}\
figcaption{font-size:.88em;color:#444;margin-top:.4em}figcaption .axes{color:#777}\
.skipped{color:#8a6d3b;background:#fcf8e3;border:1px solid #faebcc;border-radius:4px;padding:.4em .7em;font-size:.88em}\
.warning{color:#7a4b00;background:#fff4e0;border:1px solid #f0c36d;border-left:5px solid #e09b1a;border-radius:4px;padding:.5em .8em;margin:.8em 0;font-size:.92em}\
.frames{display:grid;grid-template-columns:minmax(8em,max-content) auto auto;justify-content:start;gap:.3em .6em;align-items:center;font-size:.84em;border:1px solid #eee;border-radius:4px;padding:.5em}\
.frames img{display:block;height:96px;width:auto;image-rendering:pixelated;border:1px solid #ddd}.frames span{color:#555}\
a{color:#2b5d8c}footer{margin-top:3em;color:#777;font-size:.85em}";

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn toc(blocks: &[Block]) -> String {
    let mut o = String::from("<nav class=\"toc\"><b>Contents</b><ul>");
    let mut open = false;
    for b in blocks {
        if let Block::Heading { level, id, text } = b {
            match level {
                2 => {
                    if open {
                        o.push_str("</ul></li>");
                    }
                    let _ = write!(o, "<li><a href=\"#{}\">{}</a><ul>", esc(id), esc(text));
                    open = true;
                }
                3 if open => {
                    let _ = write!(o, "<li><a href=\"#{}\">{}</a></li>", esc(id), esc(text));
                }
                _ => {}
            }
        }
    }
    if open {
        o.push_str("</ul></li>");
    }
    o.push_str("</ul></nav>");
    o
}

/// Renders `report` as one HTML page with every available plot drawn inline.
///
/// # Errors
/// [`ReportError::Plot`] when a plot cannot be drawn.
pub(crate) fn render(report: &Report) -> Result<String, ReportError> {
    let blocks = document(report);
    let mut o = String::with_capacity(1 << 16);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>roboaudit report</title><style>{CSS}</style></head><body>\n"
    );
    let mut toc_done = false;
    for block in &blocks {
        match block {
            Block::Heading { level, id, text } => {
                if *level == 2 && !toc_done {
                    o.push_str(&toc(&blocks));
                    toc_done = true;
                }
                let _ = writeln!(o, "<h{level} id=\"{}\">{}</h{level}>", esc(id), esc(text));
            }
            Block::Para(t) => {
                let _ = writeln!(o, "<p>{}</p>", esc(t));
            }
            Block::Note(t) => {
                let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(t));
            }
            Block::Warning(t) => {
                let _ = writeln!(o, "<div class=\"warning\" role=\"note\">⚠ {}</div>", esc(t));
            }
            Block::Table { header, rows } => {
                o.push_str("<div class=\"scroll\"><table><thead><tr>");
                for h in header {
                    let _ = write!(o, "<th>{}</th>", esc(h));
                }
                o.push_str("</tr></thead><tbody>");
                for row in rows {
                    o.push_str("<tr>");
                    for c in row {
                        // Long text cells wrap; numbers stay on one line.
                        let class = if c.chars().count() > 24 {
                            " class=\"wrap\""
                        } else {
                            ""
                        };
                        let _ = write!(o, "<td{class}>{}</td>", esc(c));
                    }
                    o.push_str("</tr>");
                }
                o.push_str("</tbody></table></div>\n");
            }
            Block::Figure(i) => {
                let Some(p) = report.plots.get(*i) else {
                    continue;
                };
                match crate::plots::render(report, p)? {
                    Some(svg) => {
                        let _ = writeln!(
                            o,
                            "<figure id=\"{}\" class=\"plot\" data-kind=\"{}\">{svg}<figcaption><b>{}.</b> {} <span class=\"axes\">Horizontal: {}; vertical: {}.</span></figcaption></figure>",
                            esc(&p.id),
                            serde_json::to_value(p.kind)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default(),
                            esc(&p.title),
                            esc(&p.caption),
                            esc(&p.x_label),
                            esc(&p.y_label)
                        );
                    }
                    None => {
                        let _ = writeln!(
                            o,
                            "<p class=\"skipped\" data-plot=\"{}\">Plot skipped — {}: {}.</p>",
                            esc(&p.id),
                            esc(&p.title),
                            esc(p.note.as_deref().unwrap_or("no data"))
                        );
                    }
                }
            }
        }
    }
    if !toc_done {
        o.push_str(&toc(&blocks));
    }
    o.push_str(
        "<footer>Generated by <code>roboaudit report</code>; methods follow docs/methods.md §1–3 in the roboaudit repository. \
         All numbers: <code>report.json</code>; text version: <code>report.md</code>.</footer>\n</body></html>\n",
    );
    Ok(o)
}
