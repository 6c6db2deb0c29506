#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `--shard I/N` and `roboaudit_shard::merge`: merged shards equal the unsharded run byte for byte;
//! a killed shard resumes; another configuration's shard, a missing shard and a duplicated job are
//! refused by name.

mod common;
use common::snapshot;
use roboaudit_retrieval_collect::{
    AuditTask, CollectConfig, CollectError, RunOptions, Shard, collect,
};
use roboaudit_shard::{ShardError, merge, status};
use std::path::{Path, PathBuf};

/// 3 experiences × (4 queries + own base) × 2 seeds = 30 executions in 8 parts of 4 (the last of 2).
fn small() -> CollectConfig {
    CollectConfig {
        task: AuditTask::Door,
        library: 3,
        scenes: 4,
        seeds: 2,
        chunk: 4,
        ..CollectConfig::default()
    }
}

fn sharded(i: usize, n: usize) -> RunOptions {
    RunOptions {
        shard: Some(Shard::new(i, n).unwrap()),
        ..RunOptions::default()
    }
}

fn run_shards(config: &CollectConfig, root: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let dir = root.join(format!("shard-{i}"));
            let out = collect(config, &dir, &sharded(i, n), &|_| {}).unwrap();
            assert!(out.complete);
            dir
        })
        .collect()
}

#[test]
fn shards_merge_to_the_unsharded_run_byte_for_byte_for_n_1_2_3_7() {
    let config = small();
    let whole = tempfile::tempdir().unwrap();
    collect(&config, whole.path(), &RunOptions::default(), &|_| {}).unwrap();
    let expected = snapshot(whole.path());
    assert_eq!(
        expected
            .keys()
            .filter(|k| k.starts_with("executions/"))
            .count(),
        8
    );
    for n in [1, 2, 3, 7] {
        let root = tempfile::tempdir().unwrap();
        let dirs = run_shards(&config, root.path(), n);
        // Each shard holds exactly its own parts: 8 parts over 7 shards leaves shard 0 two.
        let st = status(&dirs).unwrap();
        assert_eq!(
            st.iter().map(|s| s.done_jobs.clone()).collect::<Vec<_>>()[0],
            (0..8).step_by(n).collect::<Vec<_>>()
        );
        assert_eq!(st.iter().map(|s| s.done_units).sum::<usize>(), 30);
        let out = root.path().join("merged");
        let merged = merge(&dirs, &out).unwrap();
        assert_eq!(merged.jobs, 8);
        assert_eq!(snapshot(&out), expected, "n = {n}");
    }
}

#[test]
fn a_shard_killed_midway_resumes_and_the_merge_still_matches() {
    let config = small();
    let whole = tempfile::tempdir().unwrap();
    collect(&config, whole.path(), &RunOptions::default(), &|_| {}).unwrap();
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..3).map(|i| root.path().join(format!("s{i}"))).collect();
    collect(&config, &dirs[0], &sharded(0, 3), &|_| {}).unwrap();
    collect(&config, &dirs[2], &sharded(2, 3), &|_| {}).unwrap();
    // Shard 1 (parts 1, 4, 7) is "killed" after one part, with a temporary file of the next.
    let stop = RunOptions {
        max_chunks: Some(1),
        ..sharded(1, 3)
    };
    let first = collect(&config, &dirs[1], &stop, &|_| {}).unwrap();
    assert_eq!((first.done, first.total, first.complete), (4, 10, false));
    std::fs::write(
        dirs[1].join("executions").join(".roboaudit-tmp-x.tmp"),
        b"partial",
    )
    .unwrap();
    // The merge sees the half-finished array and names the shard and the parts it lacks.
    let err = merge(&dirs, &root.path().join("m"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("shard 1/3") && err.contains("lacks 2 of its 3 jobs"),
        "{err}"
    );
    assert!(err.contains("executions/part-000004.parquet"), "{err}");
    assert!(!root.path().join("m").exists());
    let st = status(&dirs).unwrap();
    assert_eq!(st[1].done_jobs, [1]);
    assert!(!st[1].complete() && st[0].complete());

    let rest = collect(&config, &dirs[1], &sharded(1, 3), &|_| {}).unwrap();
    assert_eq!((rest.resumed_from, rest.done, rest.complete), (4, 10, true));
    let out = root.path().join("m");
    merge(&dirs, &out).unwrap();
    assert_eq!(snapshot(&out), snapshot(whole.path()));
}

#[test]
fn another_configuration_a_missing_shard_and_a_duplicated_job_are_refused_by_name() {
    let config = small();
    let root = tempfile::tempdir().unwrap();
    let dirs = run_shards(&config, root.path(), 3);

    // Shard 1 from another configuration (another master seed).
    let other = CollectConfig {
        seed: 1,
        ..config.clone()
    };
    let foreign = root.path().join("foreign-1");
    collect(&other, &foreign, &sharded(1, 3), &|_| {}).unwrap();
    let mixed = vec![dirs[0].clone(), foreign.clone(), dirs[2].clone()];
    let err = merge(&mixed, &root.path().join("m")).unwrap_err();
    assert!(matches!(err, ShardError::Inconsistent(_)));
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "{} (shard 1/3) comes from another configuration",
            foreign.display()
        )),
        "{text}"
    );

    // Shard 2 not given.
    let err = merge(&dirs[..2], &root.path().join("m"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("shard 2/3 is missing") && err.contains("--shard 2/3"),
        "{err}"
    );
    assert!(
        err.contains("job 2: executions/part-000002.parquet"),
        "{err}"
    );

    // A part of shard 0 copied into shard 1's folder: job 3 is then present twice.
    std::fs::copy(
        dirs[0].join("executions/part-000003.parquet"),
        dirs[1].join("executions/part-000003.parquet"),
    )
    .unwrap();
    let err = merge(&dirs, &root.path().join("m"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("job 3 (executions/part-000003.parquet) is duplicated")
            && err.contains(&format!("{} (shard 1/3)", dirs[1].display()))
            && err.contains("belongs to shard 0/3 only"),
        "{err}"
    );
    // The same shard given twice.
    let twice = vec![dirs[0].clone(), dirs[0].clone(), dirs[2].clone()];
    let err = merge(&twice, &root.path().join("m"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("shard 0/3 is given 2 times"), "{err}");
    assert!(err.contains("shard 1/3 is missing"), "{err}");
    assert!(!root.path().join("m").exists());

    // A shard of that copied folder refuses to resume: the stray part is not its own.
    let err = collect(&config, &dirs[1], &sharded(1, 3), &|_| {}).unwrap_err();
    assert!(
        matches!(err, CollectError::Resume { .. })
            && err
                .to_string()
                .contains("part-000003.parquet does not belong"),
        "{err}"
    );
}

#[test]
fn shard_folders_and_unsharded_folders_are_not_mixed() {
    let config = small();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("s");
    collect(&config, &dir, &sharded(0, 2), &|_| {}).unwrap();
    // The same folder as another shard, as unsharded, or with another config: refused.
    for (cfg, opts, needle) in [
        (&config, sharded(1, 2), "holds shard 0/2, not 1/2"),
        (&config, RunOptions::default(), "resume it with --shard 0/2"),
    ] {
        let err = collect(cfg, &dir, &opts, &|_| {}).unwrap_err();
        assert!(
            matches!(err, CollectError::Resume { .. }) && err.to_string().contains(needle),
            "{err}"
        );
    }
    // An unsharded run's folder cannot become a shard.
    let plain = root.path().join("plain");
    let stop = RunOptions {
        max_chunks: Some(1),
        ..RunOptions::default()
    };
    collect(&config, &plain, &stop, &|_| {}).unwrap();
    let err = collect(&config, &plain, &sharded(0, 2), &|_| {}).unwrap_err();
    assert!(err.to_string().contains("an unsharded run"), "{err}");
    // A non-empty output folder is refused by the merge, and left as it was.
    let taken = root.path().join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("x"), b"x").unwrap();
    let d1 = root.path().join("s1");
    collect(&config, &d1, &sharded(1, 2), &|_| {}).unwrap();
    let err = merge(&[dir.clone(), d1], &taken).unwrap_err();
    assert!(matches!(err, ShardError::OutputExists(_)), "{err}");
    assert_eq!(std::fs::read(taken.join("x")).unwrap(), b"x");
}
