//! `roboaudit retrieval audit` on the committed example: what it refuses in `--out` (exit code
//! 2, before any work) and the messages for inputs that are not what they should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/retrieval")
}

fn audit(run: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "retrieval",
        "audit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resamples",
        "100",
        "--permutations",
        "100",
        "--subsets",
        "10",
    ];
    args.extend_from_slice(extra);
    roboaudit(&args)
}

/// A memory audit's audit.json (and a demo's) in --out is kept, with exit code 2, where it used
/// to be replaced silently with exit 0.
#[test]
fn another_kind_of_audit_in_out_is_refused_and_kept() {
    for schema in ["roboaudit.memory.v1", "roboaudit.demo.v1"] {
        let tmp = tempfile::tempdir().unwrap();
        let body = format!(r#"{{"schema": "{schema}"}}"#);
        std::fs::write(tmp.path().join("audit.json"), &body).unwrap();
        let o = audit(&example(), tmp.path(), &[]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(schema), "{}", text(&o));
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("audit.json")).unwrap(),
            body
        );
        assert!(!tmp.path().join("summary.md").exists());
    }
}

/// An FQE result folder (fqe.json + summary.md) is refused too: its summary.md would be ours.
#[test]
fn an_fqe_result_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("fqe.json"),
        r#"{"schema": "roboaudit.fqe.v1"}"#,
    )
    .unwrap();
    std::fs::write(tmp.path().join("summary.md"), "# FQE").unwrap();
    let o = audit(&example(), tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("fqe.json"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("summary.md")).unwrap(),
        "# FQE"
    );
    assert!(!tmp.path().join("audit.json").exists());
}

/// A rerun into its own output replaces it (the check does not refuse our own schema).
#[test]
fn a_rerun_into_its_own_output_is_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let first = audit(&example(), tmp.path(), &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let second = audit(&example(), tmp.path(), &[]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
}

/// A file as --out is a usage error (it was exit 1, after the whole audit had run).
#[test]
fn an_out_file_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, b"x").unwrap();
    let o = audit(&example(), &file, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a file, not a folder"), "{}", text(&o));
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

/// A repeated --library-size is a usage error, refused before the inputs are read.
#[test]
fn a_repeated_library_size_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = audit(
        &tmp.path().join("no-such-run"),
        &tmp.path().join("out"),
        &["--library-size", "3", "3", "3"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("library size 3 is given twice"),
        "{}",
        text(&o)
    );
    assert!(!tmp.path().join("out").exists());
}

/// A --structural name the embeddings lack is a wrong option value: exit 2, naming what they hold.
#[test]
fn an_unknown_structural_representation_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = audit(&example(), &out, &["--structural", "nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no representation \"nope\"") && text(&o).contains("they hold: "),
        "{}",
        text(&o)
    );
}

/// A --run folder that does not exist, or one whose file has an unreadable extension, is named
/// as such (exit 3, nothing in --out), not as the standard file name the reader could not open;
/// a --library-size the library cannot hold is said on the terminal, not only in the files.
#[test]
fn run_folder_problems_and_skipped_sizes_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = audit(&tmp.path().join("no-such-run"), &out, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("no-such-run: no such folder"),
        "{}",
        text(&o)
    );
    let file = tmp.path().join("executions.csv");
    std::fs::write(&file, "query_id\n").unwrap();
    let o = audit(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("executions.csv: a file, not a run folder"),
        "{}",
        text(&o)
    );
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for entry in std::fs::read_dir(example()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, run.join(path.file_name().unwrap())).unwrap();
        }
    }
    let executions = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_stem().is_some_and(|s| s == "executions"))
        .unwrap();
    std::fs::rename(&executions, run.join("executions.txt")).unwrap();
    let o = audit(&run, &out, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("no executions file in")
            && text(&o).contains("found executions.txt, whose extension is none of these"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    std::fs::rename(run.join("executions.txt"), &executions).unwrap();
    let o = audit(&run, &out, &["--library-size", "99"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("note: --library-size 99 skipped: size 99 is not below the library size"),
        "{}",
        text(&o)
    );
}

/// --no-top-pick-deletion reaches the config: every rule's deletion is null with the reason, and
/// the config in audit.json says so.
#[test]
fn no_top_pick_deletion_leaves_every_deletion_null() {
    let tmp = tempfile::tempdir().unwrap();
    let o = audit(&example(), tmp.path(), &["--no-top-pick-deletion"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("audit.json")).unwrap())
            .unwrap();
    assert_eq!(report["config"]["top_pick_deletion"], false);
    let rules = report["rules"].as_array().unwrap();
    assert!(!rules.is_empty());
    for rule in rules {
        assert!(rule["top_pick_deletion"].is_null(), "{}", rule["name"]);
        assert_eq!(
            rule["top_pick_deletion_reason"],
            "top-pick deletion is off (config top_pick_deletion = false)"
        );
    }
}
