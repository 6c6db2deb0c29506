//! Human-readable renderings of an [`AuditReport`]: a Markdown summary and a terminal table.

use crate::report::{AuditReport, ReferencePoints, RuleReport};
use std::fmt::Write;

/// `x` with `decimals` decimals; a value that rounds to zero is written `0.000`, never
/// `-0.000`, which readers take for a real (if tiny) negative result. Any finite `x`; NaN and
/// infinities print as Rust formats them.
pub fn fixed(x: f64, decimals: usize) -> String {
    unsign_zero(format!("{x:.decimals$}"), "")
}

/// `x` with an explicit sign and `decimals` decimals; a value that rounds to zero is
/// `+0.000`, not `-0.000`.
pub fn signed(x: f64, decimals: usize) -> String {
    unsign_zero(format!("{x:+.decimals$}"), "+")
}

fn unsign_zero(text: String, sign: &str) -> String {
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => format!("{sign}{rest}"),
        _ => text,
    }
}

/// A Markdown table cell: a `|` in a user's id would otherwise end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The name a rule is shown under in tables. The `random` rule is one seeded random selection,
/// while advantages are measured from the expectation R over all selections: labelled so, its
/// success (and small non-zero advantage) is not read as R. The JSON keeps the name `random`.
fn rule_label(name: &str) -> String {
    if name == "random" {
        "random (one draw)".to_owned()
    } else {
        name.to_owned()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| roboaudit_types::NO_VALUE.to_string(), |x| fixed(x, 3))
}

fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(
        || roboaudit_types::NO_VALUE.to_string(),
        |[lo, hi]| format!("[{}, {}]", fixed(lo, 3), fixed(hi, 3)),
    )
}

fn advantage(rule: &RuleReport) -> String {
    let flag = if rule.advantage_unstable && rule.advantage.is_some() {
        " (unstable)"
    } else {
        ""
    };
    format!("{}{flag}", num(rule.advantage))
}

fn top_selections(rule: &RuleReport, count: usize) -> String {
    let mut shares: Vec<(&String, &f64)> = rule.selection.iter().collect();
    shares.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
    let mut text: Vec<String> = shares
        .iter()
        .take(count)
        .map(|(id, s)| format!("{} {}", cell(id), fixed(**s, 2)))
        .collect();
    if shares.len() > count {
        text.push(format!("+{} more", shares.len() - count));
    }
    text.join(", ")
}

fn reference_row(out: &mut String, set: &str, r: &ReferencePoints) {
    let flag = if r.advantage_unstable {
        " (unstable)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "| {set} | {} | {} | {} | {} ({}) | {} | {}{flag} |",
        r.n_scenes,
        fixed(r.random, 3),
        fixed(r.oracle, 3),
        fixed(r.best_fixed, 3),
        cell(&r.best_fixed_experience),
        fixed(r.headroom, 3),
        num(r.best_fixed_advantage)
    );
}

/// Markdown summary (`summary.md`): the paper's two cheap reports first — the selection
/// distribution of every rule against the oracle's, and best-fixed success (seed 000 §VIII) —
/// then the rules table, matrix-level checks, interventions and conventions. Deterministic.
pub fn render_summary_markdown(report: &AuditReport) -> String {
    let mut out = String::new();
    let cfg = &report.config;
    let _ = writeln!(out, "# Retrieval audit\n");
    let _ = writeln!(
        out,
        "{} query scenes × {} experiences, {} executions. Seed {}, {} scene-bootstrap resamples, {} shuffle permutations, level {}.\n",
        report.n_scenes,
        report.n_experiences,
        report.n_executions,
        cfg.seed,
        cfg.resamples,
        cfg.permutations,
        cfg.level
    );
    if let Some(run) = &report.run {
        let _ = writeln!(
            out,
            "Task `{}`, reuse mechanism `{}`.\n",
            run.task, run.mechanism
        );
        if let Some(failures) = &run.appearance_caused_failures {
            let _ = writeln!(out, "{failures}.\n");
        }
    }
    let _ = writeln!(out, "## 1. Selection distribution\n");
    let _ = writeln!(
        out,
        "The oracle's top-pick share (tied maxima split fractionally) is {:.3}. A concentration ratio above 1 means the rule leans on one experience more than the oracle does.\n",
        report.reference.oracle_top_pick_share
    );
    let _ = writeln!(
        out,
        "| rule | top pick | top-pick share | concentration | effective number | most selected |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for r in &report.rules {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&rule_label(&r.name)),
            cell(&r.top_pick),
            fixed(r.top_pick_share, 3),
            fixed(r.concentration, 2),
            fixed(r.effective_number, 2),
            top_selections(r, 3)
        );
    }
    let _ = writeln!(out, "\n## 2. Best-fixed success\n");
    let _ = writeln!(
        out,
        "Best-fixed is chosen in hindsight and is not deployable; it shows how much a single experience already captures.\n"
    );
    let _ = writeln!(
        out,
        "| scenes | n | random (expected, R) | oracle | best fixed | headroom | best-fixed advantage |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let sets = &report.reference_by_set;
    reference_row(&mut out, "all", &sets.all);
    if let Some(r) = &sets.appearance {
        reference_row(&mut out, "appearance", r);
    }
    if let Some(r) = &sets.layout {
        reference_row(&mut out, "layout", r);
    }
    if let Some(r) = &sets.fresh {
        reference_row(&mut out, "fresh", r);
    }
    let _ = writeln!(out, "\n## 3. Rules\n");
    let _ = writeln!(
        out,
        "| rule | success | advantage | top-pick margin | gap [CI] | shuffle envelope | pooled AUROC | within-query AUROC (eligible) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for r in &report.rules {
        let sig = if r.gap_significant == Some(true) {
            " *"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} {}{sig} | [{}, {}] {} | {} | {} ({}) |",
            cell(&rule_label(&r.name)),
            fixed(r.success, 3),
            advantage(r),
            signed(r.top_pick_margin, 3),
            signed(r.gap, 3),
            interval(r.gap_ci),
            fixed(r.shuffle.envelope[0], 3),
            fixed(r.shuffle.envelope[1], 3),
            if r.shuffle.inside {
                "inside"
            } else {
                "outside"
            },
            num(r.pooled_auroc),
            num(r.within_query_auroc),
            r.within_query_eligible
                .map_or_else(|| roboaudit_types::NO_VALUE.to_string(), |e| e.to_string())
        );
    }
    let _ = writeln!(
        out,
        "\n`*`: the gap's scene-bootstrap interval excludes 0.\n"
    );
    let _ = writeln!(
        out,
        "| rule | gap, appearance scenes | gap, layout scenes | effective number | top-pick deletion: removed → advantage |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for r in &report.rules {
        let deletion = r.top_pick_deletion.as_ref().map_or_else(
            || roboaudit_types::NO_VALUE.to_string(),
            |d| format!("{} → {}", cell(&d.removed), num(d.rerun.advantage)),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {deletion} |",
            cell(&rule_label(&r.name)),
            num(r.gap_by_set.appearance),
            num(r.gap_by_set.layout),
            fixed(r.effective_number, 2)
        );
    }
    if report.rules.iter().any(|r| !r.power.is_empty()) {
        let _ = writeln!(out, "\n### Shuffle-test power\n");
        let _ = writeln!(
            out,
            "Planted rate: mean planted gap → share of replicates outside the envelope.\n"
        );
        for r in report.rules.iter().filter(|r| !r.power.is_empty()) {
            let points: Vec<String> = r
                .power
                .iter()
                .map(|p| {
                    format!(
                        "{}: {} → {}",
                        fixed(p.rate, 2),
                        signed(p.mean_planted_gap, 3),
                        fixed(p.detection_rate, 2)
                    )
                })
                .collect();
            let _ = writeln!(out, "- {}: {}", rule_label(&r.name), points.join("; "));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## 4. Transfer matrix\n");
    let vs = &report.variance_share;
    let _ = writeln!(out, "- scene-difficulty variance share: {}", num(vs.scene));
    let _ = writeln!(
        out,
        "- experience-quality variance share: {}",
        num(vs.experience)
    );
    let _ = writeln!(
        out,
        "- own-base Spearman ρ (n = {}): {}{}",
        report.own_base_n,
        num(report.own_base_spearman),
        report
            .own_base_spearman_reason
            .as_ref()
            .map_or(String::new(), |r| format!(" ({r})"))
    );
    if !report.library_interventions.is_empty() {
        let _ = writeln!(
            out,
            "\n## 5. Library interventions (label-informed diagnostics)\n"
        );
        for size in &report.library_interventions {
            let _ = writeln!(out, "### K = {}\n", size.size);
            if let Some(reason) = &size.reason {
                let _ = writeln!(out, "Skipped: {reason}.\n");
                continue;
            }
            let _ = writeln!(
                out,
                "| rule | nested advantage | equalized advantage | P(C > 1) over {} random subsets |",
                size.random_subsets
            );
            let _ = writeln!(out, "|---|---|---|---|");
            for s in &size.random_subset_rules {
                let find = |run: &Option<crate::LibraryRun>| {
                    num(run
                        .as_ref()
                        .and_then(|l| l.rules.iter().find(|r| r.name == s.name))
                        .and_then(|r| r.advantage))
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    cell(&rule_label(&s.name)),
                    find(&size.nested),
                    find(&size.quality_equalized),
                    fixed(s.fraction_concentration_above_1, 3)
                );
            }
            let _ = writeln!(out);
        }
    }
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(out, "\n## Skipped rules\n");
        for s in &report.skipped_rules {
            let _ = writeln!(out, "- {}: {}", s.name, s.reason);
        }
    }
    let _ = writeln!(out, "\n## Conventions\n");
    let _ = writeln!(out, "- {}.", report.tie_break);
    let _ = writeln!(
        out,
        "- Intervals: scene bootstrap (cluster = scene), {:?}.",
        cfg.ci_method
    );
    let _ = writeln!(out, "- Power analysis: {}.", report.power_method);
    out.push_str(GLOSSARY);
    out
}

/// How to read the numbers (SPEC.md §1), appended to every summary so the file stands alone.
const GLOSSARY: &str = "
## How to read these numbers (docs/methods.md §1)

- **P[e,s]**: success rate of experience e executed in query scene s (mean over seeds); the transfer matrix.
- **random / oracle / best-fixed**: mean success of a uniformly random pick, of the best experience per scene,
  and of the single experience best on average (chosen in hindsight, not deployable). **Headroom** = oracle − best-fixed.
- **advantage** = (success − random) / (oracle − random): 0 is random, 1 is the oracle; flagged unstable when
  oracle − random < 0.05. The `random` rule (`random (one draw)` in the tables, `random` in audit.json) is one
  seeded random selection, not the expectation R that advantages are measured from, so its success differs
  from R and its advantage is near, not at, 0.
- **top-pick share**: how often the rule's most-selected experience is chosen; **concentration** = that share divided
  by the oracle's top-pick share (oracle ties split fractionally). Above 1: the rule leans on one experience more than
  the oracle does. The oracle's own row breaks ties by library order, so its concentration can exceed 1.
- **top-pick margin** = q(top pick) − mean q: positive when the favourite is a better-than-average experience.
- **effective number** = exp(entropy of the selection distribution): how many experiences the rule really uses.
- **shuffle**: the rule's selections reassigned to scenes at random with its selection counts kept; the expected
  shuffle success is Σ f(e) q(e). **gap** = success − that expectation: how much the per-scene choice adds beyond
  which experiences are used how often. `*` marks a gap whose scene-bootstrap interval excludes 0.
- **pooled AUROC**: does similarity predict success over all executions? **within-query AUROC**: does it rank the
  candidates of one scene (mean over scenes that have both outcomes)? A rule can score well pooled and at chance within.
";

/// Fixed-width terminal table: rule, success, advantage, concentration, gap `[CI]`, pooled AUROC,
/// within-query AUROC. Deterministic.
pub fn render_compact_table(report: &AuditReport) -> String {
    let rows: Vec<[String; 7]> = report
        .rules
        .iter()
        .map(|r| {
            [
                rule_label(&r.name),
                fixed(r.success, 3),
                advantage(r),
                fixed(r.concentration, 2),
                format!("{} {}", signed(r.gap, 3), interval(r.gap_ci)),
                num(r.pooled_auroc),
                num(r.within_query_auroc),
            ]
        })
        .collect();
    let header = [
        "rule",
        "success",
        "advantage",
        "conc.",
        "gap [CI]",
        "pooled AUROC",
        "within AUROC",
    ]
    .map(str::to_string);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn values_that_round_to_zero_carry_no_minus_sign() {
        assert_eq!(fixed(-0.0, 3), "0.000");
        assert_eq!(fixed(-0.0004, 3), "0.000");
        assert_eq!(fixed(-0.0004, 2), "0.00");
        assert_eq!(fixed(-0.0006, 3), "-0.001");
        assert_eq!(signed(-0.0004, 3), "+0.000");
        assert_eq!(signed(-0.002, 3), "-0.002");
        assert_eq!(signed(0.002, 3), "+0.002");
        assert_eq!(num(Some(-0.0)), "0.000");
        assert_eq!(interval(Some([-0.0001, 0.5])), "[0.000, 0.500]");
    }

    /// An id holding `|` stays in its cell, the random rule is labelled as one draw in the
    /// tables, and a zero-valued gap is never printed `-0.000`.
    #[test]
    fn tables_escape_pipes_and_label_the_random_draw() {
        let p = vec![vec![1.0, 0.0, 1.0], vec![0.0, 1.0, 0.0]];
        let inputs = crate::synthetic::from_matrix(
            &p,
            2,
            &[roboaudit_types::Perturbation::Fresh],
            &[(
                "pixels".to_string(),
                vec![vec![1.0], vec![0.0]],
                vec![vec![1.0], vec![0.0], vec![1.0]],
            )],
        );
        let config = crate::AuditConfig {
            resamples: 100,
            permutations: 100,
            ..crate::AuditConfig::default()
        };
        let mut report = crate::run_audit(&inputs, &config.check().unwrap()).unwrap();
        report.rules[0].top_pick = "a|b".to_owned();
        report.rules[0].gap = -0.0;
        let md = render_summary_markdown(&report);
        assert!(md.contains("| a\\|b |"), "{md}");
        assert!(!md.contains("-0.000"), "{md}");
        let random = report.rules.iter().find(|r| r.name == "random").unwrap();
        assert!(
            md.contains(&format!("| random (one draw) | {:.3} |", random.success)),
            "{md}"
        );
        let table = render_compact_table(&report);
        assert!(table.contains("random (one draw)"), "{table}");
        assert!(!table.contains("-0.000"), "{table}");
    }
}
