//! Blocks of one retrieval audit (SPEC.md §1).

use super::{Block, figures, heading, interval, num, pct, table};
use crate::model::{Report, RetrievalSection};
use roboaudit_retrieval::{ReferencePoints, RuleReport};

fn unstable(flag: bool) -> &'static str {
    if flag { " (unstable)" } else { "" }
}

/// The three largest shares of a selection distribution, e.g. `exp003 60 %, exp001 25 %`.
fn top_shares(r: &RuleReport) -> String {
    let mut shares: Vec<(&String, f64)> = r.selection.iter().map(|(k, v)| (k, *v)).collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut out: Vec<String> = shares
        .iter()
        .take(3)
        .map(|(id, v)| format!("{id} {:.0} %", v * 100.0))
        .collect();
    if shares.len() > 3 {
        out.push(format!("+{} more", shares.len() - 3));
    }
    out.join(", ")
}

fn reference_row(set: &str, r: &ReferencePoints) -> Vec<String> {
    vec![
        set.to_owned(),
        r.n_scenes.to_string(),
        format!("{:.3}", r.random),
        format!("{:.3}", r.oracle),
        format!("{:.3}", r.best_fixed),
        format!("{:.3}", r.headroom),
        format!(
            "{}{}",
            num(r.best_fixed_advantage),
            unstable(r.advantage_unstable)
        ),
    ]
}

pub(super) fn blocks(report: &Report, s: &RetrievalSection) -> Vec<Block> {
    let a = &s.audit;
    let r = &a.reference;
    let mut out = vec![
        heading(2, &s.id, format!("Retrieval audit: {}", s.name)),
        Block::Para(format!(
            "{} library experiences, {} query scenes, {} executions in the library × query matrix (SPEC.md §1). Audit: {}; transfer matrix: {}.",
            a.n_experiences,
            a.n_scenes,
            a.n_executions,
            s.audit_file.display(),
            s.run_dir.as_ref().map_or_else(
                || s.transfer_note.clone().unwrap_or_else(|| "not found".to_owned()),
                |d| d.display().to_string()
            ),
        )),
        heading(3, &format!("{}-cheap", s.id), "Two reports every study can give"),
        Block::Note(
            "Seed 000 §VIII: the selection distribution (compared with the oracle's, not a uniform one) and the success of the best single experience chosen in hindsight need no exhaustive execution.".to_owned(),
        ),
        table(
            &["best-fixed success", "best-fixed experience", "random", "oracle", "share of the random → oracle gap"],
            vec![vec![
                format!("{:.3}", r.best_fixed),
                r.best_fixed_experience.clone(),
                format!("{:.3}", r.random),
                format!("{:.3}", r.oracle),
                format!("{}{}", num(r.best_fixed_advantage), unstable(r.advantage_unstable)),
            ]],
        ),
        table(
            &["rule", "most-selected experiences", "top-pick share", "oracle's top share", "concentration C", "effective number"],
            a.rules
                .iter()
                .map(|rule| {
                    vec![
                        rule.name.clone(),
                        top_shares(rule),
                        pct(rule.top_pick_share),
                        pct(rule.oracle_top_pick_share),
                        format!("{:.2}", rule.concentration),
                        format!("{:.1}", rule.effective_number),
                    ]
                })
                .collect(),
        ),
        heading(3, &format!("{}-reference", s.id), "Reference points"),
    ];
    let mut rows = vec![reference_row("all", &a.reference_by_set.all)];
    if let Some(p) = &a.reference_by_set.appearance {
        rows.push(reference_row("appearance-perturbed", p));
    }
    if let Some(p) = &a.reference_by_set.layout {
        rows.push(reference_row("layout-perturbed", p));
    }
    out.push(table(
        &[
            "scenes",
            "n",
            "random R",
            "oracle O",
            "best-fixed BF",
            "headroom O − BF",
            "best-fixed advantage",
        ],
        rows,
    ));
    out.push(Block::Note(format!(
        "Share of the variance of P explained by scene difficulty: {}; by experience quality: {}. Own-base Spearman ρ: {} over {} experiences.",
        num(a.variance_share.scene),
        num(a.variance_share.experience),
        num(a.own_base_spearman),
        a.own_base_n,
    )));
    out.push(heading(3, &format!("{}-rules", s.id), "Selection rules"));
    out.push(table(
        &[
            "rule",
            "success",
            "advantage",
            "gap G",
            "gap 95 % CI",
            "shuffle envelope",
            "pooled AUROC",
            "within-query AUROC",
        ],
        a.rules
            .iter()
            .map(|rule| {
                vec![
                    rule.name.clone(),
                    format!("{:.3}", rule.success),
                    format!(
                        "{}{}",
                        num(rule.advantage),
                        unstable(rule.advantage_unstable)
                    ),
                    format!(
                        "{:+.3}{}",
                        rule.gap,
                        if rule.gap_significant == Some(true) {
                            " *"
                        } else {
                            ""
                        }
                    ),
                    interval(rule.gap_ci),
                    format!(
                        "{} ({})",
                        interval(Some(rule.shuffle.envelope)),
                        if rule.shuffle.inside {
                            "inside"
                        } else {
                            "outside"
                        }
                    ),
                    num(rule.pooled_auroc),
                    match rule.within_query_eligible {
                        Some(n) if rule.within_query_auroc.is_some() => {
                            format!("{} (n = {n})", num(rule.within_query_auroc))
                        }
                        _ => num(rule.within_query_auroc),
                    },
                ]
            })
            .collect(),
    ));
    if !a.skipped_rules.is_empty() {
        out.push(Block::Note(format!(
            "Rules that did not run: {}.",
            a.skipped_rules
                .iter()
                .map(|k| format!("{} ({})", k.name, k.reason))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    out.push(Block::Note(
        "Advantage = (success − R)/(O − R); gap G = success − Σ f(e) q(e), * when its scene-bootstrap interval excludes 0; unstable when O − R < 0.05.".to_owned(),
    ));
    out.push(heading(3, &format!("{}-plots", s.id), "Plots"));
    out.extend(figures(report, &s.id));
    out
}
