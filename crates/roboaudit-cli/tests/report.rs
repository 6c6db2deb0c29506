//! `roboaudit report`: renders the checked-in audit fixtures of roboaudit-report; refuses bad
//! folders with exit code 3 and a message naming the folder or file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn roboaudit(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

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
        stdout.contains("1 retrieval, 1 memory, 1 FQE section(s); 9 of 9 plots drawn"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["schema"], "roboaudit.report.v1");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for plot in report["plots"].as_array().unwrap() {
        let id = plot["id"].as_str().unwrap();
        assert!(html.contains(&format!("<figure id=\"{id}\"")), "{id}");
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

#[test]
fn report_fails_with_code_1_when_the_output_cannot_be_written() {
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join("file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let o = roboaudit(&[
        "report",
        &fixture("memory"),
        "--out",
        blocker.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot write"),
        "{}",
        text(&o)
    );
}
