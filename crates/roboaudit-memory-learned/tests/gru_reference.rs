//! The GRU cell against PyTorch's `torch.nn.GRUCell` (reference values from
//! `scripts/gru_reference.py`, checked in under `tests/data/`).

use candle_core::{Device, Tensor};
use roboaudit_memory_learned::model::gru_cell;
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    input: usize,
    hidden: usize,
    batch: usize,
    weight_ih: Vec<f32>,
    weight_hh: Vec<f32>,
    bias_ih: Vec<f32>,
    bias_hh: Vec<f32>,
    inputs: Vec<Vec<f32>>,
    h0: Vec<f32>,
    outputs: Vec<Vec<f32>>,
}

#[test]
fn gru_cell_matches_pytorch() {
    let r: Reference =
        serde_json::from_str(include_str!("data/gru_reference.json")).expect("reference JSON");
    let dev = Device::Cpu;
    let t = |v: &[f32], shape: &[usize]| Tensor::from_vec(v.to_vec(), shape, &dev).unwrap();
    let (i, h, b) = (r.input, r.hidden, r.batch);
    // The head's tensors are not used by the cell: placeholders of the right rank.
    let empty = t(&[0.0], &[1, 1]);
    let w = vec![
        t(&r.weight_ih, &[3 * h, i]),
        t(&r.weight_hh, &[3 * h, h]),
        t(&r.bias_ih, &[3 * h]),
        t(&r.bias_hh, &[3 * h]),
        empty.clone(),
        empty.clone(),
        empty.clone(),
        empty,
    ];
    let mut state = t(&r.h0, &[b, h]);
    assert_eq!(r.inputs.len(), r.outputs.len());
    for (x, want) in r.inputs.iter().zip(&r.outputs) {
        state = gru_cell(&w, &t(x, &[b, i]), &state).unwrap();
        let got = state.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(got.len(), want.len());
        for (k, (g, e)) in got.iter().zip(want).enumerate() {
            assert!((g - e).abs() <= 2e-6, "element {k}: {g} vs PyTorch {e}");
        }
    }
}
