//! `memory intervene --shard I/N` and `roboaudit merge`: the merged shards are the unsharded
//! study's interventions.json and interventions.md, byte for byte, for any N.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use std::path::{Path, PathBuf};

const EPISODES: usize = 4;

/// A replacement study of the bank policy (its recall draws are seeded per query, so a shard
/// that ran its recipients in another process order would show), unless `extra` names the
/// study and policy.
fn intervene(out: &Path, extra: &[&str]) -> std::process::Output {
    let episodes = EPISODES.to_string();
    let mut args = vec!["memory", "intervene"];
    if !extra.contains(&"--study") {
        args.extend(["--study", "replacement", "--policy", "bank"]);
    }
    args.extend([
        "--episodes",
        episodes.as_str(),
        "--resamples",
        "200",
        "--out",
    ]);
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

fn shards(root: &Path, name: &str, n: usize, extra: &[&str]) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let d = root.join(format!("{name}-{i}"));
            let spec = format!("{i}/{n}");
            let mut args = vec!["--shard", spec.as_str()];
            args.extend_from_slice(extra);
            let o = intervene(&d, &args);
            assert!(o.status.success(), "{spec}: {}", text(&o));
            let owned = (0..EPISODES).filter(|e| e % n == i).count();
            assert!(
                text(&o).contains(&format!("shard {spec}: {owned} of {EPISODES} recipients")),
                "{spec}: {}",
                text(&o)
            );
            assert!(!d.join("interventions.json").exists());
            d
        })
        .collect()
}

#[test]
fn merged_shards_equal_the_unsharded_study() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = intervene(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let json = std::fs::read(whole.join("interventions.json")).unwrap();
    let md = std::fs::read(whole.join("interventions.md")).unwrap();
    for n in [1usize, 2, 3, 7] {
        let dirs = shards(tmp.path(), &format!("n{n}"), n, &[]);
        let merged = tmp.path().join(format!("merged-{n}"));
        let o = merge(&dirs, &merged);
        assert!(o.status.success(), "N = {n}: {}", text(&o));
        assert!(text(&o).contains("assembled"), "{}", text(&o));
        assert_eq!(
            std::fs::read(merged.join("interventions.json")).unwrap(),
            json,
            "N = {n}"
        );
        assert_eq!(
            std::fs::read(merged.join("interventions.md")).unwrap(),
            md,
            "N = {n}"
        );
        let mut names: Vec<String> = std::fs::read_dir(&merged)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["interventions.json", "interventions.md"], "N = {n}");
    }
}

/// The restoration study (its own conditions and fault hook) merges to the same bytes too.
#[test]
fn merged_restoration_shards_equal_the_unsharded_study() {
    let tmp = tempfile::tempdir().unwrap();
    let restoration = ["--study", "restoration", "--policy", "faithful"];
    let whole = tmp.path().join("whole");
    let o = intervene(&whole, &restoration);
    assert!(o.status.success(), "{}", text(&o));
    let dirs = shards(tmp.path(), "r", 2, &restoration);
    let merged = tmp.path().join("merged");
    let o = merge(&dirs, &merged);
    assert!(o.status.success(), "{}", text(&o));
    for f in ["interventions.json", "interventions.md"] {
        assert_eq!(
            std::fs::read(merged.join(f)).unwrap(),
            std::fs::read(whole.join(f)).unwrap(),
            "{f}"
        );
    }
    let md = std::fs::read_to_string(merged.join("interventions.md")).unwrap();
    assert!(md.contains("restoration study"), "{md}");
}

#[test]
fn lost_duplicated_and_foreign_recipients_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = shards(tmp.path(), "s", 2, &[]);
    let out = tmp.path().join("merged");
    // A recipient lost (a shard killed before it finished): named with its shard; a rerun of
    // that shard collects it again with the same bytes and keeps the other.
    let lost = dirs[0].join("interventions.partial/recipient-000002.json");
    let aside = tmp.path().join("aside.json");
    std::fs::rename(&lost, &aside).unwrap();
    let o = merge(&dirs, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o)
            .contains("lacks 1 of its 2 jobs (job 2: interventions.partial/recipient-000002.json)"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    let o = intervene(&dirs[0], &["--shard", "0/2"]);
    assert!(text(&o).contains("(1 resumed)"), "{}", text(&o));
    assert_eq!(
        std::fs::read(&lost).unwrap(),
        std::fs::read(&aside).unwrap()
    );
    // A recipient of shard 1 copied into shard 0.
    let copy = dirs[0].join("interventions.partial/recipient-000001.json");
    std::fs::copy(
        dirs[1].join("interventions.partial/recipient-000001.json"),
        &copy,
    )
    .unwrap();
    let o = merge(&dirs, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("job 1 (interventions.partial/recipient-000001.json) is duplicated"),
        "{}",
        text(&o)
    );
    std::fs::remove_file(&copy).unwrap();
    // A shard of another configuration, and a missing shard.
    let other = shards(tmp.path(), "other", 2, &["--seed", "3"]);
    let o = merge(&[dirs[0].clone(), other[1].clone()], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("comes from another configuration"),
        "{}",
        text(&o)
    );
    let o = merge(&dirs[..1], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("shard 1/2 is missing"), "{}", text(&o));
    // An unsharded study into a shard's folder, a served policy with --shard.
    let o = intervene(&dirs[0], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("resume it with --shard 0/2"),
        "{}",
        text(&o)
    );
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "replacement",
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
    let o = merge(&dirs, &out);
    assert!(o.status.success(), "{}", text(&o));
}
