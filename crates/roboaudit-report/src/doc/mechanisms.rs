//! One task's retrieval audits under several reuse mechanisms, side by side (seed 000 §II–IV:
//! Replay, Policy and Policy+DR differ in camera dependence, so the same library and scenes give
//! different transfer matrices, concentration and gaps).

use super::retrieval::{envelope_verdict, gap_text, unstable};
use super::{Block, fixed3, heading, num, table};
use crate::model::{Report, RetrievalSection};
use roboaudit_retrieval::{ReferencePoints, RuleReport};
use roboaudit_types::NO_VALUE;

/// How seed 000 writes a mechanism: `Replay`, `Policy`, `Policy+DR` (a name it does not know is
/// printed as given).
fn mechanism_title(name: &str) -> String {
    match name {
        "replay" => "Replay".to_owned(),
        "policy" => "Policy".to_owned(),
        "policy-dr" => "Policy+DR".to_owned(),
        other => other.to_owned(),
    }
}

/// `R / O / BF` of one scene set, or `—` when the set is empty.
fn triple(p: Option<&ReferencePoints>) -> String {
    p.map_or_else(
        || NO_VALUE.to_owned(),
        |p| {
            format!(
                "{} / {} / {}",
                fixed3(p.random),
                fixed3(p.oracle),
                fixed3(p.best_fixed)
            )
        },
    )
}

/// A row: its label, then one cell per section.
fn row(
    label: &str,
    sections: &[&RetrievalSection],
    cell: impl Fn(&RetrievalSection) -> String,
) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(sections.iter().map(|s| cell(s)))
        .collect()
}

/// The rule of `s` named `name`.
fn rule_of<'a>(s: &'a RetrievalSection, name: &str) -> Option<&'a RuleReport> {
    s.audit.rules.iter().find(|x| x.name == name)
}

/// The reuse mechanism of a section (`""` for none).
fn mechanism(s: &RetrievalSection) -> &str {
    s.mechanism.as_ref().map_or("", |m| m.mechanism.as_str())
}

/// The side-by-side table of one task's `sections` (two or more mechanisms, report order).
fn comparison(task: &str, sections: &[&RetrievalSection]) -> Vec<Block> {
    let mut header = vec![task.to_owned()];
    // A second audit under one mechanism is `#2`, as its section's heading.
    header.extend(sections.iter().enumerate().map(|(i, s)| {
        let title = mechanism_title(mechanism(s));
        let same = |t: &&&RetrievalSection| mechanism(t) == mechanism(s);
        match sections[..=i].iter().filter(same).count() {
            1 => title,
            k => format!("{title} #{k}"),
        }
    }));
    let n = |p: Option<&ReferencePoints>| p.map_or(0, |p| p.n_scenes);
    let mut rows = vec![
        row("experiences × query scenes", sections, |s| {
            format!("{} × {}", s.audit.n_experiences, s.audit.n_scenes)
        }),
        row("query scenes: appearance / layout / fresh", sections, |s| {
            let b = &s.audit.reference_by_set;
            format!(
                "{} / {} / {}",
                n(b.appearance.as_ref()),
                n(b.layout.as_ref()),
                n(b.fresh.as_ref())
            )
        }),
        row("R / O / BF, all scenes", sections, |s| {
            triple(Some(&s.audit.reference_by_set.all))
        }),
        row("R / O / BF, appearance-perturbed", sections, |s| {
            triple(s.audit.reference_by_set.appearance.as_ref())
        }),
        row("R / O / BF, layout-perturbed", sections, |s| {
            triple(s.audit.reference_by_set.layout.as_ref())
        }),
        row("R / O / BF, fresh", sections, |s| {
            triple(s.audit.reference_by_set.fresh.as_ref())
        }),
        row("best-fixed advantage", sections, |s| {
            let r = &s.audit.reference;
            format!(
                "{}{}",
                num(r.best_fixed_advantage),
                unstable(r.advantage_unstable)
            )
        }),
        row("variance share: scene difficulty", sections, |s| {
            num(s.audit.variance_share.scene)
        }),
        row("variance share: experience quality", sections, |s| {
            num(s.audit.variance_share.experience)
        }),
        row("appearance-caused failures", sections, |s| {
            match s
                .mechanism
                .as_ref()
                .and_then(|m| m.appearance_caused_failures)
            {
                Some(f) => super::retrieval::appearance_cell(&f),
                None => NO_VALUE.to_owned(),
            }
        }),
    ];
    // Rules every section ran (compared, in the first section's order) and the others (a
    // representation only one mechanism writes, e.g. Policy+DR's `policy_encoder`): named, not
    // dropped silently.
    let everywhere = |name: &str| sections.iter().all(|s| rule_of(s, name).is_some());
    let mut alone: Vec<&str> = Vec::new();
    for r in sections.iter().flat_map(|s| &s.audit.rules) {
        if !everywhere(&r.name) && !alone.contains(&r.name.as_str()) {
            alone.push(&r.name);
        }
    }
    for rule in sections[0]
        .audit
        .rules
        .iter()
        .filter(|r| everywhere(&r.name))
    {
        let cell = |s: &RetrievalSection, f: fn(&RuleReport) -> String| {
            rule_of(s, &rule.name).map_or_else(|| NO_VALUE.to_owned(), f)
        };
        rows.push(row(&format!("gap G, {}", rule.name), sections, |s| {
            cell(s, |x| format!("{} ({})", gap_text(x), envelope_verdict(x)))
        }));
        if rule.within_query_auroc.is_some() || rule.pooled_auroc.is_some() {
            rows.push(row(
                &format!("AUROC pooled / within-query, {}", rule.name),
                sections,
                |s| {
                    cell(s, |x| {
                        format!("{} / {}", num(x.pooled_auroc), num(x.within_query_auroc))
                    })
                },
            ));
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut out = vec![
        heading(
            2,
            &format!("mechanisms-{task}"),
            format!("Reuse mechanisms side by side: {task}"),
        ),
        Block::Para(format!(
            "The retrieval audits of {task} under each reuse mechanism (seed 000 §II): Replay replays the stored path open loop and ignores the camera; Policy and Policy+DR run a behaviour-cloned image policy per experience, Policy+DR trained also under randomized appearance. Each column is one audit below. The demo draws every column's library and query scenes with the same seed; audits given separately are compared as given, so check that their collections share seed and sizes (the first rows show the sizes). Each mechanism accepts its own experiences (a learned policy that fails in its own base scene at the recording seed is rejected; accepted ones can still fail there at other seeds)."
        )),
        table(&header, rows),
    ];
    if !alone.is_empty() {
        out.push(Block::Note(format!(
            "Rules not run under every mechanism, so not compared here (see each audit's own tables): {}.",
            alone.join(", ")
        )));
    }
    out.push(Block::Note(
        "R / O / BF = random / oracle / best-fixed success. Gap G = SR − Σ f(e) q(e), * when its scene-bootstrap interval excludes 0; inside/outside the frequency-matched shuffle envelope. Appearance-caused failures: executions in appearance-perturbed queries on the experience's own base layout that failed (docs/methods.md §1.8), beside the same experiences' failures in their own base scenes at the query seeds (acceptance checks each learned policy once, at its recording seed).".to_owned(),
    ));
    out
}

/// One side-by-side table per task audited under two or more distinct mechanisms, tasks in report
/// order.
pub(super) fn blocks(report: &Report) -> Vec<Block> {
    let mut tasks: Vec<&str> = Vec::new();
    for s in &report.retrieval {
        if let Some(m) = &s.mechanism
            && !tasks.contains(&m.task.as_str())
        {
            tasks.push(&m.task);
        }
    }
    let mut out = Vec::new();
    for task in tasks {
        let sections: Vec<&RetrievalSection> = report
            .retrieval
            .iter()
            .filter(|s| s.mechanism.as_ref().is_some_and(|m| m.task == task))
            .collect();
        let mut mechanisms: Vec<&str> = sections.iter().map(|s| mechanism(s)).collect();
        mechanisms.sort_unstable();
        mechanisms.dedup();
        if mechanisms.len() >= 2 {
            out.extend(comparison(task, &sections));
        }
    }
    out
}
