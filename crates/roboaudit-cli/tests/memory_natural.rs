//! `roboaudit memory natural`: natural.json and natural.md written together, reproducible
//! bytes for a seed, the observational label, and usage errors for a bad task or count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

fn natural(out: &std::path::Path, policy: &str) -> std::process::Output {
    roboaudit(&[
        "memory",
        "natural",
        "--policy",
        policy,
        "--episodes",
        "3",
        "--resamples",
        "200",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn writes_the_study_and_its_summary_reproducibly() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let o = natural(&a, "blind");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("audited decision type: 3/3"),
        "{}",
        text(&o)
    );
    assert!(natural(&b, "blind").status.success());
    let json = std::fs::read(a.join("natural.json")).unwrap();
    assert_eq!(json, std::fs::read(b.join("natural.json")).unwrap());
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["schema"], "roboaudit.memory.natural.v1");
    assert_eq!(
        v["analysis"]["decision"],
        serde_json::json!({"count": 3, "n": 3})
    );
    assert_eq!(v["episodes"].as_array().unwrap().len(), 3);
    // The blind calibrator heads for tray 0; targets run 0, 0, 1: one wrong-tray episode.
    let s = &v["analysis"]["success_association"];
    assert_eq!(s["estimate"], 1.0);
    assert_eq!(
        (s["warranted"]["n"].as_u64(), s["other"]["n"].as_u64()),
        (Some(2), Some(1))
    );
    let rule = v["decision_rule"].as_str().unwrap();
    assert!(rule.contains("before any policy action"), "{rule}");
    let md = std::fs::read_to_string(a.join("natural.md")).unwrap();
    assert!(md.contains("**3/3**"), "{md}");
    assert!(md.contains("never pooled"), "{md}");
    assert!(md.contains("non-causal"), "{md}");
}

#[test]
fn bad_tasks_and_counts_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = roboaudit(&[
        "memory",
        "natural",
        "--task",
        "door",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("door has no memory decision"),
        "{}",
        text(&o)
    );
    let o = roboaudit(&[
        "memory",
        "natural",
        "--episodes",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!out.exists(), "nothing is written for a refused run");
    let missing = tmp.path().join("no-checkpoint");
    let policy = format!("learned:{}", missing.display());
    let o = roboaudit(&[
        "memory",
        "natural",
        "--policy",
        &policy,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(!out.exists());
}
