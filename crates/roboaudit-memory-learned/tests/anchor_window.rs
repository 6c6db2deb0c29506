//! The anchor-window family: training determinism, checkpoint round trip, the memory contract
//! (protected anchor, rolling window, exact read/set, anchor splice) and loading errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::tiny_of;

use std::path::Path;

use candle_core::Tensor;
use roboaudit_memory_harness::{MemoryPolicy, MemoryState, Observation};
use roboaudit_memory_learned::checkpoint::{load, save};
use roboaudit_memory_learned::config::{CONFIG_FILE, WEIGHTS_FILE};
use roboaudit_memory_learned::episodes::{Stream, setup};
use roboaudit_memory_learned::{Family, LearnedPolicy};
use roboaudit_testbed::TaskKind;

fn bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join(WEIGHTS_FILE)).unwrap()
}

fn history() -> Vec<Observation> {
    let mt = roboaudit_memory_harness::tasks::MemoryTask::new(TaskKind::PutBack).unwrap();
    let s = setup(&mt, Stream::Qualify, 0, 0, 0, 4)
        .unwrap()
        .expect("history reaches the present");
    s.history.observations
}

fn component(m: &MemoryState, name: &str) -> (Vec<f32>, usize) {
    let c = m.get(name).unwrap();
    (c.values.clone(), c.filled)
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = ["a", "b", "c", "r"]
        .iter()
        .map(|n| tmp.path().join(n))
        .collect();
    save(&dirs[0], &tiny_of(Family::AnchorWindow, 7, 0.0)).unwrap();
    save(&dirs[1], &tiny_of(Family::AnchorWindow, 7, 0.0)).unwrap();
    save(&dirs[2], &tiny_of(Family::AnchorWindow, 8, 0.0)).unwrap();
    save(&dirs[3], &tiny_of(Family::Recurrent, 7, 0.0)).unwrap();
    assert_eq!(bytes(&dirs[0]), bytes(&dirs[1]));
    assert_eq!(
        std::fs::read(dirs[0].join(CONFIG_FILE)).unwrap(),
        std::fs::read(dirs[1].join(CONFIG_FILE)).unwrap()
    );
    assert_ne!(bytes(&dirs[0]), bytes(&dirs[2]));
    let config = std::fs::read_to_string(dirs[0].join(CONFIG_FILE)).unwrap();
    assert!(config.contains("\"family\": \"anchor-window\""), "{config}");
    // Loading dispatches on the family the config names.
    assert_eq!(load(&dirs[0]).unwrap().config.family, Family::AnchorWindow);
    assert_eq!(load(&dirs[3]).unwrap().config.family, Family::Recurrent);
}

#[test]
fn memory_is_a_protected_anchor_and_a_rolling_window_read_and_set_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tiny_of(Family::AnchorWindow, 3, 0.0);
    save(tmp.path(), &t).unwrap();
    let back = load(tmp.path()).unwrap();
    for (x, y) in back.weights.tensors.iter().zip(&t.weights.tensors) {
        let (x, y) = (
            x.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            y.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        );
        assert!(x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
    let mut p = LearnedPolicy::new(back);
    let spec = p.memory_spec();
    let shapes: Vec<_> = spec
        .components
        .iter()
        .map(|c| (c.name.as_str(), c.shape.clone(), c.protected))
        .collect();
    assert_eq!(
        shapes,
        vec![("anchor", vec![8], true), ("window", vec![3, 8], false)]
    );

    let obs = history();
    assert!(obs.len() > 4, "a history longer than the window");
    p.reset();
    let empty = p.memory().unwrap();
    assert_eq!(component(&empty, "anchor").1, 0);
    assert_eq!(component(&empty, "window").1, 0);
    // The embedding of one observation: the anchor after observing it alone.
    let e = |o: &Observation| {
        let mut q = p.clone();
        q.reset();
        q.observe(o).unwrap();
        component(&q.memory().unwrap(), "anchor").0
    };
    let (e_first, e_last) = (e(&obs[0]), e(obs.last().unwrap()));
    let e_prev = e(&obs[obs.len() - 2]);
    for o in &obs {
        p.observe(o).unwrap();
    }
    let full = p.memory().unwrap();
    let (anchor, af) = component(&full, "anchor");
    let (window, wf) = component(&full, "window");
    // Protected: later observations never overwrite the first one's embedding.
    assert_eq!((anchor, af), (e_first.clone(), 1));
    // The window keeps the 3 most recent, oldest first.
    assert_eq!(wf, 3);
    assert_eq!(&window[16..24], e_last.as_slice());
    assert_eq!(&window[8..16], e_prev.as_slice());

    let present = obs.last().unwrap();
    let a1 = p.act(present, 0).unwrap();
    assert_eq!(a1, p.act(present, 9).unwrap(), "the action seed is unused");
    p.set_memory(&empty).unwrap();
    let a_empty = p.act(present, 0).unwrap();
    p.set_memory(&full).unwrap();
    assert!(p.memory().unwrap().bits_equal(&full));
    assert_eq!(p.act(present, 0).unwrap(), a1);
    assert_ne!(a1, a_empty);

    // The restoration study's anchor condition: after a fault (reset) the next observation
    // becomes a fresh anchor; splicing the pre-fault anchor back changes only that component.
    p.reset();
    p.observe(present).unwrap();
    let mut faulty = p.memory().unwrap();
    assert_eq!(component(&faulty, "anchor").0, e_last);
    let window_after = component(&faulty, "window");
    faulty.splice("anchor", &full).unwrap();
    p.set_memory(&faulty).unwrap();
    let restored = p.memory().unwrap();
    assert_eq!(component(&restored, "anchor"), (e_first, 1));
    assert_eq!(component(&restored, "window"), window_after);

    // A state of another shape is refused, naming the components.
    let wrong = MemoryState {
        components: vec![roboaudit_memory_harness::Component {
            name: "hidden".into(),
            values: vec![0.0; 8],
            filled: 8,
        }],
    };
    let msg = p.set_memory(&wrong).unwrap_err().to_string();
    assert!(msg.contains("\"anchor\", \"window\""), "{msg}");
}

#[test]
fn loading_errors_name_the_file_and_the_tensor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let t = tiny_of(Family::AnchorWindow, 1, 0.0);
    save(dir, &t).unwrap();

    // Another window length in the config than the weights were trained with.
    let mut other = t.clone();
    other.config.train.window = 4;
    std::fs::write(
        dir.join(CONFIG_FILE),
        serde_json::to_vec(&other.config).unwrap(),
    )
    .unwrap();
    let msg = load(dir).unwrap_err().to_string();
    assert!(msg.contains(WEIGHTS_FILE), "{msg}");
    assert!(
        msg.contains("`slot.position` has shape [4, 8], expected [5, 8]"),
        "{msg}"
    );

    // Recurrent weights under an anchor-window config: the first tensor is missing.
    save(dir, &t).unwrap();
    let r = tiny_of(Family::Recurrent, 1, 0.0);
    candle_core::safetensors::save(
        &r.weights.named(Family::Recurrent, &r.norm),
        dir.join(WEIGHTS_FILE),
    )
    .unwrap();
    let msg = load(dir).unwrap_err().to_string();
    assert!(msg.contains("`embed.weight` is missing"), "{msg}");

    // A non-finite weight is named.
    let mut named = t.weights.named(Family::AnchorWindow, &t.norm);
    let q = named.remove("attn.q.weight").unwrap();
    let mut v = q.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    v[5] = f32::NAN;
    named.insert(
        "attn.q.weight".into(),
        Tensor::from_vec(v, q.dims(), q.device()).unwrap(),
    );
    candle_core::safetensors::save(&named, dir.join(WEIGHTS_FILE)).unwrap();
    let msg = load(dir).unwrap_err().to_string();
    assert!(
        msg.contains(WEIGHTS_FILE) && msg.contains("`attn.q.weight` holds a non-finite value"),
        "{msg}"
    );

    // An unknown family in the config: the config file, line and column.
    save(dir, &t).unwrap();
    let text = std::fs::read_to_string(dir.join(CONFIG_FILE)).unwrap();
    std::fs::write(
        dir.join(CONFIG_FILE),
        text.replace("\"anchor-window\"", "\"transformer\""),
    )
    .unwrap();
    let e = load(dir).unwrap_err();
    assert!(e.is_invalid_input());
    let msg = e.to_string();
    assert!(
        msg.contains(CONFIG_FILE) && msg.contains("transformer") && msg.contains("line"),
        "{msg}"
    );
}
