//! `fqe collect --policy NAME=ws://…` against the in-process policy server: a server that dies
//! mid-run leaves a work folder the rerun continues, to the uninterrupted run's bytes; actions of
//! the wrong width stop the run with exit 3 before anything appears at OUT; bad names are usage
//! errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use roboaudit_fqe_collect::scenes::push_tasks;
use roboaudit_fqe_collect::{NoiseKey, Observation, PushParams, noisy_push_action};
use roboaudit_policy_client::Field;
use roboaudit_policy_client::server::{Answer, TestServer, actions_reply, metadata_with};
use std::path::Path;

fn floats(req: &Field, key: &str) -> Vec<f32> {
    match req.get(key) {
        Some(Field::Array(a)) => a.to_f32().unwrap(),
        _ => Vec::new(),
    }
}

/// Serves the expert push controller (from the received state and block poses); with
/// `die_after = Some(n)` it drops every connection from the (n+1)-th `reset` on: a server that
/// died after n rollouts.
fn serve_expert(die_after: Option<usize>) -> TestServer {
    let tasks = push_tasks();
    let mut resets = 0usize;
    TestServer::start(
        metadata_with(&["reset"]),
        Box::new(move |req| {
            let req = req.unwrap();
            if req.get("roboaudit/command").is_some() {
                resets += 1;
            }
            if die_after.is_some_and(|n| resets > n) {
                return Answer::Drop;
            }
            if req.get("roboaudit/command").is_some() {
                return Answer::Reply(Field::Map(vec![]));
            }
            let prompt = req.get("prompt").and_then(Field::as_text).unwrap_or("");
            let task = *tasks.iter().find(|t| t.instruction() == prompt).unwrap();
            let obs = Observation {
                state: floats(&req, "observation/state"),
                env: floats(&req, "observation/environment_state"),
            };
            let key = NoiseKey {
                stream: 0,
                frame: 0,
                sample: 0,
            };
            let a = noisy_push_action(&PushParams::default(), task, &obs, 0, key);
            let a: Vec<f32> = a.to_vec().into_iter().map(|x| x as f32).collect();
            Answer::Reply(actions_reply(1, 7, &a))
        }),
    )
    .unwrap()
}

fn collect(out: &Path, policy: &str) -> std::process::Output {
    roboaudit(&[
        "fqe",
        "collect",
        "--small",
        "--episodes",
        "4",
        "--rollouts",
        "2",
        "--served-only",
        "--policy",
        policy,
        "--timeout",
        "20",
        "--out",
        out.to_str().unwrap(),
    ])
}

/// `ground_truth.json` without what differs between runs of one configuration: the served
/// policies' address and latency.
fn truth_without_run_details(dir: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("ground_truth.json")).unwrap()).unwrap();
    for p in v["policies"].as_array_mut().unwrap() {
        let s = p["served"].as_object_mut().unwrap();
        assert!(s.remove("url").is_some() && s.remove("latency").is_some());
    }
    v
}

fn files(dir: &Path, sub: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_server_dying_mid_run_leaves_a_run_the_rerun_finishes_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let server = serve_expert(None);
    let o = collect(&whole, &format!("wire={}", server.url()));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("served policy wire at ws://"),
        "{}",
        text(&o)
    );
    // fqe fit reads the served policy's ground truth and actions like a built-in's.
    let res = tmp.path().join("res");
    let fit = roboaudit(&[
        "fqe",
        "fit",
        "--run",
        whole.to_str().unwrap(),
        "--out",
        res.to_str().unwrap(),
        "--no-neural",
        "--components",
        "8",
    ]);
    assert!(fit.status.success(), "{}", text(&fit));
    let report = std::fs::read_to_string(res.join("fqe.json")).unwrap();
    assert!(report.contains("\"wire\""), "{report}");

    let out = tmp.path().join("gt");
    let work = tmp.path().join(".fqe-collect-gt.partial");
    let dying = serve_expert(Some(3));
    let o = collect(&out, &format!("wire={}", dying.url()));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is kept"), "{}", text(&o));
    assert!(!out.exists(), "a half-written result");
    assert!(work.is_dir());
    drop(dying);

    // A server declaring other capabilities is not the interrupted run's policy.
    let other = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        Box::new(|_| Answer::Error("not to be queried".into())),
    )
    .unwrap();
    let o = collect(&out, &format!("wire={}", other.url()));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("declares other capabilities"),
        "{}",
        text(&o)
    );
    assert!(work.is_dir() && !out.exists());

    let healthy = serve_expert(None);
    let o = collect(&out, &format!("wire={}", healthy.url()));
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("continuing the interrupted run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("dataset kept") && stderr.contains("3 served rollouts"),
        "{stderr}"
    );
    assert!(!work.exists());
    assert_eq!(
        truth_without_run_details(&out),
        truth_without_run_details(&whole)
    );
    assert_eq!(files(&out, "policies"), files(&whole, "policies"));
    assert_eq!(
        files(&out, "dataset/data/chunk-000"),
        files(&whole, "dataset/data/chunk-000")
    );
    assert_eq!(
        std::fs::read(out.join("README.md")).unwrap(),
        std::fs::read(whole.join("README.md")).unwrap()
    );
}

#[test]
fn actions_of_the_wrong_width_stop_the_run_before_anything_is_written() {
    let server = TestServer::start(
        metadata_with(&["reset"]),
        Box::new(|req| {
            let req = req.unwrap();
            if req.get("roboaudit/command").is_some() {
                return Answer::Reply(Field::Map(vec![]));
            }
            Answer::Reply(actions_reply(1, 3, &[0.0, 0.0, 0.0]))
        }),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gt");
    let o = collect(&out, &format!("narrow={}", server.url()));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("served policy narrow"), "{t}");
    assert!(
        t.contains("shape (1, 3)") && t.contains("rollout 0 step 0"),
        "{t}"
    );
    assert!(!out.exists());
    let served = tmp
        .path()
        .join(".fqe-collect-gt.partial/.resume/served/narrow");
    let written = std::fs::read_dir(&served).map_or(0, |d| {
        d.filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("rollout-")
        })
        .count()
    });
    assert_eq!(written, 0, "rollouts written before the check");

    // Another configuration does not continue that run, nor remove it: it is refused, naming it.
    let mut args = vec![
        "fqe",
        "collect",
        "--small",
        "--episodes",
        "4",
        "--rollouts",
        "1",
    ];
    let policy = format!("narrow={}", server.url());
    args.extend(["--served-only", "--policy", &policy, "--out"]);
    args.push(out.to_str().unwrap());
    let o = roboaudit(&args);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("an interrupted run with other settings"),
        "{}",
        text(&o)
    );
    assert!(
        tmp.path().join(".fqe-collect-gt.partial/.resume").is_dir(),
        "the interrupted run's folder is kept"
    );
}

#[test]
fn served_names_and_served_only_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gt");
    let run = |extra: &[&str]| {
        let mut args = vec!["fqe", "collect", "--small", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        roboaudit(&args)
    };
    for (extra, needle) in [
        (vec!["--served-only"], "--served-only needs"),
        (
            vec!["--policy", "expert=ws://127.0.0.1:9"],
            "built-in target's name",
        ),
        (
            vec![
                "--policy",
                "a=ws://127.0.0.1:9",
                "--policy",
                "a=ws://127.0.0.1:10",
            ],
            "given twice",
        ),
        (vec!["--policy", "../x=ws://127.0.0.1:9"], "letters, digits"),
        (vec!["--policy", "ws://127.0.0.1:9"], "NAME=ws://"),
    ] {
        let o = run(&extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{extra:?}: {}", text(&o));
        assert!(!out.exists());
    }
}

#[test]
fn a_server_dying_at_the_dataset_frames_keeps_its_rollouts_and_episodes() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let server = serve_expert(None);
    let o = collect(&whole, &format!("wire={}", server.url()));
    // The status says whether a failure with nothing on stderr was a signal or an exit code.
    assert!(o.status.success(), "{}: {}", o.status, text(&o));

    // 8 rollouts (4 tasks × 2) reset 8 times, then each of the 4 dataset episodes is played
    // once per sample (2) after a reset: dying from the 12th reset on leaves one episode done.
    let out = tmp.path().join("gt");
    let dying = serve_expert(Some(11));
    let o = collect(&out, &format!("wire={}", dying.url()));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!out.exists());
    let partial = tmp
        .path()
        .join(".fqe-collect-gt.partial/.resume/served/wire/actions.parquet.partial");
    let episodes = std::fs::read_dir(&partial)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("episode-") && name.ends_with(".parquet")
        })
        .count();
    assert_eq!(episodes, 1, "finished episodes kept");
    drop(dying);

    let healthy = serve_expert(None);
    let o = collect(&out, &format!("wire={}", healthy.url()));
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("8 served rollouts"), "{stderr}");
    assert_eq!(
        truth_without_run_details(&out),
        truth_without_run_details(&whole)
    );
    assert_eq!(files(&out, "policies"), files(&whole, "policies"));
}
