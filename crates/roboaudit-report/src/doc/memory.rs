//! Blocks of one counterfactual memory audit (SPEC.md §2).

use super::{Block, figures, heading, interval, num, table};
use crate::model::{MemorySection, Report};
use roboaudit_memory::Estimate;

fn estimate_row(name: &str, e: &Estimate) -> Vec<String> {
    vec![
        name.to_owned(),
        num(e.value),
        format!(
            "{} ({:.0} %, {} resamples of {})",
            interval(e.ci),
            e.level * 100.0,
            e.resamples,
            e.cluster
        ),
    ]
}

fn plain_row(name: &str, v: Option<f64>) -> Vec<String> {
    vec![name.to_owned(), num(v), String::new()]
}

/// A one-line summary of a JSON side file: its `passed` / `study` fields when present.
fn side_file(name: &str, v: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    if let Some(study) = v.get("study").and_then(serde_json::Value::as_str) {
        parts.push(format!("study {study}"));
    }
    if let Some(passed) = v.get("passed").and_then(serde_json::Value::as_bool) {
        parts.push(if passed { "passed" } else { "failed" }.to_owned());
    }
    if parts.is_empty() {
        format!("{name} is included in report.json.")
    } else {
        format!(
            "{name}: {}; the full result is included in report.json.",
            parts.join(", ")
        )
    }
}

fn verdict(v: Option<bool>, yes: &str, no: &str) -> String {
    match v {
        Some(true) => yes.to_owned(),
        Some(false) => no.to_owned(),
        None => "–".to_owned(),
    }
}

/// One equivalence test of `control.json` (`nuisance` or `interaction`): estimate, interval,
/// margin and verdict.
fn equivalence_row(name: &str, v: Option<&serde_json::Value>) -> Vec<String> {
    let f = |k: &str| v.and_then(|x| x.get(k)).and_then(serde_json::Value::as_f64);
    let ci = v
        .and_then(|x| x.get("ci"))
        .and_then(serde_json::Value::as_array)
        .and_then(|a| Some([a.first()?.as_f64()?, a.get(1)?.as_f64()?]));
    vec![
        name.to_owned(),
        num(f("estimate")),
        format!(
            "{} ({})",
            interval(ci),
            f("level").map_or_else(|| "–".to_owned(), |l| format!("{:.0} %", l * 100.0))
        ),
        f("margin").map_or_else(|| "–".to_owned(), |m| format!("± {}", super::fixed3(m))),
        verdict(
            v.and_then(|x| x.get("equivalent"))
                .and_then(serde_json::Value::as_bool),
            "equivalent (passed)",
            "not equivalent (failed)",
        ),
    ]
}

/// The route control's own result (`control.json`, SPEC.md §2 controls) as a table: the
/// nuisance and interaction equivalence tests and the per-route semantic checks.
fn control_blocks(id: &str, c: &serde_json::Value) -> Vec<Block> {
    let passed = c.get("passed").and_then(serde_json::Value::as_bool);
    let mut out = vec![
        heading(3, &format!("{id}--control"), "Control result"),
        Block::Para(format!(
            "This audit is the irrelevant-history / route control: the history's irrelevant part (the route) is varied and must not change the action. Control {}.",
            verdict(passed, "passed", "failed")
        )),
        table(
            &[
                "test",
                "estimate",
                "interval",
                "equivalence margin",
                "verdict",
            ],
            vec![
                equivalence_row("nuisance (route effect)", c.get("nuisance")),
                equivalence_row("interaction (route × memory)", c.get("interaction")),
            ],
        ),
    ];
    if let Some(sem) = c.get("semantic").and_then(serde_json::Value::as_array) {
        let rows = sem
            .iter()
            .map(|r| {
                let fa = r.get("faithfulness");
                let ci = fa
                    .and_then(|x| x.get("ci"))
                    .and_then(serde_json::Value::as_array)
                    .and_then(|a| Some([a.first()?.as_f64()?, a.get(1)?.as_f64()?]));
                vec![
                    r.get("name")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("?")
                        .to_owned(),
                    r.get("n_pairs")
                        .and_then(serde_json::Value::as_u64)
                        .map_or_else(|| "–".to_owned(), |n| n.to_string()),
                    num(fa
                        .and_then(|x| x.get("value"))
                        .and_then(serde_json::Value::as_f64)),
                    interval(ci),
                    verdict(
                        r.get("positive_rule")
                            .and_then(|p| p.get("passed"))
                            .and_then(serde_json::Value::as_bool),
                        "passed",
                        "failed",
                    ),
                ]
            })
            .collect();
        out.push(table(
            &["route", "pairs", "F", "F interval", "positive rule"],
            rows,
        ));
    }
    if let Some(src) = c.get("margin_source").and_then(serde_json::Value::as_str) {
        out.push(Block::Note(format!(
            "Equivalence margin source: {src}. The full control result is in report.json."
        )));
    }
    out
}

pub(super) fn blocks(report: &Report, s: &MemorySection) -> Vec<Block> {
    let a = &s.audit;
    let rel = &a.reliable_pairs;
    let title = if s.control.is_some() {
        format!(
            "Memory audit: {} — irrelevant-history / route control",
            s.name
        )
    } else {
        format!("Memory audit: {}", s.name)
    };
    let mut out = vec![
        heading(2, &s.id, title),
        Block::Para(format!(
            "{} eligible pairs ({} excluded), {} action seeds, plan {} ({}). Audit: {}.",
            a.n_pairs,
            a.n_excluded,
            a.seeds.len(),
            a.plan_hash,
            serde_json::to_value(a.plan_source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            s.audit_file.display(),
        )),
    ];
    if let Some(c) = &s.control {
        out.extend(control_blocks(&s.id, c));
    }
    if let Some(why) = &a.undefined_reason {
        out.push(Block::Note(format!("Metrics undefined: {why}.")));
    }
    out.push(heading(
        3,
        &format!("{}--metrics", s.id),
        "Faithfulness and value",
    ));
    out.push(table(
        &["metric", "value", "interval"],
        vec![
            estimate_row("signed faithfulness F", &a.faithfulness),
            estimate_row("U1", &a.u1),
            plain_row("correct-choice rate", a.correct_choice_rate),
            plain_row("wrong-choice rate", a.wrong_choice_rate),
            plain_row("ambiguity rate", a.ambiguity_rate),
            plain_row("sensitivity S (action units)", a.sensitivity),
            plain_row("action-change rate", a.action_change_rate),
            plain_row("branch-change rate", a.branch_change_rate),
            plain_row("absolute regret", a.regret),
            plain_row(
                "crossed-world disagreement rate",
                a.crossed_world.disagreement_rate,
            ),
        ],
    ));
    out.push(Block::Note(format!(
        "Positive rule ({}): {}.",
        a.positive_rule.rule,
        match a.positive_rule.passed {
            Some(true) => "passed",
            Some(false) => "failed",
            None => "undefined",
        }
    )));
    let v = &a.matched_world_value;
    out.push(table(
        &["V(m, w)", "world A", "world B"],
        vec![
            vec!["memory A".to_owned(), num(v.AA), num(v.AB)],
            vec!["memory B".to_owned(), num(v.BA), num(v.BB)],
        ],
    ));
    out.push(heading(3, &format!("{}--reliability", s.id), "Reliability"));
    let mut rows = vec![
        vec![
            "both memories, every seed".to_owned(),
            format!("{} of {}", rel.bidirectional, rel.n_pairs),
        ],
        vec![
            "memory A correct at every seed".to_owned(),
            rel.by_direction.A.to_string(),
        ],
        vec![
            "memory B correct at every seed".to_owned(),
            rel.by_direction.B.to_string(),
        ],
    ];
    rows.extend(rel.by_seed.iter().map(|c| {
        vec![
            format!("both correct at seed {}", c.seed),
            c.pairs.to_string(),
        ]
    }));
    out.push(table(&["reliable pairs", "count"], rows));
    if a.pairs.len() > crate::plots::MAX_PAIRS {
        out.push(Block::Note(format!(
            "The grid below shows the first {} of {} pairs.",
            crate::plots::MAX_PAIRS,
            a.pairs.len()
        )));
    }
    if let Some(i) = &s.interventions {
        out.push(Block::Note(side_file(
            "Native interventions (interventions.json)",
            i,
        )));
    }
    out.push(heading(3, &format!("{}--plots", s.id), "Plots"));
    out.extend(figures(report, &s.id));
    out
}
