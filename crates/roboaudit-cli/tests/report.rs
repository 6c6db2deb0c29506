//! `roboaudit report`: renders the checked-in audit fixtures of roboaudit-report; refuses bad
//! folders with exit code 3 and a message naming the folder or file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::path::PathBuf;

fn fixture(part: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../roboaudit-report/tests/fixtures")
        .join(part)
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn report_renders_all_three_audits() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let o = roboaudit(&[
        "report",
        &fixture("retrieval/run/audit"),
        &fixture("memory"),
        &fixture("fqe"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        // The fixture's fit records no dataset: its frame strip is the one plot skipped.
        stdout.contains("1 retrieval, 1 memory, 1 FQE section(s); 9 of 10 plots drawn"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["schema"], "roboaudit.report.v1");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for plot in report["plots"].as_array().unwrap() {
        let id = plot["id"].as_str().unwrap();
        let element = if plot["available"] == true {
            format!("<figure id=\"{id}\"")
        } else {
            format!("data-plot=\"{id}\"")
        };
        assert!(html.contains(&element), "{id}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Retrieval audit: audit"), "{md}");
    assert!(md.contains("### Two reports every study can give"));
}

#[test]
fn report_refuses_a_folder_without_audits() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = tmp.path().join("report");
    let o = roboaudit(&[
        "report",
        empty.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("no audit output found"), "{stderr}");
    assert!(stderr.contains(empty.to_str().unwrap()), "{stderr}");
    assert!(!out.exists(), "nothing is written when the input is bad");
}

#[test]
fn report_names_the_damaged_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fqe");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("fqe.json"),
        "{\"schema\": \"roboaudit.fqe.v1\", \"gamma\": }",
    )
    .unwrap();
    let o = roboaudit(&[
        "report",
        dir.to_str().unwrap(),
        "--out",
        tmp.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("malformed JSON") && stderr.contains("fqe.json"),
        "{stderr}"
    );
}

/// Bytes that are not UTF-8 text are a damaged input (exit 3), not a failure of roboaudit.
#[test]
fn report_refuses_an_input_that_is_not_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fqe");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fqe.json"), [0xff, 0xfe, 0x00, 0x7b]).unwrap();
    let o = roboaudit(&[
        "report",
        dir.to_str().unwrap(),
        "--out",
        tmp.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("fqe.json"), "{}", text(&o));
    assert!(!tmp.path().join("r").exists());
}

#[test]
fn report_refuses_an_out_under_a_file_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join("file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let o = roboaudit(&[
        "report",
        &fixture("memory"),
        "--out",
        blocker.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let want = format!(
        "{} is a file, so no folder can be created under it",
        blocker.display()
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&want),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "not a folder");
}

/// Every `id="..."` of the page, in order.
fn html_ids(html: &str) -> Vec<String> {
    html.split("id=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

#[test]
fn report_html_ids_are_unique() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let o = roboaudit(&[
        "report",
        &fixture("retrieval/run/audit"),
        &fixture("memory"),
        &fixture("fqe"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let ids = html_ids(&std::fs::read_to_string(out.join("index.html")).unwrap());
    assert!(ids.len() > 20, "{ids:?}");
    let mut seen = std::collections::BTreeSet::new();
    for id in &ids {
        assert!(seen.insert(id.clone()), "duplicate id {id}");
    }
}

#[test]
fn report_of_a_demo_root_reads_its_listed_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    std::fs::create_dir_all(&root).unwrap();
    let audit = serde_json::json!({
        "schema": "roboaudit.demo.v1",
        "scale": "small",
        "tasks": [],
        "report": {"sources": [fixture("memory"), fixture("fqe")]},
    });
    std::fs::write(root.join("audit.json"), audit.to_string()).unwrap();
    let out = tmp.path().join("report");
    let o = roboaudit(&[
        "report",
        root.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("0 retrieval, 1 memory, 1 FQE section(s)"),
        "{stdout}"
    );

    // Without `report.sources`, the parts that are not read are named, not dropped silently.
    let control = serde_json::json!({
        "dir": "memory/control",
        "pairs": 6,
        "nuisance": [0.0, null],
        "interaction": [0.0, null],
        "margin": 0.1,
        "passed": true,
    });
    let bare = serde_json::json!({
        "schema": "roboaudit.demo.v1",
        "scale": "small",
        "tasks": [],
        "memory_control": control,
    });
    std::fs::write(root.join("audit.json"), bare.to_string()).unwrap();
    let o = roboaudit(&[
        "report",
        root.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("`memory_control` ignored"), "{stderr}");

    // A headline of the wrong shape is refused naming the file (exit 3), not skipped.
    let malformed = serde_json::json!({
        "schema": "roboaudit.demo.v1",
        "scale": "small",
        "tasks": [],
        "fqe": {},
    });
    std::fs::write(root.join("audit.json"), malformed.to_string()).unwrap();
    let o = roboaudit(&[
        "report",
        root.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("audit.json"), "{}", text(&o));
}

#[test]
fn report_reads_a_folder_given_twice_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let o = roboaudit(&[
        "report",
        &fixture("fqe"),
        &fixture("fqe"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 retrieval, 0 memory, 1 FQE section(s)"),
        "{}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("given more than once"),
        "{}",
        text(&o)
    );
}

#[test]
fn report_refuses_an_out_file_with_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let o = roboaudit(&[
        "report",
        tmp.path().join("missing").to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is a file, not a folder"),
        "{}",
        text(&o)
    );
}

#[test]
fn report_names_a_missing_schema_field() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("audit.json"), "{\"tasks\": []}").unwrap();
    let o = roboaudit(&[
        "report",
        dir.to_str().unwrap(),
        "--out",
        tmp.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no `schema` field"),
        "{}",
        text(&o)
    );
}

/// A folder holding an audit keeps the report that describes it: a report of other folders
/// into it is refused (exit 2, nothing replaced), a report that includes it is re-rendered.
#[test]
fn report_into_an_audit_folder_must_include_it() {
    let tmp = tempfile::tempdir().unwrap();
    let audit = tmp.path().join("fqe");
    let o = roboaudit(&["report", &fixture("fqe"), "--out", audit.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::copy(
        PathBuf::from(fixture("fqe")).join("fqe.json"),
        audit.join("fqe.json"),
    )
    .unwrap();
    let before = std::fs::read(audit.join("report.json")).unwrap();
    let o = roboaudit(&[
        "report",
        &fixture("memory"),
        "--out",
        audit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("holds an audit (fqe.json)"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(audit.join("report.json")).unwrap(), before);
    let o = roboaudit(&[
        "report",
        audit.to_str().unwrap(),
        &fixture("memory"),
        "--out",
        audit.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
}
