//! The retrieval stage: a Stack and a Door collection under Replay, then Stack under Policy and
//! Policy+DR (seed 000 §II: per-experience behaviour-cloned image policies, trained into the run
//! folder), each audited (SPEC §1), written to `DIR/retrieval/` as `audit.json`
//! (`roboaudit.demo.v1`), `summary.md` and `runs/<task>[-<mechanism>]/`.

use crate::{DEMO_SCHEMA, DemoError, DemoObserver, DemoReport, DemoTask, Scale};
use roboaudit_retrieval::request::audit_inputs;
use roboaudit_retrieval::{AuditConfig, render_summary_markdown};
use roboaudit_retrieval_collect::{
    AuditTask, CollectConfig, Mechanism, RunOptions, appearance_caused_failures,
};
use std::path::Path;

/// The collections, in stage order: Stack and Door under Replay, Stack under Policy and
/// Policy+DR.
const COLLECTIONS: [(AuditTask, Mechanism); 4] = [
    (AuditTask::Stack, Mechanism::Replay),
    (AuditTask::Door, Mechanism::Replay),
    (AuditTask::Stack, Mechanism::Policy),
    (AuditTask::Stack, Mechanism::PolicyDr),
];

/// Retrieval stages the demo announces (one per collection).
pub(crate) const STAGES: usize = COLLECTIONS.len();

/// The collection. Replay: standard 10 experiences, 20 query scenes (8 appearance, 8 layout, 4
/// fresh), 3 seeds; small 6 experiences, 10 scenes, 2 seeds. The learned mechanisms train one
/// policy per recorded candidate (seconds each on 2 cores, Policy+DR several times Policy), so
/// they get smaller libraries: standard 4 experiences, 12 scenes (5 appearance on the base
/// layouts `b00`–`b04`, 5 layout, 2 fresh), 2 seeds; small 2 experiences, 6 scenes, 1 seed.
fn collection(task: AuditTask, mechanism: Mechanism, scale: Scale) -> CollectConfig {
    let (library, scenes, seeds) = match (mechanism, scale) {
        (Mechanism::Replay, Scale::Standard) => (10, 20, 3),
        (Mechanism::Replay, Scale::Small) => (6, 10, 2),
        (_, Scale::Standard) => (4, 12, 2),
        (_, Scale::Small) => (2, 6, 1),
    };
    CollectConfig {
        task,
        mechanism,
        library,
        scenes,
        seeds,
        seed: 0,
        chunk: 200,
    }
}

/// Run folder of a collection, relative to `DIR/retrieval/`: `runs/stack`, `runs/stack-policy`.
fn run_dir(task: AuditTask, mechanism: Mechanism) -> String {
    match mechanism {
        Mechanism::Replay => format!("runs/{}", task.name()),
        m => format!("runs/{}-{}", task.name(), m.name()),
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

/// Collects (or resumes) and audits each collection; writes `DIR/retrieval/`. Returns the tasks
/// with run folders relative to `DIR`. Announces stages 1 to [`STAGES`] of `n`.
pub(crate) fn run(
    out: &Path,
    scale: Scale,
    n: usize,
    obs: &dyn DemoObserver,
) -> Result<Vec<DemoTask>, DemoError> {
    let dir = out.join("retrieval");
    let mut tasks = Vec::new();
    for (k, (task, mechanism)) in COLLECTIONS.into_iter().enumerate() {
        let collection = collection(task, mechanism, scale);
        let name = roboaudit_report::demo::display_name(task.name(), mechanism.name());
        obs.stage(
            k + 1,
            n,
            &format!(
                "retrieval audit, {name}: {} executions",
                collection.total_executions()
            ),
        );
        let rel = run_dir(task, mechanism);
        let run = dir.join(&rel);
        let collect_err = |e| DemoError::RetrievalCollect {
            task: name.clone(),
            source: Box::new(e),
        };
        let progress = obs.retrieval_collect(&name);
        let outcome = roboaudit_retrieval_learned::request::collect(
            &collection,
            &run,
            &RunOptions::default(),
            &*progress,
        );
        drop(progress);
        let outcome = outcome.map_err(collect_err)?;
        let failures = appearance_caused_failures(&collection, &run).map_err(|e| {
            collect_err(roboaudit_retrieval_collect::request::RequestError::Collect(
                e,
            ))
        })?;
        let progress = obs.retrieval_audit();
        let audit = audit_inputs(
            &roboaudit_data::RetrievalPaths::from_run_dir(&run),
            audit_config(),
            &*progress,
        );
        drop(progress);
        let audit = audit.map_err(|e| DemoError::RetrievalAudit {
            task: name.clone(),
            source: Box::new(e),
        })?;
        tasks.push(DemoTask {
            task: task.name().into(),
            mechanism: mechanism.name().into(),
            collection,
            library: outcome.library,
            run_dir: rel,
            audit,
            appearance_caused_failures: Some(failures),
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
         Replay (open-loop path retargeted to the first manipulated object) on Stack and Door; \
         Policy and Policy+DR (a behaviour-cloned image policy per experience, Policy+DR trained \
         also under randomized appearance) on Stack; every experience executed in every query \
         scene over several seeds.\n\n",
    );
    for t in &report.tasks {
        summary.push_str(&format!("\n# Task: {}\n\n", t.display_name()));
        if let Some(f) = &t.appearance_caused_failures {
            summary.push_str(&format!("{}\n\n", f));
        }
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
