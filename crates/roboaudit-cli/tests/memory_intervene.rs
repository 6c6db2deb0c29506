//! `roboaudit memory intervene`: rates with layout-stratified bootstrap intervals in JSON and
//! Markdown, reproducible with the bootstrap seed; swap refused with its reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

fn restoration(out: &std::path::Path, bootstrap_seed: &str) -> serde_json::Value {
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "restoration",
        "--policy",
        "faithful",
        "--episodes",
        "4",
        "--resamples",
        "500",
        "--bootstrap-seed",
        bootstrap_seed,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("layout-stratified"), "{}", text(&o));
    serde_json::from_slice(&std::fs::read(out.join("interventions.json")).unwrap()).unwrap()
}

#[test]
fn restoration_reports_success_intervals_in_json_and_markdown() {
    let tmp = tempfile::tempdir().unwrap();
    let a = restoration(&tmp.path().join("a"), "5");
    let b = restoration(&tmp.path().join("b"), "5");
    assert_eq!(a, b, "same seeds, same study");
    let intervals = a["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 3);
    for iv in intervals {
        let s = &iv["success"];
        let (est, lo, hi) = (
            s["estimate"].as_f64().unwrap(),
            s["ci"][0].as_f64().unwrap(),
            s["ci"][1].as_f64().unwrap(),
        );
        assert!(lo <= est && est <= hi, "{iv}");
        assert!(
            iv["committed_own"].is_null(),
            "restoration reads out success only"
        );
    }
    // The faithful policy with its anchor restored succeeds every time: a degenerate interval.
    let anchor = intervals
        .iter()
        .find(|c| c["condition"] == "anchor")
        .unwrap();
    assert_eq!(anchor["success"]["ci"], serde_json::json!([1.0, 1.0]));
    assert_eq!(a["config"]["bootstrap"]["resamples"], 500);
    let md = std::fs::read_to_string(tmp.path().join("a/interventions.md")).unwrap();
    assert!(
        md.contains("| anchor | 4 | 4/4/0/0 | 1.000 [1.000, 1.000] |"),
        "{md}"
    );
    assert!(md.contains("500 resamples, seed 5"), "{md}");
}

#[test]
fn swap_interventions_are_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "replacement",
        "--task",
        "swap",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("success predicate"), "{}", text(&o));
    assert!(!out.exists());
}
