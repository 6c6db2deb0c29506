//! Training determinism, the checkpoint round trip and the typed loading errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::tiny;

use std::path::Path;

use roboaudit_memory_harness::MemoryPolicy;
use roboaudit_memory_learned::checkpoint::{load, save};
use roboaudit_memory_learned::config::{CONFIG_FILE, QUALIFICATION_FILE, WEIGHTS_FILE};
use roboaudit_memory_learned::qualify::open_for_audit;
use roboaudit_memory_learned::{LearnedError, LearnedPolicy};
use roboaudit_testbed::TaskKind;

fn bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join(WEIGHTS_FILE)).unwrap()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    save(&a, &tiny(7, 0.0)).unwrap();
    save(&b, &tiny(7, 0.0)).unwrap();
    save(&c, &tiny(8, 0.0)).unwrap();
    assert_eq!(bytes(&a), bytes(&b));
    assert_eq!(
        std::fs::read(a.join(CONFIG_FILE)).unwrap(),
        std::fs::read(b.join(CONFIG_FILE)).unwrap()
    );
    assert_ne!(bytes(&a), bytes(&c));
}

/// The checkpoint's files carry the mode of a file the user creates in the same folder (not
/// the owner-only mode of a temporary file).
fn assert_shared_like_a_created_file(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let probe = dir.join("probe");
    std::fs::File::create(&probe).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for name in [WEIGHTS_FILE, CONFIG_FILE] {
        assert_eq!(mode(&dir.join(name)), mode(&probe), "{name}");
    }
}

#[test]
fn round_trip_gives_the_same_policy_and_memory_contract_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tiny(3, 0.0);
    save(tmp.path(), &t).unwrap();
    assert_shared_like_a_created_file(tmp.path());
    let back = load(tmp.path()).unwrap();
    assert_eq!(back.config, t.config);
    for (x, y) in back.weights.tensors.iter().zip(&t.weights.tensors) {
        let (x, y) = (
            x.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            y.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        );
        assert!(x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
    // A memory read and set back reproduces later actions; another memory changes them.
    let mut p = LearnedPolicy::new(back);
    let spec = p.memory_spec();
    assert_eq!(spec.components.len(), 1);
    assert_eq!(spec.components[0].shape, vec![8]);
    let mt = roboaudit_memory_harness::tasks::MemoryTask::new(TaskKind::PutBack).unwrap();
    let s = roboaudit_memory_learned::episodes::setup(
        &mt,
        roboaudit_memory_learned::episodes::Stream::Qualify,
        0,
        0,
        0,
        4,
    )
    .unwrap()
    .expect("history reaches the present");
    let obs = &s.history.observations;
    p.reset();
    let empty = p.memory().unwrap();
    for o in obs {
        p.observe(o).unwrap();
    }
    let full = p.memory().unwrap();
    assert!(!full.bits_equal(&empty));
    let present = obs.last().unwrap();
    let a1 = p.act(present, 0).unwrap();
    p.set_memory(&empty).unwrap();
    let a_empty = p.act(present, 0).unwrap();
    p.set_memory(&full).unwrap();
    let a2 = p.act(present, 0).unwrap();
    assert_eq!(a1, a2);
    assert_ne!(a1, a_empty);
    assert_eq!(a1.len(), p.chunk_len());
}

#[test]
fn a_recurrent_config_without_a_window_length_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tiny(4, 0.0);
    save(tmp.path(), &t).unwrap();
    let path = tmp.path().join(CONFIG_FILE);
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(v["train"]["window"].is_number());
    v["train"].as_object_mut().unwrap().remove("window");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let back = load(tmp.path()).unwrap();
    assert_eq!(back.config.train.window, 8);
    assert_eq!(
        back.config.family,
        roboaudit_memory_learned::Family::Recurrent
    );
}

fn err_text(e: LearnedError) -> String {
    e.to_string()
}

#[test]
fn loading_errors_name_the_file_and_the_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Missing folder: the config file is named.
    let e = load(&dir.join("nope")).unwrap_err();
    assert!(e.is_invalid_input());
    assert!(err_text(e).contains(CONFIG_FILE));

    let t = tiny(1, 0.0);
    save(dir, &t).unwrap();
    // A tensor of another shape (another architecture's hidden size).
    let mut other = t.clone();
    other.config.train.hidden = 9;
    std::fs::write(
        dir.join(CONFIG_FILE),
        serde_json::to_vec(&other.config).unwrap(),
    )
    .unwrap();
    let msg = err_text(load(dir).unwrap_err());
    assert!(msg.contains(WEIGHTS_FILE), "{msg}");
    assert!(
        msg.contains("gru.weight_ih") && msg.contains("[24, "),
        "{msg}"
    );

    // Config back; a tensor renamed (missing) and an extra one.
    save(dir, &t).unwrap();
    let mut named = t.weights.named(t.config.family, &t.norm);
    let w = named.remove("head.2.bias").unwrap();
    named.insert("head.3.bias".into(), w);
    candle_core::safetensors::save(&named, dir.join(WEIGHTS_FILE)).unwrap();
    let msg = err_text(load(dir).unwrap_err());
    assert!(msg.contains("`head.2.bias` is missing"), "{msg}");

    // Not a safetensors file at all.
    std::fs::write(dir.join(WEIGHTS_FILE), b"not tensors").unwrap();
    let msg = err_text(load(dir).unwrap_err());
    assert!(
        msg.contains(WEIGHTS_FILE) && msg.contains("not a safetensors file"),
        "{msg}"
    );

    // A config that does not parse: line and column.
    save(dir, &t).unwrap();
    std::fs::write(dir.join(CONFIG_FILE), b"{\"schema\": 3}").unwrap();
    let msg = err_text(load(dir).unwrap_err());
    assert!(msg.contains(CONFIG_FILE) && msg.contains("line 1"), "{msg}");

    // Another task is refused for the audit.
    save(dir, &t).unwrap();
    let e = open_for_audit(dir, TaskKind::Swap).unwrap_err();
    assert!(e.is_invalid_input());
    assert!(err_text(e).contains("trained on put_back, not swap"));
}

#[test]
fn a_checkpoint_below_its_registered_rate_is_refused_with_its_rate() {
    let tmp = tempfile::tempdir().unwrap();
    // Three optimizer steps learn nothing: it cannot meet a registered rate of 1.
    save(tmp.path(), &tiny(2, 1.0)).unwrap();
    let e = open_for_audit(tmp.path(), TaskKind::PutBack).unwrap_err();
    let LearnedError::NotQualified {
        successes,
        episodes,
        rate,
        threshold,
        ..
    } = &e
    else {
        panic!("expected NotQualified, got {e}");
    };
    assert!(successes < episodes);
    assert_eq!(*threshold, 1.0);
    assert_eq!(*rate, *successes as f64 / *episodes as f64);
    assert!(e.to_string().contains("below the registered rate 1.000"));
    // The result is cached beside the weights, tied to them.
    assert!(tmp.path().join(QUALIFICATION_FILE).is_file());
}
