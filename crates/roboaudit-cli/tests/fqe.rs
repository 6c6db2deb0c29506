//! `roboaudit fqe fit` / `evaluate` on a synthetic chain run folder (the layout `fqe collect`
//! writes), with exact ground truth.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

mod common;

use common::{chain_run_folder as run_folder, fit_linear, fqe_fit, walk};
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe::detector::synthetic::{GoalRun, write_goal_dataset};
use roboaudit_fqe::synthetic::{ChainRun, write_chain_run};

fn roboaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap()
}

fn report(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap()
}

fn metric(r: &serde_json::Value, estimator: &str, field: &str) -> serde_json::Value {
    r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["estimator"] == estimator)
        .unwrap()["suite"][field]
        .clone()
}

/// A chain run of `episodes` episodes (two policies, qualities 0.9 and 0.2, two action samples
/// per frame) written into `run`.
fn small_chain(run: &Path, episodes: usize, seed: u64) {
    let chain = ChainRun {
        episodes,
        quality: vec![0.9, 0.2],
        samples: 2,
        seed,
        ..ChainRun::default()
    };
    write_chain_run(run, &chain).unwrap();
}

/// `fqe evaluate --run RUN --out OUT`.
fn evaluate_run(run: &Path, out: &Path) -> Output {
    roboaudit(&[
        "fqe",
        "evaluate",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

/// Copies the folder `from` (files and subfolders) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn fit_on_a_run_folder_writes_scored_estimates() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "100",
        "--seeds",
        "0,1",
        "--target-tau",
        "0.05",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("neural±sd") && stdout.contains("linear  suite:"),
        "{stdout}"
    );
    let r = report(&out);
    assert_eq!(r["schema"], "roboaudit.fqe.v1");
    assert_eq!(r["gamma"], 0.9);
    assert_eq!(r["linear_config"]["solver"], "lstd");
    assert_eq!(r["neural_config"]["target_tau"], 0.05);
    assert_eq!(r["policies"].as_array().unwrap().len(), 3);
    let cell = &r["policies"][0]["tasks"][0];
    assert_eq!(cell["neural"]["seeds"].as_array().unwrap().len(), 2);
    assert!(cell["truth"]["v_pi"].as_f64().unwrap() > 0.5);
    assert!(cell["coverage"]["out_of_support"].is_boolean());
    assert_eq!(r["policies"][0]["curves"].as_array().unwrap().len(), 2);
    // Linear FQE orders the three chain policies exactly; the naive estimate cannot order them.
    assert!((metric(&r, "linear", "spearman_v").as_f64().unwrap() - 1.0).abs() < 1e-12);
    assert!(metric(&r, "naive", "spearman_v").is_null());
    // The naive estimate ties every policy at the top: regret@1 is the mean over all of them.
    assert_eq!(metric(&r, "naive", "top_ties"), 3);
    let suite_v: Vec<f64> = r["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let cells = p["tasks"].as_array().unwrap();
            cells
                .iter()
                .map(|c| c["truth"]["v_pi"].as_f64().unwrap())
                .sum::<f64>()
                / cells.len() as f64
        })
        .collect();
    let best = suite_v.iter().copied().fold(f64::MIN, f64::max);
    let expected = suite_v.iter().map(|v| (best - v) / best).sum::<f64>() / 3.0;
    assert!(expected > 0.05, "{suite_v:?}");
    let got = metric(&r, "naive", "regret_at_1_v").as_f64().unwrap();
    assert!((got - expected).abs() < 1e-9, "{got} vs {expected}");
    assert!(out.join("summary.md").exists());
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("uniformly random tie-breaking"), "{md}");
    assert_eq!(
        r["metrics"][0]["suite_per_seed"].as_array().unwrap().len(),
        2,
        "neural metrics per seed"
    );
    assert!(out.join("summary.md").exists());

    // `evaluate` rescoring the same estimates gives the same report.
    let before = std::fs::read(out.join("fqe.json")).unwrap();
    let o = evaluate_run(&run, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(out.join("fqe.json")).unwrap(), before);
}

#[test]
fn explicit_dataset_and_policy_files_then_evaluate_with_ground_truth() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let pi0 = format!("good={}", run.join("policies/pi0.parquet").display());
    let pi2 = format!("bad={}", run.join("policies/pi2.parquet").display());
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        run.join("dataset").to_str().unwrap(),
        "--policy-actions",
        &pi0,
        "--policy-actions",
        &pi2,
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
        "--gamma",
        "0.9",
        "--linear-solver",
        "iterated",
        "--action-terms",
        "linear",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&out);
    assert_eq!(r["linear_config"]["solver"], "iterated");
    assert_eq!(r["linear_config"]["action_terms"], "linear");
    assert!(r["metrics"].as_array().unwrap().is_empty());
    assert!(r["policies"][0]["tasks"][0]["neural"].is_null());
    let good = r["policies"][0]["tasks"][0]["linear"].as_f64().unwrap();
    let bad = r["policies"][1]["tasks"][0]["linear"].as_f64().unwrap();
    assert!(good > bad + 0.3, "{good} vs {bad}");

    // Names differ from the ground truth's (pi0, pi1, pi2): nothing to score, refused (exit 3,
    // see evaluate_refuses_a_ground_truth_without_the_fits_policies).
    let gt = run.join("ground_truth.json");
    let o = roboaudit(&[
        "fqe",
        "evaluate",
        "--ground-truth",
        gt.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(report(&out)["metrics"].as_array().unwrap().is_empty());

    // A ground-truth file that is not there is bad input too (exit 3), named, report untouched.
    let file = out.join("fqe.json");
    let before = std::fs::read(&file).unwrap();
    let absent = dir.path().join("absent.json");
    let o = roboaudit(&[
        "fqe",
        "evaluate",
        "--ground-truth",
        absent.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("absent.json"), "{}", text(&o));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // So is a folder given where the file goes.
    let folder = dir.path().join("gt-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let o = roboaudit(&[
        "fqe",
        "evaluate",
        "--ground-truth",
        folder.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("gt-folder"), "{}", text(&o));
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // A report of another schema is refused (exit 3) and left as it was.
    let foreign = std::fs::read_to_string(&file)
        .unwrap()
        .replace("roboaudit.fqe.v1", "roboaudit.fqe.v9");
    std::fs::write(&file, &foreign).unwrap();
    let o = roboaudit(&[
        "fqe",
        "evaluate",
        "--ground-truth",
        gt.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("roboaudit.fqe.v9"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), foreign);
}

#[test]
fn bad_inputs_exit_with_code_3_and_usage_errors_with_2() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        run.join("dataset").to_str().unwrap(),
        "--policy-actions",
        "no-equals-sign",
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A malformed option is a usage error (2), found before the dataset is read.
    assert!(String::from_utf8_lossy(&o.stderr).contains("NAME=FILE"));
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        run.join("dataset").to_str().unwrap(),
        "--policy-actions",
        "x=a.parquet",
        "--policy-actions",
        "x=b.parquet",
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("\"x\" is given twice"), "{}", text(&o));

    // Ground truth outside [0, 1]: an input error naming the field.
    std::fs::write(
        run.join("ground_truth.json"),
        br#"{"schema":"roboaudit.fqe.ground_truth.v1","gamma":0.9,"policies":[{"policy":"p","tasks":[{"task":"t","v_pi":-7.0,"success_rate":0.5}]}]}"#,
    )
    .unwrap();
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("ground_truth.json") && text(&o).contains("v_pi -7 is not in [0, 1]"),
        "{}",
        text(&o)
    );

    std::fs::write(
        run.join("ground_truth.json"),
        br#"{"schema":"other","gamma":0.9,"policies":[]}"#,
    )
    .unwrap();
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("roboaudit.fqe.ground_truth.v1"));

    // No fqe.json to score: an input error naming the file.
    let o = roboaudit(&["fqe", "evaluate", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fqe.json"));
    assert!(!out.join("fqe.json").exists());

    let o = roboaudit(&["fqe", "fit", "--out"]);
    assert_eq!(o.status.code(), Some(2));
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every path under `dir`, recursively (empty when it does not exist).
#[test]
fn bad_options_exit_2_before_encoding_and_write_nothing() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let dataset = run.join("dataset");
    let out = dir.path().join("res");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a folder").unwrap();
    let before = walk(&dataset);
    let inside = dataset.join("res");
    let dotted = dataset.join("meta/../fqe-out");
    let cache_inside = dataset.join("cache");
    let (run_s, out_s) = (run.to_str().unwrap(), out.to_str().unwrap());
    let file_s = file.to_str().unwrap();
    // The run's ground truth with its first policy renamed `behaviour`.
    let gt_beh = run.join("gt_behaviour.json");
    let mut truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("ground_truth.json")).unwrap()).unwrap();
    truth["policies"][0]["actions_file"] = "policies/pi0.parquet".into();
    truth["policies"][0]["policy"] = "behaviour".into();
    std::fs::write(&gt_beh, serde_json::to_vec(&truth).unwrap()).unwrap();
    let gt_beh_s = gt_beh.to_str().unwrap();
    for (extra, needles) in [
        // The run's ground truth is at gamma 0.9: found before any frame is encoded.
        (
            vec!["--out", out_s, "--gamma", "1"],
            vec![
                "--gamma 1 differs from gamma 0.9 of the ground truth",
                "ground_truth.json",
            ],
        ),
        (
            vec!["--out", out_s, "--seeds", "0,0"],
            vec!["--seeds lists seed 0 twice"],
        ),
        (
            vec!["--out", out_s, "--cache", file_s],
            vec!["--cache must be a folder"],
        ),
        (vec!["--out", file_s], vec!["is a file, not a folder"]),
        (
            vec!["--out", inside.to_str().unwrap()],
            vec!["is inside the dataset folder"],
        ),
        (
            vec!["--out", dotted.to_str().unwrap()],
            vec!["is inside the dataset folder"],
        ),
        (
            vec!["--out", out_s, "--cache", cache_inside.to_str().unwrap()],
            vec!["is inside the dataset folder"],
        ),
        (
            vec!["--out", out_s, "--state-feature", "observation.velocity"],
            vec![
                "--state-feature observation.velocity: the dataset",
                "(or none)",
            ],
        ),
        (
            vec!["--out", out_s, "--action-feature", "next.action"],
            vec![
                "--action-feature next.action: the dataset",
                "declared features: ",
            ],
        ),
        // The action is Q's argument; as an input it would stand in for every target action.
        (
            vec!["--out", out_s, "--features", "state:action"],
            vec!["--features: \"action\" is the action feature"],
        ),
        (
            vec!["--out", out_s, "--state-feature", "action"],
            vec!["--state-feature: \"action\" is the action feature"],
        ),
        // The default state feature named as the action: the message says how to change it.
        (
            vec!["--out", out_s, "--action-feature", "observation.state"],
            vec![
                "--state-feature (default observation.state; none for none): \
                 \"observation.state\" is the action feature",
            ],
        ),
        // A declared feature of the wrong kind is a wrong option, like an undeclared one.
        (
            vec!["--out", out_s, "--features", "image:observation.state"],
            vec![
                "--features image:observation.state: \"observation.state\" is not a camera",
                "a numeric column is `state:observation.state`",
            ],
        ),
        // The success label as an input would hand the network what it is to learn.
        (
            vec!["--out", out_s, "--features", "state:next.success"],
            vec!["--features: \"next.success\" holds what follows the frame's action"],
        ),
        (
            vec!["--out", out_s, "--ground-truth", gt_beh_s, "--behaviour"],
            vec!["--behaviour: the ground truth already has a policy named \"behaviour\""],
        ),
        (
            vec![
                "--out",
                out_s,
                "--learning-rate",
                "1e-300",
                "--ridge=-1e-300",
            ],
            vec!["--ridge -1e-300 must be"],
        ),
    ] {
        let mut args = vec!["fqe", "fit", "--run", run_s, "--steps", "10"];
        args.extend(extra.iter().copied());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        for n in needles {
            assert!(text(&o).contains(n), "{extra:?}: {n} not in {}", text(&o));
        }
        assert!(!out.exists(), "{extra:?} wrote {:?}", walk(&out));
        assert_eq!(walk(&dataset), before, "{extra:?} wrote into the dataset");
    }
    // The run's dataset named as the run: the message says which option it belongs to.
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        dataset.to_str().unwrap(),
        "--out",
        out_s,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "this is a LeRobot dataset, not a run folder written by `fqe collect` \
             (dataset/, policies/, ground_truth.json): pass --dataset {}",
            dataset.display()
        )),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    // A fit's results folder named as the run.
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join("fqe.json"), b"{}").unwrap();
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        results.to_str().unwrap(),
        "--out",
        out_s,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("this folder holds an FQE fit's results (fqe.json)"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    // A retrieval audit's folder: fqe.json would land beside it and replace its summary.md.
    let audit = dir.path().join("audit");
    std::fs::create_dir(&audit).unwrap();
    let audit_json = br#"{"schema": "roboaudit.retrieval.v1"}"#;
    std::fs::write(audit.join("audit.json"), audit_json).unwrap();
    std::fs::write(audit.join("summary.md"), b"# retrieval").unwrap();
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        run_s,
        "--out",
        audit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("holds another kind of result"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read(audit.join("summary.md")).unwrap(),
        b"# retrieval"
    );
    assert!(!audit.join("fqe.json").exists());
}

#[test]
fn components_beyond_the_frames_are_capped_up_front_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    small_chain(&run, 6, 0);
    let frames: u64 = LeRobotDataset::open(run.join("dataset"))
        .unwrap()
        .episodes()
        .iter()
        .map(|e| e.length.unwrap())
        .sum();
    assert!(frames < 1000, "{frames}");
    let out = dir.path().join("res");
    let o = fit_linear(&run, &out, "1024", &[]);
    assert!(o.status.success(), "{}", text(&o));
    let expected = format!(
        "warning: --components 1024 capped at {}: the {frames} frames",
        frames - 1
    );
    assert!(
        text(&o).contains(&expected),
        "{expected} not in {}",
        text(&o)
    );
    let (kept, fitted) = (
        report(&out)["inputs"]["load"]["components"][0]
            .as_u64()
            .unwrap(),
        report(&out)["inputs"]["load"]["components"][1]
            .as_u64()
            .unwrap(),
    );
    assert_eq!(fitted, frames);
    assert!(kept < frames, "{kept}");
}

#[test]
fn evaluate_refuses_the_ground_truth_of_another_run() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    // Another seed and other policies under the same names and episode count: other data and
    // other ground truth.
    for (run, seed, quality) in [(&a, 0, [0.9, 0.2]), (&b, 1, [0.7, 0.4])] {
        let chain = ChainRun {
            episodes: 40,
            quality: quality.to_vec(),
            samples: 2,
            seed,
            ..ChainRun::default()
        };
        write_chain_run(run, &chain).unwrap();
    }
    let out = dir.path().join("res");
    let o = fit_linear(&a, &out, "8", &[]);
    assert!(o.status.success(), "{}", text(&o));
    let fitted = report(&out);
    assert_eq!(fitted["dataset"]["episodes"], 40);
    assert!(fitted["dataset"]["fingerprint"].is_string());
    let file = out.join("fqe.json");
    let before = std::fs::read(&file).unwrap();
    for extra in [
        vec!["--run", b.to_str().unwrap()],
        vec![
            "--ground-truth",
            b.join("ground_truth.json")
                .to_str()
                .unwrap()
                .to_owned()
                .leak(),
        ],
    ] {
        let mut args = vec!["fqe", "evaluate", "--out", out.to_str().unwrap()];
        args.extend(extra.iter().copied());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(3), "{extra:?}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains(a.join("dataset").to_str().unwrap()), "{t}");
        assert!(t.contains(b.join("dataset").to_str().unwrap()), "{t}");
        assert!(t.contains("belong to another run"), "{t}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            before,
            "{extra:?} rewrote fqe.json"
        );
    }
    // Its own run scores as before.
    let o = evaluate_run(&a, &out);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // A report from before fits recorded their dataset (and their actions files) still loads,
    // with a note.
    let mut old = fitted.clone();
    old.as_object_mut().unwrap().remove("dataset");
    for p in old["policies"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("actions_fingerprint");
    }
    std::fs::write(&file, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
    let o = evaluate_run(&b, &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("does not record the dataset"),
        "{}",
        text(&o)
    );
}

#[test]
fn evaluate_accepts_the_ground_truth_a_fit_on_another_dataset_was_scored_against() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    small_chain(&a, 40, 0);
    // A curated copy of run a's recording (same frames, its metadata edited: another
    // fingerprint), fitted with run a's policies and ground truth on purpose.
    let copy = dir.path().join("curated");
    copy_tree(&a.join("dataset"), &copy);
    let info = copy.join("meta/info.json");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&info).unwrap()).unwrap();
    meta["curated_by"] = serde_json::Value::from("a test");
    std::fs::write(&info, serde_json::to_vec_pretty(&meta).unwrap()).unwrap();
    let out = dir.path().join("res");
    let o = fit_linear(&a, &out, "8", &["--dataset", copy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let fitted = report(&out);
    assert_eq!(
        fitted["ground_truth"].as_str().unwrap(),
        roboaudit_fqe::fingerprint(&std::fs::read(a.join("ground_truth.json")).unwrap())
    );
    // a/dataset is not the fitted one, but a/ground_truth.json is what the fit was scored on.
    let before = std::fs::read(out.join("fqe.json")).unwrap();
    let o = evaluate_run(&a, &out);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(out.join("fqe.json")).unwrap(), before);
    // Without that record the curated copy is another dataset than a/dataset: refused.
    let mut unrecorded = fitted.clone();
    unrecorded.as_object_mut().unwrap().remove("ground_truth");
    std::fs::write(
        out.join("fqe.json"),
        serde_json::to_vec_pretty(&unrecorded).unwrap(),
    )
    .unwrap();
    let o = evaluate_run(&a, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("belong to another run"), "{}", text(&o));
}

#[test]
fn a_corrupt_frame_leaves_no_partial_feature_cache() {
    let dir = tempfile::tempdir().unwrap();
    // 20 episodes of 4 frames; the very last PNG is cut in half, after two batches of 32
    // frames were encoded.
    let run = GoalRun {
        episodes: 20,
        corrupt_png: Some(79),
        ..GoalRun::default()
    };
    write_goal_dataset(dir.path(), &run).unwrap();
    let (out, cache) = (dir.path().join("res"), dir.path().join("cache"));
    for extra in [vec![], vec!["--cache", cache.to_str().unwrap()]] {
        let mut args = vec![
            "fqe",
            "fit",
            "--dataset",
            dir.path()
                .join("dataset")
                .to_str()
                .unwrap()
                .to_owned()
                .leak(),
            "--out",
            out.to_str().unwrap(),
            "--no-neural",
            "--components",
            "4",
        ];
        args.extend(extra.iter().copied());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(3), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains("PNG"), "{}", text(&o));
        assert!(walk(&out).is_empty(), "{extra:?} left {:?}", walk(&out));
        assert!(walk(&cache).is_empty(), "{extra:?} left {:?}", walk(&cache));
    }
}

#[test]
fn evaluate_refuses_a_ground_truth_without_the_fits_policies() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let x = format!("x={}", run.join("policies/pi0.parquet").display());
    let o = fit_linear(&run, &out, "4", &["--policy-actions", &x]);
    assert!(o.status.success(), "{}", text(&o));
    let before: Vec<_> = walk(&out)
        .iter()
        .filter(|p| p.is_file())
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    let o = evaluate_run(&run, &out);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("fqe.json") && err.contains("(x)"), "{err}");
    assert!(err.contains("pi0, pi1, pi2"), "{err}");
    // Nothing rewritten.
    for (p, bytes) in &before {
        assert!(
            std::fs::read(p).unwrap() == *bytes,
            "{} changed",
            p.display()
        );
    }

    // Some of the fit's policies in the ground truth: scored, with a warning naming the others.
    let x = format!("x={}", run.join("policies/pi2.parquet").display());
    let pi0 = format!("pi0={}", run.join("policies/pi0.parquet").display());
    let o = fit_linear(
        &run,
        &out,
        "4",
        &["--policy-actions", &pi0, "--policy-actions", &x],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = evaluate_run(&run, &out);
    let err = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning") && err.contains("no values for x"),
        "{err}"
    );
    let r = report(&out);
    assert!(
        r["policies"][0]["tasks"][0]["truth"]["v_pi"].is_number(),
        "{r}"
    );
    assert!(r["policies"][1]["tasks"][0]["truth"].is_null(), "{r}");
    // The report itself says so too.
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "ground truth: none for 1 of 2 policies (x): left out of the metrics"),
        "{r}"
    );

    // Ground truth of the fit's policies but of other tasks (text and index): nothing to score,
    // refused (exit 3) and nothing rewritten.
    let gt = run.join("ground_truth.json");
    let mut other: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&gt).unwrap()).unwrap();
    for p in other["policies"].as_array_mut().unwrap() {
        for (k, t) in p["tasks"].as_array_mut().unwrap().iter_mut().enumerate() {
            t["task"] = format!("stack {k} cups").into();
            t["task_index"] = (99 + k).into();
        }
    }
    std::fs::write(&gt, serde_json::to_vec(&other).unwrap()).unwrap();
    let before = std::fs::read(out.join("fqe.json")).unwrap();
    let o = evaluate_run(&run, &out);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("matches none of the (policy, task) cells of the fit in")
            && err.contains("ground_truth.json"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("fqe.json")).unwrap(), before);

    // A --run folder without ground truth is named (exit 3), not a request to pass --run.
    let absent = dir.path().join("absent-run");
    let o = evaluate_run(&absent, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "no ground truth: {} does not exist",
            absent.join("ground_truth.json").display()
        )),
        "{}",
        text(&o)
    );
}

/// A target policy named like one of the ground truth's but given other actions would have
/// its estimate scored against that policy's value: refused before any work (exit 2); an
/// identical copy of the measured file elsewhere passes.
#[test]
fn policy_actions_other_than_the_ground_truths_are_refused() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let swapped = format!("pi0={}", run.join("policies/pi2.parquet").display());
    let o = fit_linear(&run, &out, "4", &["--policy-actions", &swapped]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("\"pi0\" was measured with the actions in"),
        "{}",
        text(&o)
    );
    assert!(walk(&out).is_empty(), "left {:?}", walk(&out));
    let copy = dir.path().join("copy.parquet");
    std::fs::copy(run.join("policies/pi0.parquet"), &copy).unwrap();
    let same = format!("pi0={}", copy.display());
    let o = fit_linear(&run, &out, "4", &["--policy-actions", &same]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A ground truth with no dataset beside it is still checked against the fit by the episode
/// count it records: another collection's is refused (exit 3) and the report left as it was.
#[test]
fn evaluate_refuses_a_ground_truth_of_another_episode_count() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let o = fit_linear(&run, &out, "4", &[]);
    assert!(o.status.success(), "{}", text(&o));
    let mut gt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("ground_truth.json")).unwrap()).unwrap();
    gt["n_dataset_episodes"] = serde_json::json!(999);
    let alone = dir.path().join("alone");
    std::fs::create_dir(&alone).unwrap();
    let file = alone.join("ground_truth.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&gt).unwrap()).unwrap();
    let before = std::fs::read(out.join("fqe.json")).unwrap();
    let o = roboaudit(&[
        "fqe",
        "evaluate",
        "--ground-truth",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("collected with a dataset of 999 episodes"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(out.join("fqe.json")).unwrap(), before);
}

/// A run folder whose ground_truth.json is gone still has its target policies under
/// `policies/`: the fit refuses it (exit 3) rather than evaluate only the behaviour policy; with
/// the targets named it runs.
#[test]
fn a_run_folder_without_its_ground_truth_is_refused() {
    let dir = run_folder();
    let run = dir.path().join("run");
    std::fs::remove_file(run.join("ground_truth.json")).unwrap();
    let out = dir.path().join("res");
    let o = fit_linear(&run, &out, "4", &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("policies/ is there but ground_truth.json is not"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    let x = format!("x={}", run.join("policies/pi0.parquet").display());
    let o = fit_linear(&run, &out, "4", &["--policy-actions", &x]);
    assert!(o.status.success(), "{}", text(&o));
}

/// Without `--target-update` the target period follows the steps and the median episode
/// (`⌊S / (3.2 E)⌋`, at least 10), is said on the terminal and recorded in `fqe.json`; an
/// explicit period, or a Polyak rate, is kept as given.
#[test]
fn the_default_target_period_follows_the_median_episode() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let fit = |name: &str, steps: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let o = fqe_fit(
            &run,
            &out,
            &[&["--seeds", "0", "--steps", steps][..], extra].concat(),
        );
        assert!(o.status.success(), "{}", text(&o));
        (text(&o), report(&out))
    };
    let (said, r) = fit("auto", "2000", &[]);
    let frames = r["median_episode_frames"].as_u64().unwrap();
    // The chain run's episodes are short: the period is well above the floor of 10.
    let expected = (2000.0 / (3.2 * frames as f64)).floor() as u64;
    assert!(expected > 20, "{frames}-frame median episode");
    assert_eq!(r["neural_config"]["target_update_every"], expected);
    assert!(
        said.contains(&format!(
            "note: neural FQE: target network copied every {expected} steps, so that the \
             2000-step fit holds 3.2 rounds of backups of the {frames}-frame median episode"
        )),
        "{said}"
    );
    // At the floor of 10 the note gives the rounds the fit gets, not the rule's 3.2.
    let (said, r) = fit("floor", "50", &[]);
    assert_eq!(r["neural_config"]["target_update_every"], 10);
    let rounds = (50.0 / (10.0 * frames as f64) * 100.0).floor() / 100.0;
    assert!(rounds < 3.2, "{frames}-frame median episode");
    assert!(
        said.contains(&format!(
            "target network copied every 10 steps, the shortest period chosen: the 50-step fit \
             holds {rounds} rounds of backups of the {frames}-frame median episode, not 3.2"
        )),
        "{said}"
    );
    let (said, r) = fit("given", "50", &["--target-update", "7"]);
    assert_eq!(r["neural_config"]["target_update_every"], 7);
    assert!(!said.contains("target network copied every"), "{said}");
    let (said, r) = fit("polyak", "50", &["--target-tau", "0.05"]);
    assert_eq!(r["neural_config"]["target_update_every"], 100);
    assert!(!said.contains("target network copied every"), "{said}");
    // A Polyak rate replaces the copy: a period beside it would be ignored, so it is refused.
    let o = fqe_fit(
        &run,
        &dir.path().join("both"),
        &["--target-update", "20", "--target-tau", "0.01"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--target-tau"), "{}", text(&o));
    assert!(!dir.path().join("both").exists());
}

/// A ground truth copied out of its run folder names actions files that are not beside it: the
/// error says where they are looked for and why, before any frame is read.
#[test]
fn a_ground_truth_away_from_its_actions_files_says_where_it_looks() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let copy = dir.path().join("elsewhere/truth.json");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(run.join("ground_truth.json"), &copy).unwrap();
    let out = dir.path().join("res");
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        run.join("dataset").to_str().unwrap(),
        "--ground-truth",
        copy.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let expected = format!(
        "{}: policy \"pi0\" reads its actions from policies/pi0.parquet (relative to the ground \
         truth's folder), and {} is not a file",
        copy.display(),
        dir.path().join("elsewhere/policies/pi0.parquet").display()
    );
    assert!(text(&o).contains(&expected), "{}", text(&o));
    assert!(!out.exists());
}

/// Labels on which no episode succeeds make every return, and so every estimate, 0: the fit
/// says so on the terminal and in `fqe.json`.
#[test]
fn labels_without_a_success_are_noted() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("dataset/meta/info.json")).unwrap())
            .unwrap();
    let n = info["total_episodes"].as_u64().unwrap();
    let labels = dir.path().join("labels.csv");
    let rows: String = (0..n).map(|e| format!("{e},0\n")).collect();
    std::fs::write(&labels, format!("episode_index,success\n{rows}")).unwrap();
    let out = dir.path().join("res");
    let o = fit_linear(&run, &out, "4", &["--labels", labels.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let note = format!("labels: none of the {n} episodes succeeds");
    assert!(text(&o).contains(&note), "{}", text(&o));
    let r = report(&out);
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str().unwrap().starts_with(&note)),
        "{r}"
    );
}

/// A fit made without ground truth with one policy's name on another's actions is refused when
/// scored (exit 3, report untouched): `fqe.json` records each actions file's fingerprint.
#[test]
fn evaluate_refuses_a_policy_fitted_with_other_actions_than_measured() {
    let dir = run_folder();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let fit = |file: &str| {
        let spec = format!("pi0={}", run.join("policies").join(file).display());
        roboaudit(&[
            "fqe",
            "fit",
            "--dataset",
            run.join("dataset").to_str().unwrap(),
            "--policy-actions",
            &spec,
            "--no-neural",
            "--gamma",
            "0.9",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let o = fit("pi2.parquet");
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(out.join("fqe.json")).unwrap();
    let o = evaluate_run(&run, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("estimated \"pi0\" with other actions than")
            && text(&o).contains("pi0.parquet holds"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(out.join("fqe.json")).unwrap(), before);
    // Fitted with the measured file, the same policy is scored.
    let o = fit("pi0.parquet");
    assert!(o.status.success(), "{}", text(&o));
    let o = evaluate_run(&run, &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(report(&out)["policies"][0]["tasks"][0]["truth"]["v_pi"].is_number());
}
