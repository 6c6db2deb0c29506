//! Blocks of one retrieval audit (SPEC.md §1).

use super::{Block, figures, heading, interval, num, pct, table};
use crate::model::{Report, RetrievalSection};
use roboaudit_retrieval::{ReferencePoints, RuleFamily, RuleReport};

/// `F of N failed (P %), E experience(s); own base: F' of N' failed`, or `—` when no experience
/// had an appearance query on its own layout (docs/methods.md §1.8).
pub(super) fn appearance_cell(f: &roboaudit_types::AppearanceFailures) -> String {
    match f.rate() {
        None => roboaudit_types::NO_VALUE.to_owned(),
        Some(rate) => format!(
            "{} of {} failed ({:.1} %), {} experience(s); own base: {} of {} failed",
            f.failed,
            f.executions,
            100.0 * rate,
            f.experiences,
            f.own_base.1,
            f.own_base.0
        ),
    }
}

/// `+0.123` / `-0.123`; a value that rounds to zero prints `0.000` (no sign).
fn signed3(x: f64) -> String {
    let s = super::fixed3(x);
    if s == "0.000" || s.starts_with('-') {
        s
    } else {
        format!("+{s}")
    }
}

/// A rule's gap G, signed, with ` *` when its scene-bootstrap interval excludes 0.
pub(super) fn gap_text(rule: &RuleReport) -> String {
    let star = if rule.gap_significant == Some(true) {
        " *"
    } else {
        ""
    };
    format!("{}{star}", signed3(rule.gap))
}

/// Where the rule's success lies against its frequency-matched shuffle envelope.
pub(super) fn envelope_verdict(rule: &RuleReport) -> &'static str {
    if rule.shuffle.inside {
        "inside"
    } else {
        "outside"
    }
}

pub(super) fn unstable(flag: bool) -> &'static str {
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
        super::fixed3(r.random),
        super::fixed3(r.oracle),
        super::fixed3(r.best_fixed),
        super::fixed3(r.headroom),
        format!(
            "{}{}",
            num(r.best_fixed_advantage),
            unstable(r.advantage_unstable)
        ),
    ]
}

/// Selection concentration per rule (SPEC.md §1): `T`, `C = T / T_O` and the effective number.
/// `T_O` is one number per library, so it is stated once in the note, not on every row.
fn concentration_table(s: &RetrievalSection) -> Block {
    table(
        &[
            "rule",
            "most-selected experiences",
            "top-pick share T",
            "concentration C = T / T_O",
            "effective number",
        ],
        s.audit
            .rules
            .iter()
            .map(|rule| {
                let name = if rule.family == RuleFamily::Oracle {
                    "oracle (rule) †".to_owned()
                } else {
                    rule.name.clone()
                };
                vec![
                    name,
                    top_shares(rule),
                    pct(rule.top_pick_share),
                    format!("{:.2}", rule.concentration),
                    format!("{:.1}", rule.effective_number),
                ]
            })
            .collect(),
    )
}

/// Scenes on which at least two experiences tie at the best `P` (where the oracle rule's
/// lowest-index tie-break and `T_O`'s split ties disagree); `None` without a transfer matrix.
fn tied_scenes(s: &RetrievalSection) -> Option<(usize, usize)> {
    let m = s.transfer.as_ref()?;
    let n_scenes = m.scenes.len();
    let tied = (0..n_scenes)
        .filter(|&j| {
            let col: Vec<f64> = m
                .success
                .iter()
                .filter_map(|row| row.get(j).copied())
                .collect();
            let best = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            col.iter().filter(|&&v| v == best).count() > 1
        })
        .count();
    Some((tied, n_scenes))
}

fn concentration_note(s: &RetrievalSection) -> String {
    let a = &s.audit;
    let mut note = format!(
        "T_O, the oracle's top-pick share with tied maxima split equally (docs/methods.md §1), is {} on this library (reference.oracle_top_pick_share); C > 1 means a rule concentrates its picks more than the oracle does.",
        pct(a.reference.oracle_top_pick_share)
    );
    if let Some(o) = a.rules.iter().find(|r| r.family == RuleFamily::Oracle) {
        note.push_str(&format!(
            " † The oracle rule's own row is not T_O: as a rule it breaks ties at the lowest library index, so on tied scenes it keeps picking the same experience — top pick {} with {} (C = {:.2})",
            o.top_pick,
            pct(o.top_pick_share),
            o.concentration
        ));
        match tied_scenes(s) {
            Some((tied, n)) => note.push_str(&format!(
                "; {tied} of {n} scenes have tied best experiences. Its C ≠ 1 is this tie-break, not a finding about the oracle.",
            )),
            None => note.push_str(". Its C ≠ 1 is this tie-break, not a finding about the oracle."),
        }
    }
    note
}

pub(super) fn blocks(report: &Report, s: &RetrievalSection) -> Vec<Block> {
    let a = &s.audit;
    let r = &a.reference;
    let mut out = vec![
        heading(2, &s.id, format!("Retrieval audit: {}", s.name)),
        Block::Para(format!(
            "{} library experiences, {} query scenes, {} executions in the library × query matrix (docs/methods.md §1). Audit: {}; transfer matrix: {}.",
            a.n_experiences,
            a.n_scenes,
            a.n_executions,
            s.audit_file.display(),
            s.run_dir.as_ref().map_or_else(
                || s.transfer_note.clone().unwrap_or_else(|| "not found".to_owned()),
                |d| d.display().to_string()
            ),
        )),
        heading(3, &format!("{}--cheap", s.id), "Two reports every study can give"),
        Block::Note(
            "From “Beyond End-Task Success: How to Audit Visual Experience Retrieval in Robotics” (arXiv 2609.26567), §VIII: the selection distribution (compared with the oracle's, not a uniform one) and the success of the best single experience chosen in hindsight need no exhaustive execution.".to_owned(),
        ),
        table(
            &["best-fixed success", "best-fixed experience", "random", "oracle", "share of the random → oracle gap"],
            vec![vec![
                super::fixed3(r.best_fixed),
                r.best_fixed_experience.clone(),
                super::fixed3(r.random),
                super::fixed3(r.oracle),
                format!("{}{}", num(r.best_fixed_advantage), unstable(r.advantage_unstable)),
            ]],
        ),
        concentration_table(s),
        Block::Note(concentration_note(s)),
        heading(3, &format!("{}--reference", s.id), "Reference points"),
    ];
    let mut rows = vec![reference_row("all", &a.reference_by_set.all)];
    if let Some(p) = &a.reference_by_set.appearance {
        rows.push(reference_row("appearance-perturbed", p));
    }
    if let Some(p) = &a.reference_by_set.layout {
        rows.push(reference_row("layout-perturbed", p));
    }
    if let Some(p) = &a.reference_by_set.fresh {
        rows.push(reference_row("fresh", p));
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
        "Share of the variance of P explained by scene difficulty: {}; by experience quality: {}. Own-base Spearman ρ: {}.",
        num(a.variance_share.scene),
        num(a.variance_share.experience),
        match (a.own_base_spearman, &a.own_base_spearman_reason) {
            (Some(rho), _) => format!("{} over {} experiences", super::fixed3(rho), a.own_base_n),
            (None, Some(why)) => format!("not defined over {} experiences ({why})", a.own_base_n),
            (None, None) => format!("not defined over {} experiences", a.own_base_n),
        },
    )));
    if let Some(f) = s
        .mechanism
        .as_ref()
        .and_then(|m| m.appearance_caused_failures)
    {
        out.push(Block::Note(format!(
            "Appearance-caused failures (executions in appearance-perturbed queries on the experience's own base layout, docs/methods.md §1.8): {}.",
            appearance_cell(&f)
        )));
    }
    out.push(heading(3, &format!("{}--rules", s.id), "Selection rules"));
    out.push(table(
        &[
            "rule",
            "success",
            "advantage",
            "gap G",
            "gap 95 % CI",
            "shuffle envelope (SR inside/outside)",
        ],
        a.rules
            .iter()
            .map(|rule| {
                vec![
                    rule.name.clone(),
                    super::fixed3(rule.success),
                    format!(
                        "{}{}",
                        num(rule.advantage),
                        unstable(rule.advantage_unstable)
                    ),
                    gap_text(rule),
                    interval(rule.gap_ci),
                    format!(
                        "{} ({})",
                        interval(Some(rule.shuffle.envelope)),
                        envelope_verdict(rule)
                    ),
                ]
            })
            .collect(),
    ));
    // AUROC in its own table so the rules table fits the page width.
    out.push(table(
        &["rule", "pooled AUROC", "within-query AUROC"],
        a.rules
            .iter()
            .filter(|rule| rule.pooled_auroc.is_some() || rule.within_query_auroc.is_some())
            .map(|rule| {
                vec![
                    rule.name.clone(),
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
    out.push(heading(3, &format!("{}--plots", s.id), "Plots"));
    out.extend(figures(report, &s.id));
    out
}
