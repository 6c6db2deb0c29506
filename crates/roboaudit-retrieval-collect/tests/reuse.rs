#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The reuse interface: a mechanism that refuses candidates changes the library as failed
//! recordings do, counts its refusals, and records itself in `collect.json`; Replay through
//! `collect_with` is `collect`; the policy mechanism cannot run without trained policies.

use roboaudit_retrieval_collect::{
    AuditTask, CollectConfig, CollectError, Library, LibraryItem, MANIFEST_FILE, Manifest,
    Mechanism, ReplayReuse, Result, Reuse, RunOptions, collect, collect_with, record_library,
    record_library_with,
};
use roboaudit_testbed::{CompiledScene, EpisodeConfig, Retarget};

/// Refuses every odd candidate; executes as Replay; records its refusals.
struct OddOut;

impl Reuse for OddOut {
    fn accept(&self, item: &LibraryItem, _base: &CompiledScene) -> Result<bool> {
        Ok(item.candidate.is_multiple_of(2))
    }

    fn execute(
        &self,
        item: &LibraryItem,
        scene: &CompiledScene,
        cfg: &EpisodeConfig,
    ) -> Result<bool> {
        ReplayReuse(Retarget::FirstAnchor).execute(item, scene, cfg)
    }

    fn manifest(&self, library: &Library) -> Result<Option<serde_json::Value>> {
        Ok(Some(
            serde_json::json!({ "refused": library.reuse_rejected }),
        ))
    }
}

fn small() -> CollectConfig {
    CollectConfig {
        task: AuditTask::Door,
        library: 3,
        scenes: 3,
        seeds: 1,
        chunk: 5,
        ..CollectConfig::default()
    }
}

#[test]
fn refused_candidates_are_rejected_recordings() {
    let config = small();
    // Which recordings succeed (Replay accepts every one), far enough to cover `even`.
    let all = record_library(&CollectConfig {
        library: 10,
        ..config.clone()
    })
    .unwrap();
    let even = record_library_with(&config, &OddOut).unwrap();
    assert_eq!(all.reuse_rejected, 0);
    assert!(all.attempts >= even.attempts);
    let succeeded = |c: usize| all.items.iter().any(|it| it.candidate == c);
    let expected: Vec<usize> = (0..even.attempts)
        .filter(|&c| c.is_multiple_of(2) && succeeded(c))
        .collect();
    let got: Vec<usize> = even.items.iter().map(|it| it.candidate).collect();
    assert_eq!(got, expected);
    let refused = (0..even.attempts)
        .filter(|&c| c % 2 == 1 && succeeded(c))
        .count();
    assert_eq!(even.reuse_rejected, refused);
    assert_eq!(even.rejected, even.attempts - 3);
    // Ids follow library order.
    let ids: Vec<_> = even
        .items
        .iter()
        .map(|it| it.experience_id.as_str())
        .collect();
    assert_eq!(ids, ["e00", "e01", "e02"]);
}

#[test]
fn collect_with_records_the_mechanism_and_replay_is_collect() {
    let config = small();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    collect(&config, a.path(), &RunOptions::default(), &|_| {}).unwrap();
    collect_with(
        &config,
        b.path(),
        &RunOptions::default(),
        &|_| {},
        &ReplayReuse(Retarget::FirstAnchor),
    )
    .unwrap();
    let read = |d: &std::path::Path| std::fs::read(d.join(MANIFEST_FILE)).unwrap();
    assert_eq!(read(a.path()), read(b.path()));
    let m: Manifest = serde_json::from_slice(&read(a.path())).unwrap();
    assert_eq!(m.reuse, None);
    assert_eq!(m.library.reuse_rejected, 0);

    let c = tempfile::tempdir().unwrap();
    let out = collect_with(&config, c.path(), &RunOptions::default(), &|_| {}, &OddOut).unwrap();
    assert!(out.complete);
    let m: Manifest = serde_json::from_slice(&read(c.path())).unwrap();
    assert!(m.library.reuse_rejected >= 1);
    assert_eq!(
        m.reuse,
        Some(serde_json::json!({ "refused": m.library.reuse_rejected }))
    );
}

#[test]
fn policy_mechanism_needs_trained_policies() {
    let config = CollectConfig {
        mechanism: Mechanism::parse("policy").unwrap(),
        ..small()
    };
    let dir = tempfile::tempdir().unwrap();
    let e = collect(&config, dir.path(), &RunOptions::default(), &|_| {}).unwrap_err();
    assert!(
        matches!(&e, CollectError::InvalidConfig(m) if m.contains("trained policies")),
        "{e}"
    );
    assert_eq!(Mechanism::Policy.name(), "policy");
    assert_eq!(Mechanism::parse("policy-dr").unwrap(), Mechanism::PolicyDr);
    assert_eq!(Mechanism::PolicyDr.name(), "policy-dr");
    assert!(Mechanism::parse("policy_dr").is_err());
    let config = CollectConfig {
        mechanism: Mechanism::PolicyDr,
        ..small()
    };
    let e = collect(&config, dir.path(), &RunOptions::default(), &|_| {}).unwrap_err();
    assert!(
        matches!(&e, CollectError::InvalidConfig(m) if m.contains("--mechanism policy-dr")),
        "{e}"
    );
}
