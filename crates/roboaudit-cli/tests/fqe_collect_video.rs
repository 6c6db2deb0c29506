//! `fqe collect --video`: the dataset's camera as MP4, read back by `fqe fit` (`--features auto`
//! picks the video key), and (ignored) the PNG-vs-video comparison of the estimates.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::roboaudit;
use std::path::Path;

fn ok(o: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

fn collect(out: &Path, video: bool, extra: &[&str]) {
    let mut args = vec!["fqe", "collect", "--small", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    if video {
        args.push("--video");
    }
    ok(&roboaudit(&args));
}

fn fit(run: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "fqe",
        "fit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ok(&roboaudit(&args));
    serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap()
}

#[test]
fn small_video_collect_fits_on_the_video_camera() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("gt");
    // The smallest collection (4 episodes, 1 rollout) keeps the test at a few seconds.
    collect(&run, true, &["--episodes", "4", "--rollouts", "1"]);
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("dataset/meta/info.json")).unwrap())
            .unwrap();
    let scene = &info["features"]["observation.images.scene"];
    assert_eq!(scene["dtype"], "video");
    assert!(
        run.join("dataset/videos/observation.images.scene/chunk-000/file-000.mp4")
            .is_file()
    );
    let r = fit(&run, &tmp.path().join("fit"), &["--no-neural"]);
    let text = r.to_string();
    assert!(
        text.contains("image:observation.images.scene"),
        "auto did not pick the video camera: {}",
        &text[..text.len().min(2000)]
    );
    assert_eq!(r["policies"].as_array().unwrap().len(), 7);
}

/// Median absolute relative error of one estimator over the report's policy-task cells.
fn cells(r: &serde_json::Value, est: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for p in r["policies"].as_array().unwrap() {
        let name = p["policy"].as_str().unwrap_or("?").to_owned();
        for (k, t) in p["tasks"].as_array().unwrap().iter().enumerate() {
            let v = match &t[est] {
                serde_json::Value::Number(n) => n.as_f64(),
                o => o["mean"].as_f64(),
            };
            if let Some(v) = v {
                out.push((format!("{name}/{k}"), v));
            }
        }
    }
    out
}

/// The check of issue 23: the same `--small` collection written as PNG and as video, fitted with
/// the same settings (`--features auto`), gives estimates within the codec's noise. Prints the
/// per-policy table. `cargo test -p roboaudit-cli --test fqe_collect_video -- --ignored --nocapture`
#[test]
#[ignore = "two collections and two neural fits; prints the PNG-vs-video table"]
fn png_and_video_suites_give_close_estimates() {
    let tmp = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for video in [false, true] {
        let run = tmp.path().join(format!("gt_{video}"));
        collect(&run, video, &[]);
        // One neural seed of 4,000 steps: the full default (3 × 20,000) takes over 10 minutes per
        // fit on 2 cores; the comparison needs the same settings on both, not the default.
        reports.push(fit(
            &run,
            &tmp.path().join(format!("fit_{video}")),
            &["--seeds", "0", "--steps", "4000"],
        ));
    }
    for est in ["linear", "neural"] {
        let (png, vid) = (cells(&reports[0], est), cells(&reports[1], est));
        assert_eq!(png.len(), vid.len());
        println!("{est}: cell, V̂ PNG, V̂ video, |diff|");
        let mut diffs = Vec::new();
        for ((name, a), (_, b)) in png.iter().zip(&vid) {
            println!("  {name:<28} {a:>8.4} {b:>8.4} {:>8.4}", (a - b).abs());
            diffs.push((a - b).abs());
        }
        diffs.sort_by(f64::total_cmp);
        println!(
            "{est}: max |diff| {:.4}, median |diff| {:.4}",
            diffs.last().unwrap(),
            diffs[diffs.len() / 2]
        );
        for m in reports.iter().map(|r| {
            r["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["estimator"] == est)
                .cloned()
                .collect::<Vec<_>>()
        }) {
            println!("{est} metrics: {}", serde_json::to_string(&m).unwrap());
        }
    }
}
