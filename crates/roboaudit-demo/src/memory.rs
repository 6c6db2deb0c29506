//! The memory stage (SPEC §2): crossed histories on `put_back` for the imperfect-recall `bank`
//! policy and the `faithful` and `blind` calibrators (known answers F = 1 and F = 0, so the report
//! shows what a memory-using and a memory-ignoring policy look like), and for a learned Mem-0 style
//! anchor-window policy trained by behaviour cloning and qualified first (seed 002 §IV-A), each
//! audited under the SPEC §2 default plan; then the irrelevant-history control (`bank`, two
//! detour routes).

use crate::stage::{self, mark_done, stage_done};
use crate::{DemoError, DemoObserver, Scale};
use roboaudit_data::MemoryRecord;
use roboaudit_memory::Plan;
use roboaudit_memory_harness::output::{MANIFEST_FILE, RECORDS_FILE};
use roboaudit_memory_harness::request::{audit_into, control_into};
use roboaudit_memory_harness::{
    BuiltinPolicy, CollectConfig, MemoryPolicy, PolicyKind, PolicyParams, Route, collect,
};
use roboaudit_memory_learned::config::{CONFIG_FILE, QUALIFICATION_FILE, WEIGHTS_FILE};
use roboaudit_memory_learned::{Family, LearnedPolicy, QualifyConfig, TrainConfig};
use roboaudit_report::demo::{ControlSummary, PolicySummary};
use roboaudit_testbed::TaskKind;
use std::path::Path;

/// Pairs per policy, action seeds, pairs of the control.
fn sizes(scale: Scale) -> (usize, usize, usize) {
    match scale {
        Scale::Standard => (24, 3, 12),
        Scale::Small => (8, 2, 6),
    }
}

fn config(pairs: usize, seeds: usize, routes: Vec<Route>) -> CollectConfig {
    CollectConfig {
        task: TaskKind::PutBack,
        pairs,
        action_seeds: (0..seeds as u64).collect(),
        routes,
        ..CollectConfig::default()
    }
}

/// Collects into `dir` with the policy `make` opens (or reuses a finished collection with the
/// same `settings`) and returns the records. The files are the demo's own (its manifest as the
/// struct serializes, no resume folder): a stage's stamp, not a partial folder, makes a rerun
/// skip it.
fn records(
    dir: &Path,
    cfg: &CollectConfig,
    settings: &serde_json::Value,
    make: &mut dyn FnMut() -> Result<Box<dyn MemoryPolicy>, DemoError>,
    label: &str,
    obs: &dyn DemoObserver,
) -> Result<Vec<MemoryRecord>, DemoError> {
    let records_path = dir.join(RECORDS_FILE);
    if stage_done(dir, settings, &[RECORDS_FILE, MANIFEST_FILE], &|l| {
        obs.note(l)
    }) {
        return Ok(roboaudit_data::read_memory_records(&records_path)?);
    }
    let mut policy = make()?;
    // Saturating: the count is only a display.
    let total = cfg.pairs.saturating_mul(cfg.routes.len().max(1));
    let mut progress = obs.memory_collect(label, total);
    let run = collect(cfg, policy.as_mut(), &mut *progress);
    drop(progress);
    let run = run?;
    roboaudit_data::atomic::create_dir(dir)?;
    // The records writer replaces the file; a stale stamp must not vouch for half-new outputs.
    stage::clear(dir);
    roboaudit_data::write_memory_records(&records_path, &run.records).map_err(|e| {
        DemoError::WriteRecords {
            path: records_path.clone(),
            source: Box::new(e),
        }
    })?;
    let json =
        serde_json::to_vec_pretty(&run.manifest).map_err(DemoError::serialize("manifest"))?;
    roboaudit_data::atomic::write_atomic(&dir.join(MANIFEST_FILE), &json)?;
    mark_done(dir, settings, &[RECORDS_FILE, MANIFEST_FILE])?;
    Ok(run.records)
}

/// The records of built-in policy `kind` (see [`records`]).
fn builtin_records(
    dir: &Path,
    cfg: &CollectConfig,
    kind: PolicyKind,
    label: &str,
    obs: &dyn DemoObserver,
) -> Result<Vec<MemoryRecord>, DemoError> {
    // The bank's default recall (0.95, 0.95, 0.3) gives target-dependent failures; the
    // calibrators ignore it.
    let params = PolicyParams::default();
    let settings = serde_json::json!({ "collect": cfg, "policy": kind, "params": params });
    let mut make = || -> Result<Box<dyn MemoryPolicy>, DemoError> {
        Ok(Box::new(BuiltinPolicy::new(kind, params.clone())?))
    };
    records(dir, cfg, &settings, &mut make, label, obs)
}

/// Training and qualification of the learned policy: `memory train`'s defaults (64
/// demonstrations, 300 full-batch steps, seed 0, 24 qualification episodes at a registered rate
/// of 0.5), the anchor-window family.
fn learned_settings() -> (TrainConfig, QualifyConfig) {
    (
        TrainConfig::default(),
        QualifyConfig {
            episodes: 24,
            threshold: 0.5,
            seed: 0,
        },
    )
}

/// The learned checkpoint in `dir` (trained and qualified there, or reused when its stamp
/// matches), opened for the audit with the FNV-1a hash of the weights it qualified; `None`, with
/// a note, when it did not qualify.
fn learned_policy(
    dir: &Path,
    obs: &dyn DemoObserver,
) -> Result<Option<(LearnedPolicy, String)>, DemoError> {
    let (train, qualify) = learned_settings();
    let family = Family::AnchorWindow;
    let settings = serde_json::json!({
        "task": TaskKind::PutBack.name(), "family": family.name(), "train": train,
        "qualify": qualify,
    });
    let outputs = [WEIGHTS_FILE, CONFIG_FILE, QUALIFICATION_FILE];
    if !stage_done(dir, &settings, &outputs, &|l| obs.note(l)) {
        stage::clear(dir);
        let trained = roboaudit_memory_learned::train::train(
            TaskKind::PutBack,
            family,
            &train,
            &qualify,
            &mut |_, _| {},
            &mut |_, _| {},
        )?;
        roboaudit_memory_learned::checkpoint::save(dir, &trained)?;
        roboaudit_memory_learned::qualify::qualify_dir(dir, &mut |_, _| {})?;
        mark_done(dir, &settings, &outputs)?;
    }
    match roboaudit_memory_learned::qualify::open_for_audit(dir, TaskKind::PutBack) {
        Ok((policy, q)) => Ok(Some((policy, q.weights_fnv))),
        Err(e @ roboaudit_memory_learned::LearnedError::NotQualified { .. }) => {
            obs.note(&format!(
                "note: learned policy left out of the memory audit: {}",
                roboaudit_types::error_chain(&e)
            ));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs the memory stage into `DIR/memory/`. Announces stages `first` to `first + 4` of `n`.
pub(crate) fn run(
    out: &Path,
    scale: Scale,
    (first, n): (usize, usize),
    obs: &dyn DemoObserver,
) -> Result<(Vec<PolicySummary>, ControlSummary), DemoError> {
    let (pairs, seeds, control_pairs) = sizes(scale);
    let plan = Plan::default();
    let mut summaries = Vec::new();
    for (k, kind) in [PolicyKind::Bank, PolicyKind::Faithful, PolicyKind::Blind]
        .into_iter()
        .enumerate()
    {
        let name = kind.name();
        obs.stage(
            first + k,
            n,
            &format!("memory audit, {name} policy: {pairs} pairs × {seeds} seeds"),
        );
        let rel = format!("memory/{name}");
        let dir = out.join(&rel);
        let cfg = config(pairs, seeds, Vec::new());
        let recs = builtin_records(&dir, &cfg, kind, &format!("memory {name}"), obs)?;
        let audit = audit_into(&recs, &plan, &dir)?;
        summaries.push(PolicySummary::from_audit(name, rel, seeds, &audit));
    }
    obs.stage(
        first + 3,
        n,
        &format!(
            "memory audit, learned anchor-window policy: training, qualification, {pairs} pairs × {seeds} seeds"
        ),
    );
    let rel = "memory/learned".to_owned();
    let dir = out.join(&rel);
    if let Some((policy, weights_fnv)) = learned_policy(&dir.join("policy"), obs)? {
        let cfg = config(pairs, seeds, Vec::new());
        // The weights' hash names the checkpoint the records came from.
        let settings = serde_json::json!({
            "collect": cfg, "policy": "learned", "weights_fnv": weights_fnv,
        });
        let mut slot = Some(policy);
        let mut make = || -> Result<Box<dyn MemoryPolicy>, DemoError> {
            Ok(Box::new(slot.take().ok_or_else(|| {
                DemoError::Usage("the learned policy is opened once".into())
            })?))
        };
        let recs = records(&dir, &cfg, &settings, &mut make, "memory learned", obs)?;
        let audit = audit_into(&recs, &plan, &dir)?;
        summaries.push(PolicySummary::from_audit("learned", rel, seeds, &audit));
    }
    obs.stage(
        first + 4,
        n,
        &format!("memory audit, irrelevant-history control: {control_pairs} pairs × 2 routes"),
    );
    let rel = "memory/control".to_owned();
    let dir = out.join(&rel);
    let cfg = config(control_pairs, seeds, vec![Route::Left, Route::Right]);
    let recs = builtin_records(&dir, &cfg, PolicyKind::Bank, "memory control", obs)?;
    audit_into(&recs, &plan, &dir)?;
    let c = control_into(&recs, &plan, &dir)?;
    Ok((
        summaries,
        ControlSummary {
            dir: rel,
            pairs: control_pairs,
            nuisance: (c.nuisance.estimate, c.nuisance.ci),
            interaction: (c.interaction.estimate, c.interaction.ci),
            margin: c.nuisance.margin,
            passed: c.passed,
        },
    ))
}
