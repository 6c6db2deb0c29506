#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `roboaudit demo --scale small`: all three audits on the testbed, one report; a rerun into the
//! same folder reuses the finished stages and writes the same bytes.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn demo(out_dir: &Path, scale: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["demo", "--scale", scale, "--out"])
        .arg(out_dir)
        .output()
        .unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Files whose bytes must not change on a rerun with the same settings.
const STABLE: [&str; 11] = [
    "audit.json",
    "index.html",
    "retrieval/audit.json",
    "memory/bank/audit.json",
    "memory/bank/records.parquet",
    "memory/faithful/audit.json",
    "memory/control/control.json",
    "fqe/fqe.json",
    "fqe/run/ground_truth.json",
    "memory/learned/policy/model.safetensors",
    "memory/learned/audit.json",
];

fn check_retrieval(out_dir: &Path, audit: &Value) {
    let tasks: Vec<(&str, &str)> = audit["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"].as_str().unwrap(),
                t["mechanism"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tasks,
        [
            ("stack", "replay"),
            ("door", "replay"),
            ("stack", "policy"),
            ("stack", "policy-dr")
        ]
    );
    for t in audit["tasks"].as_array().unwrap() {
        let replay = t["mechanism"] == "replay";
        let (k, n, seeds) = if replay { (6, 10, 2) } else { (2, 6, 1) };
        assert_eq!(t["audit"]["n_experiences"], k);
        assert_eq!(t["audit"]["n_scenes"], n);
        assert_eq!(t["collection"]["seeds"], seeds);
        let run = out_dir.join(t["run_dir"].as_str().unwrap());
        assert!(run.is_dir());
        // A learned mechanism's run keeps the policies it judged.
        assert_eq!(run.join("policies").is_dir(), !replay, "{run:?}");
        // 40 % of the scenes are appearance queries, query i on base layout b0i: an experience
        // recorded in one of those meets its own layout there once per seed.
        let appearance = (2 * n as usize).div_ceil(5);
        let a = &t["appearance_caused_failures"];
        let homes = std::fs::read_to_string(run.join("experiences.csv"))
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| {
                let base = l.split(',').nth(1).unwrap();
                (0..appearance).any(|i| base == format!("b{i:02}"))
            })
            .count();
        assert_eq!(a["experiences"], homes, "{a}");
        assert_eq!(a["executions"], homes * seeds, "{a}");
        assert!(a["failed"].as_u64().unwrap() <= a["executions"].as_u64().unwrap());
        let r = &t["audit"]["reference"];
        let (random, oracle, best) = (f(&r["random"]), f(&r["oracle"]), f(&r["best_fixed"]));
        // Random is the mean over experiences, best-fixed their maximum, the oracle the per-scene maximum.
        assert!(random <= best + 1e-12 && best <= oracle + 1e-12, "{r}");
        for rule in t["audit"]["rules"].as_array().unwrap() {
            assert!(f(&rule["success"]) <= oracle + 1e-12, "{}", rule["name"]);
        }
    }
    // The report puts the three Stack mechanisms side by side.
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains("## Reuse mechanisms side by side: stack"),
        "{md}"
    );
    assert!(
        md.contains("| stack | Replay | Policy | Policy+DR |"),
        "{md}"
    );
    assert!(!md.contains("side by side: door"), "{md}");
    // The retrieval folder is a demo audit of its own, its run folders relative to it.
    let own = json(&out_dir.join("retrieval/audit.json"));
    assert_eq!(own["schema"], "roboaudit.demo.v1");
    assert_eq!(own["tasks"][0]["run_dir"], "runs/stack");
    assert!(out_dir.join("retrieval/runs/door/executions").is_dir());
}

fn check_memory(out_dir: &Path, audit: &Value) {
    let memory = audit["memory"].as_array().unwrap();
    let by = |name: &str| memory.iter().find(|m| m["policy"] == name).unwrap();
    for m in memory {
        let own = json(&out_dir.join(m["dir"].as_str().unwrap()).join("audit.json"));
        assert_eq!(own["schema"], "roboaudit.memory.v1");
        assert_eq!(own["faithfulness"]["value"], m["faithfulness"]["value"]);
    }
    let (faithful, blind) = (by("faithful"), by("blind"));
    // Known answers (SPEC §2 calibration): the faithful policy always takes the warranted branch
    // (F = 1), the blind one takes the same branch for both memories (F = 0, half right).
    assert_eq!(f(&faithful["correct_choice_rate"]), 1.0);
    assert_eq!(f(&faithful["faithfulness"]["value"]), 1.0);
    assert_eq!(f(&blind["faithfulness"]["value"]), 0.0);
    assert!(f(&faithful["correct_choice_rate"]) > f(&blind["correct_choice_rate"]));
    assert_eq!(faithful["positive_rule"], true);
    assert_eq!(blind["positive_rule"], false);
    let bank_f = f(&by("bank")["faithfulness"]["value"]);
    assert!(bank_f > 0.0 && bank_f < 1.0, "bank F = {bank_f}");
    // The learned anchor-window policy was qualified before its audit (seed 002 §IV-A), and its
    // audit names the checkpoint the records came from.
    let learned = by("learned");
    assert_eq!(learned["dir"], "memory/learned");
    let q = json(&out_dir.join("memory/learned/policy/qualification.json"));
    assert_eq!(q["passed"], true, "{q}");
    assert_eq!(q["episodes"], 24);
    for f in ["model.safetensors", "config.json"] {
        assert!(
            out_dir.join("memory/learned/policy").join(f).is_file(),
            "{f}"
        );
    }
    let rate = f(&learned["correct_choice_rate"]);
    assert!((0.0..=1.0).contains(&rate), "{rate}");
    let control = json(&out_dir.join("memory/control/control.json"));
    assert_eq!(control["schema"], "roboaudit.memory.control.v1");
    assert_eq!(control["routes"], serde_json::json!(["left", "right"]));
    assert_eq!(audit["memory_control"]["passed"], control["passed"]);
}

fn check_fqe(out_dir: &Path, audit: &Value) {
    let fqe = json(&out_dir.join("fqe/fqe.json"));
    assert_eq!(fqe["schema"], "roboaudit.fqe.v1");
    let policies = fqe["policies"].as_array().unwrap();
    let truth = json(&out_dir.join("fqe/run/ground_truth.json"));
    assert_eq!(policies.len(), truth["policies"].as_array().unwrap().len());
    for p in policies {
        for c in p["tasks"].as_array().unwrap() {
            let v = f(&c["truth"]["v_pi"]);
            let sr = f(&c["truth"]["success_rate"]);
            // V^π = E[γ^{T−1} success] ≤ SR ≤ 1.
            assert!(
                (0.0..=1.0).contains(&sr) && v >= 0.0 && v <= sr + 1e-12,
                "{c}"
            );
            if let Some(naive) = c["naive"].as_f64() {
                assert!((0.0..=1.0).contains(&naive), "naive {naive}");
            }
        }
        // One seed, a point every 10 steps up to the 60th: the learning-curve plot has data.
        let curve = p["curves"][0].as_array().unwrap();
        assert_eq!(curve.len(), 6, "{}", p["policy"]);
        assert_eq!(curve.last().unwrap()["step"], 60);
    }
    let estimators: Vec<&str> = audit["fqe"]["estimators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["estimator"].as_str().unwrap())
        .collect();
    assert_eq!(estimators, ["neural", "linear", "naive"]);
    for e in audit["fqe"]["estimators"].as_array().unwrap() {
        if let Some(r) = e["regret_at_1_v"].as_f64() {
            assert!((0.0..=1.0).contains(&r));
        }
    }
}

fn check_report(out_dir: &Path, audit: &Value) {
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<style>"));
    // Namespace names of inline SVG are identifiers, not fetched; any other URL would be.
    let fetched = html
        .replace("http://www.w3.org/2000/svg", "")
        .replace("http://www.w3.org/1999/xlink", "");
    assert!(!html.contains("<script"));
    assert!(!fetched.contains("http://") && !fetched.contains("https://"));
    assert_eq!(audit["report"]["kind"], "report");
    let shared: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
    assert!(out_dir.join("report.md").is_file());
    // Stack and Door under Replay, Stack under Policy and Policy+DR, four memory policies plus
    // the route control, one FQE fit.
    assert_eq!(shared["retrieval"].as_array().unwrap().len(), 4);
    assert_eq!(shared["memory"].as_array().unwrap().len(), 5);
    assert_eq!(shared["fqe"].as_array().unwrap().len(), 1);
    // The FQE section shows its push-suite dataset: first and last scene frame of every task.
    let strip = &shared["fqe"][0]["frames"];
    assert_eq!(strip["camera"], "observation.images.scene", "{strip}");
    assert!(strip["tasks"].as_array().is_some_and(|t| {
        t.len() >= 2
            && t.iter()
                .all(|row| row["frames"].as_array().map(Vec::len) == Some(2))
    }));
    // Every plot the report model marks available is drawn in the page as a figure with its id.
    let plots = shared["plots"].as_array().unwrap();
    let drawn: Vec<&str> = plots
        .iter()
        .filter(|p| p["available"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(drawn.len() >= 15, "only {} plots drawn", drawn.len());
    for id in drawn {
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "plot {id} missing from index.html"
        );
    }
    let sources: Vec<&str> = audit["report"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        [
            "retrieval",
            "memory/bank",
            "memory/faithful",
            "memory/blind",
            "memory/learned",
            "memory/control",
            "fqe"
        ]
    );
}

#[test]
fn small_demo_runs_three_audits_and_a_rerun_writes_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("demo");
    let out = demo(&out_dir, "small");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("index.html"), "{stdout}");
    for headline in ["retrieval audit", "memory audit", "fitted Q evaluation"] {
        assert!(stdout.contains(headline), "{stdout}");
    }

    let audit = json(&out_dir.join("audit.json"));
    assert_eq!(audit["schema"], "roboaudit.demo.v1");
    assert_eq!(audit["scale"], "small");
    check_retrieval(&out_dir, &audit);
    check_memory(&out_dir, &audit);
    check_fqe(&out_dir, &audit);
    check_report(&out_dir, &audit);

    let before: Vec<Vec<u8>> = STABLE
        .iter()
        .map(|p| std::fs::read(out_dir.join(p)).unwrap())
        .collect();
    let stamp = std::fs::metadata(out_dir.join("fqe/run/ground_truth.json"))
        .unwrap()
        .modified()
        .unwrap();
    let again = demo(&out_dir, "small");
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    for (p, bytes) in STABLE.iter().zip(&before) {
        assert!(
            std::fs::read(out_dir.join(p)).unwrap() == *bytes,
            "{p} changed on rerun"
        );
    }
    // The FQE collection was reused, not redone.
    let stamp_again = std::fs::metadata(out_dir.join("fqe/run/ground_truth.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(stamp, stamp_again);

    // A linear-only fit of another dataset written into the demo's FQE folder (its stamp left as it
    // was) is not presented under the demo's headline: the stage is refitted, with a note.
    let other_run = tmp.path().join("other-run");
    let chain = roboaudit_fqe::synthetic::ChainRun {
        episodes: 40,
        ..roboaudit_fqe::synthetic::ChainRun::default()
    };
    roboaudit_fqe::synthetic::write_chain_run(&other_run, &chain).unwrap();
    let fit = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["fqe", "fit", "--no-neural", "--run"])
        .arg(&other_run)
        .arg("--out")
        .arg(out_dir.join("fqe"))
        .output()
        .unwrap();
    assert!(
        fit.status.success(),
        "{}",
        String::from_utf8_lossy(&fit.stderr)
    );
    let theirs = std::fs::read(out_dir.join("fqe/fqe.json")).unwrap();
    assert!(
        theirs != before[7],
        "the other fit did not replace fqe.json"
    );
    let third = demo(&out_dir, "small");
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(third.status.success(), "{stderr}");
    assert!(stderr.contains("did not write"), "{stderr}");
    let stdout = String::from_utf8_lossy(&third.stdout);
    assert!(
        stdout.contains("12 dataset episodes") && stdout.contains("neural"),
        "{stdout}"
    );
    // Seeded: the refit gives the demo's own estimates and metrics again (the inputs' summary
    // differs only in its feature-cache counters, the frames now being cached).
    let (ours, refit): (Value, Value) = (
        serde_json::from_slice(&before[7]).unwrap(),
        json(&out_dir.join("fqe/fqe.json")),
    );
    for key in ["policies", "metrics", "dataset"] {
        assert_eq!(
            ours[key], refit[key],
            "fqe.json {key} differs after the refit"
        );
    }
    assert!(std::fs::read(out_dir.join("audit.json")).unwrap() == before[0]);

    // The demo's fqe.json records its dataset and ground truth as `fqe fit` does, so `fqe
    // evaluate` rescoring it against the demo's own run checks the dataset and finds it the same.
    let fqe = json(&out_dir.join("fqe/fqe.json"));
    assert_eq!(fqe["dataset"]["path"], "run/dataset");
    assert!(
        fqe["ground_truth"].as_str().is_some_and(|f| !f.is_empty()),
        "{fqe}"
    );
    let evaluate = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["fqe", "evaluate", "--run"])
        .arg(out_dir.join("fqe/run"))
        .arg("--out")
        .arg(out_dir.join("fqe"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&evaluate.stderr);
    assert!(evaluate.status.success(), "{stderr}");
    assert!(!stderr.contains("does not record the dataset"), "{stderr}");
    assert_eq!(
        json(&out_dir.join("fqe/fqe.json"))["metrics"],
        fqe["metrics"]
    );

    // Another scale cannot reuse these runs: refused before any work.
    let other = demo(&out_dir, "standard");
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("--scale small"));
}

#[test]
fn demo_into_a_file_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, b"x").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
        .args(["demo", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a folder"));
}

/// A memory audit in --out is refused before any stage runs, and left as it was (with its
/// summary.md), where the demo used to replace its audit.json and leave the summary stale.
#[test]
fn demo_into_a_memory_audit_folder_is_refused_and_leaves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let audit = br#"{"schema": "roboaudit.memory.v1", "plan_hash": "x"}"#;
    std::fs::write(tmp.path().join("audit.json"), audit).unwrap();
    std::fs::write(tmp.path().join("summary.md"), b"# memory").unwrap();
    let out = demo(tmp.path(), "small");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("roboaudit.memory.v1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(tmp.path().join("audit.json")).unwrap(), audit);
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "nothing added: {left:?}");
}

/// An FQE fit's folder is refused: the demo's report beside it would read the fit as one more
/// FQE section.
#[test]
fn demo_into_an_fqe_fit_folder_is_refused_and_leaves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = br#"{"schema": "roboaudit.fqe.v1"}"#;
    std::fs::write(tmp.path().join("fqe.json"), fit).unwrap();
    let out = demo(tmp.path(), "small");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("holds another kind of result (fqe.json"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(tmp.path().join("fqe.json")).unwrap(), fit);
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing added: {left:?}");
}
