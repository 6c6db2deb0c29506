//! `roboaudit fqe fit` on inputs that do not fit the dataset: policy-actions files of other
//! frames or width, files named by options that do not exist, and fewer frames read than the
//! dataset declares; each is found before the encoding pass or said in a warning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{chain_run_folder as run_folder, fit_linear, roboaudit, text, walk};

/// A policy-actions file that does not fit the dataset (frames missing, another width) stops
/// the fit before the encoding pass: exit 3 naming the file, and `--out` left empty (no feature
/// cache either).
#[test]
fn policy_actions_that_do_not_fit_the_dataset_stop_before_encoding() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let full =
        roboaudit_data::lerobot::read_policy_actions(run.join("policies/pi0.parquet")).unwrap();
    let block = full.samples * full.action_dim;
    let rows = |frames: usize, width: usize| -> Vec<(i64, i64, Vec<f32>)> {
        let mut rows = Vec::new();
        for (k, i) in full.index.iter().take(frames).enumerate() {
            for s in 0..full.samples {
                let a = &full.actions[k * block + s * full.action_dim..][..full.action_dim];
                rows.push((
                    *i,
                    s as i64,
                    a.iter().copied().cycle().take(width).collect(),
                ));
            }
        }
        rows
    };
    let short = full.index.len() - 7;
    for (name, rows, says) in [
        (
            "short.parquet",
            rows(short, full.action_dim),
            format!(
                "7 of {} dataset frames have no target actions",
                full.index.len()
            ),
        ),
        (
            "wide.parquet",
            rows(full.index.len(), full.action_dim + 1),
            format!(
                "actions have {} values, the dataset's have {}",
                full.action_dim + 1,
                full.action_dim
            ),
        ),
    ] {
        let file = dir.path().join(name);
        let bytes = roboaudit_data::lerobot::policy_actions_parquet(
            &file,
            rows.iter().map(|(i, s, a)| (*i, *s, a.as_slice())),
        )
        .unwrap();
        std::fs::write(&file, bytes).unwrap();
        let out = dir.path().join(format!("res-{name}"));
        let o = roboaudit(&[
            "fqe",
            "fit",
            "--dataset",
            run.join("dataset").to_str().unwrap(),
            "--policy-actions",
            &format!("mine={}", file.display()),
            "--no-neural",
            "--components",
            "4",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(3), "{name}: {}", text(&o));
        assert!(text(&o).contains(&says), "{name}: {}", text(&o));
        assert!(text(&o).contains(file.to_str().unwrap()), "{}", text(&o));
        assert!(!text(&o).contains("encoded"), "{name}: {}", text(&o));
        assert!(walk(&out).is_empty(), "{name} left {:?}", walk(&out));
    }
}

/// Rows the episodes metadata does not describe are not read; a dataset whose declared
/// `total_frames` differs from the frames read says so instead of fitting on fewer silently.
#[test]
fn a_fit_on_fewer_frames_than_declared_warns() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let info = run.join("dataset/meta/info.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&info).unwrap()).unwrap();
    let frames = v["total_frames"].as_u64().unwrap();
    let out = dir.path().join("res");
    let o = fit_linear(&run, &out, "4", &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("declares total_frames"), "{}", text(&o));
    v["total_frames"] = serde_json::json!(frames + 3);
    std::fs::write(&info, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let o = fit_linear(&run, &dir.path().join("res2"), "4", &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "warning: meta/info.json declares total_frames {}; the fit read {frames} frames",
            frames + 3
        )),
        "{}",
        text(&o)
    );
}

/// A file named by an option that does not exist is refused naming the option (exit 3).
#[test]
fn a_missing_file_named_by_an_option_names_the_option() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let nope = dir.path().join("nope.json");
    let nope = nope.to_str().unwrap();
    for (extra, says) in [
        (
            vec!["--ground-truth", nope],
            format!("--ground-truth {nope}: no such file"),
        ),
        (
            vec!["--labels", nope],
            format!("--labels {nope}: no such file"),
        ),
        (
            vec!["--policy-actions", &format!("mine={nope}")],
            format!("--policy-actions mine={nope}: no such file"),
        ),
    ] {
        let out = dir.path().join("res");
        let o = fit_linear(&run, &out, "4", &extra);
        assert_eq!(o.status.code(), Some(3), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(&says), "{extra:?}: {}", text(&o));
        assert!(walk(&out).is_empty());
    }
}
