//! `roboaudit data inspect` on synthetic datasets: a clean one passes, and a problem that would
//! stop `fqe fit` (a missing data file, a NaN state, an undecodable frame) is listed and exits
//! with code 3, with a labels verdict that does not pretend the data was read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use roboaudit_fqe::detector::synthetic::{GoalRun, write_goal_dataset};

fn dataset(run: &GoalRun) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    write_goal_dataset(dir.path(), run).unwrap();
    let ds = dir.path().join("dataset").to_str().unwrap().to_owned();
    (dir, ds)
}

#[test]
fn a_clean_dataset_has_no_problems_and_exits_0() {
    let (_dir, ds) = dataset(&GoalRun {
        episodes: 6,
        ..GoalRun::default()
    });
    let o = roboaudit(&["data", "inspect", &ds]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("problems: none"), "{}", text(&o));
}

#[test]
fn non_finite_states_and_undecodable_frames_are_found_and_exit_3() {
    // Episode 1's first frame (index 4) has a NaN state; episode 4's last PNG (index 19) is
    // cut in half.
    let (_dir, ds) = dataset(&GoalRun {
        episodes: 6,
        nan_state: Some(4),
        corrupt_png: Some(19),
        ..GoalRun::default()
    });
    let o = roboaudit(&["data", "inspect", &ds]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    for needle in [
        "column \"observation.state\": 1 rows hold NaN or infinite values (first: row 5, episode 1, frame_index 0",
        "image feature \"observation.image\", episode 4, frame_index 3:",
        "2 problem(s) make the dataset unusable",
    ] {
        assert!(t.contains(needle), "{needle} not in {t}");
    }
    assert!(!t.contains("problems: none"), "{t}");
    let o = roboaudit(&["data", "inspect", "--json", &ds]);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["blocking_problems"], 2, "{r}");
}

#[test]
fn a_missing_data_file_exits_3_and_the_labels_are_not_judged() {
    let (dir, ds) = dataset(&GoalRun {
        episodes: 6,
        ..GoalRun::default()
    });
    std::fs::remove_file(dir.path().join("dataset/data/chunk-000/file-000.parquet")).unwrap();
    let o = roboaudit(&["data", "inspect", &ds]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("data file is missing"), "{t}");
    assert!(
        t.contains("verdict: labels not checked: the data could not be read"),
        "{t}"
    );
    assert!(!t.contains("no success label"), "{t}");
}
