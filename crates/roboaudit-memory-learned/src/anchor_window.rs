//! The anchor-window network (Mem-0 style, seed 002 §IV-A and §IV-C2): every observation is
//! embedded once, `e(x) = tanh(W_e x + b_e)` (`[D]`); the memory is the embedding of the first
//! observation (the protected anchor) and those of the `W` most recent ones (the window, oldest
//! first); at a query the present's embedding attends over the `S = W + 1` slots
//! `[anchor; window]` (single head, slot embeddings `P` added, empty slots masked) and the shared
//! action head ([`crate::model::head`]) reads the context and the present's input.
//!
//! ```text
//! M' = M + P                                   M, P: [S, D]
//! q = W_q e(x),  K = M' W_kᵀ,  V = M' W_vᵀ
//! α = softmax((K q) / √D, masked to the filled slots)
//! c = αᵀ V   (c = 0 when no slot is filled)
//! chunk = W_2 relu(W_1 [c ; x] + b_1) + b_2    (scaled by the action scale)
//! ```
//!
//! Training batches every sample's memory as rows gathered from the embeddings of all
//! demonstration inputs ([`Batch`]), so the anchor and window a sample sees are exactly what
//! [`crate::LearnedPolicy`] would hold after observing the same inputs.

use candle_core::{D, DType, Device, Tensor};

use crate::episodes::Demo;
use crate::error::LearnedError;
use crate::model::head;

/// Tensor names, in the order the weights hold them.
pub const NAMES: [&str; 10] = [
    "embed.weight",
    "embed.bias",
    "slot.position",
    "attn.q.weight",
    "attn.k.weight",
    "attn.v.weight",
    "head.0.weight",
    "head.0.bias",
    "head.2.weight",
    "head.2.bias",
];

/// Additive score of an empty slot: its softmax weight is exactly 0 in `f32`.
const MASKED: f32 = -1e9;

/// Embeds normalized inputs `x` `[N, I]` → `[N, D]` (`w` in [`NAMES`] order).
///
/// # Errors
/// Shape mismatches (internal).
pub fn embed(w: &[Tensor], x: &Tensor) -> candle_core::Result<Tensor> {
    x.matmul(&w[0].t()?)?.broadcast_add(&w[1])?.tanh()
}

/// Attention context: present embeddings `e` `[N, D]`, memories `m` `[N, S, D]` (slot 0 the
/// anchor, then the window) and `filled` `[N, S]` (1 for a filled slot, 0 for an empty one; at
/// least one per row) → `[N, D]`.
///
/// # Errors
/// Shape mismatches (internal).
pub fn attend(
    w: &[Tensor],
    e: &Tensor,
    m: &Tensor,
    filled: &Tensor,
) -> candle_core::Result<Tensor> {
    let (n, s, d) = m.dims3()?;
    let mp = m.broadcast_add(&w[2])?.reshape((n * s, d))?;
    let k = mp.matmul(&w[4].t()?)?.reshape((n, s, d))?;
    let v = mp.matmul(&w[5].t()?)?.reshape((n, s, d))?;
    let q = e.matmul(&w[3].t()?)?.unsqueeze(1)?;
    let mask = filled.affine(f64::from(-MASKED), f64::from(MASKED))?;
    let scores = (q.matmul(&k.transpose(1, 2)?.contiguous()?)? / (d as f64).sqrt())?
        .broadcast_add(&mask.unsqueeze(1)?)?;
    let alpha = candle_nn::ops::softmax(&scores, D::Minus1)?;
    alpha.matmul(&v)?.squeeze(1)
}

/// The whole forward pass for a batch: normalized present inputs `x` `[N, I]`, memories `m`
/// `[N, S, D]` and `filled` `[N, S]` as in [`attend`] → scaled action chunks `[N, O]`.
///
/// # Errors
/// Shape mismatches (internal).
pub fn forward(
    w: &[Tensor],
    x: &Tensor,
    m: &Tensor,
    filled: &Tensor,
) -> candle_core::Result<Tensor> {
    let c = attend(w, &embed(w, x)?, m, filled)?;
    head(&w[6..10], &c, x)
}

/// The training batch: every sample's memory as indices into the stacked embeddings of all
/// demonstration inputs (plus one zero row for empty slots).
pub struct Batch {
    /// `[R, I]` normalized inputs, demonstration after demonstration (history, then queries).
    inputs: Tensor,
    /// `[N · S]` row of each sample's slot (`R` = the zero row).
    slots: Tensor,
    /// `[N, S]` 1 for a filled slot.
    filled: Tensor,
    /// `[N]` row of each sample's present input.
    present: Tensor,
    /// `[N, O]` scaled targets.
    targets: Tensor,
    /// Slots per sample (`W + 1`).
    s: usize,
}

impl Batch {
    /// The samples of `demos` (each query after observing its packet, and the first also
    /// before, as in the recurrent family) for a window of `window` rows.
    ///
    /// # Errors
    /// Tensor construction (internal).
    pub fn new(
        demos: &[Demo],
        mean: &[f32],
        std: &[f32],
        scale: &[f32],
        window: usize,
    ) -> Result<Batch, LearnedError> {
        let dim = mean.len();
        let s = window + 1;
        let mut rows = Vec::new();
        let (mut seqs, mut offset) = (Vec::new(), 0usize);
        for d in demos {
            let len = d.history.len() + d.queries.len();
            for row in d.history.iter().chain(&d.queries) {
                rows.extend(
                    row.iter()
                        .take(dim)
                        .enumerate()
                        .map(|(k, v)| (v - mean[k]) / std[k]),
                );
            }
            seqs.push(offset);
            offset += len;
        }
        let zero = offset as u32;
        let (mut slots, mut filled, mut present, mut targets) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (d, &o) in demos.iter().zip(&seqs) {
            let len = d.history.len();
            let mut push = |observed: usize, at: usize, target: &[f32]| {
                // Anchor: the first observation; window: the last `window` observed, oldest
                // first, then empty slots.
                slots.push(if observed > 0 { o as u32 } else { zero });
                filled.push(if observed > 0 { 1.0f32 } else { 0.0 });
                let from = observed.saturating_sub(window);
                for j in 0..window {
                    let r = from + j;
                    slots.push(if r < observed { (o + r) as u32 } else { zero });
                    filled.push(if r < observed { 1.0 } else { 0.0 });
                }
                present.push((o + at) as u32);
                targets.extend(
                    target
                        .iter()
                        .enumerate()
                        .map(|(k, v)| v / scale[k % scale.len()]),
                );
            };
            for (q, target) in d.targets.iter().enumerate() {
                push(len + q + 1, len + q, target);
                if q == 0 {
                    push(len, len, target);
                }
            }
        }
        let n = present.len();
        let out = targets.len() / n.max(1);
        let dev = Device::Cpu;
        Ok(Batch {
            inputs: Tensor::from_vec(rows, (offset, dim), &dev)?,
            slots: Tensor::from_vec(slots, n * s, &dev)?,
            filled: Tensor::from_vec(filled, (n, s), &dev)?,
            present: Tensor::from_vec(present, n, &dev)?,
            targets: Tensor::from_vec(targets, (n, out), &dev)?,
            s,
        })
    }

    /// Mean squared error of the scaled actions under weights `w`.
    ///
    /// # Errors
    /// Shape mismatches (internal).
    pub fn loss(&self, w: &[Tensor]) -> candle_core::Result<Tensor> {
        let e = embed(w, &self.inputs)?;
        let d = e.dim(1)?;
        let e0 = Tensor::cat(&[&e, &Tensor::zeros((1, d), DType::F32, &Device::Cpu)?], 0)?;
        let n = self.present.dim(0)?;
        let m = e0.index_select(&self.slots, 0)?.reshape((n, self.s, d))?;
        let x = self.inputs.index_select(&self.present, 0)?;
        let ep = e.index_select(&self.present, 0)?;
        let c = attend(w, &ep, &m, &self.filled)?;
        let pred = head(&w[6..10], &c, &x)?;
        (pred - &self.targets)?.sqr()?.mean_all()
    }
}
