//! `inspect` on damaged synthetic LeRobot datasets: non-finite values, undecodable frames and
//! missing data files are problems, marked blocking where `fqe fit` reads them, and the labels
//! verdict says what fit would actually do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod lerobot_common;

use std::fs;

use lerobot_common::*;
use roboaudit_data::lerobot::{LeRobotDataset, SuccessSource, render_inspect};

#[test]
fn image_size_is_checked_against_the_declared_shape() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    // Declared HWC 8×8 while the PNGs are 5 wide, 4 high.
    edit_json(&dir.path().join("meta/info.json"), |v| {
        v["features"]["observation.image"]["shape"] = serde_json::json!([8, 8, 3]);
    });
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let p = report
        .problems
        .iter()
        .find(|p| p.message.contains("image feature \"observation.image\""))
        .unwrap_or_else(|| panic!("{:#?}", report.problems));
    assert!(
        p.message.contains(
            "the first image is 5×4 (width×height), the declared shape [8, 8, 3] says 8×8"
        ),
        "{}",
        p.message
    );
    assert_eq!(p.row, Some(1));
}

#[test]
fn non_finite_values_and_undecodable_frames_are_problems_and_block_where_fit_reads() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    let mut frames = v3_frames();
    // Episode 0 frame 1's state is NaN (fit reads it: blocking); row 3's reward is infinite
    // (fit does not read it by default: listed, not blocking); episode 1's last PNG is cut in
    // half (the terminal frame the detector reads).
    frames.states[1][0] = f32::NAN;
    frames.rewards[2] = f32::INFINITY;
    let last = frames.images.len() - 1;
    let cut = frames.images[last].len() / 2;
    frames.images[last].truncate(cut);
    write_v3_data(dir.path(), &frames, &[]);
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let find = |needle: &str| {
        report
            .problems
            .iter()
            .find(|p| p.message.contains(needle))
            .unwrap_or_else(|| panic!("no problem containing {needle:?} in {:#?}", report.problems))
            .clone()
    };
    let p = find(
        "column \"observation.state\": 1 rows hold NaN or infinite values (first: row 2, episode 0, frame_index 1",
    );
    assert_eq!((p.episode, p.row, p.blocking), (Some(0), Some(2), true));
    let p = find("column \"next.reward\": 1 rows hold NaN or infinite values (first: row 3");
    assert!(!p.blocking);
    let p = find("image feature \"observation.image\", episode 1, frame_index 1:");
    assert_eq!((p.episode, p.row, p.blocking), (Some(1), Some(5), true));
    assert!(p.file.ends_with("data/chunk-000/file-000.parquet"));
    assert_eq!(report.blocking_problems, 2, "{:#?}", report.problems);
    assert!(
        render_inspect(&report).contains("problems (4; 2 stop `fqe fit`)"),
        "{}",
        render_inspect(&report)
    );
}

#[test]
fn a_missing_data_file_blocks_and_the_labels_verdict_says_the_data_was_not_read() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    fs::remove_file(dir.path().join("data/chunk-000/file-000.parquet")).unwrap();
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let missing = report
        .problems
        .iter()
        .find(|p| p.message.starts_with("data file is missing"))
        .unwrap();
    assert!(missing.blocking);
    assert_eq!(report.blocking_problems, 1, "{:#?}", report.problems);
    let verdict = &report.labels.verdict;
    assert!(
        verdict.contains("the data could not be read (1 of 1 data file(s)"),
        "{verdict}"
    );
    assert!(!verdict.contains("no success label"), "{verdict}");
}

#[test]
fn a_declared_success_column_absent_from_the_data_is_not_replaced_by_the_reward() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    write_v3_data(dir.path(), &v3_frames(), &["next.success"]);
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let report = ds.inspect().unwrap();
    let verdict = &report.labels.verdict;
    // `fqe fit` reads the declared column and fails on it; the binary reward is not what it
    // would use, so it is offered as a labels file.
    assert!(
        verdict.starts_with("\"next.success\" is declared in meta/info.json but has no column in the data files: `fqe fit` reads it by default and would fail; pass --labels FILE"),
        "{verdict}"
    );
    assert!(
        verdict.contains("--reward next.reward --rule last"),
        "{verdict}"
    );
    assert!(
        ds.success_labels(&SuccessSource::Column("next.success".into()))
            .is_err()
    );
    let missing = report
        .problems
        .iter()
        .find(|p| p.message.contains("\"next.success\" has no column"))
        .unwrap();
    assert!(!missing.blocking, "a labels file fixes it");
    assert!(
        !report
            .problems
            .iter()
            .any(|p| p.message.contains("never true")),
        "{:#?}",
        report.problems
    );
}

#[test]
fn stats_json_is_parsed_and_its_lengths_checked_against_the_features() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    let stats_file = dir.path().join("meta/stats.json");
    let stats_problems = |root: &std::path::Path| -> Vec<_> {
        LeRobotDataset::open(root)
            .unwrap()
            .inspect()
            .unwrap()
            .problems
            .into_iter()
            .filter(|p| p.file.ends_with("meta/stats.json"))
            .collect()
    };
    // LeRobot's layout: one value per element for vectors, (c, 1, 1) per channel for cameras.
    let good = serde_json::json!({
        "observation.state": {"mean": [0.0, 1.0], "std": [1.0, 1.0], "count": [5]},
        "action": {"min": [0, 0, 0], "max": [1, 1, 1]},
        "observation.image": {"mean": [[[0.5]], [[0.5]], [[0.5]]]},
        "observation.images.wrist": {"std": [[[0.2]], [[0.2]], [[0.2]]]},
        "not_a_feature": {"mean": [1, 2, 3, 4]}
    });
    let text = serde_json::to_string_pretty(&good).unwrap();
    fs::write(&stats_file, &text).unwrap();
    assert_eq!(stats_problems(dir.path()), vec![]);

    // A file cut off mid-way: the line and column where parsing stopped.
    let cut = &text[..text.find("\"action\"").unwrap() + 4];
    fs::write(&stats_file, cut).unwrap();
    let p = stats_problems(dir.path());
    assert_eq!(p.len(), 1, "{p:#?}");
    let lines = cut.lines().count();
    assert_eq!(p[0].row, None);
    assert!(
        p[0].message.starts_with("not valid JSON (")
            && p[0].message.contains(&format!(" at line {lines} column ")),
        "{}",
        p[0].message
    );
    assert!(!p[0].blocking);
    let text = render_inspect(&LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap());
    assert!(text.contains("; none stops `fqe fit`)"), "{text}");

    let mut wrong = good.clone();
    wrong["observation.state"]["mean"] = serde_json::json!([0.0, 1.0, 2.0]);
    wrong["observation.image"]["mean"] = serde_json::json!([[[0.5]], [[null]], [[0.5]]]);
    fs::write(&stats_file, serde_json::to_string(&wrong).unwrap()).unwrap();
    // In the order of the dataset's features.
    let messages: Vec<String> = stats_problems(dir.path())
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(
        messages,
        vec![
            "\"observation.image\".mean holds values that are not numbers",
            "\"observation.state\".mean holds 3 values where feature shape [2] needs 2",
        ]
    );
}

/// A gap in the global index is listed; a repeat blocks: `fqe fit` matches frames and
/// policy-actions files by it and refuses the dataset.
#[test]
fn a_repeated_global_index_blocks_and_a_gap_does_not() {
    for (edit, what, blocking) in [(1, "repeats 0", true), (4, "skips to 7", false)] {
        let dir = tempfile::tempdir().unwrap();
        write_v3(dir.path());
        let mut frames = v3_frames();
        frames.index[edit] = if blocking { frames.index[0] } else { 7 };
        write_v3_data(dir.path(), &frames, &[]);
        let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
        let p = report
            .problems
            .iter()
            .find(|p| p.message.contains("the global index over all data files"))
            .unwrap_or_else(|| panic!("{:#?}", report.problems));
        assert!(p.message.ends_with(what), "{}", p.message);
        assert_eq!(p.blocking, blocking, "{}", p.message);
    }
}

/// A value the scan cannot read (a null in `next.success`) is one blocking problem naming the
/// row; the file's episodes are not then listed as empty.
#[test]
fn a_null_value_is_one_problem_not_a_list_of_empty_episodes() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    let success: arrow_array::ArrayRef =
        std::sync::Arc::new(arrow_array::BooleanArray::from(vec![
            Some(false),
            None,
            Some(false),
            Some(false),
            Some(true),
        ]));
    write_v3_data_replacing(
        dir.path(),
        &v3_frames(),
        &[],
        vec![("next.success", success)],
    );
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let messages: Vec<&str> = report.problems.iter().map(|p| p.message.as_str()).collect();
    let bad: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.message.contains("next.success"))
        .collect();
    assert_eq!(bad.len(), 1, "{messages:#?}");
    assert_eq!((bad[0].row, bad[0].blocking), (Some(2), true));
    assert!(
        bad[0]
            .message
            .ends_with("its 2 episode(s) are not checked further"),
        "{}",
        bad[0].message
    );
    assert!(
        !messages.iter().any(|m| m.contains("has no rows")),
        "{messages:#?}"
    );
}
