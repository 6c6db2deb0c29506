//! Served policies at the CLI, against the in-process test server: `memory intervene` through
//! the wire writes the built-in's study byte for byte when the server declares `memory_get` and
//! `memory_set`, and is refused (exit 2) without them; a server that answers garbage stops
//! `memory collect` with exit 3 and nothing written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};
use roboaudit_memory_harness::served::serve::serve_policy;
use roboaudit_memory_harness::{BuiltinPolicy, PolicyKind, PolicyParams};
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
