//! `collect_actions` on a small synthetic LeRobot dataset against the in-process server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use roboaudit_data::lerobot::{LeRobotDataset, read_policy_actions};
use roboaudit_fqe::synthetic::{ChainRun, write_chain_run};
use roboaudit_policy_client::dataset_actions::{
    ActionsConfig, action_seed, collect_actions, manifest_path, partial_dir,
};
use roboaudit_policy_client::server::{Answer, Handler, TestServer, actions_reply, metadata_with};
use roboaudit_policy_client::{ClientConfig, Field, PolicyClient, PolicyClientError};

fn dataset() -> (tempfile::TempDir, LeRobotDataset) {
    let dir = tempfile::tempdir().unwrap();
    let run = ChainRun {
        episodes: 6,
        ..ChainRun::default()
    };
    write_chain_run(dir.path(), &run).unwrap();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    (dir, ds)
}

/// Answers `state[0] + image[0,0,0]/1000 + (seed mod 7)/100` as a 4-action chunk (only the
/// first counts), so the expected value is computable from the dataset; counts resets.
fn policy(resets: Arc<AtomicUsize>, fail_after: Option<usize>) -> Box<Handler> {
    let queries = Arc::new(Mutex::new(0usize));
    Box::new(move |req| {
        let req = req.unwrap();
        if req.get("roboaudit/command").and_then(Field::as_text) == Some("reset") {
            resets.fetch_add(1, Ordering::SeqCst);
            return Answer::Reply(Field::Map(vec![]));
        }
        let mut q = queries.lock().unwrap();
        *q += 1;
        if fail_after.is_some_and(|n| *q > n) {
            return Answer::Error("RuntimeError: CUDA out of memory".into());
        }
        let state = match req.get("observation/state") {
            Some(Field::Array(a)) => a.to_f32().unwrap()[0],
            _ => f32::NAN,
        };
        let pixel = match req.get("observation/image") {
            Some(Field::Array(a)) => f32::from(a.data[0]),
            _ => f32::NAN,
        };
        let seed = req
            .get("roboaudit/action_seed")
            .and_then(Field::as_f64)
            .unwrap_or(0.0);
        let a = state + pixel / 1000.0 + (seed % 7.0) as f32 / 100.0;
        Answer::Reply(actions_reply(4, 1, &[a, 9.0, 9.0, 9.0]))
    })
}

fn client(server: &TestServer) -> PolicyClient {
    PolicyClient::connect(
        &server.url(),
        ClientConfig {
            timeout: Duration::from_secs(5),
            allow_remote: false,
        },
    )
    .unwrap()
}

fn expected(ds: &LeRobotDataset, samples: usize, seed: u64) -> Vec<(i64, usize, f32)> {
    let frames = ds.read_frames(&["observation.state"]).unwrap();
    let mut pixels = std::collections::HashMap::new();
    ds.for_each_image("observation.image", &mut |img| -> Result<
        (),
        roboaudit_data::DataError,
    > {
        pixels.insert(img.index, img.decode()?.pixels[0]);
        Ok(())
    })
    .unwrap();
    let mut out = Vec::new();
    for e in &frames {
        let states = e.column("observation.state").unwrap();
        for (t, &index) in e.index.iter().enumerate() {
            for s in 0..samples {
                let sd = action_seed(seed, s, index) as f64;
                let a =
                    states[t][0] + f32::from(pixels[&index]) / 1000.0 + (sd % 7.0) as f32 / 100.0;
                out.push((index, s, a));
            }
        }
    }
    out.sort_by_key(|r| (r.0, r.1));
    out
}

#[test]
fn actions_equal_what_the_served_policy_returns() {
    let (dir, ds) = dataset();
    let resets = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        policy(resets.clone(), None),
    )
    .unwrap();
    let out = dir.path().join("served.parquet");
    let cfg = ActionsConfig {
        name: "served".into(),
        samples: 2,
        seed: 5,
        ..ActionsConfig::default()
    };
    let m = collect_actions(&ds, &mut client(&server), &cfg, &out, &mut |_, _| {}).unwrap();
    assert_eq!(m.episodes, 6);
    assert_eq!(m.action_horizon, 4);
    assert!(m.reset_between_episodes && m.action_seeds);
    assert_eq!(resets.load(Ordering::SeqCst), 6 * 2);
    assert_eq!(m.latency.queries, m.frames * 2);
    let got = read_policy_actions(&out).unwrap();
    assert_eq!(got.samples, 2);
    let want = expected(&ds, 2, 5);
    assert_eq!(got.index.len() * 2, want.len());
    for (index, s, a) in want {
        assert_eq!(
            got.sample(index, s).unwrap(),
            &[a],
            "frame {index} sample {s}"
        );
    }
    assert_eq!(ds.check_policy_actions(&got, "action").unwrap(), 0);
    assert!(manifest_path(&out).exists());
    assert!(!partial_dir(&out).exists());
}

#[test]
fn a_server_dying_mid_run_leaves_a_resumable_state() {
    let (dir, ds) = dataset();
    let out = dir.path().join("a.parquet");
    let cfg = ActionsConfig::default();
    let frames: usize = ds.read_frames(&[]).unwrap().iter().map(|e| e.len()).sum();
    {
        let dying = TestServer::start(
            metadata_with(&["reset", "action_seed"]),
            policy(Arc::default(), Some(frames / 2)),
        )
        .unwrap();
        let e = collect_actions(&ds, &mut client(&dying), &cfg, &out, &mut |_, _| {}).unwrap_err();
        assert!(matches!(e, PolicyClientError::Server { .. }), "{e}");
        assert!(e.to_string().contains("CUDA out of memory"), "{e}");
    }
    assert!(!out.exists(), "no half-written result");
    let parts = std::fs::read_dir(partial_dir(&out))
        .unwrap()
        .filter(|f| {
            f.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "parquet")
        })
        .count();
    assert!((1..6).contains(&parts), "{parts} finished episodes kept");
    let server = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        policy(Arc::default(), None),
    )
    .unwrap();
    let m = collect_actions(&ds, &mut client(&server), &cfg, &out, &mut |_, _| {}).unwrap();
    assert_eq!(m.resumed_episodes, parts);
    let got = read_policy_actions(&out).unwrap();
    for (index, s, a) in expected(&ds, 1, 0) {
        assert_eq!(got.sample(index, s).unwrap(), &[a]);
    }
}

#[test]
fn wrong_action_width_fails_before_anything_is_written() {
    let (dir, ds) = dataset();
    let server = TestServer::start(
        Field::Map(vec![]),
        Box::new(|_| Answer::Reply(actions_reply(1, 7, &[0.0; 7]))),
    )
    .unwrap();
    let out = dir.path().join("w.parquet");
    let e = collect_actions(
        &ds,
        &mut client(&server),
        &ActionsConfig::default(),
        &out,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("actions are 7 wide") && e.to_string().contains("is 1 wide"),
        "{e}"
    );
    assert!(!out.exists());
    let parts = std::fs::read_dir(partial_dir(&out)).unwrap().count();
    assert_eq!(parts, 1, "only the resume state");
}

#[test]
fn plain_server_without_extensions_still_gives_actions() {
    let (dir, ds) = dataset();
    let server = TestServer::start(Field::Map(vec![]), policy(Arc::default(), None)).unwrap();
    let out = dir.path().join("plain.parquet");
    let m = collect_actions(
        &ds,
        &mut client(&server),
        &ActionsConfig::default(),
        &out,
        &mut |_, _| {},
    )
    .unwrap();
    assert!(!m.reset_between_episodes && !m.action_seeds);
    let got = read_policy_actions(&out).unwrap();
    // No seed key: the policy saw seed 0 everywhere.
    let frames = ds.read_frames(&["observation.state"]).unwrap();
    let first = &frames[0];
    let a = got.sample(first.index[0], 0).unwrap()[0];
    let s = first.column("observation.state").unwrap()[0][0];
    assert!((a - s).abs() < 0.3, "{a} vs {s}");
}

#[test]
fn a_video_camera_is_decoded_and_sent_frame_by_frame() {
    let ds = LeRobotDataset::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../roboaudit-data/tests/fixtures/video_v30"
    ))
    .unwrap();
    // The policy answers the first and last byte of the image it was sent.
    let server = TestServer::start(
        metadata_with(&["reset"]),
        Box::new(|req| {
            let req = req.unwrap();
            if req.get("roboaudit/command").is_some() {
                return Answer::Reply(Field::Map(vec![]));
            }
            let Some(Field::Array(img)) = req.get("observation/image") else {
                return Answer::Error("no image".into());
            };
            let (first, last) = (img.data[0], img.data[img.data.len() - 1]);
            Answer::Reply(actions_reply(1, 2, &[f32::from(first), f32::from(last)]))
        }),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("video.parquet");
    let m = collect_actions(
        &ds,
        &mut client(&server),
        &ActionsConfig::default(),
        &out,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(
        m.keys.image.as_ref().map(|k| k.0.as_str()),
        Some("observation.images.cam")
    );
    assert_eq!((m.episodes, m.frames), (2, 21));
    let got = read_policy_actions(&out).unwrap();
    for e in ds.read_frames(&[]).unwrap() {
        for (t, &index) in e.index.iter().enumerate() {
            let img = ds
                .read_frame(
                    e.episode_index,
                    t as i64,
                    "observation.images.cam",
                    roboaudit_data::lerobot::DEFAULT_TOLERANCE_S,
                )
                .unwrap();
            let want = [
                f32::from(img.pixels[0]),
                f32::from(img.pixels[img.pixels.len() - 1]),
            ];
            assert_eq!(got.sample(index, 0).unwrap(), &want, "frame {index}");
        }
    }
}

#[test]
fn a_server_that_keeps_dropping_mid_run_keeps_finished_episodes() {
    let (dir, ds) = dataset();
    let out = dir.path().join("d.parquet");
    let frames: usize = ds.read_frames(&[]).unwrap().iter().map(|e| e.len()).sum();
    let queries = Arc::new(AtomicUsize::new(0));
    let q = queries.clone();
    let mut inner = policy(Arc::default(), None);
    let server = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        Box::new(move |req| {
            if q.fetch_add(1, Ordering::SeqCst) > frames / 2 {
                Answer::Drop
            } else {
                inner(req)
            }
        }),
    )
    .unwrap();
    let e = collect_actions(
        &ds,
        &mut client(&server),
        &ActionsConfig::default(),
        &out,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(matches!(e, PolicyClientError::Closed { .. }), "{e}");
    assert!(e.to_string().contains("episode "), "{e}");
    assert!(!out.exists(), "no half-written result");
    let kept = std::fs::read_dir(partial_dir(&out))
        .unwrap()
        .filter(|f| {
            f.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "parquet")
        })
        .count();
    assert!(kept >= 1, "finished episodes kept");
}
