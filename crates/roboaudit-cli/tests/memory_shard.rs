//! `memory collect --shard I/N` and `roboaudit merge`: the merged shards are the unsharded
//! run's records and manifest, byte for byte, for any N.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use std::path::{Path, PathBuf};

const PAIRS: &str = "5";

fn collect(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "memory", "collect", "--policy", "bank", "--pairs", PAIRS, "--seeds", "2", "--out",
    ];
    args.push(out.to_str().unwrap());
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

#[test]
fn merged_shards_equal_the_unsharded_collection() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = collect(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let records = std::fs::read(whole.join("records.parquet")).unwrap();
    let manifest = std::fs::read(whole.join("manifest.json")).unwrap();
    for n in [1usize, 2, 3, 7] {
        let dirs: Vec<PathBuf> = (0..n)
            .map(|i| tmp.path().join(format!("n{n}-s{i}")))
            .collect();
        for (i, d) in dirs.iter().enumerate() {
            let spec = format!("{i}/{n}");
            let o = collect(d, &["--shard", &spec]);
            assert!(o.status.success(), "{spec}: {}", text(&o));
            let owned = (0..5).filter(|p| p % n == i).count();
            assert!(
                text(&o).contains(&format!("shard {spec}: {owned} of 5 pairs")),
                "{spec}: {}",
                text(&o)
            );
            assert!(!d.join("records.parquet").exists());
        }
        let merged = tmp.path().join(format!("merged-{n}"));
        let o = merge(&dirs, &merged);
        assert!(o.status.success(), "N = {n}: {}", text(&o));
        assert!(text(&o).contains("assembled"), "{}", text(&o));
        assert_eq!(
            std::fs::read(merged.join("records.parquet")).unwrap(),
            records,
            "N = {n}"
        );
        assert_eq!(
            std::fs::read(merged.join("manifest.json")).unwrap(),
            manifest,
            "N = {n}"
        );
        let mut names: Vec<String> = std::fs::read_dir(&merged)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["manifest.json", "records.parquet"], "N = {n}");
    }
}

#[test]
fn unfinished_foreign_and_served_shards_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let s0 = tmp.path().join("s0");
    let s1 = tmp.path().join("s1");
    assert!(collect(&s0, &["--shard", "0/2"]).status.success());
    assert!(collect(&s1, &["--shard", "1/2"]).status.success());
    // A shard whose pair files were lost is unfinished: the merge names the pair and the shard.
    let lost = s1.join("records.partial/pair-000003.json");
    let aside = tmp.path().join("aside.json");
    std::fs::rename(&lost, &aside).unwrap();
    let out = tmp.path().join("merged");
    let o = merge(&[s0.clone(), s1.clone()], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("lacks 1 of its 2 jobs (job 3: records.partial/pair-000003.json)"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    // Rerunning the shard collects the lost pair again, with the same bytes.
    let o = collect(&s1, &["--shard", "1/2"]);
    assert!(text(&o).contains("(1 resumed)"), "{}", text(&o));
    assert_eq!(
        std::fs::read(&lost).unwrap(),
        std::fs::read(&aside).unwrap()
    );
    // A shard of another configuration.
    let other = tmp.path().join("other");
    assert!(
        collect(&other, &["--shard", "1/2", "--seed", "3"])
            .status
            .success()
    );
    let o = merge(&[s0.clone(), other.clone()], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("comes from another configuration"),
        "{}",
        text(&o)
    );
    // The same folder as another shard, or unsharded.
    let o = collect(&s0, &["--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("it holds shard 0/2, not 1/2"),
        "{}",
        text(&o)
    );
    let o = collect(&s0, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("resume it with --shard 0/2"),
        "{}",
        text(&o)
    );
    // A served policy cannot be sharded (checked before connecting).
    let o = roboaudit(&[
        "memory",
        "collect",
        "--policy",
        "ws://127.0.0.1:9",
        "--shard",
        "0/2",
        "--out",
        tmp.path().join("served").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--shard takes built-in policies only"),
        "{}",
        text(&o)
    );
    // An --out that is a file is a usage error.
    let file = tmp.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let o = merge(&[s0.clone(), s1.clone()], &file);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a file, not a folder"), "{}", text(&o));
    // The healthy pair of shards merges.
    let o = merge(&[s0, s1], &out);
    assert!(o.status.success(), "{}", text(&o));
}

/// A pair that does not read is refused in its shard folder before anything is merged, with
/// nothing at --out, so the same merge can run again once the shard is fixed.
#[test]
fn a_pair_that_does_not_read_is_refused_in_its_shard_and_leaves_nothing_at_out() {
    let tmp = tempfile::tempdir().unwrap();
    let s0 = tmp.path().join("s0");
    let s1 = tmp.path().join("s1");
    assert!(collect(&s0, &["--shard", "0/2"]).status.success());
    assert!(collect(&s1, &["--shard", "1/2"]).status.success());
    let pair = s1.join("records.partial/pair-000001.json");
    let good = std::fs::read(&pair).unwrap();
    std::fs::write(&pair, "{}").unwrap();
    let out = tmp.path().join("merged");
    let o = merge(&[s0.clone(), s1.clone()], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let named = format!(
        "records.partial/pair-000001.json in {} is not a finished pair",
        s1.display()
    );
    assert!(text(&o).contains(&named), "{}", text(&o));
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::write(&pair, good).unwrap();
    let o = merge(&[s0, s1], &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("records.parquet").is_file());
}

/// `status` reports the refusal `merge` would give (so it never calls a set of folders ready
/// that the merge refuses), and a merge into a shard folder is a usage error.
#[test]
fn status_reports_the_merge_refusal_and_out_inside_a_shard_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let s0 = tmp.path().join("s0");
    let s1 = tmp.path().join("s1");
    let other = tmp.path().join("other");
    assert!(collect(&s0, &["--shard", "0/2"]).status.success());
    assert!(collect(&s1, &["--shard", "1/2"]).status.success());
    assert!(
        collect(&other, &["--shard", "1/2", "--seed", "3"])
            .status
            .success()
    );
    let status = |dirs: &[&Path]| {
        let mut args = vec!["status"];
        args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
        roboaudit(&args)
    };
    let o = status(&[&s0, &other]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("2 of 2 shard folders complete"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("not mergeable"), "{}", text(&o));
    assert!(
        text(&o).contains("(shard 1/2) comes from another configuration"),
        "{}",
        text(&o)
    );
    let o = status(&[&s0]);
    assert!(text(&o).contains("shard 1/2 is missing"), "{}", text(&o));
    let o = status(&[&s0, &s1]);
    assert!(text(&o).contains("ready to merge"), "{}", text(&o));
    for inside in [s0.join("merged"), s1.join("records.partial/x")] {
        let o = merge(&[s0.clone(), s1.clone()], &inside);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("lies inside the shard folder"),
            "{}",
            text(&o)
        );
        assert!(!inside.exists());
    }
}
