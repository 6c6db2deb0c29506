//! The client against the in-process test server: protocol, extensions and failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roboaudit_policy_client::server::{Answer, TestServer, actions_reply, metadata_with};
use roboaudit_policy_client::{
    ACTION_SEED_KEY, ClientConfig, Field, NdArray, PolicyClient, PolicyClientError,
};

fn cfg(timeout_ms: u64) -> ClientConfig {
    ClientConfig {
        timeout: Duration::from_millis(timeout_ms),
        allow_remote: false,
    }
}

fn obs(state: &[f32]) -> Vec<(String, Field)> {
    vec![
        (
            "observation/image".into(),
            Field::Array(NdArray::from_u8(vec![2, 2, 3], (0..12).collect())),
        ),
        (
            "observation/state".into(),
            Field::Array(NdArray::from_f32(vec![state.len()], state)),
        ),
        ("prompt".into(), Field::Text("push right".into())),
    ]
}

/// A policy answering `2 · state` as a one-action chunk, recording every request.
fn doubling(seen: Arc<Mutex<Vec<Field>>>) -> Box<roboaudit_policy_client::server::Handler> {
    Box::new(move |req| {
        let req = req.expect("decodable request");
        let state = match req.get("observation/state") {
            Some(Field::Array(a)) => a.to_f32().unwrap(),
            _ => vec![],
        };
        seen.lock().unwrap().push(req);
        let doubled: Vec<f32> = state.iter().map(|v| 2.0 * v).collect();
        Answer::Reply(actions_reply(1, doubled.len(), &doubled))
    })
}

#[test]
fn query_round_trips_arrays_and_declared_capabilities() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = TestServer::start(
        metadata_with(&["reset", "action_seed"]),
        doubling(seen.clone()),
    )
    .unwrap();
    let mut c = PolicyClient::connect(&server.url(), cfg(5000)).unwrap();
    assert_eq!(c.capabilities(), ["reset", "action_seed"]);
    assert!(c.has("reset") && !c.has("memory_get"));
    let mut o = obs(&[0.5, -1.25, 3.0]);
    o.push((ACTION_SEED_KEY.into(), Field::Int(42)));
    let r = c.infer(o, "frame 0").unwrap();
    assert_eq!((r.horizon, r.dim), (1, 3));
    assert_eq!(r.actions, vec![1.0, -2.5, 6.0]);
    let got = seen.lock().unwrap();
    let image = match got[0].get("observation/image") {
        Some(Field::Array(a)) => a.clone(),
        other => panic!("image not an array: {other:?}"),
    };
    assert_eq!(image.dtype, "|u1");
    assert_eq!(image.shape, vec![2, 2, 3]);
    assert_eq!(image.data, (0..12).collect::<Vec<u8>>());
    assert_eq!(got[0].get(ACTION_SEED_KEY), Some(&Field::Int(42)));
    assert_eq!(
        got[0].get("prompt"),
        Some(&Field::Text("push right".into()))
    );
    assert_eq!(c.latency().queries, 1);
}

#[test]
fn plain_server_refuses_extensions_with_a_clear_message() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = TestServer::start(Field::Map(vec![]), doubling(seen)).unwrap();
    let mut c = PolicyClient::connect(&server.url(), cfg(5000)).unwrap();
    assert!(c.capabilities().is_empty());
    let e = c.reset("episode 0").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, PolicyClientError::Unsupported { .. }), "{msg}");
    assert!(
        msg.contains("`reset`") && msg.contains("plain openpi"),
        "{msg}"
    );
    // Plain queries still work.
    assert_eq!(c.infer(obs(&[1.0]), "frame 0").unwrap().actions, vec![2.0]);
}

#[test]
fn another_extension_version_declares_nothing() {
    let meta = Field::Map(vec![(
        "roboaudit".into(),
        Field::Map(vec![
            ("version".into(), Field::Int(2)),
            (
                "capabilities".into(),
                Field::List(vec![Field::Text("reset".into())]),
            ),
        ]),
    )]);
    let server = TestServer::start(meta, doubling(Arc::default())).unwrap();
    let c = PolicyClient::connect(&server.url(), cfg(5000)).unwrap();
    assert!(c.capabilities().is_empty());
}

fn failing(answer: Answer) -> PolicyClientError {
    let server = TestServer::start(Field::Map(vec![]), Box::new(move |_| answer.clone())).unwrap();
    let mut c = PolicyClient::connect(&server.url(), cfg(400)).unwrap();
    c.infer(obs(&[1.0]), "episode 2 frame 5").unwrap_err()
}

#[test]
fn server_error_text_is_reported() {
    let e = failing(Answer::Error("Traceback: ValueError: boom".into()));
    assert!(matches!(e, PolicyClientError::Server { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("ValueError: boom") && msg.contains("episode 2 frame 5"),
        "{msg}"
    );
}

#[test]
fn garbage_answer_is_a_protocol_error() {
    // 0xc1 is the one byte msgpack never uses.
    let e = failing(Answer::Raw(vec![0xc1, 1, 2]));
    assert!(matches!(e, PolicyClientError::Protocol { .. }), "{e}");
    let e = failing(Answer::Reply(Field::Map(vec![(
        "action".into(),
        Field::Int(1),
    )])));
    assert!(e.to_string().contains("no `actions`"), "{e}");
}

#[test]
fn nan_and_wrong_shapes_are_refused() {
    let e = failing(Answer::Reply(actions_reply(
        2,
        2,
        &[0.0, 1.0, f32::NAN, 0.0],
    )));
    assert!(matches!(e, PolicyClientError::Actions { .. }), "{e}");
    assert!(e.to_string().contains("action 1 dimension 0 is NaN"), "{e}");
    let three_d = Field::Map(vec![(
        "actions".into(),
        Field::Array(NdArray::from_f32(vec![1, 1, 2], &[0.0, 0.0])),
    )]);
    let e = failing(Answer::Reply(three_d));
    assert!(e.to_string().contains("shape [1, 1, 2]"), "{e}");
}

#[test]
fn silent_server_times_out_naming_the_step() {
    let e = failing(Answer::Silent);
    assert!(matches!(e, PolicyClientError::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("episode 2 frame 5"), "{e}");
}

#[test]
fn a_listener_that_never_speaks_websocket_times_out_at_the_handshake() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    // Accepts (the kernel does) but never answers the upgrade request.
    let e = PolicyClient::connect(&url, cfg(300)).unwrap_err();
    assert!(matches!(e, PolicyClientError::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("websocket handshake"), "{e}");
    drop(listener);
}

#[test]
fn a_frame_declaring_an_absurd_length_is_an_error_not_an_abort() {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut ws = tungstenite::accept(stream).unwrap();
        // A binary frame header declaring 2^62 payload bytes, and no payload.
        let header = [0x82u8, 127, 0x40, 0, 0, 0, 0, 0, 0, 0];
        ws.get_mut().write_all(&header).unwrap();
        std::thread::sleep(Duration::from_millis(500));
    });
    let e = PolicyClient::connect(&url, cfg(2000)).unwrap_err();
    assert!(e.to_string().contains(&url), "{e}");
    assert!(
        e.to_string().to_lowercase().contains("too long")
            || e.to_string().to_lowercase().contains("limit"),
        "{e}"
    );
    server.join().unwrap();
}

#[test]
fn one_dropped_connection_is_reconnected() {
    let n = Arc::new(Mutex::new(0usize));
    let k = n.clone();
    let server = TestServer::start(
        Field::Map(vec![]),
        Box::new(move |_| {
            let mut k = k.lock().unwrap();
            *k += 1;
            if *k == 2 {
                Answer::Drop
            } else {
                Answer::Reply(actions_reply(1, 1, &[*k as f32]))
            }
        }),
    )
    .unwrap();
    let mut c = PolicyClient::connect(&server.url(), cfg(5000)).unwrap();
    assert_eq!(c.infer(obs(&[1.0]), "q1").unwrap().actions, vec![1.0]);
    // The second request is dropped; the client reconnects and resends it (request 3).
    assert_eq!(c.infer(obs(&[1.0]), "q2").unwrap().actions, vec![3.0]);
    assert_eq!(c.generation(), 2);
}

#[test]
fn a_connection_that_keeps_dropping_fails() {
    let e = failing(Answer::Drop);
    assert!(matches!(e, PolicyClientError::Closed { .. }), "{e}");
}

#[test]
fn remote_addresses_need_explicit_permission() {
    let e = PolicyClient::connect("ws://192.0.2.1:8000", cfg(200)).unwrap_err();
    assert!(matches!(e, PolicyClientError::Address { .. }), "{e}");
    assert!(e.to_string().contains("--allow-remote-policy"), "{e}");
    let e = PolicyClient::connect("http://127.0.0.1:8000", cfg(200)).unwrap_err();
    assert!(e.to_string().contains("ws://"), "{e}");
}

#[test]
fn memory_get_and_set_round_trip() {
    let memory: Arc<Mutex<Vec<(String, Field)>>> = Arc::new(Mutex::new(vec![(
        "anchor".into(),
        Field::Array(NdArray::from_f32(vec![3], &[1.0, 2.0, 3.0])),
    )]));
    let m = memory.clone();
    let server = TestServer::start(
        metadata_with(&["reset", "memory_get", "memory_set"]),
        Box::new(move |req| {
            let req = req.unwrap();
            match req.get("roboaudit/command").and_then(Field::as_text) {
                Some("memory_get") => Answer::Reply(Field::Map(vec![(
                    "roboaudit/memory".into(),
                    Field::Map(m.lock().unwrap().clone()),
                )])),
                Some("memory_set") => {
                    if let Some(Field::Map(new)) = req.get("roboaudit/memory") {
                        *m.lock().unwrap() = new.clone();
                    }
                    Answer::Reply(Field::Map(vec![]))
                }
                _ => Answer::Reply(Field::Map(vec![])),
            }
        }),
    )
    .unwrap();
    let mut c = PolicyClient::connect(&server.url(), cfg(5000)).unwrap();
    assert_eq!(
        c.memory_get("get").unwrap(),
        vec![("anchor".to_owned(), vec![1.0, 2.0, 3.0])]
    );
    c.memory_set(&[("anchor".to_owned(), vec![-1.0, 0.5, 9.0])], "set")
        .unwrap();
    assert_eq!(
        c.memory_get("get").unwrap(),
        vec![("anchor".to_owned(), vec![-1.0, 0.5, 9.0])]
    );
}
