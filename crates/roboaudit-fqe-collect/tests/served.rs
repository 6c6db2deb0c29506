//! Served target policies against the in-process policy server: the library's own push
//! controllers, served over the wire, get exactly the ground truth of the same controllers run
//! in process with f32-rounded actions, and the served expert's policy-actions file equals the
//! built-in expert's bit for bit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_data::lerobot::read_policy_actions;
use roboaudit_fqe_collect::ground_truth::{policy_seed, rollout_initial, rollout_with};
use roboaudit_fqe_collect::scenes::push_tasks;
use roboaudit_fqe_collect::served::{ServedTarget, rollout_action_seed};
use roboaudit_fqe_collect::*;
use roboaudit_policy_client::server::{Answer, TestServer, actions_reply, metadata_with};
use roboaudit_policy_client::{ClientConfig, Field, PolicyClient};
use roboaudit_testbed::Action;
use std::time::Duration;

fn floats(req: &Field, key: &str) -> Vec<f32> {
    match req.get(key) {
        Some(Field::Array(a)) => a.to_f32().unwrap(),
        _ => Vec::new(),
    }
}

/// Serves a push controller: the action from the received state and block poses, its noise
/// keyed by the received action seed (0 without one), as a chunk of two actions of which only
/// the first is to be executed.
fn serve_push(params: PushParams, caps: &[&str], image_size: usize) -> TestServer {
    let tasks = push_tasks();
    TestServer::start(
        metadata_with(caps),
        Box::new(move |req| {
            let req = req.unwrap();
            if req.get("roboaudit/command").is_some() {
                return Answer::Reply(Field::Map(vec![]));
            }
            match req.get("observation/image") {
                Some(Field::Array(a)) if a.shape == [image_size, image_size, 3] => {}
                _ => return Answer::Error("no image of the configured size".into()),
            }
            let prompt = req.get("prompt").and_then(Field::as_text).unwrap_or("");
            let Some(&task) = tasks.iter().find(|t| t.instruction() == prompt) else {
                return Answer::Error(format!("unknown task {prompt:?}"));
            };
            let obs = Observation {
                state: floats(&req, "observation/state"),
                env: floats(&req, "observation/environment_state"),
            };
            let seed = match req.get("roboaudit/action_seed") {
                Some(Field::Int(s)) => *s as u64,
                _ => 0,
            };
            let key = NoiseKey {
                stream: 0,
                frame: 0,
                sample: 0,
            };
            let a = noisy_push_action(&params, task, &obs, seed, key);
            let mut chunk: Vec<f32> = a.to_vec().into_iter().map(|x| x as f32).collect();
            chunk.extend([0.01f32, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]);
            Answer::Reply(actions_reply(2, 7, &chunk))
        }),
    )
    .unwrap()
}

fn connect(server: &TestServer) -> PolicyClient {
    PolicyClient::connect(
        &server.url(),
        ClientConfig {
            timeout: Duration::from_secs(30),
            allow_remote: false,
        },
    )
    .unwrap()
}

/// `(v_pi, success_rate)` per task of `params` rolled out in process with its actions rounded
/// to f32, seeded as a served policy named `name` is (with `action_seed` when `seeded`).
fn expected(cfg: &CheckedConfig, name: &str, params: PushParams, seeded: bool) -> Vec<(f64, f64)> {
    let c = &cfg.config;
    let pseed = policy_seed(c.seed, name);
    push_tasks()
        .iter()
        .enumerate()
        .map(|(k, &task)| {
            let mut v = Vec::new();
            let mut successes = 0usize;
            for r in 0..c.rollouts {
                let initial = rollout_initial(cfg, k, r).unwrap();
                let o = rollout_with(task, &initial, 64, &mut |ep, t| {
                    let seed = if seeded {
                        rollout_action_seed(pseed, initial.episode_seed, t) as u64
                    } else {
                        0
                    };
                    let key = NoiseKey {
                        stream: 0,
                        frame: 0,
                        sample: 0,
                    };
                    let a =
                        noisy_push_action(&params, task, &Observation::of_episode(ep), seed, key);
                    let rounded: Vec<f64> = a
                        .to_vec()
                        .into_iter()
                        .map(|x| f64::from(x as f32))
                        .collect();
                    Ok(Action::from_slice(&rounded)?)
                })
                .unwrap();
                successes += usize::from(o.success);
                v.push(if o.success {
                    c.gamma.powi(o.steps as i32 - 1)
                } else {
                    0.0
                });
            }
            let n = c.rollouts as f64;
            (v.iter().sum::<f64>() / n, successes as f64 / n)
        })
        .collect()
}

#[test]
fn served_push_controllers_get_the_ground_truth_of_their_f32_actions() {
    let mut cfg = CollectConfig {
        rollouts: 2,
        ..CollectConfig::small()
    }
    .check()
    .unwrap();
    cfg.targets
        .retain(|t| t.name == "expert" || t.name == "noisy_low");
    let expert = cfg.targets[0].params;
    let noisy = cfg.targets[1].params;
    assert!(noisy.is_stochastic() && !expert.is_stochastic());
    let size = cfg.config.image_size;
    let s_expert = serve_push(expert, &["reset"], size);
    let s_noisy = serve_push(noisy, &["reset", "action_seed"], size);
    let mut served = vec![
        ServedTarget {
            name: "wire_expert".into(),
            client: connect(&s_expert),
        },
        ServedTarget {
            name: "wire_noisy".into(),
            client: connect(&s_noisy),
        },
    ];
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gt");
    let summary = collect_with(&cfg, &mut served, &out, &|_, _, _| {}).unwrap();
    let names: Vec<&str> = summary
        .truth
        .policies
        .iter()
        .map(|p| p.policy.as_str())
        .collect();
    assert_eq!(names, ["expert", "noisy_low", "wire_expert", "wire_noisy"]);
    assert!(!out.join(".resume").exists(), "the resume folder is left");

    for (p, params, seeded) in [
        (&summary.truth.policies[2], expert, false),
        (&summary.truth.policies[3], noisy, true),
    ] {
        let want = expected(&cfg, &p.policy, params, seeded);
        let got: Vec<(f64, f64)> = p.tasks.iter().map(|t| (t.v_pi, t.success_rate)).collect();
        assert_eq!(got, want, "{}", p.policy);
        let s = p.values.served.as_ref().unwrap();
        assert_eq!(p.values.params, None);
        assert_eq!(p.values.stochastic, seeded);
        assert_eq!(s.action_seeds, seeded);
        assert!(s.reset);
        assert_eq!(s.action_horizon, 2);
        assert_eq!(p.values.samples, cfg.config.samples);
        assert!(s.latency.rollouts.queries > 0 && s.latency.actions.queries > 0);
    }
    // The noisy controller's samples follow their seeds: its two samples differ somewhere.
    let noisy_file = read_policy_actions(out.join("policies/wire_noisy.parquet")).unwrap();
    assert!(
        noisy_file
            .index
            .iter()
            .any(|&i| noisy_file.sample(i, 0) != noisy_file.sample(i, 1))
    );

    // The served expert's actions at every dataset frame are the built-in expert's, bit for bit.
    let builtin = read_policy_actions(out.join("policies/expert.parquet")).unwrap();
    let wire = read_policy_actions(out.join("policies/wire_expert.parquet")).unwrap();
    assert_eq!(wire.index, builtin.index);
    assert_eq!(wire.samples, cfg.config.samples);
    for &i in &builtin.index {
        let b: Vec<u32> = builtin
            .sample(i, 0)
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        for s in 0..wire.samples {
            let w: Vec<u32> = wire
                .sample(i, s)
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect();
            assert_eq!(w, b, "frame {i} sample {s}");
        }
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ground_truth.json")).unwrap()).unwrap();
    assert!(json["policies"][0].get("served").is_none());
    assert!(json["policies"][2].get("params").is_none());
    assert_eq!(
        json["policies"][2]["served"]["keys"]["environment_state"],
        "observation/environment_state"
    );
}
