//! The retrieval stage: a Stack and a Door collection (Replay), both audited (SPEC §1), written to
//! `DIR/retrieval/` as `audit.json` (`roboaudit.demo.v1`), `summary.md` and `runs/<task>/`.

use crate::{DEMO_SCHEMA, DemoError, DemoObserver, DemoReport, DemoTask, Scale};
use roboaudit_retrieval::request::audit_inputs;
use roboaudit_retrieval::{AuditConfig, render_summary_markdown};
use roboaudit_retrieval_collect::request::run_collect;
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
/// run folders relative to `DIR`. Announces stages 1 and 2 of `n`.
pub(crate) fn run(
    out: &Path,
    scale: Scale,
    n: usize,
    obs: &dyn DemoObserver,
) -> Result<Vec<DemoTask>, DemoError> {
    let dir = out.join("retrieval");
    let mut tasks = Vec::new();
    for (k, task) in [AuditTask::Stack, AuditTask::Door].into_iter().enumerate() {
        let collection = collection(task, scale);
        let name = task.name();
        obs.stage(
            k + 1,
            n,
            &format!(
                "retrieval audit, {name}: {} executions",
                collection.total_executions()
            ),
        );
        let run_dir = dir.join("runs").join(name);
        let progress = obs.retrieval_collect(name);
        let outcome = run_collect(&collection, &run_dir, &RunOptions::default(), &*progress);
        drop(progress);
        let outcome = outcome.map_err(|e| DemoError::RetrievalCollect {
            task: name,
            source: Box::new(e),
        })?;
        let progress = obs.retrieval_audit();
        let audit = audit_inputs(
            &roboaudit_data::RetrievalPaths::from_run_dir(&run_dir),
            audit_config(),
            &*progress,
        );
        drop(progress);
        let audit = audit.map_err(|e| DemoError::RetrievalAudit {
            task: name,
            source: Box::new(e),
        })?;
        tasks.push(DemoTask {
            task: name.into(),
            collection,
            library: outcome.library,
            run_dir: format!("runs/{name}"),
            audit,
        });
    }
    let report = DemoReport {
        schema: DEMO_SCHEMA.to_owned(),
        scale,
        tasks,
        memory: Vec::new(),
        memory_control: None,
        fqe: None,
        report: None,
    };
    let json =
        serde_json::to_vec_pretty(&report).map_err(DemoError::serialize("retrieval audit"))?;
    let mut summary = String::from(
        "# roboaudit demo: retrieval audit on the built-in testbed\n\n\
         Replay (open-loop path retargeted to the first manipulated object); every experience \
         executed in every query scene over several seeds.\n\n",
    );
    for t in &report.tasks {
        summary.push_str(&format!("\n# Task: {}\n\n", t.task));
        summary.push_str(&render_summary_markdown(&t.audit));
    }
    roboaudit_data::atomic::write_all_atomic(&[
        (&dir.join("audit.json"), &json),
        (&dir.join("summary.md"), summary.as_bytes()),
    ])?;
    let mut tasks = report.tasks;
    for t in &mut tasks {
        t.run_dir = format!("retrieval/{}", t.run_dir);
    }
    Ok(tasks)
}
