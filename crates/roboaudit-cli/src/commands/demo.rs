//! `roboaudit demo`: the retrieval audit end to end on the built-in testbed (seed 000 §II–V): a small
//! Stack and a small Door collection (Replay), both audited, one folder with `audit.json`,
//! `summary.md` and a self-contained `index.html`.

use super::retrieval::{audit_paths, collect_run};
use crate::output;
use anyhow::{Context, Result, bail};
use roboaudit_retrieval::{AuditConfig, AuditReport, render_summary_markdown};
use roboaudit_retrieval_collect::{AuditTask, CollectConfig, LibraryStats, Mechanism, RunOptions};
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `roboaudit demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output folder.
    #[arg(long, value_name = "DIR", default_value = "roboaudit-demo")]
    pub out: PathBuf,
}

/// One task of the demo in `audit.json`.
#[derive(Debug, Serialize)]
pub(crate) struct DemoTask {
    /// Task name.
    pub task: String,
    /// The collection settings.
    pub collection: CollectConfig,
    /// Library acceptance statistics.
    pub library: LibraryStats,
    /// Run folder of the collection (relative to the demo folder).
    pub run_dir: String,
    /// The audit.
    pub audit: AuditReport,
}

/// `audit.json` of the demo.
#[derive(Debug, Serialize)]
pub(crate) struct DemoReport {
    /// `roboaudit.demo.v1`.
    pub schema: &'static str,
    /// Stack, then Door.
    pub tasks: Vec<DemoTask>,
}

/// The demo's collection: 10 experiences, 20 query scenes (8 appearance, 8 layout, 4 fresh), 3 seeds.
fn demo_collection(task: AuditTask) -> CollectConfig {
    CollectConfig {
        task,
        mechanism: Mechanism::Replay,
        library: 10,
        scenes: 20,
        seeds: 3,
        seed: 0,
        chunk: 200,
    }
}

/// Audit settings of the demo: fewer draws than the defaults (2,000) to stay fast; nested K = 3.
fn demo_audit() -> AuditConfig {
    AuditConfig {
        seed: 0,
        resamples: 2_000,
        permutations: 2_000,
        library_sizes: vec![3],
        random_subsets: 100,
        power_replicates: 200,
        structural: Some(roboaudit_retrieval_collect::embed::STRUCTURAL.into()),
        ..AuditConfig::default()
    }
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    if args.out.exists() && !args.out.is_dir() {
        bail!(crate::exit::Usage(format!(
            "--out {} exists and is not a folder",
            args.out.display()
        )));
    }
    output::ensure_dir(&args.out)?;
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for task in [AuditTask::Stack, AuditTask::Door] {
        let collection = demo_collection(task);
        let run_dir = args.out.join("runs").join(task.name());
        eprintln!(
            "{}: collecting {} executions",
            task.name(),
            collection.total_executions()
        );
        let outcome = collect_run(&collection, &run_dir, &RunOptions::default())
            .with_context(|| format!("collecting the {} run", task.name()))?;
        eprintln!("{}: auditing", task.name());
        let audit = audit_paths(
            &roboaudit_data::RetrievalPaths::from_run_dir(&run_dir),
            demo_audit(),
        )
        .with_context(|| format!("auditing the {} run", task.name()))?;
        tasks.push(DemoTask {
            task: task.name().into(),
            collection,
            library: outcome.library,
            run_dir: format!("runs/{}", task.name()),
            audit,
        });
    }
    let report = DemoReport {
        schema: "roboaudit.demo.v1",
        tasks,
    };
    let json = serde_json::to_vec_pretty(&report).context("cannot serialize the demo report")?;
    let mut summary = String::from(
        "# roboaudit demo: retrieval audit on the built-in testbed\n\n\
         Replay (open-loop path retargeted to the first manipulated object), 10 experiences, \
         20 query scenes, 3 seeds per cell; see `index.html` for the overview.\n\n",
    );
    for t in &report.tasks {
        summary.push_str(&format!("\n# Task: {}\n\n", t.task));
        summary.push_str(&render_summary_markdown(&t.audit));
    }
    let html = html::render(&report);
    let audit_path = args.out.join("audit.json");
    let summary_path = args.out.join("summary.md");
    let html_path = args.out.join("index.html");
    output::write_atomic(&audit_path, &json)?;
    output::write_atomic(&summary_path, summary.as_bytes())?;
    output::write_atomic(&html_path, html.as_bytes())?;
    for t in &report.tasks {
        let r = &t.audit.reference;
        println!(
            "{:5}  random {:.3}  oracle {:.3}  best-fixed {:.3}  ({} experiences, {} scenes)",
            t.task, r.random, r.oracle, r.best_fixed, t.audit.n_experiences, t.audit.n_scenes
        );
    }
    println!(
        "wrote {}, {} and {} in {:.0} s",
        audit_path.display(),
        summary_path.display(),
        html_path.display(),
        started.elapsed().as_secs_f64()
    );
    println!("open {} in a browser", html_path.display());
    Ok(())
}

/// The one-page view: inline CSS, no scripts, every number from `audit.json`.
mod html {
    use super::DemoReport;
    use roboaudit_retrieval::{ReferencePoints, RuleReport};
    use std::fmt::Write;

    fn esc(s: &str) -> String {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    }

    fn num(v: Option<f64>) -> String {
        v.map_or_else(|| "n/a".into(), |x| format!("{x:.3}"))
    }

    const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
        h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
        table{border-collapse:collapse;margin:.6em 0;font-size:.9em}\
        th,td{padding:.25em .6em;border-bottom:1px solid #e4e4e4;text-align:right}\
        th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}\
        .note{color:#555;font-size:.9em}.bar{display:inline-block;height:.8em;background:#4a7bb7;vertical-align:middle}\
        .neg{color:#a33}.pos{color:#276a2b}";

    fn reference_row(out: &mut String, set: &str, r: &ReferencePoints) {
        let _ = write!(
            out,
            "<tr><td>{set}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3} ({})</td><td>{:.3}</td><td>{}{}</td><td>{:.2}</td></tr>",
            r.n_scenes,
            r.random,
            r.oracle,
            r.best_fixed,
            esc(&r.best_fixed_experience),
            r.headroom,
            num(r.best_fixed_advantage),
            if r.advantage_unstable {
                " (unstable)"
            } else {
                ""
            },
            r.oracle_top_pick_share
        );
    }

    fn rule_row(out: &mut String, r: &RuleReport) {
        let adv = r.advantage;
        let class = match adv {
            Some(a) if a < 0.0 => " class=\"neg\"",
            Some(_) => " class=\"pos\"",
            None => "",
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{:.3}</td><td{class}>{}{}</td><td>{} <span class=\"bar\" style=\"width:{:.0}px\"></span> {:.2}</td><td>{:.2}</td><td>{:+.3}{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.name),
            r.success,
            num(adv),
            if r.advantage_unstable {
                " (unstable)"
            } else {
                ""
            },
            esc(&r.top_pick),
            r.top_pick_share * 60.0,
            r.top_pick_share,
            r.concentration,
            r.gap,
            match r.gap_significant {
                Some(true) => " *",
                _ => "",
            },
            num(r.pooled_auroc),
            num(r.within_query_auroc),
        );
    }

    /// Renders the page.
    pub(super) fn render(report: &DemoReport) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>roboaudit demo</title><style>{CSS}</style></head><body>\
             <h1>roboaudit demo: auditing experience retrieval</h1>\
             <p>Every stored experience was executed in every query scene over several seeds (Replay: the \
             recorded path moved with the first manipulated object), so each selection rule can be judged \
             against what every alternative would have done. <b>Best-fixed</b> always uses the one experience \
             with the highest mean success (hindsight); <b>advantage</b> = (rule − random)/(oracle − random); \
             <b>concentration</b> = the rule's top-pick share over the oracle's; <b>gap</b> = success minus \
             the frequency-matched shuffle (* when its scene-bootstrap interval excludes 0); pooled AUROC asks \
             whether distance predicts pair success, within-query AUROC whether it ranks candidates inside one \
             scene. Details: <code>summary.md</code>, all numbers: <code>audit.json</code>.</p>"
        );
        for t in &report.tasks {
            let a = &t.audit;
            let _ = write!(
                o,
                "<h2>{}</h2><p class=\"note\">{} experiences ({} of {} recordings rejected in their base scene), \
                 {} query scenes, {} executions in the library × query matrix; run folder <code>{}</code>.</p>",
                esc(&t.task),
                a.n_experiences,
                t.library.rejected,
                t.library.attempts,
                a.n_scenes,
                a.n_executions,
                esc(&t.run_dir)
            );
            o.push_str("<table><tr><th>scenes</th><th>n</th><th>random</th><th>oracle</th><th>best-fixed</th><th>headroom</th><th>best-fixed advantage</th><th>oracle top share</th></tr>");
            reference_row(&mut o, "all", &a.reference);
            if let Some(r) = &a.reference_by_set.appearance {
                reference_row(&mut o, "appearance", r);
            }
            if let Some(r) = &a.reference_by_set.layout {
                reference_row(&mut o, "layout", r);
            }
            o.push_str("</table>");
            let _ = write!(
                o,
                "<p class=\"note\">Scene-difficulty share of the variance of P: {}; experience share: {}.</p>",
                num(a.variance_share.scene),
                num(a.variance_share.experience)
            );
            o.push_str("<table><tr><th>rule</th><th>success</th><th>advantage</th><th>top pick (share)</th><th>concentration</th><th>gap</th><th>pooled AUROC</th><th>within-query AUROC</th></tr>");
            for r in &a.rules {
                rule_row(&mut o, r);
            }
            o.push_str("</table>");
        }
        o.push_str("<p class=\"note\">Generated by <code>roboaudit demo</code>; the method follows SPEC.md §1.</p></body></html>\n");
        o
    }
}
