//! The five real LeRobot datasets (recordings by others, `../shared/datasets`) through the CLI:
//! `data inspect`, `data labels` and `fqe fit` on state-vector features, with the behaviour policy
//! (on-policy) and policy-actions files as targets, and every inconsistency a clear message.
//!
//! The fits run on trimmed copies committed under `tests/fixtures/real/` (written by
//! `scripts/trim_real_datasets.py`, same schema oddities), so this file passes on any clean clone.
//! One test, ignored by a plain `cargo test`, also derives the pusht labels on the full dataset,
//! named by `ROBOAUDIT_SHARED_DATASETS` as in the data crate's `lerobot_real.rs`; `.ci/run` runs it
//! and it fails, loudly, when the datasets are missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use roboaudit_data::lerobot::LeRobotDataset;
use serde_json::Value;

/// (fixture folder, extra `fqe fit` options for its non-standard keys)
const DATASETS: [(&str, &[&str]); 5] = [
    ("pusht_v30", &[]),
    ("so101_record_test", &[]),
    ("piper_act_v30", &[]),
    ("g1_inspire_v21", &[]),
    (
        "lingzu_open50_v30",
        &[
            "--features",
            "state:state",
            "--state-feature",
            "none",
            "--action-feature",
            "actions",
        ],
    ),
];

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real"))
}

fn roboaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fit(dataset: &Path, labels: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "fqe",
        "fit",
        "--dataset",
        s(dataset),
        "--labels",
        s(labels),
        "--out",
        s(out),
        "--gamma",
        "0.99",
    ];
    args.extend_from_slice(extra);
    roboaudit(&args)
}

fn report(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap()
}

/// `mean_i γ^(T_i − 1) r_i` from the labels file and the dataset's episode lengths.
fn discounted_return(dataset: &Path, labels: &Path, gamma: f64) -> f64 {
    let ds = LeRobotDataset::open(dataset).unwrap();
    let text = std::fs::read_to_string(labels).unwrap();
    let mut sum = 0.0;
    for line in text.lines().skip(1) {
        let (ep, success) = line.split_once(',').unwrap();
        let len = ds.episode(ep.parse().unwrap()).unwrap().length.unwrap();
        if success == "1" {
            sum += gamma.powi(i32::try_from(len).unwrap() - 1);
        }
    }
    sum / ds.episodes().len() as f64
}

#[test]
fn every_trimmed_dataset_inspects_and_only_its_known_oddities_are_problems() {
    for (name, _) in DATASETS {
        let dir = fixtures().join(name);
        let o = roboaudit(&["data", "inspect", "--json", s(&dir)]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let ds = LeRobotDataset::open(&dir).unwrap();
        assert_eq!(r["episodes"], ds.episodes().len(), "{name}");
        assert_eq!(r["frames"], r["total_frames"], "{name}");
        for p in r["problems"].as_array().unwrap() {
            let m = p["message"].as_str().unwrap();
            let known = m.contains("video files are missing")
                || (name == "pusht_v30"
                    && (m.contains("\"next.success\" is never true")
                        || m.contains("\"next.done\" is true on frames other than the last")))
                || (name == "lingzu_open50_v30" && m.contains("each one frame short"));
            assert!(known, "{name}: unexpected problem: {m}");
        }
    }
}

#[test]
fn pusht_labels_come_from_the_peak_coverage_reward() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("labels.csv");
    let data = fixtures().join("pusht_v30");
    let o = roboaudit(&[
        "data",
        "labels",
        s(&data),
        "--rule",
        "max",
        "--threshold",
        "0.9",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Peaks of episodes 0–11 (pyarrow): 0.873 0.900 0.908 0.920 0.909 0.921 0.890 0.899 0.875
    // 0.912 0.919 0.908.
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("8 of 12 episodes succeed"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(fixtures().join("labels/pusht_v30.csv")).unwrap()
    );
    // The last-frame rule differs: episode 5 peaks at 0.9209 but ends at 0.8978 (pyarrow).
    let o = roboaudit(&[
        "data",
        "labels",
        s(&data),
        "--rule",
        "last",
        "--threshold",
        "0.9",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last = std::fs::read_to_string(&out).unwrap();
    assert!(
        last.contains("\n5,0\n") && last.contains("\n4,1\n"),
        "{last}"
    );
    // A threshold that is not a number is a usage error.
    let o = roboaudit(&[
        "data",
        "labels",
        s(&data),
        "--threshold",
        "nan",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// The full datasets' folder, named by `ROBOAUDIT_SHARED_DATASETS` (`.ci/run` sets it); the test
/// that needs it is ignored by a plain `cargo test`, and fails loudly when the named folder is missing.
fn shared_datasets() -> PathBuf {
    let dir = std::env::var_os("ROBOAUDIT_SHARED_DATASETS")
        .map(PathBuf::from)
        .expect("set ROBOAUDIT_SHARED_DATASETS to the folder holding the real LeRobot datasets");
    assert!(
        dir.join("README.md").is_file(),
        "the real LeRobot datasets are missing: ROBOAUDIT_SHARED_DATASETS names {}, which has no \
         README.md; this test must not pass without them",
        dir.display()
    );
    dir
}

#[test]
#[ignore = "needs the real datasets: ROBOAUDIT_SHARED_DATASETS=DIR cargo test -- --ignored"]
fn full_pusht_peak_reward_labels_split_the_demonstrations() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("labels.csv");
    let data = shared_datasets().join("pusht_v30");
    let o = roboaudit(&[
        "data",
        "labels",
        s(&data),
        "--threshold",
        "0.9",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // pyarrow over the 206 episodes: 92 peak at ≥ 0.90, none at ≥ 0.95 (the env's own bar).
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("92 of 206 episodes succeed"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn fqe_fit_runs_on_state_features_of_every_dataset_with_the_behaviour_policy() {
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in DATASETS {
        let data = fixtures().join(name);
        let labels = fixtures().join("labels").join(format!("{name}.csv"));
        let out = dir.path().join(name);
        let mut args = vec!["--no-neural"];
        args.extend_from_slice(extra);
        let o = fit(&data, &labels, &out, &args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("evaluating the behaviour policy"),
            "{name}"
        );
        let r = report(&out);
        let column = if name == "lingzu_open50_v30" {
            "state"
        } else {
            "observation.state"
        };
        let load = &r["inputs"]["load"];
        assert_eq!(load["features"], format!("state:{column}"), "{name}");
        // The state column is the frame feature and is not added a second time raw; the time
        // input follows it.
        let parts = r["inputs"]["parts"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "{name}: {parts:?}");
        assert_eq!(parts[1], serde_json::json!(["t", 1]), "{name}");
        assert!(
            r["inputs"]["target"]
                .as_str()
                .unwrap()
                .contains("on-policy")
        );
        let policies = r["policies"].as_array().unwrap();
        assert_eq!(policies.len(), 1);
        assert_eq!(policies[0]["policy"], "behaviour");
        let cell = &policies[0]["tasks"][0];
        // The naive estimate is the labels' discounted return, computed here independently.
        let naive = cell["naive"].as_f64().unwrap();
        let expected = discounted_return(&data, &labels, 0.99);
        assert!(
            (naive - expected).abs() < 1e-9,
            "{name}: {naive} vs {expected}"
        );
        // On-policy, FQE estimates the same quantity as the return average: it must land near
        // it (not equal: the Q function is linear in the state, the returns are not).
        let linear = cell["linear"].as_f64().unwrap();
        assert!(
            (linear - naive).abs() < 0.25,
            "{name}: linear {linear} vs naive {naive}"
        );
        assert_eq!(cell["coverage"]["out_of_support"], false, "{name}");
    }
}

/// A policy-actions CSV for every frame of `dataset`: its own action plus `offset` per dimension.
fn shifted_policy(dataset: &Path, action: &str, offset: f32, file: &Path) {
    let ds = LeRobotDataset::open(dataset).unwrap();
    let mut csv = String::from("index,sample,action\n");
    for ep in ds.read_frames(&[action]).unwrap() {
        for (idx, a) in ep.index.iter().zip(ep.column(action).unwrap()) {
            let v: Vec<String> = a.iter().map(|x| (x + offset).to_string()).collect();
            csv.push_str(&format!("{idx},0,{}\n", v.join(" ")));
        }
    }
    std::fs::write(file, csv).unwrap();
}

#[test]
fn a_policy_far_from_the_pusht_demonstrations_is_flagged_and_the_behaviour_policy_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixtures().join("pusht_v30");
    let labels = fixtures().join("labels/pusht_v30.csv");
    // pusht actions are target positions in pixels (0..512): 400 px away is off the table.
    let far = dir.path().join("far.csv");
    shifted_policy(&data, "action", 400.0, &far);
    let near = dir.path().join("near.csv");
    shifted_policy(&data, "action", 0.5, &near);
    let out = dir.path().join("res");
    let o = fit(
        &data,
        &labels,
        &out,
        &[
            "--policy-actions",
            &format!("far={}", s(&far)),
            "--policy-actions",
            &format!("near={}", s(&near)),
            "--behaviour",
            "--steps",
            "200",
            "--seeds",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&out);
    let flag = |policy: &str| -> bool {
        let p = r["policies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["policy"] == policy)
            .unwrap();
        p["tasks"][0]["coverage"]["out_of_support"]
            .as_bool()
            .unwrap()
    };
    assert!(flag("far"));
    assert!(!flag("near"));
    assert!(!flag("behaviour"));
    assert!(
        r["inputs"]["target"]
            .as_str()
            .unwrap()
            .contains("and the behaviour policy")
    );
    let neural = &r["policies"][0]["tasks"][0]["neural"];
    assert_eq!(neural["seeds"].as_array().unwrap().len(), 1, "{neural}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn inconsistent_files_are_reported_with_file_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixtures().join("pusht_v30");
    let labels = fixtures().join("labels/pusht_v30.csv");
    let out = dir.path().join("res");

    // A labels file naming an episode the dataset does not have.
    let bad_labels = dir.path().join("labels.csv");
    let mut text = std::fs::read_to_string(&labels).unwrap();
    text.push_str("99,1\n");
    std::fs::write(&bad_labels, text).unwrap();
    let o = fit(&data, &bad_labels, &out, &["--no-neural"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("row 13") && e.contains("\"episode_index\"") && e.contains("episode 99"),
        "{e}"
    );
    assert!(e.contains(s(&bad_labels)), "{e}");

    // A feature key the dataset does not have: a wrong option (2); the message lists the
    // declared ones.
    let o = fit(
        &data,
        &labels,
        &out,
        &["--no-neural", "--features", "state:observation.velocity"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("declares no feature \"observation.velocity\"")
            && e.contains("observation.state (float32[2])")
            && e.contains("observation.image (video)"),
        "{e}"
    );
    // Non-standard keys (lingzu: `actions`, `state`) without options: the keys are listed.
    let lingzu = fixtures().join("lingzu_open50_v30");
    let o = fit(
        &lingzu,
        &fixtures().join("labels/lingzu_open50_v30.csv"),
        &out,
        &["--no-neural"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("actions (float32[34])") && e.contains("state (float32[34])"),
        "{e}"
    );
    // A video feature asked for as the frame features: the trimmed copy has no MP4 files, so
    // the first one is named with its episode.
    let o = fit(
        &data,
        &labels,
        &out,
        &["--no-neural", "--features", "observation.image"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("episode 0, video feature \"observation.image\"")
            && e.contains("videos/observation.image/chunk-000/file-000.mp4"),
        "{e}"
    );
    assert!(!out.join("fqe.json").exists());

    // A vector column of the wrong width: info.json says 3, the Parquet rows hold 2.
    let copy = dir.path().join("pusht");
    copy_dir(&data, &copy);
    let info_file = copy.join("meta/info.json");
    let mut info: Value =
        serde_json::from_str(&std::fs::read_to_string(&info_file).unwrap()).unwrap();
    info["features"]["observation.state"]["shape"] = serde_json::json!([3]);
    std::fs::write(&info_file, serde_json::to_string(&info).unwrap()).unwrap();
    let o = fit(&copy, &labels, &out, &["--no-neural"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("row 1, column \"observation.state\"")
            && e.contains("expected 3 values")
            && e.contains("data/chunk-000/file-000.parquet"),
        "{e}"
    );
    assert!(!out.join("fqe.json").exists());
}

#[test]
fn out_of_range_options_are_usage_errors_checked_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dataset");
    let labels = fixtures().join("labels/pusht_v30.csv");
    let out = dir.path().join("res");
    for bad in [
        &["--components", "0"][..],
        &["--components", "100000"],
        &["--gamma", "1.5"],
        &["--steps", "0"],
        &["--steps", "sometimes"],
        &["--max-steps", "0"],
        &["--steps", "300", "--max-steps", "500"],
        &["--bootstrap", "1001"],
        &["--threads", "0"],
        &["--threads", "1025"],
        &["--batch-size", "0"],
        &["--hidden", "0"],
        &["--hidden", "4097"],
        &["--hidden", "4096", "--batch-size", "65536"],
        &["--target-update", "0"],
        &["--learning-rate", "-1"],
        &["--ridge", "0"],
        &["--coverage-threshold", "nan"],
        &["--seeds", ""],
        &["--policy-actions", "no-equals-sign"],
    ] {
        let o = fit(&missing, &labels, &out, bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(!out.exists(), "{bad:?}");
    }
    // A neural option beside --no-neural would be ignored: refused instead, naming both.
    for option in [["--steps", "200"], ["--hidden", "64"], ["--seeds", "4"]] {
        let o = fit(
            &missing,
            &labels,
            &out,
            &["--no-neural", option[0], option[1]],
        );
        assert_eq!(o.status.code(), Some(2), "{option:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "the argument '--no-neural' cannot be used with '{}",
                option[0]
            )),
            "{option:?}: {}",
            stderr(&o)
        );
    }
}

/// fqe.json records paths as JSON text: a folder name that is not UTF-8 is a usage error
/// before any work, not a panic after the feature pass.
#[cfg(unix)]
#[test]
fn a_dataset_path_that_is_not_utf8_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
    std::fs::create_dir_all(&data).unwrap();
    let out = dir.path().join("res");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["fqe", "fit", "--no-neural", "--dataset"])
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not a UTF-8 path"), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn without_a_labels_file_an_unusable_success_label_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    // pusht: `next.success` is never true; estimating from it would give 0 for every policy.
    let data = fixtures().join("pusht_v30");
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        s(&data),
        "--out",
        s(&out),
        "--no-neural",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("\"next.success\" is never true in all 12 episodes")
            && e.contains("data labels"),
        "{e}"
    );
    // so101: no label column at all.
    let data = fixtures().join("so101_record_test");
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        s(&data),
        "--out",
        s(&out),
        "--no-neural",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has no success label"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

/// Copies a fixture dataset (its `meta/` and `data/` trees) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

#[test]
fn options_naming_unsuitable_columns_are_usage_errors() {
    let ds = fixtures().join("pusht_v30");
    let dir = tempfile::tempdir().unwrap();
    // pusht's `action` is 2 wide: not a reward.
    let labels = dir.path().join("labels.csv");
    let o = roboaudit(&[
        "data",
        "labels",
        s(&ds),
        "--reward",
        "action",
        "--threshold",
        "0.5",
        "--out",
        s(&labels),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("column \"action\"") && e.contains("width 2"),
        "{e}"
    );
    assert!(e.contains("meta/info.json"), "{e}");
    assert!(!labels.exists());

    // A frame-feature key the dataset does not declare: the option is wrong, not the dataset.
    let o = roboaudit(&[
        "data",
        "labels",
        s(&ds),
        "--threshold",
        "0.9",
        "--out",
        s(&labels),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fit(
        &ds,
        &labels,
        &dir.path().join("fit"),
        &["--no-neural", "--features", "state:nope"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("declares no feature \"nope\""), "{e}");
    assert!(
        e.contains("observation.state"),
        "the declared features are listed: {e}"
    );
}

#[test]
fn an_unreadable_data_file_is_a_data_error_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("pusht");
    copy_tree(&fixtures().join("pusht_v30"), &ds);
    let data = ds.join("data/chunk-000/file-000.parquet");
    let bytes = std::fs::read(&data).unwrap();
    std::fs::write(&data, &bytes[..bytes.len() / 2]).unwrap();
    let o = roboaudit(&["data", "inspect", s(&ds)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("episode(s) cannot be checked"), "{out}");
    // The reader's reason is kept, and the per-episode follow-on problems are not listed.
    assert!(out.to_lowercase().contains("footer"), "{out}");
    assert!(!out.contains("has no rows"), "{out}");
}
