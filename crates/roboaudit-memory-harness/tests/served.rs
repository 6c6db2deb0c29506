//! A served memory policy through the wire: the built-in calibrators behind the in-process test
//! server give the built-in's records bit for bit (so F = 1 and F = 0 come back), and servers
//! that cannot support the audit are refused with a clear message; with native memory
//! (`memory_get` / `memory_set`) the interventions through the wire equal the built-in's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use roboaudit_memory_harness::intervene::{
    CohortSettings, InterventionConfig, replacement_study, restoration_study,
};
use roboaudit_memory_harness::served::serve::serve_policy;
use roboaudit_memory_harness::{
    ACTION_DIM, BuiltinPolicy, HarnessError, MemoryPolicy, PolicyKind, PolicyParams, Reuse,
    ServedPolicy, collect,
};
use roboaudit_policy_client::server::{Answer, TestServer, actions_reply, metadata_with};
use roboaudit_policy_client::{ClientConfig, Field, PolicyClient};
use roboaudit_testbed::TaskKind;

/// Serves a built-in policy with the given capabilities.
fn serve_builtin(kind: PolicyKind, caps: &[&str]) -> TestServer {
    serve_policy(
        BuiltinPolicy::new(kind, PolicyParams::default()).unwrap(),
        caps,
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
        let server = serve_builtin(kind, &["reset", "action_seed"]);
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
    let server = serve_builtin(PolicyKind::Faithful, &[]);
    let e = served(&server).unwrap_err().to_string();
    assert!(
        e.contains("`reset`") && e.contains("same empty memory"),
        "{e}"
    );
}

#[test]
fn without_action_seed_a_deterministic_policy_passes_and_a_stochastic_one_is_refused() {
    let cfg = common::small(TaskKind::PutBack, 2, &[0]);
    let server = serve_builtin(PolicyKind::Faithful, &["reset"]);
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
    let server = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        Box::new(|req| match req.unwrap().get("roboaudit/command") {
            Some(_) => Answer::Reply(Field::Map(vec![])),
            None => Answer::Reply(actions_reply(5, ACTION_DIM, &[0.0; 5 * ACTION_DIM])),
        }),
    )
    .unwrap();
    let mut p = served(&server).unwrap();
    let e = collect(&cfg, &mut p, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("shape (5, 7)") && e.contains("(12, 7)"), "{e}");
}

const NATIVE: [&str; 4] = ["reset", "action_seed", "memory_get", "memory_set"];

#[test]
fn native_memory_gives_the_builtin_records_and_declares_the_protected_anchor() {
    let cfg = common::small(TaskKind::PutBack, 3, &[0, 1]);
    let server = serve_builtin(PolicyKind::Bank, &NATIVE);
    let mut p = served(&server).unwrap();
    assert!(p.has_native_memory());
    let spec = p.memory_spec();
    let anchor = spec.components.iter().find(|c| c.name == "anchor").unwrap();
    assert!(anchor.protected);
    assert_eq!(anchor.shape, vec![1024]);
    let window = spec.components.iter().find(|c| c.name == "window").unwrap();
    assert!(!window.protected);
    let got = collect(&cfg, &mut p, &mut |_, _| {}).unwrap().records;
    let builtin = common::run(
        &cfg,
        PolicyKind::Bank,
        PolicyParams::default(),
        Reuse::Never,
    );
    assert_eq!(got, builtin);
}

#[test]
fn interventions_through_the_wire_equal_the_builtin_studies() {
    let cfg = InterventionConfig {
        cohort: CohortSettings::with_episodes(6),
        ..InterventionConfig::default()
    };
    for kind in [PolicyKind::Faithful, PolicyKind::Bank] {
        let server = serve_builtin(kind, &NATIVE);
        let mut p = served(&server).unwrap();
        let mut b = BuiltinPolicy::new(kind, PolicyParams::default()).unwrap();
        let wire = replacement_study(&cfg, &mut p).unwrap();
        let here = replacement_study(&cfg, &mut b).unwrap();
        assert_eq!(wire, here, "{kind:?} replacement");
        assert_eq!(wire.own_reproduces_native, Some(true));
        let wire = restoration_study(&cfg, &mut p).unwrap();
        let here = restoration_study(&cfg, &mut b).unwrap();
        assert_eq!(wire, here, "{kind:?} restoration");
        // The anchor restoration must have changed something for the test to mean anything.
        let successes = |c: &str| {
            wire.summary
                .iter()
                .find(|s| s.condition == c)
                .unwrap()
                .successes
        };
        assert!(
            successes("none") < successes("anchor"),
            "{kind:?}: {:?}",
            wire.summary
        );
    }
}

/// A policy that declares no `anchor` (here a history-token server, memory `history`) runs the
/// restoration study's `none` and `full` conditions: the harness's replayed history rebuilds
/// what the built-in policy's own full rebuild does, continuation for continuation.
#[test]
fn restoration_without_an_anchor_runs_none_and_full() {
    let cfg = InterventionConfig {
        cohort: CohortSettings::with_episodes(6),
        ..InterventionConfig::default()
    };
    let server = serve_builtin(PolicyKind::Faithful, &["reset", "action_seed"]);
    let mut p = served(&server).unwrap();
    assert!(!p.has_native_memory());
    let wire = restoration_study(&cfg, &mut p).unwrap();
    let names: Vec<&str> = wire.summary.iter().map(|s| s.condition.as_str()).collect();
    assert_eq!(names, ["none", "full"]);
    let mut b = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    let here = restoration_study(&cfg, &mut b).unwrap();
    let without_anchor: Vec<_> = here
        .continuations
        .iter()
        .filter(|c| c.condition != "anchor")
        .cloned()
        .collect();
    assert_eq!(wire.continuations, without_anchor);
    let successes = |c: &str| {
        wire.summary
            .iter()
            .find(|s| s.condition == c)
            .unwrap()
            .successes
    };
    assert!(successes("none") < successes("full"), "{:?}", wire.summary);
}

#[test]
fn a_present_query_leaves_the_native_memory_unchanged() {
    let server = serve_builtin(PolicyKind::Faithful, &NATIVE);
    let mut p = served(&server).unwrap();
    let cfg = common::small(TaskKind::PutBack, 1, &[0]);
    // Fill the memory through a collection, then query a present twice: the memory read
    // before and after is the same bit for bit, and so are the two chunks.
    collect(&cfg, &mut p, &mut |_, _| {}).unwrap();
    let before = p.memory().unwrap();
    let present = roboaudit_memory_harness::Observation {
        features: vec![0.1; 40],
        layout: roboaudit_memory_harness::FeatureLayout {
            n_blocks: 1,
            n_trays: 3,
            n_pads: 1,
        },
        frame: None,
        branch_candidates: vec![0, 1],
    };
    let a = p.act(&present, 3).unwrap();
    let b = p.act(&present, 3).unwrap();
    assert_eq!(a, b);
    assert!(p.memory().unwrap().bits_equal(&before));
}
