//! The demo's headlines as the CLI prints them after a run: one block per audit (retrieval
//! reference points and best deployable rule, SPEC §1; memory `F` and `U1`, SPEC §2; the
//! irrelevant-history control, docs/methods.md §2.5; FQE estimator metrics, SPEC §3).

use crate::{DemoReport, DemoTask};
use roboaudit_fqe::headline::FqeHeadline;
use roboaudit_memory::Estimate;
use roboaudit_report::demo::{ControlSummary, PolicySummary};
use roboaudit_retrieval::RuleFamily;
use std::fmt::Write as _;

/// The headline lines of `report` (each ending in a newline): the retrieval tasks, the memory
/// policies, the control and the FQE stage when the report holds them.
#[must_use]
pub fn render_headlines(report: &DemoReport) -> String {
    let mut out = String::from("retrieval audit (success rates over query scenes):\n");
    for t in &report.tasks {
        out.push_str(&task_lines(t));
    }
    out.push_str("counterfactual memory audit (put_back, pair-bootstrap 95% intervals):\n");
    for m in &report.memory {
        out.push_str(&policy_line(m));
    }
    if let Some(c) = &report.memory_control {
        out.push_str(&control_line(c));
    }
    if let Some(f) = &report.fqe {
        out.push_str(&fqe_lines(f));
    }
    out
}

/// The headline of one retrieval task: reference points, then the best deployable rule.
fn task_lines(t: &DemoTask) -> String {
    let a = &t.audit;
    let r = &a.reference;
    let mut out = format!(
        "  {:5} {} experiences × {} scenes: random (expected) {:.3}  oracle {:.3}  best-fixed {:.3} ({})  headroom {:.3}\n",
        t.display_name(),
        a.n_experiences,
        a.n_scenes,
        r.random,
        r.oracle,
        r.best_fixed,
        r.best_fixed_experience,
        r.headroom
    );
    if let Some(f) = &t.appearance_caused_failures {
        let _ = writeln!(out, "        {}", f);
    }
    // Rules that need hindsight (oracle, best-fixed) are references, not candidates, and random
    // is the baseline every rule is judged against: one lucky draw of it is not a rule to deploy.
    let candidates: Vec<_> = a
        .rules
        .iter()
        .filter(|x| {
            !matches!(
                x.family,
                RuleFamily::Oracle | RuleFamily::BestFixed | RuleFamily::Random
            )
        })
        .collect();
    // The first of the best in the audit's rule order; the others it ties with are counted.
    let deployable = candidates
        .iter()
        .copied()
        .reduce(|best, x| if x.success > best.success { x } else { best });
    if let Some(b) = deployable {
        let ties = candidates.iter().filter(|x| x.success == b.success).count() - 1;
        let _ = writeln!(
            out,
            "        best deployable rule {}{}: success {:.3}, advantage {}{}, top-pick share {:.2} (concentration {:.2}), shuffle gap {}{}",
            b.name,
            match ties {
                0 => String::new(),
                1 => " (tied with 1 other rule)".to_owned(),
                n => format!(" (tied with {n} other rules)"),
            },
            b.success,
            b.advantage.map_or_else(
                || "undefined".to_owned(),
                |v| roboaudit_retrieval::fixed(v, 2)
            ),
            // As the audit report: a ratio over oracle − random < 0.05 is noise-dominated.
            if b.advantage_unstable && b.advantage.is_some() {
                " (unstable)"
            } else {
                ""
            },
            b.top_pick_share,
            b.concentration,
            roboaudit_retrieval::signed(b.gap, 3),
            if b.gap_significant == Some(true) {
                " (significant)"
            } else {
                ""
            }
        );
    }
    out
}

/// `value [lo, hi]` with signs and 3 decimals, the value alone without an interval, or
/// `undefined`.
fn fmt_estimate(e: &Estimate) -> String {
    match (e.value, e.ci) {
        (Some(v), Some([lo, hi])) => format!("{v:+.3} [{lo:+.3}, {hi:+.3}]"),
        (Some(v), None) => format!("{v:+.3}"),
        _ => "undefined".to_owned(),
    }
}

/// The summary line of one memory policy.
fn policy_line(s: &PolicySummary) -> String {
    // The same count as the progress lines (pairs asked for), with the exclusions named.
    let pairs = if s.n_excluded > 0 {
        format!(
            "{} of {} pairs ({} excluded by the present check)",
            s.n_pairs,
            s.n_pairs + s.n_excluded,
            s.n_excluded
        )
    } else {
        format!("{} pairs", s.n_pairs)
    };
    format!(
        "  {:8} {pairs} × {} seeds: warranted choice {}  F {}  U1 {}  fully reliable {}/{}  F > 0: {}\n",
        s.policy,
        s.seeds,
        s.correct_choice_rate
            .map_or_else(|| "undefined".to_owned(), |v| format!("{v:.3}")),
        fmt_estimate(&s.faithfulness),
        fmt_estimate(&s.u1),
        s.reliable_pairs,
        s.n_pairs,
        match s.positive_rule {
            Some(true) => "yes",
            Some(false) => "no",
            None => "undefined",
        }
    )
}

/// The summary line of the irrelevant-history control.
fn control_line(c: &ControlSummary) -> String {
    let ci = |c: Option<[f64; 2]>| {
        c.map_or_else(
            || "undefined".to_owned(),
            |[lo, hi]| format!("[{lo:+.3}, {hi:+.3}]"),
        )
    };
    format!(
        "  route control (bank, {} pairs × 2 routes): nuisance {:+.3} {}, interaction {:+.3} {} (90%, margin ±{}): {}\n",
        c.pairs,
        c.nuisance.0,
        ci(c.nuisance.1),
        c.interaction.0,
        ci(c.interaction.1),
        c.margin,
        if c.passed { "passed" } else { "not passed" }
    )
}

/// The lines of the FQE stage: ground truth, one line per estimator, then the warnings.
fn fqe_lines(summary: &FqeHeadline) -> String {
    let opt = |v: Option<f64>| {
        v.map_or_else(
            || roboaudit_types::NO_VALUE.to_owned(),
            |x| format!("{x:.3}"),
        )
    };
    let mut out = format!(
        "fitted Q evaluation (push suite, {} dataset episodes, {} rollouts per policy and task):\n",
        summary.episodes, summary.rollouts
    );
    let truth: Vec<String> = summary
        .truth
        .iter()
        .map(|(p, v)| format!("{p} {v:.2}"))
        .collect();
    let _ = writeln!(out, "  ground-truth V^pi: {}", truth.join(", "));
    for e in &summary.estimators {
        // An estimator with a warning is not presented as a bare number.
        let flag = if roboaudit_fqe::notes::flags_estimator(&summary.notes, &e.estimator) {
            "  [unreliable: see warning]"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:7} Spearman(V^pi) {:>6}  regret@1 {:>5}  median ARE {:>6}  MMRV {:>5}{flag}",
            e.estimator,
            opt(e.spearman_v),
            opt(e.regret_at_1_v),
            opt(e.median_are),
            opt(e.mmrv_v)
        );
    }
    for n in &summary.notes {
        let _ = writeln!(out, "  warning: {n}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(value: Option<f64>, ci: Option<[f64; 2]>) -> Estimate {
        serde_json::from_value(serde_json::json!({
            "value": value, "ci": ci, "level": 0.95, "cluster": "pair", "resamples": 100
        }))
        .unwrap()
    }

    #[test]
    fn a_policy_line_names_its_exclusions_and_undefined_values() {
        let s = PolicySummary {
            policy: "bank".into(),
            dir: "memory/bank".into(),
            n_pairs: 10,
            n_excluded: 2,
            seeds: 3,
            correct_choice_rate: None,
            faithfulness: estimate(Some(0.25), Some([-0.1, 0.5])),
            u1: estimate(Some(-0.5), None),
            reliable_pairs: 4,
            positive_rule: Some(false),
        };
        assert_eq!(
            policy_line(&s),
            "  bank     10 of 12 pairs (2 excluded by the present check) × 3 seeds: warranted choice undefined  F +0.250 [-0.100, +0.500]  U1 -0.500  fully reliable 4/10  F > 0: no\n"
        );
        assert_eq!(fmt_estimate(&estimate(None, None)), "undefined");
    }

    #[test]
    fn a_control_line_says_undefined_for_a_missing_interval() {
        let c = ControlSummary {
            dir: "memory/control".into(),
            pairs: 8,
            nuisance: (0.0126, Some([-0.05, 0.075])),
            interaction: (-0.02, None),
            margin: 0.1,
            passed: false,
        };
        assert_eq!(
            control_line(&c),
            "  route control (bank, 8 pairs × 2 routes): nuisance +0.013 [-0.050, +0.075], interaction -0.020 undefined (90%, margin ±0.1): not passed\n"
        );
    }
}
