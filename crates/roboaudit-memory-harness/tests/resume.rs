//! Resumable collection: a collection stopped by a failing policy keeps its finished pairs, and
//! the rerun gives the uninterrupted collection exactly; a partial folder of another
//! configuration is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use roboaudit_memory_harness::resume::{PARTIAL_DIR, collect_resumable, finish};
use roboaudit_memory_harness::{
    ActionChunk, BuiltinPolicy, HarnessError, MemoryPolicy, MemorySpec, MemoryState, Observation,
    PolicyKind, PolicyParams, collect,
};
use roboaudit_testbed::TaskKind;

/// The bank policy, failing from its `fail_at`-th query on (a server that dies mid-run).
struct Dying {
    inner: BuiltinPolicy,
    queries: usize,
    fail_at: usize,
}

impl MemoryPolicy for Dying {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn memory_spec(&self) -> MemorySpec {
        self.inner.memory_spec()
    }
    fn chunk_len(&self) -> usize {
        self.inner.chunk_len()
    }
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        self.inner.observe(obs)
    }
    fn act(&mut self, present: &Observation, seed: u64) -> Result<ActionChunk, HarnessError> {
        self.queries += 1;
        if self.queries >= self.fail_at {
            return Err(HarnessError::Policy {
                policy: self.name(),
                message: "the server died".into(),
            });
        }
        self.inner.act(present, seed)
    }
    fn memory(&mut self) -> Result<MemoryState, HarnessError> {
        self.inner.memory()
    }
    fn set_memory(&mut self, s: &MemoryState) -> Result<(), HarnessError> {
        self.inner.set_memory(s)
    }
}

fn bank() -> BuiltinPolicy {
    BuiltinPolicy::new(PolicyKind::Bank, PolicyParams::default()).unwrap()
}

#[test]
fn a_stopped_collection_resumes_to_the_uninterrupted_result() {
    let cfg = common::small(TaskKind::PutBack, 5, &[0, 1]);
    let whole = collect(&cfg, &mut bank(), &mut |_, _| {}).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let identity = serde_json::json!({"test": 1});
    // Two queries per memory and seed pair → 4 per pair: dies inside pair 2 (0-based).
    let mut dying = Dying {
        inner: bank(),
        queries: 0,
        fail_at: 4 * 2 + 2,
    };
    let e = collect_resumable(&cfg, &mut dying, &identity, tmp.path(), &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("the server died"), "{e}");
    let kept: Vec<String> = std::fs::read_dir(tmp.path().join(PARTIAL_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") && n.starts_with("pair-"))
        .collect();
    assert_eq!(kept.len(), 2, "{kept:?}");

    let mut calls = Vec::new();
    let (resumed, n) = collect_resumable(&cfg, &mut bank(), &identity, tmp.path(), &mut |d, t| {
        calls.push((d, t));
    })
    .unwrap();
    assert_eq!(n, 2);
    assert_eq!(resumed.records, whole.records);
    assert_eq!(resumed.manifest, whole.manifest);
    assert_eq!(calls.last(), Some(&(5, 5)));
    finish(tmp.path()).unwrap();
    assert!(!tmp.path().join(PARTIAL_DIR).exists());
}

#[test]
fn a_partial_folder_of_another_configuration_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let identity = serde_json::json!({});
    let cfg = common::small(TaskKind::PutBack, 1, &[0]);
    collect_resumable(&cfg, &mut bank(), &identity, tmp.path(), &mut |_, _| {}).unwrap();
    let other = common::small(TaskKind::PutBack, 1, &[0, 1]);
    let e =
        collect_resumable(&other, &mut bank(), &identity, tmp.path(), &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, HarnessError::ForeignPartial { .. }), "{e}");
    assert!(e.to_string().contains("another configuration"), "{e}");
    // Another policy identity is another configuration too.
    let e = collect_resumable(
        &cfg,
        &mut bank(),
        &serde_json::json!({"x": 2}),
        tmp.path(),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("another configuration"), "{e}");
}

/// A kept pair whose records were cut short is named with what to delete (the pair's two
/// files) and refused as input (not a write failure); deleting them collects it again.
#[test]
fn a_damaged_pair_is_named_with_its_fix() {
    let cfg = common::small(TaskKind::PutBack, 2, &[0]);
    let whole = collect(&cfg, &mut bank(), &mut |_, _| {}).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let identity = serde_json::json!({"test": 2});
    let mut dying = Dying {
        inner: bank(),
        queries: 0,
        fail_at: 2 + 1,
    };
    collect_resumable(&cfg, &mut dying, &identity, tmp.path(), &mut |_, _| {}).unwrap_err();
    let partial = tmp.path().join(PARTIAL_DIR);
    let records: Vec<_> = std::fs::read_dir(&partial)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let bytes = std::fs::read(&records[0]).unwrap();
    std::fs::write(&records[0], &bytes[..bytes.len() / 2]).unwrap();
    let e =
        collect_resumable(&cfg, &mut bank(), &identity, tmp.path(), &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, HarnessError::ForeignPartial { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&records[0].display().to_string())
            && text.contains("delete it and")
            && text.contains(".json to collect the pair again"),
        "{text}"
    );
    std::fs::remove_file(&records[0]).unwrap();
    std::fs::remove_file(records[0].with_extension("json")).unwrap();
    let (resumed, _) =
        collect_resumable(&cfg, &mut bank(), &identity, tmp.path(), &mut |_, _| {}).unwrap();
    assert_eq!(resumed.records, whole.records);
}
