//! Human-readable renderings of an [`AuditReport`]: a Markdown summary and a terminal table.

use crate::report::{AuditReport, ReferencePoints, RuleReport};
use std::fmt::Write;

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.3}"))
}

fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(
        || "n/a".to_string(),
        |[lo, hi]| format!("[{lo:.3}, {hi:.3}]"),
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
        .map(|(id, s)| format!("{id} {s:.2}"))
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
        "| {set} | {} | {:.3} | {:.3} | {:.3} ({}) | {:.3} | {}{flag} |",
        r.n_scenes,
        r.random,
        r.oracle,
        r.best_fixed,
        r.best_fixed_experience,
        r.headroom,
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
            "| {} | {} | {:.3} | {:.2} | {:.2} | {} |",
            r.name,
            r.top_pick,
            r.top_pick_share,
            r.concentration,
            r.effective_number,
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
        "| scenes | n | random | oracle | best fixed | headroom | best-fixed advantage |"
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
            "| {} | {:.3} | {} | {:+.3} | {:+.3} {}{sig} | [{:.3}, {:.3}] {} | {} | {} ({}) |",
            r.name,
            r.success,
            advantage(r),
            r.top_pick_margin,
            r.gap,
            interval(r.gap_ci),
            r.shuffle.envelope[0],
            r.shuffle.envelope[1],
            if r.shuffle.inside {
                "inside"
            } else {
                "outside"
            },
            num(r.pooled_auroc),
            num(r.within_query_auroc),
            r.within_query_eligible
                .map_or_else(|| "n/a".to_string(), |e| e.to_string())
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
            || "n/a".to_string(),
            |d| format!("{} → {}", d.removed, num(d.rerun.advantage)),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2} | {deletion} |",
            r.name,
            num(r.gap_by_set.appearance),
            num(r.gap_by_set.layout),
            r.effective_number
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
                        "{:.2}: {:+.3} → {:.2}",
                        p.rate, p.mean_planted_gap, p.detection_rate
                    )
                })
                .collect();
            let _ = writeln!(out, "- {}: {}", r.name, points.join("; "));
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
                    "| {} | {} | {} | {:.3} |",
                    s.name,
                    find(&size.nested),
                    find(&size.quality_equalized),
                    s.fraction_concentration_above_1
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
## How to read these numbers (SPEC §1)

- **P[e,s]**: success rate of experience e executed in query scene s (mean over seeds); the transfer matrix.
- **random / oracle / best-fixed**: mean success of a uniformly random pick, of the best experience per scene,
  and of the single experience best on average (chosen in hindsight, not deployable). **Headroom** = oracle − best-fixed.
- **advantage** = (success − random) / (oracle − random): 0 is random, 1 is the oracle; flagged unstable when
  oracle − random < 0.05. The `random` rule is one seeded draw, so its advantage is near, not at, 0.
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
                r.name.clone(),
                format!("{:.3}", r.success),
                advantage(r),
                format!("{:.2}", r.concentration),
                format!("{:+.3} {}", r.gap, interval(r.gap_ci)),
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
