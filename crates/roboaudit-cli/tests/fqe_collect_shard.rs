//! `fqe collect --shard I/N` and `roboaudit merge`: the merged shards are the unsharded run's
//! folder (dataset, policy-actions files, ground truth), file for file and byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text, tree};
use std::path::{Path, PathBuf};

/// 7 built-in targets × 4 push tasks.
const BLOCKS: usize = 28;

fn collect(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["fqe", "collect", "--small", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    roboaudit(&args)
}

fn merge(dirs: &[PathBuf], out: &Path) -> std::process::Output {
    let mut args = vec!["merge".to_owned()];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap().to_owned()));
    args.extend(["--out".to_owned(), out.to_str().unwrap().to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    roboaudit(&args)
}

fn shards(root: &Path, name: &str, n: usize, extra: &[&str]) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let d = root.join(format!("{name}-{i}"));
            let spec = format!("{i}/{n}");
            let mut args = vec!["--shard", spec.as_str()];
            args.extend_from_slice(extra);
            let o = collect(&d, &args);
            assert!(o.status.success(), "{spec}: {}", text(&o));
            let owned = (0..BLOCKS).filter(|j| j % n == i).count();
            assert!(
                text(&o).contains(&format!("shard {spec}: {owned} of {BLOCKS} rollout blocks")),
                "{spec}: {}",
                text(&o)
            );
            assert!(!d.join("ground_truth.json").exists());
            d
        })
        .collect()
}

#[test]
fn merged_shards_equal_the_unsharded_collection() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = collect(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let expected = tree(&whole);
    assert!(
        expected
            .iter()
            .any(|(p, _)| p.ends_with("ground_truth.json"))
    );
    // Each merge records the dataset again: N = 7 (empty-shard cases) is covered by the
    // cheaper memory collections' tests.
    for n in [1usize, 2, 3] {
        let dirs = shards(tmp.path(), &format!("n{n}"), n, &[]);
        let merged = tmp.path().join(format!("merged-{n}"));
        let o = merge(&dirs, &merged);
        assert!(o.status.success(), "N = {n}: {}", text(&o));
        assert!(text(&o).contains("assembled"), "{}", text(&o));
        let got = tree(&merged);
        let names = |t: &[(PathBuf, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(names(&got), names(&expected), "N = {n}");
        for ((p, a), (_, b)) in got.iter().zip(&expected) {
            assert!(a == b, "N = {n}: {} differs", p.display());
        }
    }
}

#[test]
fn lost_foreign_and_served_shards_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = shards(tmp.path(), "s", 2, &[]);
    let out = tmp.path().join("merged");
    // A block lost (a shard killed before it finished): named; a rerun of the shard collects
    // it again with the same bytes.
    let lost = dirs[1].join("rollouts/block-000005.json");
    let aside = tmp.path().join("aside.json");
    std::fs::rename(&lost, &aside).unwrap();
    let o = merge(&dirs, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("lacks 1 of its 14 jobs (job 5: rollouts/block-000005.json)"),
        "{}",
        text(&o)
    );
    let o = collect(&dirs[1], &["--shard", "1/2"]);
    assert!(text(&o).contains("(13 resumed)"), "{}", text(&o));
    assert_eq!(
        std::fs::read(&lost).unwrap(),
        std::fs::read(&aside).unwrap()
    );
    // Another configuration's shard, a missing shard.
    let other = shards(tmp.path(), "other", 2, &["--seed", "5"]);
    let o = merge(&[dirs[0].clone(), other[1].clone()], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("comes from another configuration"),
        "{}",
        text(&o)
    );
    let o = merge(&dirs[1..], &out);
    assert!(text(&o).contains("shard 0/2 is missing"), "{}", text(&o));
    // A served policy with --shard is a usage error, before connecting.
    let o = collect(
        &tmp.path().join("served"),
        &["--shard", "0/2", "--policy", "x=ws://127.0.0.1:9"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--shard takes the built-in targets only"),
        "{}",
        text(&o)
    );
    let o = merge(&dirs, &out);
    assert!(o.status.success(), "{}", text(&o));
}
