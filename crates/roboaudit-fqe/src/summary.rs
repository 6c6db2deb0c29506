//! Human-readable renderings of an [`FqeReport`]: `summary.md` and a compact stdout table.

use std::fmt::Write;

use crate::number::compact;
use crate::report::FqeReport;
use roboaudit_types::NO_VALUE;

fn f(v: Option<f64>) -> String {
    v.map_or_else(|| NO_VALUE.to_owned(), |x| format!("{x:.3}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| NO_VALUE.to_owned(), |x| format!("{:.1}%", 100.0 * x))
}

/// Width of the task column of [`render_table`]; longer task texts end in "…".
pub const TASK_WIDTH: usize = 40;

/// `text` cut to at most `width` characters, the last one "…" when it was cut.
pub fn ellipsize(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A compact table: one row per (policy, task) with each estimator, the truth and the coverage
/// flag, then one line of suite metrics per estimator.
pub fn render_table(r: &FqeReport) -> String {
    let mut s = String::new();
    // The spread column only when there is a spread: one seed has none.
    let neural_head = if r.seeds.len() > 1 {
        "neural±sd"
    } else {
        "neural"
    };
    let _ = writeln!(
        s,
        "{:<16} {:<TASK_WIDTH$} {:>14} {:>7} {:>7} {:>7} {:>6} {:>5}",
        "policy", "task", neural_head, "linear", "naive", "V^π", "SR", "cover"
    );
    for p in &r.policies {
        for c in &p.tasks {
            let neural = c.neural.as_ref().map_or_else(
                || NO_VALUE.to_owned(),
                |n| match n.std {
                    Some(sd) => format!("{:.3}±{sd:.3}", n.mean),
                    None => format!("{:.3}", n.mean),
                },
            );
            let _ = writeln!(
                s,
                "{:<16} {:<TASK_WIDTH$} {:>14} {:>7} {:>7} {:>7} {:>6} {:>5}",
                ellipsize(&p.policy, 16),
                ellipsize(&c.task, TASK_WIDTH),
                neural,
                f(c.linear),
                f(c.naive),
                f(c.truth.as_ref().map(|t| t.v_pi)),
                f(c.truth.as_ref().map(|t| t.success_rate)),
                if c.coverage.out_of_support {
                    "OUT"
                } else {
                    "ok"
                }
            );
        }
    }
    for m in &r.metrics {
        let _ = writeln!(
            s,
            "{:<7} suite: median ARE {}  Spearman V^π {}  SR {}  Pearson V^π {}  regret@1 {}{}  MMRV {}",
            m.estimator,
            pct(m.suite.median_are),
            f(m.suite.spearman_v),
            f(m.suite.spearman_sr),
            f(m.suite.pearson_v),
            f(m.suite.regret_at_1_v),
            if m.suite.top_ties > 1 {
                format!(" ({}-way tie)", m.suite.top_ties)
            } else {
                String::new()
            },
            f(m.suite.mmrv_v)
        );
        if let Some(ins) = &m.suite_in_support {
            let x = &ins.metrics;
            let _ = writeln!(
                s,
                "{:<7} in support ({} policies, without {}): median ARE {}  Spearman V^π {}  SR {}  Pearson V^π {}  regret@1 {}",
                "",
                x.policies,
                ins.excluded.join(", "),
                pct(x.median_are),
                f(x.spearman_v),
                f(x.spearman_sr),
                f(x.pearson_v),
                f(x.regret_at_1_v)
            );
        }
    }
    s
}

/// The episode-bootstrap intervals section of `summary.md` (nothing without refits).
fn render_intervals(r: &FqeReport, s: &mut String) {
    if r.policies.iter().all(|p| p.neural_interval.is_none()) {
        return;
    }
    let _ = writeln!(
        s,
        "## Neural FQE: 95% episode-bootstrap intervals\n\n| policy | task mean | {} |\n|---|---|{}",
        r.tasks.join(" | "),
        "---|".repeat(r.tasks.len())
    );
    let show = |i: Option<&crate::report::Interval>| {
        i.map_or_else(
            || NO_VALUE.to_owned(),
            |i| format!("[{:.3}, {:.3}]", i.lo, i.hi),
        )
    };
    let mut refits = 0;
    for p in &r.policies {
        refits = refits.max(p.neural_interval.as_ref().map_or(0, |i| i.replicates));
        let cells: Vec<String> = p
            .tasks
            .iter()
            .map(|c| show(c.neural.as_ref().and_then(|n| n.interval.as_ref())))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            p.policy,
            show(p.neural_interval.as_ref()),
            cells.join(" | ")
        );
    }
    let _ = writeln!(
        s,
        "\n2.5–97.5% quantiles of {refits} refits, each on the episodes of one resample (per task, \
         drawn with replacement).\n"
    );
}

/// `summary.md`: settings, the estimate table, metrics per estimator (suite, per seed, per task)
/// and the coverage flags.
pub fn render_markdown(r: &FqeReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Fitted Q evaluation\n");
    let _ = writeln!(
        s,
        "γ = {}, neural seeds {:?}, coverage threshold {} (standardized action distance). Schema `{}`.\n",
        compact(r.gamma),
        r.seeds,
        compact(r.coverage_threshold),
        r.schema
    );
    if !r.notes.is_empty() {
        let _ = writeln!(s, "## Warnings\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Estimates\n\n```\n{}```\n", render_table(r));
    render_intervals(r, &mut s);
    let _ = writeln!(
        s,
        "regret@1 = (max V − V of the policy with the top estimate) / max V; when several policies \
         tie at the top estimate it is the expected regret under uniformly random tie-breaking \
         (the mean over the tied policies; \"top ties\" counts them).\n"
    );
    for m in &r.metrics {
        let _ = writeln!(s, "## Metrics: {}\n", m.estimator);
        let _ = writeln!(
            s,
            "| scope | policies | median ARE | mean ARE | ARE undefined | Pearson V^π | Spearman V^π | Pearson SR | Spearman SR | regret@1 V^π | regret@1 SR | top ties | MMRV V^π | MMRV SR |"
        );
        let _ = writeln!(
            s,
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        );
        let mut rows = vec![("suite".to_owned(), &m.suite)];
        if let Some(ins) = &m.suite_in_support {
            rows.push((
                format!("suite in support (without {})", ins.excluded.join(", ")),
                &ins.metrics,
            ));
        }
        for (k, ms) in m.suite_per_seed.iter().enumerate() {
            rows.push((
                format!(
                    "suite, seed {}",
                    r.seeds.get(k).copied().unwrap_or_default()
                ),
                ms,
            ));
        }
        for (l, mt) in m.tasks.iter().enumerate() {
            rows.push((
                format!("task: {}", r.tasks.get(l).cloned().unwrap_or_default()),
                mt,
            ));
        }
        for (name, x) in rows {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                x.policies,
                pct(x.median_are),
                pct(x.mean_are),
                x.are_undefined,
                f(x.pearson_v),
                f(x.spearman_v),
                f(x.pearson_sr),
                f(x.spearman_sr),
                f(x.regret_at_1_v),
                f(x.regret_at_1_sr),
                x.top_ties,
                f(x.mmrv_v),
                f(x.mmrv_sr)
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Coverage\n");
    if r.coverage_flags.is_empty() {
        let _ = writeln!(s, "No estimate is past the coverage threshold.");
    } else {
        for (p, t) in &r.coverage_flags {
            let _ = writeln!(s, "- out of support: policy `{p}`, task \"{t}\"");
        }
    }
    s
}
