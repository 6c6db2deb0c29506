//! Standard output that goes away or fills up ends a run with exit code 1, not a panic (101),
//! and the result files are complete either way.

use std::process::{Command, Stdio};

/// The committed example log, audited into `out`.
fn audit(out: &std::path::Path) -> Command {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/retrieval");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_roboaudit"));
    cmd.args(["retrieval", "audit", "--run", example, "--out"])
        .arg(out)
        .stderr(Stdio::piped());
    cmd
}

#[test]
fn a_closed_pipe_ends_the_run_quietly_with_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = audit(&out).stdout(Stdio::piped()).spawn().unwrap();
    // The reader goes away before the table is printed (as `| head -0` would).
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.join("audit.json").is_file() && out.join("summary.md").is_file());
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_one_error_line_with_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let done = audit(&dir.path().join("out"))
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("error: cannot write to standard output: No space left on device"),
        "{stderr}"
    );
}
