//! Blocks of one counterfactual memory audit (SPEC.md §2).

use super::{Block, figures, heading, interval, num, table};
use crate::model::{MemorySection, Report};
use roboaudit_memory::interventions::{InterventionStudy, RateInterval};
use roboaudit_memory::natural::{Contrast, NaturalStudy, Verdict};
use roboaudit_memory::{Equivalence, Estimate, RouteControl};

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

/// A rate with its interval, `0.833 [0.583, 1.000]`, or `–` where it does not apply.
fn rate(r: Option<&RateInterval>) -> String {
    r.map_or_else(
        || roboaudit_types::NO_VALUE.to_owned(),
        |r| format!("{} {}", num(Some(r.estimate)), interval(r.ci)),
    )
}

/// The native intervention study (`interventions.json`, docs/methods.md §2): per condition the
/// continuations, the official success rate and the committed-target rates with their
/// layout-stratified bootstrap intervals.
fn intervention_blocks(id: &str, study: &InterventionStudy) -> Vec<Block> {
    let level = study.config.bootstrap.level * 100.0;
    let mut text = format!(
        "History {} study on {}: {} recipients continued closed loop from the lift event ({} skipped before any query); intervals are {level:.0} % layout-stratified bootstraps over recipients.",
        study.study,
        study.config.cohort.task.name(),
        study.config.cohort.episodes.saturating_sub(study.skipped),
        study.skipped
    );
    if let Some(ok) = study.own_reproduces_native {
        text.push_str(&format!(
            " Own-history reconstruction reproduces the native memory: {}.",
            if ok { "yes" } else { "no" }
        ));
    }
    let rows = study
        .summary
        .iter()
        .map(|c| {
            let iv = study.intervals.iter().find(|i| i.condition == c.condition);
            vec![
                c.condition.clone(),
                c.n.to_string(),
                rate(iv.and_then(|i| i.success.as_ref())),
                rate(iv.and_then(|i| i.committed_own.as_ref())),
                rate(iv.and_then(|i| i.committed_donor.as_ref())),
            ]
        })
        .collect();
    vec![
        heading(3, &format!("{id}--interventions"), "Native interventions"),
        Block::Para(text),
        table(
            &[
                "condition",
                "continuations",
                "success",
                "committed own",
                "committed donor",
            ],
            rows,
        ),
        Block::Note("Every continuation is in report.json (interventions.continuations).".into()),
    ]
}

/// One contrast of the natural study: its groups, difference, interval and verdict.
fn contrast_row(name: &str, c: &Contrast, warranted: String, other: String) -> Vec<String> {
    let verdict = match c.verdict {
        Some(Verdict::Unresolved) => "unresolved".to_owned(),
        Some(Verdict::AboveZero) => "above zero".to_owned(),
        Some(Verdict::BelowZero) => "below zero".to_owned(),
        None => c
            .undefined_reason
            .clone()
            .unwrap_or_else(|| "undefined".to_owned()),
    };
    vec![
        name.to_owned(),
        warranted,
        other,
        num(c.estimate),
        format!("{} ({:.0} %)", interval(c.ci), c.level * 100.0),
        verdict,
    ]
}

/// The natural-occurrence study (`natural.json`, docs/methods.md §2.10): the decision fraction
/// and the two observational contrasts, labelled as a cohort apart from the constructed pairs.
fn natural_blocks(id: &str, study: &NaturalStudy) -> Vec<Block> {
    let a = &study.analysis;
    let (r, s) = (&a.remaining_steps, &a.success_association);
    let mean = |c: &Contrast, w: bool| {
        let g = if w { c.warranted } else { c.other };
        if g.n == 0 {
            "– (n = 0)".to_owned()
        } else {
            format!("{:.1} (n = {})", g.total as f64 / g.n as f64, g.n)
        }
    };
    let rows = vec![
        contrast_row(
            "remaining steps (primary)",
            r,
            mean(r, true),
            mean(r, false),
        ),
        contrast_row(
            "final success (secondary, non-causal)",
            s,
            format!("{}/{}", s.warranted.total, s.warranted.n),
            format!("{}/{}", s.other.total, s.other.n),
        ),
    ];
    vec![
        heading(3, &format!("{id}--natural"), "Natural occurrence"),
        Block::Para(format!(
            "Policy {} on {}: {}/{} untreated native episodes contained the audited decision type (registered, outcome-blind rule). {}. Intervals are episode bootstraps within layout strata over the decision episodes.",
            study.policy,
            study.config.cohort.task.name(),
            a.decision.count,
            a.decision.n,
            roboaudit_memory::natural::COHORT_NOTE
        )),
        table(
            &[
                "contrast (first direction warranted − another tray)",
                "warranted first",
                "another tray first",
                "difference",
                "interval",
                "verdict",
            ],
            rows,
        ),
        Block::Note(
            "Every natural episode and the decision rule are in report.json (natural).".into(),
        ),
    ]
}

fn verdict(v: Option<bool>, yes: &str, no: &str) -> String {
    match v {
        Some(true) => yes.to_owned(),
        Some(false) => no.to_owned(),
        None => roboaudit_types::NO_VALUE.to_owned(),
    }
}

/// One equivalence test of `control.json` (`nuisance` or `interaction`): estimate, interval,
/// margin and verdict.
fn equivalence_row(name: &str, e: &Equivalence) -> Vec<String> {
    vec![
        name.to_owned(),
        num(Some(e.estimate)),
        format!("{} ({:.0} %)", interval(e.ci), e.level * 100.0),
        format!("± {}", super::fixed3(e.margin)),
        verdict(
            Some(e.equivalent),
            "equivalent (passed)",
            "not equivalent (failed)",
        ),
    ]
}

/// The route control's own result (`control.json`, docs/methods.md §2 controls) as a table:
/// the nuisance and interaction equivalence tests and the per-route semantic checks.
fn control_blocks(id: &str, c: &RouteControl) -> Vec<Block> {
    let mut out = vec![
        heading(3, &format!("{id}--control"), "Control result"),
        Block::Para(format!(
            "This audit is the irrelevant-history / route control: the history's irrelevant part (the route) is varied and must not change the action. Control {}.",
            verdict(Some(c.passed), "passed", "failed")
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
                equivalence_row("nuisance (route effect)", &c.nuisance),
                equivalence_row("interaction (route × memory)", &c.interaction),
            ],
        ),
    ];
    let rows = c
        .semantic
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.n_pairs.to_string(),
                num(r.faithfulness.value),
                interval(r.faithfulness.ci),
                verdict(r.positive_rule.passed, "passed", "failed"),
            ]
        })
        .collect();
    out.push(table(
        &["route", "pairs", "F", "F interval", "positive rule"],
        rows,
    ));
    out.push(Block::Note(format!(
        "Equivalence margin source: {}. The full control result is in report.json.",
        c.margin_source
    )));
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
        out.extend(intervention_blocks(&s.id, i));
    }
    if let Some(n) = &s.natural {
        out.extend(natural_blocks(&s.id, n));
    }
    out.push(heading(3, &format!("{}--plots", s.id), "Plots"));
    out.extend(figures(report, &s.id));
    out
}
