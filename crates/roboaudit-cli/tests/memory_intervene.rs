//! `roboaudit memory intervene`: rates with layout-stratified bootstrap intervals in JSON and
//! Markdown, reproducible with the bootstrap seed; a task without a memory decision refused with its reason.
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
fn tasks_without_a_memory_decision_are_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "replacement",
        "--task",
        "stack",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("stack has no memory decision"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
}

/// A fault-chunk count at which no restoration can happen (0: the restoration would coincide
/// with the fault; 50: put_back episodes end first) is refused before any rollout, where it
/// used to report `anchor` and `full` with the numbers of `none`.
#[test]
fn fault_chunks_without_a_restoration_are_refused_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    for value in ["0", "50", "34"] {
        let out = tmp.path().join(format!("r{value}"));
        let o = roboaudit(&[
            "memory",
            "intervene",
            "--study",
            "restoration",
            "--episodes",
            "4",
            "--resamples",
            "100",
            "--fault-chunks",
            value,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{value}: {}", text(&o));
        assert!(
            text(&o).contains("--fault-chunks must be in 1..=33 for put_back"),
            "{}",
            text(&o)
        );
        assert!(!out.exists());
    }
}

/// A setting the run would not use is refused, not silently dropped from a study labelled with
/// it: `--fault-chunks` on a replacement study, `--reliability` for a policy other than the
/// bank (on every memory command that takes it); a recall outside [0, 1] is echoed.
#[test]
fn settings_a_run_would_not_use_are_refused_and_bad_values_echoed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let out_s = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["intervene", "--study", "replacement", "--fault-chunks", "2"],
            "--fault-chunks sets the restoration study's fault; --study replacement injects none",
        ),
        (
            &[
                "intervene",
                "--study",
                "restoration",
                "--policy",
                "faithful",
                "--reliability",
                "0.5",
            ],
            "--reliability sets the bank policy's recall; --policy faithful does not use it",
        ),
        (
            &["natural", "--policy", "blind", "--reliability", "0.5"],
            "--policy blind does not use it",
        ),
        (
            &[
                "collect",
                "--policy",
                "faithful",
                "--pairs",
                "1",
                "--reliability",
                "0.5",
            ],
            "--policy faithful does not use it",
        ),
        (
            &[
                "collect",
                "--policy",
                "bank",
                "--pairs",
                "1",
                "--reliability",
                "0.9,1.5",
            ],
            "each in [0, 1], got [0.9, 1.5]",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["memory"];
        all.extend_from_slice(args);
        all.extend(["--out", out_s]);
        let o = roboaudit(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
        assert!(!out.exists(), "{args:?}");
    }
}

/// Counts and an `--out` that is a file are refused before the rollouts, not after them.
#[test]
fn bad_episodes_and_an_out_file_are_refused_before_any_rollout() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, "x").unwrap();
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "replacement",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a file, not a folder"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    for episodes in ["0", "18446744073709551615"] {
        let out = tmp.path().join("e");
        let o = roboaudit(&[
            "memory",
            "intervene",
            "--study",
            "replacement",
            "--episodes",
            episodes,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("--episodes must be in 1..=100000"),
            "{}",
            text(&o)
        );
        assert!(!out.exists());
    }
}

/// A study written beside a memory audit reaches the report as a typed table: each condition's
/// continuations and its success rate with the interval of `interventions.json`.
#[test]
fn the_report_shows_a_study_beside_its_audit() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = common::collect_one_faithful_pair(&run, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let audit = tmp.path().join("audit");
    let o = roboaudit(&[
        "memory",
        "audit",
        "--records",
        run.join("records.parquet").to_str().unwrap(),
        "--out",
        audit.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let study = restoration(&audit, "5");
    let out = tmp.path().join("report");
    let o = roboaudit(&[
        "report",
        audit.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Native interventions"), "{md}");
    assert!(
        md.contains("History restoration study on put_back: 4 recipients"),
        "{md}"
    );
    assert!(
        md.contains("| anchor | 4 | 1.000 [1.000, 1.000] | — | — |"),
        "{md}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["memory"][0]["interventions"], study);
}
