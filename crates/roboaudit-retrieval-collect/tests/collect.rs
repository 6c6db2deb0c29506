#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Run folders: resume after interruption, audit contract, configuration mismatch.

mod common;
use common::snapshot;
use roboaudit_retrieval_collect::{
    AuditTask, CollectConfig, CollectError, EXECUTIONS_DIR, RunOptions, collect,
};
use std::collections::BTreeMap;

fn small(task: AuditTask) -> CollectConfig {
    CollectConfig {
        task,
        library: 3,
        scenes: 4,
        seeds: 2,
        chunk: 7,
        ..CollectConfig::default()
    }
}

#[test]
fn interrupted_and_resumed_run_equals_uninterrupted_run_byte_for_byte() {
    let config = small(AuditTask::Door);
    let whole = tempfile::tempdir().unwrap();
    let out = collect(&config, whole.path(), &RunOptions::default(), &|_| {}).unwrap();
    assert!(out.complete);
    assert_eq!(out.total, 3 * 5 * 2);

    let parts = tempfile::tempdir().unwrap();
    let stop = |n| RunOptions {
        max_chunks: Some(n),
        ..RunOptions::default()
    };
    let first = collect(&config, parts.path(), &stop(2), &|_| {}).unwrap();
    assert_eq!((first.done, first.complete), (14, false));
    // A stale temporary file, as a kill during a part write leaves, must be cleaned up.
    std::fs::write(
        parts
            .path()
            .join(EXECUTIONS_DIR)
            .join(".roboaudit-tmp-x.tmp"),
        b"partial",
    )
    .unwrap();
    let second = collect(&config, parts.path(), &stop(1), &|_| {}).unwrap();
    assert_eq!((second.resumed_from, second.done), (14, 21));
    let last = collect(&config, parts.path(), &RunOptions::default(), &|_| {}).unwrap();
    assert_eq!((last.resumed_from, last.done), (21, 30));
    assert!(last.complete);
    assert_eq!(snapshot(whole.path()), snapshot(parts.path()));

    // Running a complete folder again changes nothing.
    let again = collect(&config, parts.path(), &RunOptions::default(), &|_| {}).unwrap();
    assert_eq!((again.resumed_from, again.done), (30, 30));
    assert_eq!(snapshot(whole.path()), snapshot(parts.path()));
}

#[test]
fn audit_loader_accepts_the_folder_with_own_base_rows() {
    let config = small(AuditTask::Door);
    let dir = tempfile::tempdir().unwrap();
    collect(&config, dir.path(), &RunOptions::default(), &|_| {}).unwrap();
    let paths = roboaudit_data::RetrievalPaths::from_run_dir(dir.path());
    let inputs = roboaudit_data::load_retrieval_inputs(&paths).unwrap();
    assert_eq!(inputs.executions.len(), 30);
    assert_eq!(inputs.scenes.len(), 4);
    assert_eq!(inputs.experiences.len(), 3);
    let query_ids: Vec<&str> = inputs.scenes.iter().map(|s| s.scene_id.as_str()).collect();
    let own_base = inputs
        .executions
        .iter()
        .filter(|e| !query_ids.contains(&e.scene_id.as_str()))
        .count();
    assert_eq!(own_base, 3 * 2);
    // Two representations, each covering 3 experiences + 4 scenes; pixels are 32·32·3.
    let reps: BTreeMap<&str, usize> = inputs.embeddings.iter().fold(BTreeMap::new(), |mut m, e| {
        *m.entry(e.representation.as_str()).or_default() += 1;
        m
    });
    assert_eq!(reps.get("pixels32"), Some(&7));
    assert_eq!(reps.get("structural"), Some(&7));
    let px = inputs
        .embeddings
        .iter()
        .find(|e| e.representation == "pixels32")
        .unwrap();
    assert_eq!(px.vector.len(), 3072);
    assert!(px.vector.iter().all(|v| (0.0..=1.0).contains(v)));
}

#[test]
fn a_folder_of_another_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = small(AuditTask::Door);
    let stop = RunOptions {
        max_chunks: Some(1),
        ..RunOptions::default()
    };
    collect(&config, dir.path(), &stop, &|_| {}).unwrap();
    let other = CollectConfig { seeds: 3, ..config };
    let err = collect(&other, dir.path(), &stop, &|_| {}).unwrap_err();
    assert!(matches!(err, CollectError::Resume { .. }), "{err}");
}

#[test]
fn a_non_empty_folder_without_a_manifest_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("scenes.csv");
    std::fs::write(
        &own,
        "scene_id,perturbation,layout_level,appearance_draw\nmine,fresh,0,0\n",
    )
    .unwrap();
    let err = collect(
        &small(AuditTask::Stack),
        dir.path(),
        &RunOptions::default(),
        &|_| {},
    )
    .unwrap_err();
    assert!(matches!(err, CollectError::Occupied { .. }), "{err}");
    assert!(err.to_string().contains("not empty"), "{err}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("scenes.csv")]);
    assert!(std::fs::read_to_string(&own).unwrap().contains("mine"));
}
