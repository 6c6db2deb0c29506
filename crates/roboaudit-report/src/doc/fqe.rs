//! Blocks of one fitted Q evaluation (SPEC.md §3).

use super::{Block, figures, heading, num, table};
use crate::model::{FqeSection, Report};

pub(super) fn blocks(report: &Report, s: &FqeSection) -> Vec<Block> {
    let r = &s.report;
    let mut out = vec![
        heading(2, &s.id, format!("Fitted Q evaluation: {}", s.name)),
        Block::Para(format!(
            "{} target policies on {} tasks, γ = {}, neural training seeds {:?}, coverage threshold {}. Report: {}.",
            r.policies.len(),
            r.tasks.len(),
            r.gamma,
            r.seeds,
            r.coverage_threshold,
            s.file.display(),
        )),
    ];
    // The estimator's own warnings come first, where a reader cannot miss them.
    out.extend(r.notes.iter().map(|n| Block::Warning(n.clone())));
    out.push(heading(3, &format!("{}--estimates", s.id), "Estimates"));
    let neural_header = if r.seeds.len() > 1 {
        format!("neural (mean ± sd over {} seeds)", r.seeds.len())
    } else {
        "neural (one seed)".to_owned()
    };
    let mut rows = Vec::new();
    for p in &r.policies {
        for c in &p.tasks {
            rows.push(vec![
                p.policy.clone(),
                c.task.clone(),
                c.dataset_episodes.to_string(),
                c.neural.as_ref().map_or_else(
                    || roboaudit_types::NO_VALUE.to_owned(),
                    |n| match n.std {
                        Some(sd) if r.seeds.len() > 1 => {
                            format!("{} ± {}", super::fixed3(n.mean), super::fixed3(sd))
                        }
                        _ => super::fixed3(n.mean),
                    },
                ),
                num(c.linear),
                num(c.naive),
                num(c.truth.as_ref().map(|t| t.v_pi)),
                num(c.truth.as_ref().map(|t| t.success_rate)),
                if c.coverage.out_of_support {
                    "out of support"
                } else {
                    ""
                }
                .to_owned(),
            ]);
        }
    }
    out.push(table(
        &[
            "policy",
            "task",
            "episodes",
            &neural_header,
            "linear",
            "naive",
            "truth V^π",
            "truth SR",
            "coverage",
        ],
        rows,
    ));
    out.push(Block::Note(
        "truth V^π: discounted return in ground-truth rollouts of the policy; truth SR: success \
         rate in ground-truth rollouts (fraction of rollouts that reach the goal)."
            .to_owned(),
    ));
    if r.metrics.is_empty() {
        out.push(Block::Note(
            "No ground truth: estimates are not scored.".to_owned(),
        ));
    } else {
        out.push(heading(
            3,
            &format!("{}--metrics", s.id),
            "Metrics against ground truth",
        ));
        let row = |name: String, s: &roboaudit_fqe::metrics::Metrics| {
            vec![
                name,
                s.policies.to_string(),
                num(s.median_are),
                num(s.pearson_v),
                num(s.spearman_v),
                num(s.spearman_sr),
                num(s.regret_at_1_v),
                num(s.mmrv_v),
            ]
        };
        // Beside each estimator's suite row, its row over the policies inside the data's support
        // (coverage flags): a ranking metric that includes a flagged policy mixes how well the
        // estimator works with whether it could work there at all.
        out.push(table(
            &[
                "estimator",
                "policies",
                "median ARE",
                "Pearson r (V^π)",
                "Spearman ρ (V^π)",
                "Spearman ρ (SR)",
                "regret@1 (V^π)",
                "MMRV (V^π)",
            ],
            r.metrics
                .iter()
                .flat_map(|m| {
                    // An estimator the warnings above name is not shown as a bare number.
                    let name = if roboaudit_fqe::notes::flags_estimator(&r.notes, &m.estimator) {
                        format!("{} (unreliable: see the warning)", m.estimator)
                    } else {
                        m.estimator.clone()
                    };
                    let mut rows = vec![row(name, &m.suite)];
                    if let Some(ins) = &m.suite_in_support {
                        rows.push(row(
                            format!(
                                "{}, in support (without {})",
                                m.estimator,
                                ins.excluded.join(", ")
                            ),
                            &ins.metrics,
                        ));
                    }
                    rows
                })
                .collect(),
        ));
    }
    out.push(heading(3, &format!("{}--plots", s.id), "Plots"));
    out.extend(figures(report, &s.id));
    out
}
