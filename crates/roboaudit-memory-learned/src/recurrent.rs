//! Training batches of the recurrent family: the demonstrations' inputs padded into a `[T, B, I]`
//! stream for backpropagation through time, every sample a row of the stacked hidden states.

use candle_core::{Device, Tensor};
use roboaudit_memory_harness::ACTION_DIM;

use crate::episodes::Demo;
use crate::error::LearnedError;
use crate::model::{gru_cell, head};

/// The padded training batch.
pub struct Batch {
    /// `[T, B, I]` normalized inputs, zero past each sequence's end.
    inputs: Vec<Tensor>,
    /// Row of the stacked hidden states (`t · B + b`, `t` in `0..=T`) of each sample.
    h_rows: Tensor,
    /// Row of the stacked inputs (`t · B + b`) of each sample.
    x_rows: Tensor,
    /// `[N, O]` scaled targets.
    targets: Tensor,
}

impl Batch {
    /// The samples of `demos` (see [`crate::train`]).
    ///
    /// # Errors
    /// Tensor construction (internal).
    pub fn new(
        demos: &[Demo],
        mean: &[f32],
        std: &[f32],
        scale: &[f32],
    ) -> Result<Batch, LearnedError> {
        batch(demos, mean, std, scale)
    }

    /// Mean squared error of the scaled actions under weights `w` (hidden size `hidden`).
    ///
    /// # Errors
    /// Shape mismatches (internal).
    pub fn loss(&self, w: &[Tensor], hidden: usize) -> candle_core::Result<Tensor> {
        loss(w, self, hidden)
    }
}

fn batch(demos: &[Demo], mean: &[f32], std: &[f32], scale: &[f32]) -> Result<Batch, LearnedError> {
    let dim = mean.len();
    let b = demos.len();
    let t_max = demos
        .iter()
        .map(|d| d.history.len() + d.queries.len())
        .max()
        .unwrap_or(0);
    let mut steps = vec![vec![0.0f32; b * dim]; t_max];
    let (mut h_rows, mut x_rows, mut targets) = (Vec::new(), Vec::new(), Vec::new());
    for (j, d) in demos.iter().enumerate() {
        for (t, row) in d.history.iter().chain(&d.queries).enumerate() {
            for (k, v) in row.iter().enumerate().take(dim) {
                steps[t][j * dim + k] = (v - mean[k]) / std[k];
            }
        }
        let len = d.history.len();
        for (q, target) in d.targets.iter().enumerate() {
            let t = len + q;
            let scaled = target
                .iter()
                .enumerate()
                .map(|(k, v)| v / scale[k % ACTION_DIM]);
            // After observing the query (closed loop) ...
            h_rows.push(((t + 1) * b + j) as u32);
            x_rows.push((t * b + j) as u32);
            targets.extend(scaled.clone());
            // ... and, at the present, before observing it (collect).
            if q == 0 {
                h_rows.push((t * b + j) as u32);
                x_rows.push((t * b + j) as u32);
                targets.extend(scaled);
            }
        }
    }
    let n = h_rows.len();
    let out = targets.len() / n.max(1);
    let dev = Device::Cpu;
    Ok(Batch {
        inputs: steps
            .into_iter()
            .map(|s| Tensor::from_vec(s, (b, dim), &dev))
            .collect::<candle_core::Result<_>>()?,
        h_rows: Tensor::from_vec(h_rows, n, &dev)?,
        x_rows: Tensor::from_vec(x_rows, n, &dev)?,
        targets: Tensor::from_vec(targets, (n, out), &dev)?,
    })
}

fn loss(w: &[Tensor], data: &Batch, hidden: usize) -> candle_core::Result<Tensor> {
    let b = data.inputs.first().map_or(0, |x| x.dims()[0]);
    let mut h = Tensor::zeros((b, hidden), candle_core::DType::F32, &Device::Cpu)?;
    let mut hs = vec![h.clone()];
    for x in &data.inputs {
        h = gru_cell(w, x, &h)?;
        hs.push(h.clone());
    }
    let hs = Tensor::cat(&hs, 0)?;
    let xs = Tensor::cat(&data.inputs, 0)?;
    let hq = hs.index_select(&data.h_rows, 0)?;
    let xq = xs.index_select(&data.x_rows, 0)?;
    let pred = head(&w[4..8], &hq, &xq)?;
    (pred - &data.targets)?.sqr()?.mean_all()
}
