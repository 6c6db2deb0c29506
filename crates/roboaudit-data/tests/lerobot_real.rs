//! The five real LeRobot datasets (recordings by others, named by `ROBOAUDIT_SHARED_DATASETS`): every one
//! must open and inspect, with values checked against `lerobot_reference.json` (written by
//! `scripts/lerobot_reference.py` with pyarrow), and each documented oddity reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use roboaudit_data::lerobot::{
    FeatureKind, InspectReport, LeRobotDataset, LeRobotVersion, SuccessSource,
};
use serde_json::Value;

/// The real datasets' folder, named by `ROBOAUDIT_SHARED_DATASETS` (`.ci/run` sets it). The tests
/// that need it are ignored by a plain `cargo test`, which uses only what the repository holds; named
/// explicitly, a missing folder fails them loudly.
fn datasets_dir() -> PathBuf {
    let dir = std::env::var_os("ROBOAUDIT_SHARED_DATASETS")
        .map(PathBuf::from)
        .expect("set ROBOAUDIT_SHARED_DATASETS to the folder holding the real LeRobot datasets");
    assert!(
        dir.join("README.md").is_file(),
        "the real LeRobot datasets are missing: ROBOAUDIT_SHARED_DATASETS names {}, which has no README.md; \
         these tests must not pass without them",
        dir.display()
    );
    dir
}

fn reference(name: &str) -> Value {
    let all: Value =
        serde_json::from_str(include_str!("lerobot_reference.json")).expect("reference JSON");
    all[name].clone()
}

fn open(name: &str) -> (LeRobotDataset, InspectReport, Value) {
    let ds = LeRobotDataset::open(datasets_dir().join(name)).expect(name);
    let report = ds.inspect().expect(name);
    (ds, report, reference(name))
}

fn messages(report: &InspectReport) -> Vec<String> {
    report.problems.iter().map(|p| p.message.clone()).collect()
}

fn has(report: &InspectReport, needle: &str) -> bool {
    report.problems.iter().any(|p| p.message.contains(needle))
}

/// Checks shared by every dataset: summary numbers and one probe episode against pyarrow.
fn check_common(ds: &LeRobotDataset, report: &InspectReport, r: &Value) {
    assert_eq!(report.version.as_str(), r["version"].as_str().unwrap());
    assert_eq!(report.robot_type.as_deref(), r["robot_type"].as_str());
    assert!((report.fps - r["fps"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(report.episodes as u64, r["episodes"].as_u64().unwrap());
    assert_eq!(
        report.episodes_in_data as u64,
        r["episodes"].as_u64().unwrap()
    );
    assert_eq!(report.frames as u64, r["frames"].as_u64().unwrap());
    assert_eq!(report.total_frames, r["frames"].as_u64());
    let (lo, hi) = report.episode_length_range.unwrap();
    assert_eq!(
        (lo as u64, hi as u64),
        (
            r["min_length"].as_u64().unwrap(),
            r["max_length"].as_u64().unwrap()
        )
    );
    let key = r["action_key"].as_str().unwrap();
    let probe = r["probe_episode"].as_i64().unwrap();
    let ep = ds.read_episode_frames(probe, &[key]).unwrap();
    assert_eq!(ep.len() as u64, r["probe_length"].as_u64().unwrap());
    assert_eq!(ep.index[0], r["probe_first_index"].as_i64().unwrap());
    let as_f32 = |v: &Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let actions = ep.column(key).unwrap();
    assert_eq!(actions[0], as_f32(&r["probe_first_action"]));
    assert_eq!(actions[actions.len() - 1], as_f32(&r["probe_last_action"]));
    let videos: Vec<&str> = ds
        .features()
        .iter()
        .filter(|f| f.kind == FeatureKind::Video)
        .map(|f| f.name.as_str())
        .collect();
    let expected: Vec<&str> = r["video_features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(videos, expected);
    // Every problem names a file, except the "... and N more" summaries.
    for p in &report.problems {
        assert!(
            !p.file.as_os_str().is_empty() || p.message.starts_with("... and"),
            "{p:?}"
        );
    }
    // No check about rows, indices, timestamps or metadata fails on these datasets.
    for kind in [
        "frame_index is",
        "timestamp is",
        "global index",
        "dataset_from_index",
        "has length",
        "total_frames is",
        "rows do not have",
    ] {
        assert!(
            !has(report, kind),
            "unexpected {kind:?}: {:#?}",
            messages(report)
        );
    }
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn so101_record_test() {
    let (ds, report, r) = open("so101_record_test");
    check_common(&ds, &report, &r);
    assert_eq!(
        ds.tasks()[0].task,
        "Pick the orange cube and place it in the box"
    );
    assert_eq!(report.videos.len(), 2);
    assert!(
        report
            .videos
            .iter()
            .all(|v| v.files_expected == 1 && v.files_present == 0)
    );
    assert!(has(
        &report,
        "video feature \"observation.images.front\": 1 of 1 video files are missing"
    ));
    assert_eq!(report.problems.len(), 2, "{:#?}", messages(&report));
    assert!(report.labels.verdict.contains("supply a labels file"));
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn pusht_v30_labels() {
    let (ds, report, r) = open("pusht_v30");
    check_common(&ds, &report, &r);
    assert_eq!(
        report.labels.success_columns,
        [("next.success".to_owned(), 0)]
    );
    assert!(has(
        &report,
        "\"next.success\" is never true in any of the 206 episodes"
    ));
    let done = report
        .problems
        .iter()
        .find(|p| {
            p.message.contains(
                "\"next.done\" is true on frames other than the last in 206 of 206 episodes",
            )
        })
        .unwrap();
    assert!(
        done.message
            .contains("episode 0: frames [159, 160] of 0..=160"),
        "{}",
        done.message
    );
    assert_eq!(done.file.to_str(), Some("data/chunk-000/file-000.parquet"));
    assert!(!has(&report, "is false on the last frame"));
    assert_eq!(report.problems.len(), 3, "{:#?}", messages(&report));
    assert_eq!(
        report.labels.done_frames,
        r["done_frames"].as_u64().map(|d| d as usize)
    );
    let reward = report.labels.reward.as_ref().unwrap();
    assert_eq!(
        reward.nonzero_frames as u64,
        r["reward_nonzero"].as_u64().unwrap()
    );
    assert!((reward.mean - r["reward_mean"].as_f64().unwrap()).abs() < 1e-9);
    assert!((reward.max - r["reward_max"].as_f64().unwrap()).abs() < 1e-12);
    assert!((reward.max_last - r["reward_max_last"].as_f64().unwrap()).abs() < 1e-12);
    assert!(!reward.binary);
    assert!(
        report.labels.verdict.contains("no usable success label"),
        "{}",
        report.labels.verdict
    );
    let image = ds.feature("observation.image").unwrap();
    assert_eq!(
        image.video.as_ref().unwrap().codec.as_deref(),
        Some("av1"),
        "video_info read"
    );
    assert_eq!(
        ds.feature("action").unwrap().names.as_ref().unwrap(),
        &["motor_0", "motor_1"]
    );
    let labels = ds
        .success_labels(&SuccessSource::Column("next.success".into()))
        .unwrap();
    assert_eq!(
        (labels.len(), labels.iter().filter(|l| l.success).count()),
        (206, 0)
    );
    let thresholded = ds
        .success_labels(&SuccessSource::LastReward {
            column: "next.reward".into(),
            threshold: 0.9,
        })
        .unwrap();
    // pyarrow: 90 episodes end at ≥ 0.90 coverage, 92 reach it at some frame, none reach 0.95.
    assert_eq!(thresholded.iter().filter(|l| l.success).count(), 90);
    let peak = |threshold| {
        ds.success_labels(&SuccessSource::MaxReward {
            column: "next.reward".into(),
            threshold,
        })
        .unwrap()
        .iter()
        .filter(|l| l.success)
        .count()
    };
    assert_eq!((peak(0.9), peak(0.95), peak(0.8)), (92, 0, 206));
    let err = ds.read_frames(&["observation.velocity"]).unwrap_err();
    assert!(
        err.to_string().contains(
            "declared features: action (float32[2]), next.done (bool[1]), next.reward (float32[1]), \
             next.success (bool[1]), observation.image (video), observation.state (float32[2])"
        ),
        "{err}"
    );
    let err = ds.read_image(0, 0, "observation.image").unwrap_err();
    assert!(
        err.to_string().contains("is a video") && err.to_string().contains("not an image"),
        "{err}"
    );
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn piper_act_v30_multi_file() {
    let (ds, report, r) = open("piper_act_v30");
    check_common(&ds, &report, &r);
    assert_eq!(report.data_files, 3);
    assert_eq!(ds.feature("action").unwrap().width(), 6);
    assert_eq!(ds.feature("observation.state").unwrap().width(), 7);
    assert_eq!(ds.tasks()[0].task, "Put the grape on the white plate.");
    assert!(
        report
            .videos
            .iter()
            .all(|v| v.files_expected == 3 && v.files_present == 0)
    );
    assert_eq!(report.problems.len(), 2, "{:#?}", messages(&report));
    // All 13331 frames across the three files, episodes in order.
    let all = ds.read_frames(&["observation.state"]).unwrap();
    assert_eq!(all.iter().map(|e| e.len()).sum::<usize>(), 13331);
    assert_eq!(
        all.iter().map(|e| e.episode_index).collect::<Vec<_>>(),
        (0..55).collect::<Vec<_>>()
    );
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn g1_inspire_v21_partial_videos() {
    let (ds, report, r) = open("g1_inspire_v21");
    check_common(&ds, &report, &r);
    assert_eq!(ds.version(), LeRobotVersion::V2_1);
    assert_eq!(
        ds.feature("action").unwrap().names.as_ref().unwrap().len(),
        26,
        "nested names"
    );
    let v = &report.videos[0];
    assert_eq!((v.files_expected, v.files_present), (100, 2));
    assert_eq!(v.found_codec.as_deref(), Some("av1"));
    assert!(has(
        &report,
        "98 of 100 video files are missing (first: episode 0)"
    ));
    assert_eq!(report.problems.len(), 1, "{:#?}", messages(&report));
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn lingzu_open50_v30_oddities() {
    let (ds, report, r) = open("lingzu_open50_v30");
    check_common(&ds, &report, &r);
    assert_eq!(report.data_files, 50);
    let actions = report
        .features
        .iter()
        .find(|f| f.name == "actions")
        .unwrap();
    assert_eq!(actions.storage.as_deref(), Some("list<Float32>"));
    assert!(
        actions
            .note
            .as_deref()
            .unwrap()
            .contains("variable-size list")
    );
    assert!(has(&report, "50 of 50 video files are missing"));
    let misplaced = report
        .problems
        .iter()
        .find(|p| p.message.contains("different folder than video_path"))
        .unwrap();
    assert_eq!(
        misplaced.file.to_str(),
        Some("video/image/chunk-000/file-028.mp4")
    );
    assert!(has(
        &report,
        "video feature \"image\" declares codec h264, but its MP4 file holds mpeg4"
    ));
    assert!(has(
        &report,
        "to_timestamp − from_timestamp disagrees with length/fps in 50 of 50 episode videos, each one frame short"
    ));
    assert!(has(
        &report,
        "e.g. episode 0 videos/image: 14.2000 s, but 427/30 = 14.2333 s"
    ));
    assert_eq!(report.problems.len(), 4, "{:#?}", messages(&report));
    let ep = ds.read_episode_frames(0, &["state", "actions"]).unwrap();
    assert!(ep.column("state").unwrap().iter().all(|v| v.len() == 34));
}
