//! `roboaudit fqe collect`: the small preset end to end, refusal to overwrite, configuration errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::roboaudit;

#[test]
fn small_collect_writes_the_layout_and_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gt");
    // What a killed run into the same --out leaves behind: removed by this run.
    let stale = tmp.path().join(".fqe-collect-gt.partial");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("half.parquet"), b"PAR1").unwrap();
    let o = roboaudit(&["fqe", "collect", "--small", "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("dataset: 8 episodes"), "{stdout}");
    for p in [
        "dataset/meta/info.json",
        "dataset/data/chunk-000/file-000.parquet",
        "ground_truth.json",
        "README.md",
        "policies/expert.parquet",
        "policies/far_from_data.parquet",
    ] {
        assert!(out.join(p).is_file(), "missing {p}");
    }
    let gt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ground_truth.json")).unwrap()).unwrap();
    assert_eq!(gt["schema"], "roboaudit.fqe.ground_truth.v1");
    assert_eq!(gt["gamma"], 0.99);
    let policies = gt["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 7);
    for p in policies {
        let name = p["policy"].as_str().unwrap();
        assert!(stdout.contains(name), "{name} missing from the table");
        assert_eq!(p["actions_file"], format!("policies/{name}.parquet"));
        assert_eq!(p["tasks"].as_array().unwrap().len(), 4);
    }
    // No temporary folder is left beside the output, the interrupted run's included.
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 1);

    // A second run never replaces the results.
    let again = roboaudit(&["fqe", "collect", "--small", "--out", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

#[test]
fn bad_configuration_is_a_usage_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gt");
    for (flag, value, needle) in [
        ("--episodes", "2", "episodes"),
        ("--image-size", "8", "image size"),
        ("--gamma", "1.5", "gamma"),
        ("--rollouts", "0", "rollouts"),
    ] {
        let o = roboaudit(&[
            "fqe",
            "collect",
            "--small",
            flag,
            value,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{flag}"
        );
        assert!(!out.exists());
    }
}

/// A file as --out is named as a file (it used to be called "not empty"), exit code 2.
#[test]
fn an_out_file_is_named_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, b"x").unwrap();
    let o = roboaudit(&["fqe", "collect", "--small", "--out", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is a file, not a folder"), "{err}");
    assert!(!err.contains("not empty"), "{err}");
}

/// Episodes kept by the dataset stage of `out`'s interrupted run (its work folder's).
fn kept_episodes(out: &std::path::Path) -> usize {
    let name = out.file_name().unwrap().to_string_lossy();
    let dir = out
        .with_file_name(format!(".fqe-collect-{name}.partial"))
        .join(".resume/episodes");
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".episode"))
        })
        .count()
    })
}

/// A run killed while it records the dataset keeps the episodes it recorded; the rerun records
/// only the rest and writes the bytes of an uninterrupted run.
#[test]
fn killed_in_the_dataset_stage_resumes_its_episodes() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let (whole, killed) = (tmp.path().join("whole"), tmp.path().join("killed"));
    let args = |out: &std::path::Path| {
        let mut a: Vec<String> = ["fqe", "collect", "--small", "--episodes", "24", "--out"]
            .map(String::from)
            .to_vec();
        a.push(out.to_str().unwrap().to_owned());
        a
    };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args(&whole))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o));

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args(&killed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while kept_episodes(&killed) < 2 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let at_kill = kept_episodes(&killed);
    assert!(
        (2..24).contains(&at_kill),
        "killed with {at_kill} of 24 episodes kept"
    );

    let o = std::process::Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args(&killed))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(" of 24 episodes kept"), "{err}");
    assert_eq!(common::tree(&whole), common::tree(&killed));
}
