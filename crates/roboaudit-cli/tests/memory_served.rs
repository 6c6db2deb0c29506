//! Served policies at the CLI, against the in-process test server: `memory intervene` through
//! the wire writes the built-in's study byte for byte when the server declares `memory_get` and
//! `memory_set`, and is refused (exit 2) without them; a server that answers garbage stops
//! `memory collect` with exit 3 and nothing written; one that dies mid-collection leaves its
//! finished pairs, and the rerun gives the uninterrupted records byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use roboaudit_memory_harness::served::serve::serve_policy;
use roboaudit_memory_harness::{
    ActionChunk, BuiltinPolicy, HarnessError, MemoryPolicy, MemorySpec, MemoryState, Observation,
    PolicyKind, PolicyParams,
};
use roboaudit_policy_client::Field;
use roboaudit_policy_client::server::{Answer, TestServer, metadata_with};

const NATIVE: [&str; 4] = ["reset", "action_seed", "memory_get", "memory_set"];

fn serve_faithful(caps: &[&str]) -> TestServer {
    serve_policy(
        BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap(),
        caps,
    )
    .unwrap()
}

fn intervene(policy: &str, out: &std::path::Path) -> std::process::Output {
    roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "restoration",
        "--policy",
        policy,
        "--episodes",
        "2",
        "--resamples",
        "200",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn intervene_through_the_wire_writes_the_builtin_study() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve_faithful(&NATIVE);
    let url = format!("mine={}", server.url());
    let wire = intervene(&url, &tmp.path().join("wire"));
    assert!(wire.status.success(), "{}", text(&wire));
    assert!(
        text(&wire).contains("restoration study, mine on put_back"),
        "{}",
        text(&wire)
    );
    assert!(
        text(&wire).contains("served policy ws://127.0.0.1:"),
        "{}",
        text(&wire)
    );
    let here = intervene("faithful", &tmp.path().join("here"));
    assert!(here.status.success(), "{}", text(&here));
    let read = |d: &str| std::fs::read(tmp.path().join(d).join("interventions.json")).unwrap();
    assert_eq!(read("wire"), read("here"));
}

#[test]
fn intervene_refuses_a_server_without_native_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve_faithful(&["reset", "action_seed"]);
    let out = tmp.path().join("out");
    let o = intervene(&server.url(), &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("memory_get and memory_set") && t.contains("declares only"),
        "{t}"
    );
    assert!(!out.join("interventions.json").exists());
}

#[test]
fn a_server_answering_garbage_stops_collect_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        Box::new(|req| match req.unwrap().get("roboaudit/command") {
            Some(_) => Answer::Reply(Field::Map(vec![])),
            None => Answer::Raw(b"\xc1 not msgpack".to_vec()),
        }),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--policy",
        &server.url(),
        "--pairs",
        "1",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(&server.url()) && t.contains("history observation 0"),
        "{t}"
    );
    assert!(!out.join("records.parquet").exists());
    assert!(!out.join("manifest.json").exists());
}

/// The faithful policy, failing from its `fail_at`-th query on (a server whose model dies).
struct Dying {
    inner: BuiltinPolicy,
    queries: usize,
    fail_at: usize,
}

impl MemoryPolicy for Dying {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn memory_spec(&self) -> MemorySpec {
        self.inner.memory_spec()
    }
    fn chunk_len(&self) -> usize {
        self.inner.chunk_len()
    }
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        self.inner.observe(obs)
    }
    fn act(&mut self, present: &Observation, seed: u64) -> Result<ActionChunk, HarnessError> {
        // Only presents carry branch candidates; history folds are queries too on the wire.
        if !present.branch_candidates.is_empty() {
            self.queries += 1;
            if self.queries >= self.fail_at {
                return Err(HarnessError::Policy {
                    policy: self.name(),
                    message: "CUDA out of memory".into(),
                });
            }
        }
        self.inner.act(present, seed)
    }
    fn memory(&mut self) -> Result<MemoryState, HarnessError> {
        self.inner.memory()
    }
    fn set_memory(&mut self, s: &MemoryState) -> Result<(), HarnessError> {
        self.inner.set_memory(s)
    }
}

fn collect_served(policy: &str, out: &std::path::Path) -> std::process::Output {
    roboaudit(&[
        "memory",
        "collect",
        "--policy",
        policy,
        "--pairs",
        "4",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn a_server_dying_mid_collect_leaves_a_run_the_rerun_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let faithful = || BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    let caps = ["reset", "action_seed"];
    // Two presents per pair (one per memory, one seed): dies at pair 2's first present.
    let dying = serve_policy(
        Dying {
            inner: faithful(),
            queries: 0,
            fail_at: 5,
        },
        &caps,
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = collect_served(&format!("mine={}", dying.url()), &out);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("CUDA out of memory"), "{}", text(&o));
    assert!(!out.join("records.parquet").exists());
    assert!(out.join("records.partial/pair-000001.json").exists());
    assert!(!out.join("records.partial/pair-000002.json").exists());

    let healthy = serve_policy(faithful(), &caps).unwrap();
    let o = collect_served(&format!("mine={}", healthy.url()), &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resumed 2 of 4 pairs"), "{}", text(&o));
    assert!(!out.join("records.partial").exists());

    let here = tmp.path().join("here");
    let o = collect_served("faithful", &here);
    assert!(o.status.success(), "{}", text(&o));
    let read = |d: &std::path::Path| std::fs::read(d.join("records.parquet")).unwrap();
    assert_eq!(read(&out), read(&here));
}
