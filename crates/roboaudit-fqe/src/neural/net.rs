//! The Q network of neural FQE and its parameters.
//!
//! `Q(x, a, l)`: each input part of `x` and the action get a learned linear embedding, the task an
//! embedding row; the concatenation goes through ReLU, two dense ReLU layers of width `hidden` and
//! the output head. The Bellman target needs `Q(x_{t+1}, a'_j, l)` for `M` action samples of the
//! same input: the first dense layer is split by its input blocks so that the input and task part
//! of its pre-activation is computed once per row and only the action part once per sample — the
//! same function as concatenating a copy of the row for every sample, at a fraction of the cost.

use candle_core::{Device, Tensor, Var};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::config::{NeuralFqeConfig, QHead};
use crate::FqeError;

/// Shapes of the network. Parameter layout (the order of [`Net::init`]'s vector): per input part
/// `(W, b)`, the action `(W, b)`, the task table, then three dense layers `(W, b)`.
pub(super) struct Net {
    /// `(columns, embedding width)` of each input part.
    parts: Vec<(usize, usize)>,
    action_embedding: usize,
    task_embedding: usize,
    hidden: usize,
    head: QHead,
}

/// PyTorch's default `nn.Linear` initialization, `U(−1/√fan_in, 1/√fan_in)`, from a seeded stream.
/// A `rows × cols` weight, or with `rows == 0` a bias vector of `cols`.
fn uniform_var(
    rng: &mut ChaCha8Rng,
    rows: usize,
    cols: usize,
    fan_in: usize,
) -> Result<Var, FqeError> {
    let bound = (1.0 / (fan_in.max(1) as f64).sqrt()) as f32;
    let v: Vec<f32> = (0..rows.max(1) * cols)
        .map(|_| (rng.random::<f32>() * 2.0 - 1.0) * bound)
        .collect();
    let shape: Vec<usize> = if rows == 0 {
        vec![cols]
    } else {
        vec![rows, cols]
    };
    Ok(Var::from_vec(v, shape, &Device::Cpu)?)
}

impl Net {
    pub(super) fn new(parts: Vec<(usize, usize)>, c: &NeuralFqeConfig) -> Self {
        Self {
            parts,
            action_embedding: c.action_embedding,
            task_embedding: c.task_embedding,
            hidden: c.hidden,
            head: c.head,
        }
    }

    /// Width of the concatenated part embeddings.
    fn embedded(&self) -> usize {
        self.parts.iter().map(|p| p.1).sum()
    }

    /// Seeded initial parameters (see the layout on [`Net`]).
    pub(super) fn init(
        &self,
        rng: &mut ChaCha8Rng,
        action_dim: usize,
        n_tasks: usize,
    ) -> Result<Vec<Var>, FqeError> {
        let mut vars = Vec::new();
        for &(w, pe) in &self.parts {
            vars.push(uniform_var(rng, w, pe, w)?);
            vars.push(uniform_var(rng, 0, pe, w)?);
        }
        vars.push(uniform_var(
            rng,
            action_dim,
            self.action_embedding,
            action_dim,
        )?);
        vars.push(uniform_var(rng, 0, self.action_embedding, action_dim)?);
        vars.push(uniform_var(rng, n_tasks, self.task_embedding, 1)?);
        let concat = self.embedded() + self.action_embedding + self.task_embedding;
        for (fan_in, out) in [
            (concat, self.hidden),
            (self.hidden, self.hidden),
            (self.hidden, 1),
        ] {
            vars.push(uniform_var(rng, fan_in, out, fan_in)?);
            vars.push(uniform_var(rng, 0, out, fan_in)?);
        }
        Ok(vars)
    }

    /// `Q(x_r, a_{r,j}, l_r)` for `rows` inputs `x` (`rows × dx`), tasks `task` (`rows`) and `m`
    /// actions per row `a` (`rows·m × da`, row-major by row then sample): a `rows × m` tensor.
    pub(super) fn forward(
        &self,
        p: &[Tensor],
        x: &Tensor,
        a: &Tensor,
        task: &Tensor,
        m: usize,
    ) -> Result<Tensor, FqeError> {
        let rows = x.dim(0)?;
        let parts = self.parts.len();
        let mut row_pieces = Vec::with_capacity(parts + 1);
        let mut offset = 0;
        for (i, (w, _)) in self.parts.iter().enumerate() {
            let xi = x.narrow(1, offset, *w)?;
            row_pieces.push(xi.matmul(&p[2 * i])?.broadcast_add(&p[2 * i + 1])?);
            offset += w;
        }
        let k = 2 * parts;
        row_pieces.push(p[k + 2].index_select(task, 0)?);
        let row_act = Tensor::cat(&row_pieces, 1)?.relu()?;
        let sample_act = a.matmul(&p[k])?.broadcast_add(&p[k + 1])?.relu()?;
        // The first dense layer's rows follow the concatenation [parts…, action, task].
        let w1 = &p[k + 3];
        let px = self.embedded();
        let w1_row = Tensor::cat(
            &[
                w1.narrow(0, 0, px)?,
                w1.narrow(0, px + self.action_embedding, self.task_embedding)?,
            ],
            0,
        )?;
        let w1_action = w1.narrow(0, px, self.action_embedding)?;
        let pre_row = row_act.matmul(&w1_row)?.broadcast_add(&p[k + 4])?;
        let pre = sample_act
            .matmul(&w1_action)?
            .reshape((rows, m, self.hidden))?
            .broadcast_add(&pre_row.unsqueeze(1)?)?;
        let h = pre.relu()?.reshape((rows * m, self.hidden))?;
        let h = h.matmul(&p[k + 5])?.broadcast_add(&p[k + 6])?.relu()?;
        let z = h
            .matmul(&p[k + 7])?
            .broadcast_add(&p[k + 8])?
            .reshape((rows, m))?;
        Ok(match self.head {
            QHead::Linear => z,
            QHead::Sigmoid => candle_nn::ops::sigmoid(&z)?,
        })
    }
}
