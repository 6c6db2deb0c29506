//! Cameras stored as video through the CLI: `fqe fit --features image:KEY` (and `auto`) on a
//! LeRobot `video` feature, `data frame` exporting the frame LeRobot's reader picks, and bad
//! video files (missing, truncated) as input errors (exit 3) naming file and episode, with
//! nothing written. The dataset is roboaudit-data's v2.1 fixture with both episodes' MP4
//! replaced by roboaudit-video's `synthetic_av1.mp4`, whose frames PyAV decoded into
//! `synthetic_av1.rgb.png`: frame `i` of either episode must be PyAV's frame `i`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::path::{Path, PathBuf};

use serde_json::Value;

const KEY: &str = "observation.images.cam";

fn repo_fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(rel)
}

fn episode_video(root: &Path, episode: usize) -> PathBuf {
    root.join(format!("videos/chunk-000/{KEY}/episode_{episode:06}.mp4"))
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

/// The video dataset under `dir/ds`.
fn dataset(dir: &Path) -> PathBuf {
    let root = dir.join("ds");
    copy_dir(
        &repo_fixture("roboaudit-data/tests/fixtures/video_v21"),
        &root,
    );
    for ep in 0..2 {
        std::fs::copy(
            repo_fixture("roboaudit-video/tests/fixtures/synthetic_av1.mp4"),
            episode_video(&root, ep),
        )
        .unwrap();
    }
    root
}

/// Decodes an 8-bit RGB PNG: (width, height, pixels).
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// PyAV's frame `i` of `synthetic_av1.mp4` (64×48, RGB24).
fn pyav_frame(i: usize) -> Vec<u8> {
    let (w, h, pixels) = decode_png(&repo_fixture(
        "roboaudit-video/tests/fixtures/synthetic_av1.rgb.png",
    ));
    assert_eq!((w, h), (64, 960));
    let size = 64 * 48 * 3;
    pixels[i * size..(i + 1) * size].to_vec()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fit(data: &Path, out: &Path, features: &str) -> std::process::Output {
    roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        s(data),
        "--out",
        s(out),
        "--features",
        features,
        "--components",
        "4",
        "--no-neural",
    ])
}

#[test]
fn fqe_fit_reads_frame_features_from_a_video_key_and_auto_picks_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    for (features, out) in [(format!("image:{KEY}"), "fit"), ("auto".to_owned(), "auto")] {
        let out = dir.path().join(out);
        let o = fit(&data, &out, &features);
        assert!(o.status.success(), "{features}: {}", text(&o));
        let r: Value =
            serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap();
        let load = &r["inputs"]["load"];
        assert_eq!(load["features"], format!("image:{KEY}"), "{features}");
        assert_eq!(load["frames"], 21, "{features}");
        // Episode 1's MP4 is a copy of episode 0's: its 9 frames are cache hits by content. The
        // counts are printed, not reported: fqe.json is the same whatever was cached before.
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .contains(" 12 encoded, 9 found in the feature cache "),
            "{features}: {}",
            text(&o)
        );
        assert_eq!((load.get("encoded"), load.get("cache_hits")), (None, None));
        let parts = r["inputs"]["parts"].as_array().unwrap();
        assert!(
            parts[0].to_string().contains(&format!("{KEY}:raw32-pca4")),
            "{parts:?}"
        );
    }
    // A rerun into the same folder finds every frame in its cache and writes the same bytes.
    let out = dir.path().join("auto");
    let first = std::fs::read(out.join("fqe.json")).unwrap();
    let o = fit(&data, &out, "auto");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(" 0 encoded, 21 found in the feature cache "),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(out.join("fqe.json")).unwrap(), first);
}

#[test]
fn auto_says_which_video_it_passed_over_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let missing = episode_video(&data, 1);
    std::fs::remove_file(&missing).unwrap();
    let out = dir.path().join("auto");
    let o = fit(&data, &out, "auto");
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap();
    assert_eq!(r["inputs"]["load"]["features"], "state:observation.state");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "note: --features auto passed over the video feature \"{KEY}\" ({} is missing); \
             the frame features are state:observation.state",
            missing.display()
        )),
        "{stderr}"
    );
}

#[test]
fn data_frame_exports_the_frame_pyav_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let out = dir.path().join("frames/ep1-f5.png");
    let o = roboaudit(&[
        "data",
        "frame",
        s(&data),
        "--key",
        KEY,
        "--episode",
        "1",
        "--frame",
        "5",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (w, h, pixels) = decode_png(&out);
    assert_eq!((w, h), (64, 48));
    assert!(
        pixels == pyav_frame(5),
        "episode 1 frame 5 is not PyAV's frame 5"
    );
    assert!(
        pixels != pyav_frame(4),
        "frames 4 and 5 must differ for this to mean anything"
    );
}

#[test]
fn data_frame_exports_an_image_feature_frame_and_refuses_bad_out_paths() {
    use roboaudit_fqe::detector::synthetic::{GoalRun, write_goal_dataset};
    let dir = tempfile::tempdir().unwrap();
    write_goal_dataset(
        dir.path(),
        &GoalRun {
            episodes: 3,
            ..GoalRun::default()
        },
    )
    .unwrap();
    let data = dir.path().join("dataset");
    let out = dir.path().join("img.png");
    let args = |out: &Path| {
        roboaudit(&[
            "data",
            "frame",
            s(&data),
            "--key",
            "observation.image",
            "--episode",
            "2",
            "--frame",
            "1",
            "--out",
            s(out),
        ])
    };
    let o = args(&out);
    assert!(o.status.success(), "{}", text(&o));
    let want = roboaudit_data::lerobot::LeRobotDataset::open(&data)
        .unwrap()
        .read_image(2, 1, "observation.image")
        .unwrap();
    let (w, h, pixels) = decode_png(&out);
    assert_eq!((w, h), (want.width, want.height));
    assert!(pixels == want.pixels);
    // Inside the dataset, or not a .png: usage errors before anything is read or written.
    for bad in [data.join("f.png"), dir.path().join("f.jpg")] {
        let o = args(&bad);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(!bad.exists());
    }
}

#[test]
fn a_key_that_is_no_camera_is_a_usage_error_naming_the_cameras() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let out = dir.path().join("f.png");
    for key in ["observation.images.nope", "action"] {
        let o = roboaudit(&[
            "data",
            "frame",
            s(&data),
            "--key",
            key,
            "--episode",
            "1",
            "--frame",
            "0",
            "--out",
            s(&out),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let t = text(&o);
        assert!(
            t.contains(&format!("--key {key}:")) && t.contains(&format!("camera features: {KEY}")),
            "{t}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn a_frame_past_the_episode_is_an_input_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let out = dir.path().join("f.png");
    let o = roboaudit(&[
        "data",
        "frame",
        s(&data),
        "--key",
        KEY,
        "--episode",
        "1",
        "--frame",
        "9",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("episode 1 has no frame 9"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
}

#[test]
fn data_frame_of_a_truncated_or_missing_video_is_an_input_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let ep1 = episode_video(&data, 1);
    let bytes = std::fs::read(&ep1).unwrap();
    std::fs::write(&ep1, &bytes[..bytes.len() / 2]).unwrap();
    let out = dir.path().join("f.png");
    let frame = |out: &Path| {
        roboaudit(&[
            "data",
            "frame",
            s(&data),
            "--key",
            KEY,
            "--episode",
            "1",
            "--frame",
            "8",
            "--out",
            s(out),
        ])
    };
    let o = frame(&out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("episode 1") && msg.contains("episode_000001.mp4"),
        "{msg}"
    );
    assert!(!out.exists());
    std::fs::remove_file(&ep1).unwrap();
    let o = frame(&out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("episode 1") && msg.contains("episode_000001.mp4"),
        "{msg}"
    );
    assert!(!out.exists());
}

#[test]
fn a_truncated_or_missing_video_stops_fqe_fit_naming_file_and_episode() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let ep1 = episode_video(&data, 1);
    let bytes = std::fs::read(&ep1).unwrap();
    std::fs::write(&ep1, &bytes[..bytes.len() / 2]).unwrap();
    let out = dir.path().join("fit");
    let o = fit(&data, &out, &format!("image:{KEY}"));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("episode 1") && msg.contains("episode_000001.mp4"),
        "{msg}"
    );
    assert!(!out.join("fqe.json").exists());
    // Episode 0's 12 frames were encoded before episode 1 failed; none may be kept.
    assert!(
        !out.join("feature-cache").exists(),
        "a partial feature cache was kept"
    );

    std::fs::remove_file(&ep1).unwrap();
    let o = fit(&data, &out, &format!("image:{KEY}"));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("episode 1") && msg.contains("episode_000001.mp4"),
        "{msg}"
    );
    assert!(!out.join("fqe.json").exists());
}

/// The full datasets' folder, named by `ROBOAUDIT_SHARED_DATASETS` (as in `real_datasets.rs`);
/// the test that needs it is ignored by a plain `cargo test` and fails loudly without them.
fn shared_datasets() -> PathBuf {
    let dir = std::env::var_os("ROBOAUDIT_SHARED_DATASETS")
        .map(PathBuf::from)
        .expect("set ROBOAUDIT_SHARED_DATASETS to the folder holding the real LeRobot datasets");
    assert!(
        dir.join("README.md").is_file(),
        "the real LeRobot datasets are missing: ROBOAUDIT_SHARED_DATASETS names {}, which has no \
         README.md; this test must not pass without them",
        dir.display()
    );
    dir
}

/// g1_inspire_v21 reduced to the episodes whose AV1 video is present (29 and 30 of 100): the
/// metadata lines of those episodes, their data files, their videos.
fn g1_with_video(full: &Path, to: &Path) {
    const EPISODES: [usize; 2] = [29, 30];
    std::fs::create_dir_all(to.join("meta")).unwrap();
    std::fs::create_dir_all(to.join("data/chunk-000")).unwrap();
    for f in ["info.json", "tasks.jsonl"] {
        std::fs::copy(full.join("meta").join(f), to.join("meta").join(f)).unwrap();
    }
    for f in ["episodes.jsonl", "episodes_stats.jsonl"] {
        let text = std::fs::read_to_string(full.join("meta").join(f)).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| {
                EPISODES
                    .iter()
                    .any(|e| l.starts_with(&format!("{{\"episode_index\": {e},")))
            })
            .collect();
        assert_eq!(kept.len(), EPISODES.len(), "{f}");
        std::fs::write(to.join("meta").join(f), kept.join("\n") + "\n").unwrap();
    }
    for e in EPISODES {
        let data = format!("data/chunk-000/episode_{e:06}.parquet");
        std::fs::copy(full.join(&data), to.join(&data)).unwrap();
    }
    copy_dir(&full.join("videos"), &to.join("videos"));
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn visual_fqe_fits_on_the_g1_episodes_that_have_video() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g1");
    g1_with_video(&shared_datasets().join("g1_inspire_v21"), &data);
    // g1 records no success: episode 29 is labelled a success, 30 a failure, so the naive
    // estimate is γ^(221−1) / 2.
    let labels = dir.path().join("labels.csv");
    std::fs::write(&labels, "episode_index,success\n29,1\n30,0\n").unwrap();
    let out = dir.path().join("fit");
    let started = std::time::Instant::now();
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        s(&data),
        "--labels",
        s(&labels),
        "--out",
        s(&out),
        "--features",
        "auto",
        "--components",
        "16",
        "--gamma",
        "0.99",
        "--no-neural",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap();
    let load = &r["inputs"]["load"];
    assert_eq!(load["features"], "image:observation.images.cam_high");
    assert_eq!(load["frames"], 221 + 277);
    // A fresh cache: every frame decoded and encoded (said on stderr, not in fqe.json).
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(" 498 encoded, 0 found in the feature cache "),
        "{}",
        text(&o)
    );
    let cell = &r["policies"][0]["tasks"][0];
    let naive = cell["naive"].as_f64().unwrap();
    assert!((naive - 0.99f64.powi(220) / 2.0).abs() < 1e-9, "{naive}");
    let linear = cell["linear"].as_f64().unwrap();
    eprintln!(
        "g1 episodes 29-30, 498 frames 480x640 AV1 → raw32 pca16: fqe fit {seconds:.1} s, \
         naive {naive:.4}, linear FQE {linear:.4}, out of support {}",
        cell["coverage"]["out_of_support"]
    );
    assert!(linear.is_finite());
}
