//! `roboaudit data labels`: where the labels file may go (a .csv outside the dataset, its
//! missing parent folder created) and the exit code of a reward column that will not do (2,
//! naming it and the usable ones), on a copy of the pusht fixture (a scalar `next.reward`, a
//! two-wide `action`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::path::{Path, PathBuf};

/// A copy of the pusht fixture in a temporary folder, so that a command that wrongly writes
/// into the dataset cannot touch the checked-in fixture.
fn dataset() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("pusht");
    copy_tree(
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real/pusht_v30"
        )),
        &ds,
    );
    (dir, ds)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// Every path under `dir`, recursively, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(listing(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn labels(ds: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "data",
        "labels",
        s(ds),
        "--threshold",
        "0.9",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    roboaudit(&args)
}

#[test]
fn an_out_that_is_not_csv_is_refused_and_an_fqe_result_survives() {
    let (dir, ds) = dataset();
    let fit = dir.path().join("some-fit");
    std::fs::create_dir(&fit).unwrap();
    let fqe = fit.join("fqe.json");
    let body = "{\"schema\": \"roboaudit.fqe.v1\"}\n";
    std::fs::write(&fqe, body).unwrap();
    let o = labels(&ds, &fqe, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--out"), "{}", text(&o));
    assert!(text(&o).contains(".csv"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&fqe).unwrap(), body);
    // Checked before any work: a dataset that does not exist is not reached.
    let o = labels(Path::new("/nonexistent"), &fit.join("l.parquet"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!fit.join("l.parquet").exists());
}

#[test]
fn an_existing_csv_that_is_not_labels_survives_and_labels_are_replaced() {
    let (dir, ds) = dataset();
    let log = dir.path().join("executions.csv");
    let body = "experience_id,query_scene_id,seed,success\ne0,s0,0,1\n";
    std::fs::write(&log, body).unwrap();
    let o = labels(&ds, &log, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is not a labels file"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), body);
    // An earlier labels file is the command's own output: rewritten.
    let mine = dir.path().join("labels.csv");
    std::fs::write(&mine, "episode_index,success\n0,1\n").unwrap();
    let o = labels(&ds, &mine, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(
        std::fs::read_to_string(&mine).unwrap(),
        "episode_index,success\n0,1\n"
    );
}

#[test]
fn an_out_inside_the_dataset_is_refused_however_spelt() {
    let (_dir, ds) = dataset();
    let before = listing(&ds);
    for out in [
        ds.join("labels.csv"),
        ds.join("meta/../res/labels.csv"),
        ds.join("data/chunk-000/labels.csv"),
    ] {
        let o = labels(&ds, &out, &[]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", out.display(), text(&o));
        assert!(
            text(&o).contains("is inside the dataset folder"),
            "{}: {}",
            out.display(),
            text(&o)
        );
        assert_eq!(
            listing(&ds),
            before,
            "{} wrote into the dataset",
            out.display()
        );
    }
}

#[test]
fn a_missing_parent_folder_of_out_is_created() {
    let (dir, ds) = dataset();
    let out = dir.path().join("missing dir/deeper/pl.csv");
    let o = labels(&ds, &out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("episode_index,success\n"), "{csv}");
    assert_eq!(csv.lines().count(), 13, "{csv}");
    // Nothing but the labels file was left there (no temporary file).
    assert_eq!(listing(&dir.path().join("missing dir/deeper")), vec![out]);
}

#[test]
fn a_reward_column_that_is_missing_or_not_scalar_is_a_usage_error_listing_usable_ones() {
    let (dir, ds) = dataset();
    let out = dir.path().join("pl.csv");
    for (reward, why) in [
        ("nope", "declares no column \"nope\""),
        ("action", "width 2"),
    ] {
        let o = labels(&ds, &out, &["--reward", reward]);
        assert_eq!(o.status.code(), Some(2), "{reward}: {}", text(&o));
        for n in [
            format!("--reward {reward}"),
            why.to_owned(),
            "usable as a reward:".to_owned(),
            "next.reward".to_owned(),
        ] {
            assert!(text(&o).contains(&n), "{reward}: {n} not in {}", text(&o));
        }
        assert!(!out.exists(), "{reward} wrote output");
    }
}
