//! `roboaudit testbed`: option values and output names are checked before anything is
//! simulated or created, with exit 2 naming the flag.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

#[test]
fn bad_rollout_options_are_usage_errors_and_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let cases: [(&[&str], &str); 5] = [
        (&["--policy", "random"], "unknown --policy `random`"),
        (&["--skill", "5"], "--skill must be in [0, 1], got 5"),
        (&["--skill", "nan"], "--skill must be in [0, 1], got NaN"),
        (&["--noise", "nan"], "--noise must be finite and ≥ 0"),
        (
            &["--noise=-1"],
            "--noise must be finite and ≥ 0 (m), got -1",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec![
            "testbed",
            "rollout",
            "--task",
            "stack",
            "--episodes",
            "1",
            "--no-record",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(message), "{extra:?}: {}", text(&o));
        assert!(!out.exists(), "{extra:?} created --out");
    }
}

#[test]
fn a_rollout_into_a_file_or_of_no_episodes_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("afile");
    std::fs::write(&file, b"keep").unwrap();
    let o = roboaudit(&[
        "testbed",
        "rollout",
        "--task",
        "stack",
        "--episodes",
        "1",
        "--no-record",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a file, not a folder"), "{}", text(&o));
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    // No episodes is refused too, not recorded as an empty summary.
    let out = tmp.path().join("none");
    let o = roboaudit(&[
        "testbed",
        "rollout",
        "--task",
        "stack",
        "--episodes",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--episodes must be at least 1"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    // A folder holding files of something else is refused and left as it was.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"keep").unwrap();
    let o = roboaudit(&[
        "testbed",
        "rollout",
        "--task",
        "stack",
        "--episodes",
        "1",
        "--no-record",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("is a folder that is not empty"),
        "{}",
        text(&o)
    );
    let names: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);
}

#[test]
fn an_out_file_named_for_another_format_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (jpg, parquet) = (tmp.path().join("x.jpg"), tmp.path().join("s.parquet"));
    let cases: [(Vec<&str>, &str); 2] = [
        (
            vec![
                "testbed",
                "render",
                "--task",
                "stack",
                "--out",
                jpg.to_str().unwrap(),
            ],
            "the rendered image is written as PNG; give it the extension .png",
        ),
        (
            vec![
                "testbed",
                "scenes",
                "--task",
                "stack",
                "--out",
                parquet.to_str().unwrap(),
            ],
            "the scene set is written as CSV; give it the extension .csv",
        ),
    ];
    for (args, message) in cases {
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(message), "{args:?}: {}", text(&o));
    }
    assert!(!jpg.exists() && !parquet.exists());
}

/// Counts that would exhaust memory or run for hours are refused before any allocation.
#[test]
fn counts_past_their_maximum_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("s.csv");
    let png = tmp.path().join("r.png");
    for args in [
        vec![
            "testbed",
            "scenes",
            "--task",
            "stack",
            "--n-fresh",
            "100000001",
            "--out",
        ],
        vec![
            "testbed", "scenes", "--task", "stack", "--n-base", "100001", "--out",
        ],
        vec![
            "testbed", "render", "--task", "stack", "--steps", "10001", "--out",
        ],
    ] {
        let out = if args[1] == "render" { &png } else { &csv };
        let mut args = args.clone();
        args.push(out.to_str().unwrap());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("is not in 0.."), "{args:?}: {}", text(&o));
        assert!(!out.exists());
    }
    let o = roboaudit(&[
        "testbed",
        "scenes",
        "--task",
        "stack",
        "--n-base",
        "0",
        "--n-appearance",
        "0",
        "--n-layout",
        "0",
        "--n-fresh",
        "0",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("the scene set would be empty"),
        "{}",
        text(&o)
    );
    assert!(!csv.exists());
}

/// A negative number is an invalid value of the option it follows, not an unknown argument.
#[test]
fn negative_numbers_are_named_as_invalid_values() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    for (args, option) in [
        (vec!["fqe", "collect", "--seed", "-1"], "--seed <SEED>"),
        (
            vec!["memory", "collect", "--pairs", "-3"],
            "--pairs <PAIRS>",
        ),
        (
            vec!["testbed", "scenes", "--n-fresh", "-2"],
            "--n-fresh <N_FRESH>",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--out", out.to_str().unwrap()]);
        let o = roboaudit(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let want = format!("invalid value '{}' for '{option}'", args[3]);
        assert!(text(&o).contains(&want), "{args:?}: {}", text(&o));
        assert!(!out.exists());
    }
}

/// Decodes an 8-bit RGB PNG written by `data frame`.
fn rgb(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width, info.height, buf)
}

#[test]
fn rollout_with_video_is_a_dataset_whose_frames_match_the_png_recording() {
    let tmp = tempfile::tempdir().unwrap();
    let record = |name: &str, video: bool| {
        let out = tmp.path().join(name);
        let mut args = vec![
            "testbed",
            "rollout",
            "--task",
            "stack",
            "--episodes",
            "1",
            "--size",
            "64",
            "--out",
            out.to_str().unwrap(),
        ];
        if video {
            args.push("--video");
        }
        let o = roboaudit(&args);
        assert!(o.status.success(), "{}", text(&o));
        // SVT-AV1's per-file banner is kept off stderr (the CLI sets SVT_LOG to errors only).
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!stderr.contains("Svt[info]"), "{stderr}");
        out
    };
    let (png_run, video_run) = (record("png", false), record("video", true));
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(video_run.join("meta/info.json")).unwrap()).unwrap();
    assert_eq!(
        info["features"]["observation.images.scene"]["dtype"],
        "video"
    );
    // The video dataset passes every check `data inspect` makes of its MP4 (frame count,
    // duration and timestamps against the episodes).
    let o = roboaudit(&["data", "inspect", video_run.to_str().unwrap(), "--strict"]);
    assert!(o.status.success(), "{}", text(&o));
    let last = info["total_frames"].as_i64().unwrap() - 1;
    // The first and last frames decoded from the video are the PNG recording's frames up to the
    // codec's loss (LeRobot's crf 30): PSNR ≥ 28 dB on a 64 × 64 scene.
    for frame in [0, last] {
        let export = |run: &std::path::Path, name: &str| {
            let out = tmp.path().join(format!("{name}-{frame}.png"));
            let f = frame.to_string();
            let o = roboaudit(&[
                "data",
                "frame",
                run.to_str().unwrap(),
                "--key",
                "observation.images.scene",
                "--episode",
                "0",
                "--frame",
                &f,
                "--out",
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", text(&o));
            rgb(&out)
        };
        let (a, b) = (export(&png_run, "png"), export(&video_run, "video"));
        assert_eq!((a.0, a.1), (64, 64));
        assert_eq!((b.0, b.1), (64, 64));
        assert_ne!(a.2, b.2, "a lossy codec cannot give back the exact frame");
        let mse =
            a.2.iter()
                .zip(&b.2)
                .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
                .sum::<f64>()
                / a.2.len() as f64;
        let psnr = 10.0 * (255.0f64 * 255.0 / mse).log10();
        assert!(psnr >= 28.0, "frame {frame}: PSNR {psnr:.1} dB");
    }
}

/// `scenes --out` replaces its own scene set, but not another file, nor a run's input.
#[test]
fn scenes_replace_only_a_scene_set_outside_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let scenes = |out: &std::path::Path| {
        roboaudit(&[
            "testbed",
            "scenes",
            "--task",
            "stack",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let own = tmp.path().join("own.csv");
    assert_eq!(scenes(&own).status.code(), Some(0));
    let first = std::fs::read(&own).unwrap();
    let o = scenes(&own);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(&own).unwrap(), first);

    let log = tmp.path().join("executions.csv");
    std::fs::write(&log, "experience_id,scene_id,seed,success\n").unwrap();
    let o = scenes(&log);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("exists and is not a scene set"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "experience_id,scene_id,seed,success\n"
    );

    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("collect.json"), "{}").unwrap();
    std::fs::copy(&own, run.join("scenes.csv")).unwrap();
    let o = scenes(&run.join("scenes.csv"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("(it holds collect.json)"), "{}", text(&o));
}
