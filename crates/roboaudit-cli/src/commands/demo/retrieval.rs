//! The retrieval stage: a Stack and a Door collection (Replay), both audited (SPEC §1), written to
//! `DIR/retrieval/` as `audit.json` (`roboaudit.demo.v1`), `summary.md` and `runs/<task>/`.

use super::{DemoReport, DemoTask, Scale};
use crate::commands::retrieval::{audit_paths, collect_run};
use crate::output;
use anyhow::{Context, Result};
use roboaudit_retrieval::{AuditConfig, RuleFamily, render_summary_markdown};
use roboaudit_retrieval_collect::{AuditTask, CollectConfig, Mechanism, RunOptions};
use std::path::Path;

/// The collection: standard 10 experiences, 20 query scenes (8 appearance, 8 layout, 4 fresh),
/// 3 seeds; small 6 experiences, 10 scenes, 2 seeds.
fn collection(task: AuditTask, scale: Scale) -> CollectConfig {
    let (library, scenes, seeds) = match scale {
        Scale::Standard => (10, 20, 3),
        Scale::Small => (6, 10, 2),
    };
    CollectConfig {
        task,
        mechanism: Mechanism::Replay,
        library,
        scenes,
        seeds,
        seed: 0,
        chunk: 200,
    }
}

/// Audit settings: fewer draws than the defaults (2,000 instead of 10,000) to stay fast; nested K = 3.
fn audit_config() -> AuditConfig {
    AuditConfig {
        seed: 0,
        resamples: 2_000,
        permutations: 2_000,
        library_sizes: vec![3],
        random_subsets: 100,
        power_replicates: 200,
        structural: Some(roboaudit_retrieval_collect::embed::STRUCTURAL.into()),
        ..AuditConfig::default()
    }
}

/// Collects (or resumes) and audits both tasks; writes `DIR/retrieval/`. Returns the tasks with
/// run folders relative to `DIR`. `stage(k, what)` announces stages 1 and 2.
pub(super) fn run(
    out: &Path,
    scale: Scale,
    stage: &mut dyn FnMut(usize, &str),
) -> Result<Vec<DemoTask>> {
    let dir = out.join("retrieval");
    let mut tasks = Vec::new();
    for (k, task) in [AuditTask::Stack, AuditTask::Door].into_iter().enumerate() {
        let collection = collection(task, scale);
        stage(
            k + 1,
            &format!(
                "retrieval audit, {}: {} executions",
                task.name(),
                collection.total_executions()
            ),
        );
        let run_dir = dir.join("runs").join(task.name());
        let outcome = collect_run(&collection, &run_dir, &RunOptions::default())
            .with_context(|| format!("collecting the {} run", task.name()))?;
        let audit = audit_paths(
            &roboaudit_data::RetrievalPaths::from_run_dir(&run_dir),
            audit_config(),
        )
        .with_context(|| format!("auditing the {} run", task.name()))?;
        tasks.push(DemoTask {
            task: task.name().into(),
            collection,
            library: outcome.library,
            run_dir: format!("runs/{}", task.name()),
            audit,
        });
    }
    let report = DemoReport {
        schema: super::DEMO_SCHEMA.to_owned(),
        scale: scale.into(),
        tasks,
        memory: Vec::new(),
        memory_control: None,
        fqe: None,
        report: None,
    };
    let json =
        serde_json::to_vec_pretty(&report).context("cannot serialize the retrieval audit")?;
    let mut summary = String::from(
        "# roboaudit demo: retrieval audit on the built-in testbed\n\n\
         Replay (open-loop path retargeted to the first manipulated object); every experience \
         executed in every query scene over several seeds.\n\n",
    );
    for t in &report.tasks {
        summary.push_str(&format!("\n# Task: {}\n\n", t.task));
        summary.push_str(&render_summary_markdown(&t.audit));
    }
    output::write_all_atomic(&[
        (&dir.join("audit.json"), &json),
        (&dir.join("summary.md"), summary.as_bytes()),
    ])?;
    let mut tasks = report.tasks;
    for t in &mut tasks {
        t.run_dir = format!("retrieval/{}", t.run_dir);
    }
    Ok(tasks)
}

/// Prints the headline of one task: reference points, then the best deployable rule.
pub(super) fn print_headline(t: &DemoTask) -> Result<(), crate::stdout::StdoutError> {
    let a = &t.audit;
    let r = &a.reference;
    outln!(
        "  {:5} {} experiences × {} scenes: random (expected) {:.3}  oracle {:.3}  best-fixed {:.3} ({})  headroom {:.3}",
        t.task,
        a.n_experiences,
        a.n_scenes,
        r.random,
        r.oracle,
        r.best_fixed,
        r.best_fixed_experience,
        r.headroom
    )?;
    // Rules that need hindsight (oracle, best-fixed) are references, not candidates.
    let deployable = a
        .rules
        .iter()
        .filter(|x| !matches!(x.family, RuleFamily::Oracle | RuleFamily::BestFixed))
        .max_by(|x, y| x.success.total_cmp(&y.success));
    if let Some(b) = deployable {
        outln!(
            "        best deployable rule {}: success {:.3}, advantage {}{}, top-pick share {:.2} (concentration {:.2}), shuffle gap {}{}",
            b.name,
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
        )?;
    }
    Ok(())
}
