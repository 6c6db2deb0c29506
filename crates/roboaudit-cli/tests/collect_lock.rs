//! Collections into one `--out` do not run at once: the second stops with exit code 3 naming the
//! folder, before it writes anything; a killed run leaves no lock behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{collect_one_faithful_pair, roboaudit, text};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The lock a collection into `out` takes, held by this test as another run would hold it.
fn hold(out: &Path) -> std::fs::File {
    let name = out.file_name().unwrap().to_string_lossy();
    let path = out.with_file_name(format!(".{name}.roboaudit.lock"));
    let f = std::fs::File::create(path).unwrap();
    f.try_lock().unwrap();
    f
}

/// The smallest `retrieval collect` (2 experiences, 3 query scenes, 1 seed) into `out`.
fn small_retrieval(out: &str) -> [&str; 12] {
    [
        "retrieval",
        "collect",
        "--task",
        "stack",
        "--library",
        "2",
        "--scenes",
        "3",
        "--seeds",
        "1",
        "--out",
        out,
    ]
}

/// A small `fqe collect` (24 episodes at the `--small` settings) into `out`.
fn small_fqe(out: &str) -> [&str; 7] {
    [
        "fqe",
        "collect",
        "--small",
        "--episodes",
        "24",
        "--out",
        out,
    ]
}

fn refused(o: &std::process::Output, out: &Path) {
    assert_eq!(o.status.code(), Some(3), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is being written by another roboaudit run"),
        "{err}"
    );
    assert!(err.contains(out.to_str().unwrap()), "{err}");
    assert!(!out.exists(), "wrote {}", out.display());
}

#[test]
fn a_held_out_folder_is_refused_by_retrieval_and_memory_collect() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let held = hold(&out);
    refused(&roboaudit(&small_retrieval(out.to_str().unwrap())), &out);
    drop(held);

    let out = tmp.path().join("m");
    let held = hold(&out);
    refused(&collect_one_faithful_pair(&out, &[]), &out);
    drop(held);
    let o = collect_one_faithful_pair(&out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    // A finished run takes its lock file with it.
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.contains(&".m.roboaudit.lock".to_owned()),
        "{names:?}"
    );
}

/// A second `fqe collect` is refused while the first runs; once the first is killed the same
/// command runs (resuming it).
#[test]
fn fqe_collect_is_refused_while_another_runs_and_not_after_a_kill() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gt");
    let args = small_fqe(out.to_str().unwrap());
    let mut first = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let work = tmp.path().join(".fqe-collect-gt.partial");
    let start = Instant::now();
    while !work.exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(work.exists(), "the first run never started");
    refused(&roboaudit(&args), &out);
    first.kill().unwrap();
    first.wait().unwrap();
    let o = roboaudit(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("ground_truth.json").is_file());
}

/// `--out .` from inside an empty folder: the lock goes beside the folder, not into it, so a
/// retrieval collection fills the folder and leaves nothing else behind; `fqe collect`, which
/// renames its finished work onto OUT, refuses the folder it would replace (exit code 2).
#[test]
fn out_dot_locks_beside_the_current_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path().join("here");
    std::fs::create_dir(&here).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_roboaudit"))
            .args(args)
            .current_dir(&here)
            .output()
            .unwrap()
    };
    let o = run(&small_retrieval("."));
    assert!(o.status.success(), "{}", text(&o));
    assert!(here.join("collect.json").is_file(), "{}", text(&o));
    let stray: Vec<String> = std::fs::read_dir(&here)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("roboaudit.lock"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(small_fqe("./"))
        .current_dir(&empty)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is the current folder"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    assert!(!tmp.path().join(".fqe-collect-empty.partial").exists());
}
