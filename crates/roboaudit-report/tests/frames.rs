//! The FQE section's frame strip, on the H.264 v3.0 fixture of roboaudit-data (written by
//! `scripts/make_video_fixtures.py` with PyAV; `video_reference.json` holds the CRC-32 of the
//! RGB24 frame LeRobot's pyav path picks for every frame).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use base64::Engine;
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe::{DatasetIdentity, FqeReport};
use roboaudit_report::{PlotKind, build_report, render_html};
use std::path::{Path, PathBuf};

fn video_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../roboaudit-data/tests/fixtures/video_v30")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `ROOT/run/dataset` (the fixture) and `ROOT/fit/fqe.json` recording it as `run/dataset`, the
/// relative path the demo records; the report's tasks are `tasks`.
fn fit_beside_dataset(root: &Path, tasks: &[&str]) -> PathBuf {
    let dataset = root.join("run/dataset");
    copy_dir(&video_fixture(), &dataset);
    common::fqe_fixture(&root.join("fit"));
    let file = root.join("fit/fqe.json");
    let mut fqe: FqeReport = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut identity = DatasetIdentity::of(&LeRobotDataset::open(&dataset).unwrap()).unwrap();
    identity.path = PathBuf::from("run/dataset");
    fqe.dataset = Some(identity);
    fqe.tasks = tasks.iter().map(|t| (*t).to_owned()).collect();
    std::fs::write(&file, serde_json::to_vec_pretty(&fqe).unwrap()).unwrap();
    root.join("fit")
}

fn reference_crc(episode: usize, frame: usize) -> u64 {
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../roboaudit-data/tests/fixtures/video_reference.json"),
        )
        .unwrap(),
    )
    .unwrap();
    r["video_v30"][episode.to_string()][frame].as_u64().unwrap()
}

fn rgb_of_png(b64: &str) -> (u32, u32, Vec<u8>) {
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut rgb).unwrap();
    (info.width, info.height, rgb)
}

#[test]
fn the_strip_shows_the_first_and_last_decoded_frames_of_each_tasks_first_episode() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = LeRobotDataset::open(video_fixture()).unwrap();
    let task = ds.episodes()[0].tasks[0].clone();
    let fit = fit_beside_dataset(tmp.path(), &[&task, "a task with no episode"]);
    let report = build_report(&[fit]).unwrap();
    let s = &report.fqe[0];
    assert_eq!(s.frames_note, None);
    let strip = s.frames.as_ref().unwrap();
    assert_eq!(strip.camera, "observation.images.cam");
    // Found relative to the report's parent folder, where the demo keeps it.
    assert_eq!(strip.dataset, tmp.path().join("run/dataset"));
    // The task without an episode has no row; the other's first episode is episode 0, whose
    // 12 frames are 0..=11 (video_reference.json).
    assert_eq!(strip.tasks.len(), 1);
    let row = &strip.tasks[0];
    assert_eq!((row.task.as_str(), row.episode), (task.as_str(), 0));
    assert_eq!(
        row.frames.iter().map(|f| f.frame).collect::<Vec<_>>(),
        [0, 11]
    );
    // 48 rows is under the thumbnail height: the frames are embedded unscaled, so their pixels
    // are exactly the frames PyAV decodes for those timestamps.
    for f in &row.frames {
        let (w, h, rgb) = rgb_of_png(&f.png_base64);
        assert_eq!((w, h, f.width, f.height), (64, 48, 64, 48));
        let frame = usize::try_from(f.frame).unwrap();
        assert_eq!(u64::from(crc32fast::hash(&rgb)), reference_crc(0, frame));
    }
    let html = render_html(&report).unwrap();
    assert_eq!(html.matches("<img src=\"data:image/png;base64,").count(), 2);
    assert!(html.contains("data-kind=\"fqe_frames\""));
    let spec = report
        .plots
        .iter()
        .find(|p| p.kind == PlotKind::FqeFrames)
        .unwrap();
    assert!(spec.available);
}

#[test]
fn a_dataset_that_changed_or_went_missing_skips_the_strip_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = fit_beside_dataset(tmp.path(), &["anything"]);
    // Another dataset at the recorded place: one episode's length differs in the metadata
    // fingerprint (info.json edited).
    let info = tmp.path().join("run/dataset/meta/info.json");
    let text = std::fs::read_to_string(&info).unwrap();
    std::fs::write(
        &info,
        text.replace("\"robot_type\": \"synthetic\"", "\"robot_type\": \"other\""),
    )
    .unwrap();
    let report = build_report(std::slice::from_ref(&fit)).unwrap();
    let note = report.fqe[0].frames_note.clone().unwrap();
    assert!(note.contains("is not the one the fit used"), "{note}");
    let spec = report
        .plots
        .iter()
        .find(|p| p.kind == PlotKind::FqeFrames)
        .unwrap();
    assert!(!spec.available);
    assert_eq!(spec.note.as_deref(), Some(note.as_str()));
    // A damaged dataset is named as such, not as missing.
    std::fs::write(&info, "{garbage").unwrap();
    let report = build_report(std::slice::from_ref(&fit)).unwrap();
    let note = report.fqe[0].frames_note.clone().unwrap();
    assert!(note.starts_with("the dataset cannot be read: "), "{note}");
    assert!(note.contains("info.json"), "{note}");
    std::fs::remove_dir_all(tmp.path().join("run")).unwrap();
    let report = build_report(&[fit]).unwrap();
    let note = report.fqe[0].frames_note.clone().unwrap();
    assert!(
        note.starts_with("dataset run/dataset not found beside"),
        "{note}"
    );
    assert!(
        render_html(&report)
            .unwrap()
            .contains("Plot skipped — What was evaluated")
    );
}
