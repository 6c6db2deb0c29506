//! `roboaudit memory calibrate`: every calibrator recovered, and a loud failure that names the
//! calibrator with expected and obtained values when one is not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

#[test]
fn every_calibrator_is_recovered() {
    let tmp = tempfile::tempdir().unwrap();
    let o = roboaudit(&[
        "memory",
        "calibrate",
        "--pairs",
        "6",
        "--seeds",
        "2",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("all 5 calibrators recovered"), "{stdout}");
    let cal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("calibration.json")).unwrap())
            .unwrap();
    assert_eq!(cal["passed"], true);
    let names: Vec<&str> = cal["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["calibrator"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["faithful", "blind", "anti", "reused", "random"]);
    assert_eq!(cal["results"][0]["checks"][0]["got"], 1.0);
    assert_eq!(cal["results"][2]["checks"][0]["got"], -1.0);
}

#[test]
fn a_margin_no_chunk_can_clear_fails_loudly_naming_the_calibrator() {
    // With δ = 5 no chunk chooses a branch: β = none everywhere, so F = 0 for the faithful and
    // anti-faithful calibrators, whose known answers are ±1.
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(&plan, "delta = 5.0\n[bootstrap]\nresamples = 500\n").unwrap();
    let o = roboaudit(&[
        "memory",
        "calibrate",
        "--pairs",
        "2",
        "--seeds",
        "1",
        "--plan",
        plan.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("calibrator `faithful`: faithfulness expected = 1, got 0"),
        "{stderr}"
    );
    assert!(
        stderr.contains("calibrator `anti`: faithfulness expected = -1, got 0"),
        "{stderr}"
    );
    assert!(!stderr.contains("calibrator `blind`"), "{stderr}");
}

/// Zero tolerances exclude every pair: the run says so, naming the tolerances, with the
/// usage exit code, instead of blaming the audit for undefined metrics.
#[test]
fn no_eligible_pair_is_blamed_on_the_tolerances() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cal");
    let o = roboaudit(&[
        "memory",
        "calibrate",
        "--pairs",
        "1",
        "--seeds",
        "1",
        "--tol-position",
        "0",
        "--tol-joint",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no pair passed the present check"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("--tol-position 0 m"), "{}", text(&o));
    assert!(!text(&o).contains("did not recover"), "{}", text(&o));
    assert!(!out.join("calibration.json").exists());
}

/// An --out that is a file, or a count past its maximum, is refused before any calibrator runs.
#[test]
fn bad_options_are_refused_before_calibrating() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, "x").unwrap();
    let o = roboaudit(&["memory", "calibrate", "--out", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a file, not a folder"), "{}", text(&o));
    let o = roboaudit(&["memory", "calibrate", "--pairs", "18446744073709551615"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--pairs must be in 1..=100000"),
        "{}",
        text(&o)
    );
}
