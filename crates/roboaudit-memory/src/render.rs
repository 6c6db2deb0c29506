//! Human-readable renderings of a [`MemoryAudit`]: a Markdown summary and a terminal table.

use std::fmt::Write;

use crate::report::{Estimate, MemoryAudit, SubsetSummary};
use crate::{PlanSource, RouteControl};

fn num(v: Option<f64>) -> String {
    v.map_or_else(
        || roboaudit_types::NO_VALUE.to_owned(),
        |x| format!("{x:.3}"),
    )
}

fn ci(e: &Estimate) -> String {
    e.ci.map_or_else(
        || roboaudit_types::NO_VALUE.to_owned(),
        |[lo, hi]| format!("[{lo:.3}, {hi:.3}]"),
    )
}

fn passed(p: Option<bool>) -> &'static str {
    match p {
        Some(true) => "passed",
        Some(false) => "not passed",
        None => "undefined",
    }
}

fn subset_table(out: &mut String, title: &str, rows: &[SubsetSummary]) {
    let _ = writeln!(
        out,
        "| {title} | pairs | correct choice | F | CI | U1 | positive rule |\n|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {} | {} | {:.3} | {} |",
            r.name,
            r.n_pairs,
            r.correct_choice_rate,
            num(r.faithfulness.value),
            ci(&r.faithfulness),
            r.u1,
            passed(r.positive_rule.passed)
        );
    }
    out.push('\n');
}

/// Markdown summary (`summary.md`): plan and eligibility, the four audit levels (sensitivity,
/// warranted choice, matched-world value, reliability), inference and breakdowns. Deterministic.
pub fn render_summary_markdown(a: &MemoryAudit) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Counterfactual memory audit\n");
    let source = match a.plan_source {
        PlanSource::File => "plan file",
        PlanSource::Defaults => "defaults of docs/methods.md §2 (no plan file)",
    };
    let _ = writeln!(
        out,
        "Plan `{}` ({source}): δ = {}, seeds {:?}, {} pair-bootstrap resamples at level {}, seed {}.\n",
        a.plan_hash,
        a.plan.delta,
        a.seeds,
        a.plan.bootstrap.resamples,
        a.plan.bootstrap.level,
        a.plan.bootstrap.seed
    );
    for note in &a.notes {
        let _ = writeln!(out, "> {note}\n");
    }
    let _ = writeln!(
        out,
        "{} eligible pairs, {} excluded (never analysed or replaced), {} records.\n",
        a.n_pairs, a.n_excluded, a.n_records
    );
    if let Some(reason) = &a.undefined_reason {
        let _ = writeln!(out, "**Metrics undefined:** {reason}.\n");
    }
    let _ = writeln!(out, "## Audit levels\n\n| metric | value |\n|---|---|");
    let rows = [
        ("sensitivity S (L2, executed chunk)", num(a.sensitivity)),
        ("action-change rate", num(a.action_change_rate)),
        ("branch-change rate", num(a.branch_change_rate)),
        ("correct-choice rate", num(a.correct_choice_rate)),
        ("wrong-choice rate", num(a.wrong_choice_rate)),
        ("ambiguity rate", num(a.ambiguity_rate)),
        (
            "signed faithfulness F",
            format!("{} {}", num(a.faithfulness.value), ci(&a.faithfulness)),
        ),
        ("U1", format!("{} {}", num(a.u1.value), ci(&a.u1))),
        ("absolute regret", num(a.regret)),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "| {name} | {value} |");
    }
    let v = &a.matched_world_value;
    let _ = writeln!(
        out,
        "\nMatched-world value V(memory, world): V(A,A) {}, V(A,B) {}, V(B,A) {}, V(B,B) {}.\n",
        num(v.AA),
        num(v.AB),
        num(v.BA),
        num(v.BB)
    );
    let r = &a.reliable_pairs;
    let by_seed: Vec<String> = r
        .by_seed
        .iter()
        .map(|s| format!("seed {}: {}", s.seed, s.pairs))
        .collect();
    let _ = writeln!(
        out,
        "## Reliability\n\n{}/{} pairs fully reliable (both directions, every seed); direction A {}, direction B {}; {}.\n",
        r.bidirectional,
        r.n_pairs,
        r.by_direction.A,
        r.by_direction.B,
        by_seed.join(", ")
    );
    let _ = writeln!(
        out,
        "## Inference\n\nCluster = pair. Positive rule ({}): **{}**. Crossed-world disagreements: {}/{}.\n",
        a.positive_rule.rule,
        passed(a.positive_rule.passed),
        a.crossed_world.disagreements,
        a.crossed_world.n_actions
    );
    if let Some(s) = &a.stratified {
        let _ = writeln!(
            out,
            "Layout-stratified intervals: F {}, U1 {}.\n",
            ci(&s.faithfulness),
            ci(&s.u1)
        );
        subset_table(&mut out, "stratum", &s.strata);
    }
    if !a.by_route.is_empty() {
        subset_table(&mut out, "route", &a.by_route);
    }
    out
}

/// A compact plain-text table for the terminal.
pub fn render_compact_table(a: &MemoryAudit) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "memory audit: {} pairs ({} excluded), plan {} ({})",
        a.n_pairs,
        a.n_excluded,
        a.plan_hash.get(..19).unwrap_or(&a.plan_hash),
        match a.plan_source {
            PlanSource::File => "file",
            PlanSource::Defaults => "defaults",
        }
    );
    let rows = [
        ("S", num(a.sensitivity)),
        ("action change", num(a.action_change_rate)),
        ("branch change", num(a.branch_change_rate)),
        ("correct choice", num(a.correct_choice_rate)),
        ("ambiguity", num(a.ambiguity_rate)),
        (
            "F",
            format!("{} {}", num(a.faithfulness.value), ci(&a.faithfulness)),
        ),
        ("U1", format!("{} {}", num(a.u1.value), ci(&a.u1))),
        ("regret", num(a.regret)),
        (
            "reliable pairs",
            format!(
                "{}/{}",
                a.reliable_pairs.bidirectional, a.reliable_pairs.n_pairs
            ),
        ),
        ("positive rule", passed(a.positive_rule.passed).to_owned()),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<15} {value}");
    }
    out
}

/// The irrelevant-history control for the terminal, each line ending in a newline: per route,
/// its pairs, F with its interval and the positive rule (`passed`, `failed` or `undefined`);
/// then the nuisance and interaction effects with their interval, level, margin and margin
/// source, and whether each is equivalent to zero; then `control passed` or `control failed`.
/// Undefined values read `undefined`.
pub fn render_control_text(c: &RouteControl) -> String {
    let mut out = String::new();
    let interval = |ci: Option<[f64; 2]>| {
        ci.map_or("undefined".to_owned(), |[lo, hi]| {
            format!("[{lo:.3}, {hi:.3}]")
        })
    };
    for s in &c.semantic {
        let _ = writeln!(
            out,
            "route {:<6} {} pairs  F {} {}  positive rule {}",
            s.name,
            s.n_pairs,
            s.faithfulness
                .value
                .map_or("undefined".to_owned(), |v| format!("{v:.3}")),
            interval(s.faithfulness.ci),
            match s.positive_rule.passed {
                Some(true) => "passed",
                Some(false) => "failed",
                None => "undefined",
            }
        );
    }
    for (name, e) in [("nuisance", &c.nuisance), ("interaction", &c.interaction)] {
        let _ = writeln!(
            out,
            "{name:<12} {:.3} {} ({:.0}%) margin ±{} ({}): {}",
            e.estimate,
            interval(e.ci),
            e.level * 100.0,
            e.margin,
            c.margin_source,
            if e.equivalent {
                "equivalent to zero"
            } else {
                "not shown equivalent"
            }
        );
    }
    let _ = writeln!(
        out,
        "control {}",
        if c.passed { "passed" } else { "failed" }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Equivalence;
    use crate::report::PositiveRule;

    fn equivalence(estimate: f64, ci: Option<[f64; 2]>, equivalent: bool) -> Equivalence {
        Equivalence {
            estimate,
            ci,
            level: 0.9,
            margin: 0.1,
            equivalent,
            n_pairs: 4,
            cluster: "pair".into(),
        }
    }

    #[test]
    fn the_control_text_names_routes_effects_and_verdict() {
        let route = |name: &str, value, passed| SubsetSummary {
            name: name.into(),
            n_pairs: 4,
            correct_choice_rate: 1.0,
            faithfulness: Estimate {
                value,
                ci: value.map(|v| [v - 0.25, v]),
                level: 0.95,
                cluster: "pair".into(),
                resamples: 100,
                reason: None,
            },
            u1: 0.0,
            positive_rule: PositiveRule {
                rule: "r".into(),
                passed,
                reason: None,
            },
        };
        let c = RouteControl {
            schema: crate::CONTROL_SCHEMA.into(),
            routes: ["left".into(), "right".into()],
            semantic: vec![
                route("left", Some(1.0), Some(true)),
                route("right", None, None),
            ],
            semantic_passed: false,
            nuisance: equivalence(0.0, Some([-0.05, 0.05]), true),
            interaction: equivalence(0.02, None, false),
            margin_source: "default".into(),
            passed: false,
        };
        assert_eq!(
            render_control_text(&c),
            "route left   4 pairs  F 1.000 [0.750, 1.000]  positive rule passed\n\
             route right  4 pairs  F undefined undefined  positive rule undefined\n\
             nuisance     0.000 [-0.050, 0.050] (90%) margin ±0.1 (default): equivalent to zero\n\
             interaction  0.020 undefined (90%) margin ±0.1 (default): not shown equivalent\n\
             control failed\n"
        );
    }
}
