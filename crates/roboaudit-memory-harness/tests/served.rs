//! A served memory policy through the wire: the built-in calibrators behind the in-process test
//! server give the built-in's records bit for bit (so F = 1 and F = 0 come back), and servers
//! that cannot support the audit are refused with a clear message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use roboaudit_memory_harness::{
    ACTION_DIM, BuiltinPolicy, FeatureLayout, HarnessError, MemoryPolicy, Observation, PolicyKind,
    PolicyParams, Reuse, ServedPolicy, collect,
};
use roboaudit_policy_client::server::{Answer, TestServer, actions_reply, metadata_with};
use roboaudit_policy_client::{ClientConfig, Field, PolicyClient};
use roboaudit_testbed::TaskKind;

fn ints(f: Option<&Field>) -> Vec<usize> {
    match f {
        Some(Field::List(l)) => l.iter().map(|x| x.as_f64().unwrap() as usize).collect(),
        _ => vec![],
    }
}

/// Serves a built-in policy: each query acts on the packet under its seed (0 without one),
/// then folds the packet into the memory, as a deployed policy does.
fn serve_builtin(kind: PolicyKind, caps: &[&str], chunk_rows: Option<usize>) -> TestServer {
    let mut p = BuiltinPolicy::new(kind, PolicyParams::default()).unwrap();
    TestServer::start(
        metadata_with(caps),
        Box::new(move |req| {
            let req = req.unwrap();
            if req.get("roboaudit/command").is_some() {
                p.reset();
                return Answer::Reply(Field::Map(vec![]));
            }
            let features = match req.get("observation/state") {
                Some(Field::Array(a)) => a.to_f32().unwrap(),
                _ => panic!("no state"),
            };
            let l = ints(req.get("roboaudit/layout"));
            let obs = Observation {
                features,
                layout: FeatureLayout {
                    n_blocks: l[0],
                    n_trays: l[1],
                    n_pads: l[2],
                },
                frame: None,
                branch_candidates: ints(req.get("roboaudit/branch_candidates")),
            };
            let seed = req
                .get("roboaudit/action_seed")
                .and_then(Field::as_f64)
                .unwrap_or(0.0) as u64;
            let chunk = p.act(&obs, seed).unwrap();
            p.observe(&obs).unwrap();
            let rows = chunk_rows.unwrap_or(chunk.len());
            let mut v = chunk.values;
            v.resize(rows * ACTION_DIM, 0.0);
            Answer::Reply(actions_reply(rows, ACTION_DIM, &v))
        }),
    )
    .unwrap()
}

fn served(server: &TestServer) -> Result<ServedPolicy, HarnessError> {
    let client = PolicyClient::connect(
        &server.url(),
        ClientConfig {
            timeout: Duration::from_secs(10),
            allow_remote: false,
        },
    )
    .unwrap();
    ServedPolicy::new("served", client, 12)
}

#[test]
fn served_calibrators_give_the_builtin_records_bit_for_bit() {
    let cfg = common::small(TaskKind::PutBack, 4, &[0, 1]);
    for (kind, want) in [(PolicyKind::Faithful, 1.0), (PolicyKind::Blind, 0.0)] {
        let server = serve_builtin(kind, &["reset", "action_seed"], None);
        let mut p = served(&server).unwrap();
        let got = collect(&cfg, &mut p, &mut |_, _| {}).unwrap().records;
        let builtin = common::run(&cfg, kind, PolicyParams::default(), Reuse::Never);
        assert_eq!(got, builtin, "{kind:?}");
        assert_eq!(
            common::audit(&got).faithfulness.value,
            Some(want),
            "{kind:?}"
        );
        assert!(p.client().latency().queries > 0);
    }
}

#[test]
fn a_plain_server_is_refused_for_the_memory_audit() {
    let server = serve_builtin(PolicyKind::Faithful, &[], None);
    let e = served(&server).unwrap_err().to_string();
    assert!(
        e.contains("`reset`") && e.contains("same empty memory"),
        "{e}"
    );
}

#[test]
fn without_action_seed_a_deterministic_policy_passes_and_a_stochastic_one_is_refused() {
    let cfg = common::small(TaskKind::PutBack, 2, &[0]);
    let server = serve_builtin(PolicyKind::Faithful, &["reset"], None);
    let mut p = served(&server).unwrap();
    let recs = collect(&cfg, &mut p, &mut |_, _| {}).unwrap().records;
    assert_eq!(common::audit(&recs).faithfulness.value, Some(1.0));

    let mut k = 0u32;
    let noisy = TestServer::start(
        metadata_with(&["reset"]),
        Box::new(move |_| {
            k += 1;
            Answer::Reply(actions_reply(
                12,
                ACTION_DIM,
                &vec![k as f32 * 1e-4; 12 * ACTION_DIM],
            ))
        }),
    )
    .unwrap();
    let mut p = served(&noisy).unwrap();
    let e = collect(&cfg, &mut p, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("non-deterministic"), "{e}");
}

#[test]
fn a_chunk_of_the_wrong_length_is_refused_naming_the_shape() {
    let cfg = common::small(TaskKind::PutBack, 1, &[0]);
    let server = serve_builtin(PolicyKind::Faithful, &["reset", "action_seed"], Some(5));
    let mut p = served(&server).unwrap();
    let e = collect(&cfg, &mut p, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("shape (5, 7)") && e.contains("(12, 7)"), "{e}");
}
