//! Input errors of `memory audit` / `control` / `collect`: a missing plan, records that do not
//! fit the control, a plan naming unknown pairs are exit 3 naming the file; the summary states
//! the bootstrap seed actually used.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{collect_one_faithful_pair, roboaudit, text};
use std::path::{Path, PathBuf};

/// Collects one faithful pair (one seed) into `dir`, with `extra` options; returns the records.
fn collect(dir: &Path, extra: &[&str]) -> PathBuf {
    let o = collect_one_faithful_pair(dir, extra);
    assert!(o.status.success(), "{}", text(&o));
    dir.join("records.parquet")
}

#[test]
fn a_missing_plan_file_is_invalid_input_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let records = collect(&tmp.path().join("c"), &[]);
    let plan = tmp.path().join("no-such-plan.toml");
    let (r, p) = (records.to_str().unwrap(), plan.to_str().unwrap());
    let out = tmp.path().join("o");
    let o_ = out.to_str().unwrap();
    let runs: [&[&str]; 3] = [
        &["memory", "audit", "--records", r, "--plan", p, "--out", o_],
        &[
            "memory",
            "control",
            "--records",
            r,
            "--plan",
            p,
            "--out",
            o_,
        ],
        &[
            "memory", "collect", "--pairs", "1", "--plan", p, "--out", o_,
        ],
    ];
    for args in runs {
        let o = roboaudit(args);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("no-such-plan.toml"), "{}", text(&o));
        assert!(!out.exists(), "{args:?}");
    }
}

#[test]
fn records_unfit_for_the_control_are_invalid_input_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let unrouted = collect(&tmp.path().join("plain"), &[]);
    // One route alone is refused at collection (exit 2); records holding one route (here the
    // left half of a routed collection) are refused by the control.
    let o = collect_one_faithful_pair(&tmp.path().join("one"), &["--routes", "left"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("needs two detour routes"), "{}", text(&o));
    let routed = collect(&tmp.path().join("routed"), &["--routes", "left,right"]);
    let left: Vec<_> = roboaudit_data::read_memory_records(&routed)
        .unwrap()
        .into_iter()
        .filter(|r| r.route.as_deref() == Some("left"))
        .collect();
    assert!(!left.is_empty());
    let single = tmp.path().join("single.parquet");
    roboaudit_data::write_memory_records(&single, &left).unwrap();
    for (records, message) in [(&unrouted, "has no route"), (&single, "exactly two routes")] {
        let out = tmp.path().join("ctl");
        let o = roboaudit(&[
            "memory",
            "control",
            "--records",
            records.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        assert!(text(&o).contains(message), "{}", text(&o));
        assert!(
            text(&o).contains(records.to_str().unwrap()),
            "names the records: {}",
            text(&o)
        );
        assert!(!out.join("control.json").exists());
    }
}

#[test]
fn an_unknown_excluded_pair_in_the_plan_is_invalid_input() {
    let tmp = tempfile::tempdir().unwrap();
    let records = collect(&tmp.path().join("c"), &[]);
    let plan = tmp.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[eligibility]\nexcluded_pairs = [\"nope\", \"p000\"]\n",
    )
    .unwrap();
    let out = tmp.path().join("a");
    let o = roboaudit(&[
        "memory",
        "audit",
        "--records",
        records.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("\"nope\""), "{}", text(&o));
    assert!(text(&o).contains("plan.toml"), "{}", text(&o));
    assert!(!out.exists());
    // The known id alone is accepted and excludes its pair.
    std::fs::write(&plan, "[eligibility]\nexcluded_pairs = [\"p000\"]\n").unwrap();
    let o = roboaudit(&[
        "memory",
        "audit",
        "--records",
        records.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["n_excluded"], 1);
}

#[test]
fn the_summary_states_one_bootstrap_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let records = collect(&tmp.path().join("c"), &[]);
    let out = tmp.path().join("a");
    let o = roboaudit(&[
        "memory",
        "audit",
        "--records",
        records.to_str().unwrap(),
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("at level 0.95, seed 5."), "{md}");
    assert!(md.contains("at 95%, seed 5)"), "{md}");
    let note = md
        .lines()
        .find(|l| l.contains("no plan file given"))
        .unwrap();
    assert!(!note.contains("seed 0"), "{note}");
}

#[test]
fn an_audit_into_an_fqe_result_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let records = collect(&tmp.path().join("c"), &[]);
    let fqe = tmp.path().join("fqe");
    std::fs::create_dir(&fqe).unwrap();
    std::fs::write(fqe.join("fqe.json"), br#"{"schema": "roboaudit.fqe.v1"}"#).unwrap();
    std::fs::write(fqe.join("summary.md"), b"# FQE").unwrap();
    let o = roboaudit(&[
        "memory",
        "audit",
        "--records",
        records.to_str().unwrap(),
        "--out",
        fqe.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("holds another kind of result"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(fqe.join("summary.md")).unwrap(), b"# FQE");
    assert!(!fqe.join("audit.json").exists());
}
