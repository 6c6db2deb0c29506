#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `roboaudit demo`: writes audit.json (both tasks), summary.md and a self-contained index.html.

use std::process::Command;

#[test]
fn demo_writes_reports_for_both_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("demo");
    let out = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["demo", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("index.html"), "{stdout}");

    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["schema"], "roboaudit.demo.v1");
    let tasks: Vec<&str> = audit["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, ["stack", "door"]);
    for t in audit["tasks"].as_array().unwrap() {
        assert_eq!(t["audit"]["n_experiences"], 10);
        assert_eq!(t["audit"]["n_scenes"], 20);
        // The oracle is never below random or best-fixed.
        let r = &t["audit"]["reference"];
        let (random, oracle, best) = (
            r["random"].as_f64().unwrap(),
            r["oracle"].as_f64().unwrap(),
            r["best_fixed"].as_f64().unwrap(),
        );
        assert!(random <= best + 1e-12 && best <= oracle + 1e-12);
    }
    let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    assert!(summary.contains("# Task: stack") && summary.contains("# Task: door"));
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<style>"));
    assert!(!html.contains("<script") && !html.contains("http://") && !html.contains("https://"));
    assert!(html.contains("<h2>stack</h2>") && html.contains("<h2>door</h2>"));
}

#[test]
fn demo_into_a_file_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, b"x").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["demo", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a folder"));
}
