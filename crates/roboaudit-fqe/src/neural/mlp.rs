//! The Q network of neural FQE written out by hand: forward pass, explicit backward pass of the
//! Bellman MSE, and AdamW, on one flat parameter vector.
//!
//! The function is the one SPEC §3 and [`super`] describe: per-part, action and task embeddings,
//! ReLU, two dense ReLU layers of width `hidden`, the output head. The first dense layer is split
//! by input block, so the `M` target-action samples of a row share its input and task part. Why by
//! hand rather than candle: a gradient step is a dozen small products and twice as many element-wise
//! passes; candle allocates a tensor for each and records a graph, which cost as much as the
//! products themselves. Here every buffer is reused across steps, bias, ReLU and the mask of its
//! derivative ride the pass that reads the product, and the products are `gemm` calls on the
//! fit's own thread. `tests` check the gradient against candle's autograd and one AdamW step
//! against candle's optimizer.
//!
//! Parameter layout (the order of the initialization draws): per input part `i` `W (w_i × P_i)`,
//! `b (P_i)`; the action `W (da × A)`, `b (A)`; the task table `(tasks × T)`; then `W1 (C × H)`,
//! `b1`, `W2 (H × H)`, `b2`, `W3 (H × 1)`, `b3`, with `C = ΣP_i + A + T` rows of `W1` in the order
//! `[parts…, action, task]`. Matrices are row-major `(fan_in × fan_out)`.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::config::{NeuralFqeConfig, QHead};
use super::kernel::{View, matmul};

/// One input part of `x`: its columns, its embedding and where both live.
#[derive(Debug, Clone)]
struct Part {
    /// Columns of `x` it spans, from column `x_col`.
    width: usize,
    x_col: usize,
    /// Embedding width `P_i`.
    embed: usize,
    /// First column of its embedding in the per-row activation.
    col: usize,
    /// Offsets of its `width × P_i` weight and `P_i` bias in the flat vector.
    w: usize,
    b: usize,
}

/// Sizes of the network and the offsets of its parameters in the flat vector.
#[derive(Debug, Clone)]
pub(super) struct Mlp {
    /// The input parts, in the order of `x`'s columns.
    parts: Vec<Part>,
    dx: usize,
    da: usize,
    /// `ΣP_i`, action embedding `A`, task embedding `T`, hidden `H`.
    px: usize,
    ae: usize,
    te: usize,
    h: usize,
    head: QHead,
    wa: usize,
    ba: usize,
    table: usize,
    w1: usize,
    b1: usize,
    w2: usize,
    b2: usize,
    w3: usize,
    b3: usize,
    len: usize,
}

/// Reused buffers of a forward (and backward) pass over `rows` inputs and `m` samples each.
#[derive(Debug, Default)]
pub(super) struct Work {
    /// `rows × (ΣP_i + T)`: ReLU of the part embeddings then the task row.
    row_act: Vec<f32>,
    /// `rows × H`: the input and task part of the first dense pre-activation, with `b1`.
    pre_row: Vec<f32>,
    /// `rows·m × A`: ReLU of the action embedding.
    sample_act: Vec<f32>,
    /// `rows·m × H`: the two hidden activations.
    h1: Vec<f32>,
    h2: Vec<f32>,
    /// `rows·m`: the output `Q`.
    pub(super) q: Vec<f32>,
    // Backward: gradients of the pre-activations.
    dz: Vec<f32>,
    dh2: Vec<f32>,
    dh1: Vec<f32>,
    dsample: Vec<f32>,
    drow: Vec<f32>,
}

fn sized(v: &mut Vec<f32>, n: usize) -> &mut [f32] {
    v.resize(n, 0.0);
    &mut v[..n]
}

fn relu_bias(rows: &mut [f32], width: usize, bias: &[f32]) {
    for row in rows.chunks_exact_mut(width) {
        for (v, b) in row.iter_mut().zip(bias) {
            *v = (*v + b).max(0.0);
        }
    }
}

/// Column sums of a row-major `rows × width` matrix added to `out` (a bias gradient).
fn add_column_sums(m: &[f32], width: usize, out: &mut [f32]) {
    for row in m.chunks_exact(width) {
        for (o, v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
}

/// Zeroes `g` where the activation `act` is 0: the ReLU's derivative. An exactly zero
/// pre-activation (derivative 1 in candle, 0 here) has probability zero with continuous inputs.
/// A select rather than a conditional store, so that the loop compiles to vector compares.
fn relu_mask(g: &mut [f32], act: &[f32]) {
    for (g, a) in g.iter_mut().zip(act) {
        *g = if *a <= 0.0 { 0.0 } else { *g };
    }
}

impl Mlp {
    /// The network for inputs whose parts have `(columns, embedding width)` `parts`, `da`-d
    /// actions and `n_tasks` tasks, with the other widths of `c`.
    pub(super) fn new(
        parts: &[(usize, usize)],
        da: usize,
        n_tasks: usize,
        c: &NeuralFqeConfig,
    ) -> Self {
        let (ae, te, h) = (c.action_embedding, c.task_embedding, c.hidden);
        let px: usize = parts.iter().map(|p| p.1).sum();
        let mut len = 0;
        let mut take = |n: usize| {
            let at = len;
            len += n;
            at
        };
        let (mut x_col, mut col) = (0, 0);
        let parts: Vec<Part> = parts
            .iter()
            .map(|&(width, embed)| {
                let part = Part {
                    width,
                    x_col,
                    embed,
                    col,
                    w: take(width * embed),
                    b: take(embed),
                };
                x_col += width;
                col += embed;
                part
            })
            .collect();
        let wa = take(da * ae);
        let ba = take(ae);
        let table = take(n_tasks * te);
        let concat = px + ae + te;
        let w1 = take(concat * h);
        let b1 = take(h);
        let w2 = take(h * h);
        let b2 = take(h);
        let w3 = take(h);
        let b3 = take(1);
        Self {
            dx: parts.iter().map(|p| p.width).sum(),
            parts,
            da,
            px,
            ae,
            te,
            h,
            head: c.head,
            wa,
            ba,
            table,
            w1,
            b1,
            w2,
            b2,
            w3,
            b3,
            len,
        }
    }

    /// Parameters in the flat vector.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Seeded initial parameters: PyTorch's `nn.Linear` default `U(−1/√fan_in, 1/√fan_in)` for
    /// every weight and bias, the task table with fan-in 1; drawn in layout order.
    pub(super) fn init(&self, rng: &mut ChaCha8Rng) -> Vec<f32> {
        let mut theta = Vec::with_capacity(self.len);
        let mut draw = |n: usize, fan_in: usize| {
            let bound = (1.0 / (fan_in.max(1) as f64).sqrt()) as f32;
            theta.extend((0..n).map(|_| (rng.random::<f32>() * 2.0 - 1.0) * bound));
        };
        for p in &self.parts {
            draw(p.width * p.embed, p.width);
            draw(p.embed, p.width);
        }
        draw(self.da * self.ae, self.da);
        draw(self.ae, self.da);
        draw(self.table_rows() * self.te, 1);
        let concat = self.concat();
        for (fan_in, out) in [(concat, self.h), (self.h, self.h), (self.h, 1)] {
            draw(fan_in * out, fan_in);
            draw(out, fan_in);
        }
        theta
    }

    fn table_rows(&self) -> usize {
        (self.w1 - self.table) / self.te
    }

    fn concat(&self) -> usize {
        self.px + self.ae + self.te
    }

    /// Width of the per-row activation: the part embeddings then the task row.
    fn row_width(&self) -> usize {
        self.px + self.te
    }

    /// `Q(x_r, a_{r,j}, l_r)` into `w.q` (`rows·m`, by row then sample) for `rows` inputs `x`
    /// (`rows × dx`, standardized), tasks `task` and `m` actions per row `a` (`rows·m × da`).
    pub(super) fn forward(
        &self,
        theta: &[f32],
        x: &[f32],
        a: &[f32],
        task: &[u32],
        m: usize,
        w: &mut Work,
    ) {
        let rows = task.len();
        let (px, te, h, ae) = (self.px, self.te, self.h, self.ae);
        let rw = self.row_width();
        let row_act = sized(&mut w.row_act, rows * rw);
        for p in &self.parts {
            let (wi, pe) = (p.width, p.embed);
            matmul(
                rows,
                pe,
                wi,
                View {
                    data: &x[p.x_col..],
                    rs: self.dx,
                    cs: 1,
                },
                View::rows(&theta[p.w..p.w + wi * pe], pe),
                &mut row_act[p.col..],
                rw,
                false,
            );
        }
        for (r, t) in task.iter().enumerate() {
            let src = self.table + *t as usize * te;
            row_act[r * rw + px..(r + 1) * rw].copy_from_slice(&theta[src..src + te]);
        }
        for row in row_act.chunks_exact_mut(rw) {
            for p in &self.parts {
                let b = &theta[p.b..p.b + p.embed];
                for (v, b) in row[p.col..p.col + p.embed].iter_mut().zip(b) {
                    *v += b;
                }
            }
            for v in row.iter_mut() {
                *v = v.max(0.0);
            }
        }
        // Input and task part of the first dense layer (rows [0, ΣP_i) and [ΣP_i + A, C)).
        let pre_row = sized(&mut w.pre_row, rows * h);
        let w1_task = self.w1 + (px + ae) * h;
        matmul(
            rows,
            h,
            px,
            View::rows(row_act, rw),
            View::rows(&theta[self.w1..], h),
            pre_row,
            h,
            false,
        );
        matmul(
            rows,
            h,
            te,
            View::rows(&row_act[px..], rw),
            View::rows(&theta[w1_task..], h),
            pre_row,
            h,
            true,
        );
        for row in pre_row.chunks_exact_mut(h) {
            for (v, b) in row.iter_mut().zip(&theta[self.b1..self.b1 + h]) {
                *v += b;
            }
        }
        let n = rows * m;
        let sample_act = sized(&mut w.sample_act, n * ae);
        matmul(
            n,
            ae,
            self.da,
            View::rows(a, self.da),
            View::rows(&theta[self.wa..], ae),
            sample_act,
            ae,
            false,
        );
        relu_bias(sample_act, ae, &theta[self.ba..self.ba + ae]);
        let h1 = sized(&mut w.h1, n * h);
        matmul(
            n,
            h,
            ae,
            View::rows(sample_act, ae),
            View::rows(&theta[self.w1 + px * h..], h),
            h1,
            h,
            false,
        );
        for (r, block) in h1.chunks_exact_mut(m * h).enumerate() {
            let base = &pre_row[r * h..(r + 1) * h];
            for row in block.chunks_exact_mut(h) {
                for (v, b) in row.iter_mut().zip(base) {
                    *v = (*v + b).max(0.0);
                }
            }
        }
        let h2 = sized(&mut w.h2, n * h);
        matmul(
            n,
            h,
            h,
            View::rows(h1, h),
            View::rows(&theta[self.w2..], h),
            h2,
            h,
            false,
        );
        relu_bias(h2, h, &theta[self.b2..self.b2 + h]);
        let q = sized(&mut w.q, n);
        matmul(
            n,
            1,
            h,
            View::rows(h2, h),
            View::rows(&theta[self.w3..], 1),
            q,
            1,
            false,
        );
        let b3 = theta[self.b3];
        for v in q.iter_mut() {
            *v += b3;
            if self.head == QHead::Sigmoid {
                *v = 1.0 / (1.0 + (-*v).exp());
            }
        }
    }

    /// Mean Bellman MSE `mean_r (Q(x_r, a_r, l_r) − y_r)²` of one sample per row, its gradient
    /// added to `grad` (the layout of `theta`). Runs the forward pass itself.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn loss_grad(
        &self,
        theta: &[f32],
        x: &[f32],
        a: &[f32],
        task: &[u32],
        y: &[f32],
        grad: &mut [f32],
        w: &mut Work,
    ) -> f64 {
        self.forward(theta, x, a, task, 1, w);
        let rows = task.len();
        let (px, te, h, ae) = (self.px, self.te, self.h, self.ae);
        let rw = self.row_width();
        let scale = 2.0 / rows as f32;
        let dz = sized(&mut w.dz, rows);
        let mut loss = 0.0f64;
        for ((d, q), y) in dz.iter_mut().zip(&w.q).zip(y) {
            let e = q - y;
            loss += f64::from(e * e);
            *d = scale * e;
            if self.head == QHead::Sigmoid {
                *d *= q * (1.0 - q);
            }
            if d.abs() < MIN_ERROR_TERM {
                *d = 0.0;
            }
        }
        let loss = loss / rows as f64;
        // Output layer.
        matmul(
            h,
            1,
            rows,
            View::t(&w.h2, h),
            View::rows(dz, 1),
            &mut grad[self.w3..],
            1,
            true,
        );
        grad[self.b3] += dz.iter().sum::<f32>();
        let dh2 = sized(&mut w.dh2, rows * h);
        matmul(
            rows,
            h,
            1,
            View::rows(dz, 1),
            View::t(&theta[self.w3..self.w3 + h], 1),
            dh2,
            h,
            false,
        );
        relu_mask(dh2, &w.h2);
        // Second dense layer.
        matmul(
            h,
            h,
            rows,
            View::t(&w.h1, h),
            View::rows(dh2, h),
            &mut grad[self.w2..],
            h,
            true,
        );
        add_column_sums(dh2, h, &mut grad[self.b2..self.b2 + h]);
        let dh1 = sized(&mut w.dh1, rows * h);
        matmul(
            rows,
            h,
            h,
            View::rows(dh2, h),
            View::t(&theta[self.w2..self.w2 + h * h], h),
            dh1,
            h,
            false,
        );
        relu_mask(dh1, &w.h1);
        // First dense layer, by input block.
        let w1_act = self.w1 + px * h;
        let w1_task = self.w1 + (px + ae) * h;
        matmul(
            px,
            h,
            rows,
            View::t(&w.row_act, rw),
            View::rows(dh1, h),
            &mut grad[self.w1..],
            h,
            true,
        );
        matmul(
            ae,
            h,
            rows,
            View::t(&w.sample_act, ae),
            View::rows(dh1, h),
            &mut grad[w1_act..],
            h,
            true,
        );
        matmul(
            te,
            h,
            rows,
            View {
                data: &w.row_act[px..],
                rs: 1,
                cs: rw,
            },
            View::rows(dh1, h),
            &mut grad[w1_task..],
            h,
            true,
        );
        add_column_sums(dh1, h, &mut grad[self.b1..self.b1 + h]);
        // Action embedding.
        let dsample = sized(&mut w.dsample, rows * ae);
        matmul(
            rows,
            ae,
            h,
            View::rows(dh1, h),
            View::t(&theta[w1_act..w1_act + ae * h], h),
            dsample,
            ae,
            false,
        );
        relu_mask(dsample, &w.sample_act);
        matmul(
            self.da,
            ae,
            rows,
            View::t(a, self.da),
            View::rows(dsample, ae),
            &mut grad[self.wa..],
            ae,
            true,
        );
        add_column_sums(dsample, ae, &mut grad[self.ba..self.ba + ae]);
        // Part embeddings and the task table.
        let drow = sized(&mut w.drow, rows * rw);
        matmul(
            rows,
            px,
            h,
            View::rows(dh1, h),
            View::t(&theta[self.w1..self.w1 + px * h], h),
            drow,
            rw,
            false,
        );
        matmul(
            rows,
            te,
            h,
            View::rows(dh1, h),
            View::t(&theta[w1_task..w1_task + te * h], h),
            &mut drow[px..],
            rw,
            false,
        );
        relu_mask(drow, &w.row_act);
        for p in &self.parts {
            let (wi, pe, at) = (p.width, p.embed, p.col);
            matmul(
                wi,
                pe,
                rows,
                View {
                    data: &x[p.x_col..],
                    rs: 1,
                    cs: self.dx,
                },
                View {
                    data: &drow[at..],
                    rs: rw,
                    cs: 1,
                },
                &mut grad[p.w..],
                pe,
                true,
            );
            for row in drow.chunks_exact(rw) {
                for (g, v) in grad[p.b..p.b + pe].iter_mut().zip(&row[at..at + pe]) {
                    *g += v;
                }
            }
        }
        for (row, t) in drow.chunks_exact(rw).zip(task) {
            let dst = self.table + *t as usize * te;
            for (g, v) in grad[dst..dst + te].iter_mut().zip(&row[px..]) {
                *g += v;
            }
        }
        loss
    }
}

/// The smallest error term `∂L/∂z_r` a row passes back; a smaller one is 0. A logistic head
/// saturated toward 0 (a frame whose value the network puts near 0) passes back
/// `2/B · (q − y) · q(1 − q)`, a subnormal float once `q < 10⁻¹⁸`, and so is every product the
/// backward pass makes of it; each multiply with a subnormal operand takes a microcode assist.
/// On the Meta-World run about 15 of 256 rows were such after 2,000 steps, and they made a
/// gradient step up to twice as slow. The floor, 2²⁴ smallest normal floats (≈ 2·10⁻³¹), keeps
/// a row's terms normal after scaling by any weight above 2⁻²⁴. It changes no sum that another
/// row reaches with a term above 10⁻²³ (the floor is under one ulp of that), so only a gradient
/// element that every row of the batch leaves below 10⁻²³ can differ, and AdamW's ε = 10⁻⁸
/// turns such a gradient into a step under 10⁻¹⁵ times the learning rate.
const MIN_ERROR_TERM: f32 = f32::MIN_POSITIVE * 16_777_216.0;

/// `x`, or 0 where `x` is subnormal. A parameter whose gradient stays 0 (a dead ReLU unit's) has
/// its first moment shrink by β₁ = 0.9 a step into subnormal floats within ~700 steps, where every
/// multiply takes a microcode assist: on the Meta-World run that made the AdamW pass a quarter of
/// a fit's time. A subnormal moment moves its parameter by less than 1e-30.
fn flush(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE { 0.0 } else { x }
}

/// AdamW as candle-nn 0.11's `AdamW` computes it (β₁ 0.9, β₂ 0.999, ε 1e-8, decoupled weight
/// decay), element-wise over the flat parameter vector, in f32 with the same constants.
#[derive(Debug)]
pub(super) struct AdamW {
    m: Vec<f32>,
    v: Vec<f32>,
    t: i32,
    weight_decay: f64,
}

impl AdamW {
    /// Zero moments for `len` parameters.
    pub(super) fn new(len: usize, weight_decay: f64) -> Self {
        Self {
            m: vec![0.0; len],
            v: vec![0.0; len],
            t: 0,
            weight_decay,
        }
    }

    /// One step at learning rate `lr` with gradient `grad`.
    pub(super) fn step(&mut self, theta: &mut [f32], grad: &[f32], lr: f64) {
        let (beta1, beta2, eps) = (0.9f64, 0.999f64, 1e-8f64);
        self.t += 1;
        let scale_m = (1.0 / (1.0 - beta1.powi(self.t))) as f32;
        let scale_v = (1.0 / (1.0 - beta2.powi(self.t))) as f32;
        let decay = (1.0 - lr * self.weight_decay) as f32;
        let (b1, c1) = (beta1 as f32, (1.0 - beta1) as f32);
        let (b2, c2) = (beta2 as f32, (1.0 - beta2) as f32);
        let (eps, lr) = (eps as f32, lr as f32);
        for (((p, g), m), v) in theta.iter_mut().zip(grad).zip(&mut self.m).zip(&mut self.v) {
            *m = flush(*m * b1 + g * c1);
            *v = flush(*v * b2 + (g * g) * c2);
            let m_hat = *m * scale_m;
            let v_hat = *v * scale_v;
            *p = *p * decay - (m_hat / (v_hat.sqrt() + eps)) * lr;
        }
    }
}
