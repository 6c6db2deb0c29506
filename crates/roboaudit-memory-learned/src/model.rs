//! The networks' shared parts (sizes, weights, normalization, the action head) and the
//! recurrent family's GRU cell (PyTorch's `torch.nn.GRUCell` equations and weight layout, gates
//! in the order reset, update, new), whose head reads the hidden state and the present's input.
//! The anchor-window family's attention is in [`crate::anchor_window`].
//!
//! ```text
//! r  = σ(W_ir x + b_ir + W_hr h + b_hr)        z = σ(W_iz x + b_iz + W_hz h + b_hz)
//! n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
//! h' = (1 − z) ⊙ n + z ⊙ h
//! chunk = W_2 relu(W_1 [h ; x] + b_1) + b_2        (scaled by the action scale)
//! ```

use std::collections::HashMap;

use candle_core::{D, Device, Tensor, Var};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::{Family, LearnedConfig};
use crate::error::LearnedError;

/// Tensor names of the recurrent family, in the order [`Weights::vars`] lists them.
pub const NAMES: [&str; 8] = [
    "gru.weight_ih",
    "gru.weight_hh",
    "gru.bias_ih",
    "gru.bias_hh",
    "head.0.weight",
    "head.0.bias",
    "head.2.weight",
    "head.2.bias",
];
/// Name of the input mean (`[input]`), subtracted before the GRU and the head.
pub const INPUT_MEAN: &str = "input.mean";
/// Name of the input scale (`[input]`), dividing after the mean.
pub const INPUT_STD: &str = "input.std";
/// Name of the per-dimension action scale (`[ACTION_DIM]`): the head predicts `action / scale`.
pub const ACTION_SCALE: &str = "action.scale";

/// Sizes of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Input size `I`.
    pub input: usize,
    /// Memory width: hidden size `H` (recurrent) or embedding width `D` (anchor-window).
    pub hidden: usize,
    /// Head width `K`.
    pub head: usize,
    /// Output size (`chunk_len · ACTION_DIM`).
    pub output: usize,
    /// Window rows `W` (anchor-window only).
    pub window: usize,
}

impl Dims {
    /// The sizes `config` declares.
    pub fn of(config: &LearnedConfig) -> Dims {
        Dims {
            input: config.input_dim,
            hidden: config.train.hidden,
            head: config.train.head,
            output: config.train.chunk_len * roboaudit_memory_harness::ACTION_DIM,
            window: config.train.window,
        }
    }

    /// The shape of each tensor of [`names`]`(family)`, in that order.
    pub fn shapes(&self, family: Family) -> Vec<Vec<usize>> {
        let Dims {
            input: i,
            hidden: h,
            head: k,
            output: o,
            window: w,
        } = *self;
        match family {
            Family::Recurrent => vec![
                vec![3 * h, i],
                vec![3 * h, h],
                vec![3 * h],
                vec![3 * h],
                vec![k, h + i],
                vec![k],
                vec![o, k],
                vec![o],
            ],
            Family::AnchorWindow => vec![
                vec![h, i],
                vec![h],
                vec![w + 1, h],
                vec![h, h],
                vec![h, h],
                vec![h, h],
                vec![k, h + i],
                vec![k],
                vec![o, k],
                vec![o],
            ],
        }
    }

    /// Fan of each tensor (its initialization bound is `1/√fan`, PyTorch's default): `H` for
    /// the GRU, the layer's input size for every linear layer, `D` for the slot embeddings.
    fn fans(&self, family: Family) -> Vec<usize> {
        let (i, h, k) = (self.input, self.hidden, self.head);
        match family {
            Family::Recurrent => vec![h, h, h, h, h + i, h + i, k, k],
            Family::AnchorWindow => vec![i, i, h, h, h, h, h + i, h + i, k, k],
        }
    }
}

/// Tensor names of `family`, in the order [`Weights::tensors`] holds them.
pub fn names(family: Family) -> &'static [&'static str] {
    match family {
        Family::Recurrent => &NAMES,
        Family::AnchorWindow => &crate::anchor_window::NAMES,
    }
}

/// The trainable tensors, one per entry of [`NAMES`].
#[derive(Debug, Clone)]
pub struct Weights {
    /// Tensors in [`NAMES`] order.
    pub tensors: Vec<Tensor>,
}

fn sigmoid(x: &Tensor) -> candle_core::Result<Tensor> {
    // Written out so that autograd covers it whatever candle-nn's op set.
    (x.neg()?.exp()? + 1.0)?.recip()
}

/// One GRU step for a batch: `x` `[B, I]`, `h` `[B, H]` → `[B, H]`.
///
/// # Errors
/// Shape mismatches (internal).
pub fn gru_cell(w: &[Tensor], x: &Tensor, h: &Tensor) -> candle_core::Result<Tensor> {
    let hidden = h.dim(D::Minus1)?;
    let gi = x.matmul(&w[0].t()?)?.broadcast_add(&w[2])?;
    let gh = h.matmul(&w[1].t()?)?.broadcast_add(&w[3])?;
    let part = |t: &Tensor, k: usize| t.narrow(D::Minus1, k * hidden, hidden);
    let r = sigmoid(&(part(&gi, 0)? + part(&gh, 0)?)?)?;
    let z = sigmoid(&(part(&gi, 1)? + part(&gh, 1)?)?)?;
    let n = (part(&gi, 2)? + (r * part(&gh, 2)?)?)?.tanh()?;
    let one_minus_z = z.affine(-1.0, 1.0)?;
    (one_minus_z * n)? + (z * h)?
}

/// The action head shared by both families: `w` = `[head.0.weight, head.0.bias,
/// head.2.weight, head.2.bias]`; memory readout `h` `[N, H]` (hidden state or attention
/// context), present input `x` `[N, I]` → scaled actions `[N, O]`.
///
/// # Errors
/// Shape mismatches (internal).
pub fn head(w: &[Tensor], h: &Tensor, x: &Tensor) -> candle_core::Result<Tensor> {
    let hx = Tensor::cat(&[h, x], 1)?;
    let a = hx.matmul(&w[0].t()?)?.broadcast_add(&w[1])?.relu()?;
    a.matmul(&w[2].t()?)?.broadcast_add(&w[3])
}

impl Weights {
    /// PyTorch's default initialization, drawn from `rng` tensor after tensor in [`names`]
    /// order: every tensor uniform in `±1/√fan` ([`Dims::shapes`] and its fans).
    ///
    /// # Errors
    /// Tensor construction (internal).
    pub fn init(
        family: Family,
        dims: &Dims,
        rng: &mut ChaCha8Rng,
    ) -> Result<Weights, LearnedError> {
        let shapes = dims.shapes(family);
        let fans = dims.fans(family);
        let mut tensors = Vec::with_capacity(shapes.len());
        for (shape, fan) in shapes.iter().zip(fans) {
            let bound = 1.0 / (fan as f64).sqrt();
            let n: usize = shape.iter().product();
            let v: Vec<f32> = (0..n)
                .map(|_| ((rng.random::<f64>() * 2.0 - 1.0) * bound) as f32)
                .collect();
            tensors.push(Tensor::from_vec(v, shape.as_slice(), &Device::Cpu)?);
        }
        Ok(Weights { tensors })
    }

    /// Trainable variables initialized to these tensors.
    ///
    /// # Errors
    /// Tensor construction (internal).
    pub fn vars(&self) -> Result<Vec<Var>, LearnedError> {
        Ok(self
            .tensors
            .iter()
            .map(Var::from_tensor)
            .collect::<candle_core::Result<_>>()?)
    }

    /// The named tensors of a `family` checkpoint (for saving), normalization included.
    pub fn named(&self, family: Family, norm: &Norm) -> HashMap<String, Tensor> {
        let mut m: HashMap<String, Tensor> = names(family)
            .iter()
            .zip(&self.tensors)
            .map(|(n, t)| ((*n).to_owned(), t.clone()))
            .collect();
        m.insert(INPUT_MEAN.into(), norm.mean.clone());
        m.insert(INPUT_STD.into(), norm.std.clone());
        m.insert(ACTION_SCALE.into(), norm.action_scale.clone());
        m
    }
}

/// Fixed input normalization and action scale, stored with the weights.
#[derive(Debug, Clone)]
pub struct Norm {
    /// `[I]` mean of the demonstration inputs.
    pub mean: Tensor,
    /// `[I]` standard deviation, floored at 10⁻².
    pub std: Tensor,
    /// `[ACTION_DIM]` action scale.
    pub action_scale: Tensor,
}
