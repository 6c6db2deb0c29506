//! `video` features of LeRobot datasets: the v2.1 (AV1, one MP4 per episode) and v3.0 (H.264,
//! two episodes in one MP4) fixtures written by `scripts/make_video_fixtures.py` with PyAV,
//! read frame by frame and compared with the frame LeRobot's pyav path picks (its RGB24
//! CRC-32 in `fixtures/video_reference.json`); the real-file variants (`video/` folder, codec
//! mismatch) and bad files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use roboaudit_data::DataError;
use roboaudit_data::lerobot::{DEFAULT_TOLERANCE_S, LeRobotDataset, Rgb8Image};
use serde_json::Value;

const KEY: &str = "observation.images.cam";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(name)
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

/// Every frame of every episode: (episode, frame) → (key, image).
fn all_frames(ds: &LeRobotDataset) -> BTreeMap<(i64, i64), (u64, Rgb8Image)> {
    let mut out = BTreeMap::new();
    ds.for_each_video_frame::<DataError>(
        KEY,
        DEFAULT_TOLERANCE_S,
        &mut |_| true,
        &mut |id, img| {
            assert!(
                out.insert((id.episode_index, id.frame_index), (id.key, img))
                    .is_none()
            );
            Ok(())
        },
    )
    .unwrap();
    out
}

#[test]
fn every_frame_is_the_one_lerobot_picks_in_both_layouts() {
    let reference: Value =
        serde_json::from_str(include_str!("fixtures/video_reference.json")).unwrap();
    for name in ["video_v21", "video_v30"] {
        let ds = LeRobotDataset::open(fixture(name)).unwrap();
        let frames = all_frames(&ds);
        let r = reference[name].as_object().unwrap();
        let mut n = 0;
        for (episode, crcs) in r {
            for (frame, crc) in crcs.as_array().unwrap().iter().enumerate() {
                let (_, img) = &frames[&(episode.parse().unwrap(), frame as i64)];
                assert_eq!((img.width, img.height), (64, 48));
                assert_eq!(
                    u64::from(crc32fast::hash(&img.pixels)),
                    crc.as_u64().unwrap(),
                    "{name} episode {episode} frame {frame}"
                );
                n += 1;
            }
        }
        assert_eq!(n, frames.len(), "{name}");
        // One frame alone (seek to the keyframe before it) is the same frame.
        let one = ds.read_video_frame(1, 5, KEY, DEFAULT_TOLERANCE_S).unwrap();
        assert_eq!(one, frames[&(1, 5)].1, "{name}");
    }
}

#[test]
fn inspect_decodes_every_file_and_finds_no_problem() {
    for (name, files, codec) in [("video_v21", 2, "av1"), ("video_v30", 1, "h264")] {
        let report = LeRobotDataset::open(fixture(name))
            .unwrap()
            .inspect()
            .unwrap();
        assert!(report.problems.is_empty(), "{name}: {:?}", report.problems);
        let v = &report.videos[0];
        assert_eq!((v.files_decoded, v.frames_decoded), (files, 21), "{name}");
        assert_eq!(v.found_codec.as_deref(), Some(codec));
    }
}

#[test]
fn keys_follow_the_file_content_and_the_time() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("video_v21"), dir.path());
    let a = all_frames(&LeRobotDataset::open(fixture("video_v21")).unwrap());
    let b = all_frames(&LeRobotDataset::open(dir.path()).unwrap());
    let keys: Vec<u64> = a.values().map(|v| v.0).collect();
    assert_eq!(keys, b.values().map(|v| v.0).collect::<Vec<_>>());
    let distinct: std::collections::BTreeSet<u64> = keys.iter().copied().collect();
    assert_eq!(distinct.len(), keys.len());
    // Frames already wanted by nobody are not decoded: no call at all.
    let ds = LeRobotDataset::open(fixture("video_v21")).unwrap();
    let mut calls = 0;
    ds.for_each_video_frame::<DataError>(KEY, DEFAULT_TOLERANCE_S, &mut |_| false, &mut |_, _| {
        calls += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(calls, 0);
}

#[test]
fn the_video_folder_variant_and_a_wrong_declared_codec_still_read() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("video_v30"), dir.path());
    std::fs::rename(dir.path().join("videos"), dir.path().join("video")).unwrap();
    let info = dir.path().join("meta/info.json");
    let text = std::fs::read_to_string(&info)
        .unwrap()
        .replace("\"h264\"", "\"av1\"");
    std::fs::write(&info, text).unwrap();
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    assert_eq!(all_frames(&ds).len(), 21);
    let report = ds.inspect().unwrap();
    let kinds: Vec<&str> = report.problems.iter().map(|p| p.message.as_str()).collect();
    assert!(
        kinds
            .iter()
            .any(|m| m.contains("different folder than video_path")),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|m| m.contains("declares codec av1, but its MP4 file holds h264")),
        "{kinds:?}"
    );
    assert_eq!(report.videos[0].files_decoded, 1);
}

#[test]
fn a_missing_or_truncated_file_names_episode_and_file() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("video_v21"), dir.path());
    let ep1 = dir
        .path()
        .join(format!("videos/chunk-000/{KEY}/episode_000001.mp4"));
    let bytes = std::fs::read(&ep1).unwrap();
    std::fs::write(&ep1, &bytes[..bytes.len() / 2]).unwrap();
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let err = ds
        .for_each_video_frame::<DataError>(KEY, DEFAULT_TOLERANCE_S, &mut |_| true, &mut |_, _| {
            Ok(())
        })
        .unwrap_err();
    match &err {
        DataError::Video { episode, .. } => assert_eq!(*episode, 1, "{err}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.file(), ep1);
    assert!(err.to_string().starts_with("episode 1"), "{err}");
    let report = ds.inspect().unwrap();
    let p = report
        .problems
        .iter()
        .find(|p| p.message.contains("cannot"))
        .unwrap_or_else(|| panic!("{:?}", report.problems));
    assert_eq!(p.episode, Some(1));
    assert!(p.file.ends_with("episode_000001.mp4"), "{p:?}");

    std::fs::remove_file(&ep1).unwrap();
    let err = ds
        .read_video_frame(1, 0, KEY, DEFAULT_TOLERANCE_S)
        .unwrap_err();
    assert!(
        matches!(err, DataError::Video { episode: 1, .. }),
        "{err:?}"
    );
    assert!(
        roboaudit_types::error_chain(&err).contains("episode_000001.mp4"),
        "{err}"
    );
}

#[test]
fn frame_times_off_the_video_are_reported_and_refused() {
    // info.json's fps changed from 10 to 8: the rows' timestamps no longer match the videos'.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("video_v21"), dir.path());
    let info = dir.path().join("meta/info.json");
    let text = std::fs::read_to_string(&info)
        .unwrap()
        .replace("\"fps\": 10", "\"fps\": 8");
    std::fs::write(&info, text).unwrap();
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let p = report
        .problems
        .iter()
        .find(|p| p.message.contains("have no decoded frame within"))
        .unwrap_or_else(|| panic!("{:?}", report.problems));
    assert_eq!(p.episode, Some(0));
    assert!(p.message.contains("frame 1 at 0.125000 s"), "{}", p.message);
    // The data's own timestamps are still k/10: reading works; a frame beyond the video fails.
    let ds = LeRobotDataset::open(fixture("video_v21")).unwrap();
    let err = ds
        .read_video_frame(0, 12, KEY, DEFAULT_TOLERANCE_S)
        .unwrap_err();
    assert!(err.to_string().contains("has no frame 12"), "{err}");
}

/// The real recordings beside the repository (`ROBOAUDIT_SHARED_DATASETS`, run by
/// `.ci/run`): inspect decodes the two g1 AV1 episodes (221 and 277 frames in
/// `meta/episodes.jsonl`) and the lingzu MPEG-4 file at `video/` (440), every frame time of
/// their episodes has its frame, and a frame exports.
#[test]
#[ignore = "needs the shared datasets (ROBOAUDIT_SHARED_DATASETS)"]
fn real_videos_match_their_episodes() {
    let root = PathBuf::from(
        std::env::var("ROBOAUDIT_SHARED_DATASETS")
            .expect("set ROBOAUDIT_SHARED_DATASETS to the shared datasets folder"),
    );
    for (name, key, files, frames) in [
        (
            "g1_inspire_v21",
            "observation.images.cam_high",
            2,
            221 + 277,
        ),
        ("lingzu_open50_v30", "image", 1, 440),
    ] {
        let ds = LeRobotDataset::open(root.join(name)).unwrap();
        let report = ds.inspect().unwrap();
        let v = report.videos.iter().find(|v| v.feature == key).unwrap();
        assert_eq!(
            (v.files_decoded, v.frames_decoded),
            (files, frames),
            "{name}"
        );
        let bad: Vec<_> = report
            .problems
            .iter()
            .filter(|p| p.message.contains("decoded frame") || p.message.contains("cannot decode"))
            .collect();
        assert!(bad.is_empty(), "{name}: {bad:?}");
        let episode = if name.starts_with("g1") { 30 } else { 28 };
        let last = ds.episode(episode).unwrap().length.unwrap() as i64 - 1;
        let img = ds
            .read_video_frame(episode, last, key, DEFAULT_TOLERANCE_S)
            .unwrap();
        assert_eq!((img.width, img.height), (640, 480), "{name}");
    }
}

#[test]
fn a_camera_is_decodable_only_when_every_file_is_there() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("video_v21"), dir.path());
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    assert_eq!(ds.decodable_video_features(), vec![KEY.to_owned()]);
    assert!(ds.undecodable_video_features().is_empty());
    let via_any = ds.read_frame(0, 3, KEY, DEFAULT_TOLERANCE_S).unwrap();
    assert_eq!(
        via_any,
        ds.read_video_frame(0, 3, KEY, DEFAULT_TOLERANCE_S).unwrap()
    );
    std::fs::remove_file(
        dir.path()
            .join(format!("videos/chunk-000/{KEY}/episode_000001.mp4")),
    )
    .unwrap();
    assert!(ds.decodable_video_features().is_empty());
    let skipped = ds.undecodable_video_features();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].0, KEY);
    assert!(
        skipped[0]
            .1
            .ends_with(&format!("{KEY}/episode_000001.mp4 is missing")),
        "{}",
        skipped[0].1
    );
}
