#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `roboaudit retrieval collect`: killed and resumed equals uninterrupted; the audit reads the folder;
//! bad settings are usage errors.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

fn roboaudit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
}

const SMALL: [&str; 10] = [
    "--task",
    "stack",
    "--library",
    "2",
    "--scenes",
    "4",
    "--seeds",
    "2",
    "--chunk",
    "2",
];

fn collect(out: &Path, extra: &[&str]) -> Output {
    roboaudit()
        .args(["retrieval", "collect"])
        .args(SMALL)
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn parts(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("executions")).map_or(0, |d| {
        d.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("part-"))
        })
        .count()
    })
}

#[test]
fn killed_run_resumes_to_the_bytes_of_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (whole, killed) = (tmp.path().join("whole"), tmp.path().join("killed"));
    let out = collect(&whole, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole_stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let total_parts = parts(&whole);
    assert_eq!(total_parts, 10); // 2 experiences × (4 scenes + own base) × 2 seeds, 2 per part

    let mut child = roboaudit()
        .args(["retrieval", "collect"])
        .args(SMALL)
        .arg("--out")
        .arg(&killed)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while parts(&killed) < 2 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let at_kill = parts(&killed);
    assert!(
        (2..total_parts).contains(&at_kill),
        "killed with {at_kill} of {total_parts} parts written"
    );

    let out = collect(&killed, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("resumed after"), "{stdout}");
    assert_eq!(files(&whole), files(&killed));

    // The audit reads the folder as written.
    let audit_dir = tmp.path().join("audit");
    let out = roboaudit()
        .args(["retrieval", "audit", "--run"])
        .arg(&whole)
        .args([
            "--structural",
            "structural",
            "--resamples",
            "200",
            "--permutations",
            "200",
            "--library-size",
            "1",
            "--out",
        ])
        .arg(&audit_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(audit_dir.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["n_experiences"], 2);
    assert_eq!(audit["n_scenes"], 4);
    assert_eq!(audit["n_executions"], 16);
    assert_eq!(audit["own_base_n"], 2);
    // What was audited, from collect.json: the report names the section by it.
    assert_eq!(audit["run"]["task"], "stack");
    assert_eq!(audit["run"]["mechanism"], "replay");
    let failures = &audit["run"]["appearance_caused_failures"];
    assert!(
        failures["failed"].as_u64().unwrap() <= failures["executions"].as_u64().unwrap(),
        "{failures}"
    );
    // A Replay collection prints the count its audit records, as a learned one does.
    let line = common::appearance_line(failures);
    assert!(whole_stdout.contains(&line), "{line}\n{whole_stdout}");
    let summary = std::fs::read_to_string(audit_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("Task `stack`, reuse mechanism `replay`."),
        "{summary}"
    );
    // And the count the collection printed.
    assert!(summary.contains(&line), "{line}\n{summary}");
    // An input file of its own: collect.json no longer describes what is audited.
    let other = tmp.path().join("audit-other");
    let experiences = whole.join("experiences.csv");
    let out = audit_run(
        &whole,
        &other,
        &["--experiences", experiences.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(other.join("audit.json")).unwrap()).unwrap();
    assert!(audit.get("run").is_none(), "{}", audit["run"]);
    // A damaged collect.json is bad input, named with its line and column; nothing is written.
    std::fs::write(whole.join("collect.json"), "garbage\n").unwrap();
    let damaged = tmp.path().join("audit-damaged");
    let out = audit_run(&whole, &damaged, &[]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("collect.json") && err.contains("line 1 column 1"),
        "{err}"
    );
    assert!(!damaged.exists());
}

#[test]
fn max_chunks_stops_early_and_a_different_config_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let damaged = tmp.path().join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::write(damaged.join("collect.json"), "garbage\n").unwrap();
    let o = collect(&damaged, &[]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("collect.json") && err.contains("line 1 column 1"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(damaged.join("collect.json")).unwrap(),
        b"garbage\n"
    );
    let dir = tmp.path().join("run");
    let none = collect(&dir, &["--max-chunks", "0"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("--max-chunks 0 would write nothing"));
    assert!(!dir.exists());
    let out = collect(&dir, &["--max-chunks", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("stopped after 2 of 20"));
    // Auditing the unfinished run says it is unfinished and how to resume it.
    let audited = roboaudit()
        .args(["retrieval", "audit", "--resamples", "100", "--run"])
        .arg(&dir)
        .arg("--out")
        .arg(tmp.path().join("audit"))
        .output()
        .unwrap();
    assert_eq!(audited.status.code(), Some(3));
    let err = String::from_utf8_lossy(&audited.stderr);
    assert!(
        err.contains(
            "unfinished `retrieval collect` (1 of 10 part files of 20 executions written)"
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "--task stack --mechanism replay --library 2 --scenes 4 --seeds 2 --seed 0 --chunk 2 --out {}",
            dir.display()
        )),
        "{err}"
    );
    assert!(err.contains("no execution of experience"), "{err}");
    let out = roboaudit()
        .args(["retrieval", "collect", "--task", "stack", "--library", "3"])
        .args(["--scenes", "4", "--seeds", "2", "--chunk", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another config"), "{err}");
    // A damaged part is not resumed over: exit 3, naming it and what to do.
    let part = dir.join("executions/part-000000.parquet");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() / 2]).unwrap();
    let out = collect(&dir, &[]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("executions/part-000000.parquet cannot be read")
            && err.contains("delete it and rerun"),
        "{err}"
    );
}

#[test]
fn bad_settings_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("afile");
    std::fs::write(&file, b"x").unwrap();
    let out = collect(&file, &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a file, not a folder"));
    for (args, needle) in [
        (vec!["--task", "push"], "valid: stack, door"),
        (
            vec!["--mechanism", "policy_dr"],
            "valid: replay, policy, policy-dr",
        ),
        (vec!["--seeds", "0"], "seeds"),
        (vec!["--scenes", "2"], "scenes"),
    ] {
        let out = roboaudit()
            .args(["retrieval", "collect"])
            .args(&args)
            .arg("--out")
            .arg(tmp.path().join("x"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!tmp.path().join("x").exists(), "{args:?} wrote output");
    }
}

/// `retrieval audit --run RUN --out OUT` with 100 resamples and permutations and `extra`.
fn audit_run(run: &Path, out: &Path, extra: &[&str]) -> Output {
    roboaudit()
        .args([
            "retrieval",
            "audit",
            "--resamples",
            "100",
            "--permutations",
            "100",
        ])
        .arg("--run")
        .arg(run)
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// An unfinished collection whose written executions still cover every cell is audited with a
/// warning (and no `run`); one shard of a sharded collection is told to merge, not to resume.
#[test]
fn partial_collections_are_audited_with_a_warning_and_shards_pointed_to_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("unfinished");
    let o = roboaudit()
        .args(["retrieval", "collect", "--task", "stack", "--library", "2"])
        .args([
            "--scenes",
            "3",
            "--seeds",
            "3",
            "--chunk",
            "8",
            "--max-chunks",
            "2",
            "--out",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = tmp.path().join("audit-unfinished");
    let o = audit_run(&run, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: this audit covers only the executions written so far: ")
            && err.contains(
                "unfinished `retrieval collect` (2 of 3 part files of 24 executions written)"
            ),
        "{err}"
    );
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["n_executions"], 16);
    assert!(audit.get("run").is_none(), "{}", audit["run"]);

    let shard = tmp.path().join("shard-0");
    let o = collect(&shard, &["--shard", "0/2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = audit_run(&shard, &tmp.path().join("audit-shard"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    // Whether the shard's executions leave a cell empty (exit 3) or not (a warning), the note
    // names the shard and the merge.
    assert!(
        err.contains("holds shard 0/2 of a sharded `retrieval collect`")
            && err.contains("roboaudit merge")
            && !err.contains("resume it with"),
        "{err}"
    );
}
