//! The anchor-window forward pass (embedding, masked single-head attention, head) against the
//! NumPy float64 reference of `scripts/anchor_window_reference.py`, checked in under
//! `tests/data/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use roboaudit_memory_learned::anchor_window::{NAMES, attend, embed, forward};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    input: usize,
    embed: usize,
    window: usize,
    head: usize,
    output: usize,
    batch: usize,
    weights: HashMap<String, Vec<f32>>,
    x: Vec<f32>,
    memory: Vec<f32>,
    filled: Vec<f32>,
    embedding: Vec<f32>,
    context: Vec<f32>,
    chunk: Vec<f32>,
}

fn close(got: &Tensor, want: &[f32], what: &str) {
    let got = got.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (g, e)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - e).abs() <= 1e-5 * (1.0 + e.abs()),
            "{what} element {k}: {g} vs NumPy {e}"
        );
    }
}

#[test]
fn anchor_window_forward_matches_numpy() {
    let r: Reference = serde_json::from_str(include_str!("data/anchor_window_reference.json"))
        .expect("reference JSON");
    let dev = Device::Cpu;
    let t = |v: &[f32], shape: &[usize]| Tensor::from_vec(v.to_vec(), shape, &dev).unwrap();
    let (i, d, s, k, o, n) = (r.input, r.embed, r.window + 1, r.head, r.output, r.batch);
    let shapes: [&[usize]; 10] = [
        &[d, i],
        &[d],
        &[s, d],
        &[d, d],
        &[d, d],
        &[d, d],
        &[k, d + i],
        &[k],
        &[o, k],
        &[o],
    ];
    let w: Vec<Tensor> = NAMES
        .iter()
        .zip(shapes)
        .map(|(name, shape)| t(&r.weights[*name], shape))
        .collect();
    let x = t(&r.x, &[n, i]);
    let m = t(&r.memory, &[n, s, d]);
    let filled = t(&r.filled, &[n, s]);
    let e = embed(&w, &x).unwrap();
    close(&e, &r.embedding, "embedding");
    // Row 2 has no anchor and row 1 two empty window slots: the mask must drop exactly those.
    close(&attend(&w, &e, &m, &filled).unwrap(), &r.context, "context");
    close(&forward(&w, &x, &m, &filled).unwrap(), &r.chunk, "chunk");
}
