//! Neural FQE (SPEC.md §3, seed 003 §3.4) with candle on the CPU.
//!
//! `Q(x, a, l)`: each input part of `x` (frozen image features, proprioception, …) and the action
//! get their own learned linear embedding, the task its embedding row; the concatenation goes
//! through two ReLU layers of width `hidden` to a scalar. Training minimizes the MSE to the Bellman
//! target `y = r_t + γ (1 − done_t) mean_j Q_θ̄(x_{t+1}, a'_j, l)` over uniformly drawn
//! mini-batches, with the target network `θ̄` copied from `θ` every `target_update_every` steps (or
//! moved by a Polyak average with rate `target_tau` every step) and
//! the learning rate decayed linearly to `final_lr_fraction × learning_rate`. The estimate is
//! `V̂(π, l) = mean_{i ∈ l} mean_j Q_θ(x_0^i, a_j, l)`. Inputs and actions are standardized with the
//! dataset's per-column mean and deviation. Every random draw comes from `seed`.

use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::inputs::{FqeInputs, TargetActions};
use crate::linalg::column_stats;
use crate::{FqeError, TaskEstimate};

/// Neural FQE settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeuralFqeConfig {
    /// Discount `γ` in `[0, 1]`.
    pub gamma: f64,
    /// Gradient steps.
    pub steps: usize,
    /// Transitions per mini-batch.
    pub batch_size: usize,
    /// Width of the hidden layers.
    pub hidden: usize,
    /// Embedding width of each input part.
    pub part_embedding: usize,
    /// Embedding width of the action.
    pub action_embedding: usize,
    /// Embedding width of the task.
    pub task_embedding: usize,
    /// AdamW learning rate at step 0.
    pub learning_rate: f64,
    /// Learning rate at the last step as a fraction of `learning_rate` (linear decay), in `(0, 1]`.
    pub final_lr_fraction: f64,
    /// AdamW decoupled weight decay.
    pub weight_decay: f64,
    /// Target network copy period `N` in steps (used when `target_tau` is 0). The bootstrapped
    /// target is used as SPEC §3 defines it, not clipped to `[0, 1]`; estimates outside that
    /// range are reported in [`crate::FqeReport::notes`] instead.
    pub target_update_every: usize,
    /// Polyak rate `τ ∈ [0, 1]`: when > 0 the target network moves every step,
    /// `θ̄ ← (1 − τ) θ̄ + τ θ`, instead of being copied every `target_update_every` steps. Absent in
    /// older reports: 0.
    #[serde(default)]
    pub target_tau: f64,
    /// Learning-curve point period in steps.
    pub curve_every: usize,
    /// Seed of initialization and mini-batch draws.
    pub seed: u64,
}

impl Default for NeuralFqeConfig {
    fn default() -> Self {
        Self {
            gamma: 0.99,
            steps: 20_000,
            batch_size: 256,
            hidden: 256,
            part_embedding: 64,
            action_embedding: 32,
            task_embedding: 16,
            learning_rate: 1e-3,
            final_lr_fraction: 0.05,
            weight_decay: 1e-4,
            target_update_every: 100,
            target_tau: 0.0,
            curve_every: 500,
            seed: 0,
        }
    }
}

impl NeuralFqeConfig {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`FqeError::InvalidConfig`] for `γ ∉ [0, 1]`, a zero size or period, a non-positive
    /// learning rate, or `final_lr_fraction ∉ (0, 1]`.
    pub fn validate(&self) -> Result<(), FqeError> {
        let bad = |m: &str| Err(FqeError::InvalidConfig(m.to_owned()));
        if !(0.0..=1.0).contains(&self.gamma) {
            return bad("gamma must be in [0, 1]");
        }
        if self.steps == 0
            || self.batch_size == 0
            || self.hidden == 0
            || self.part_embedding == 0
            || self.action_embedding == 0
            || self.task_embedding == 0
            || self.target_update_every == 0
            || self.curve_every == 0
        {
            return bad("steps, sizes and periods must be > 0");
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad("learning_rate must be > 0");
        }
        if !(self.final_lr_fraction > 0.0 && self.final_lr_fraction <= 1.0) {
            return bad("final_lr_fraction must be in (0, 1]");
        }
        if !(0.0..=1.0).contains(&self.target_tau) {
            return bad("target_tau must be in [0, 1]");
        }
        if self.weight_decay.is_nan() || self.weight_decay < 0.0 {
            return bad("weight_decay must be >= 0");
        }
        Ok(())
    }
}

/// One learning-curve point.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CurvePoint {
    /// Steps done.
    pub step: usize,
    /// Mean Bellman MSE over the steps since the previous point.
    pub loss: f64,
    /// Mean over tasks of the current `V̂(π, l)`.
    pub mean_value: f64,
}

/// Result of neural FQE for one target policy and seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NeuralFit {
    /// `V̂(π, l)` per task (`None` for a task without episodes).
    pub tasks: Vec<TaskEstimate>,
    /// Learning curve, one point every `curve_every` steps and at the end.
    pub curve: Vec<CurvePoint>,
    /// The seed used.
    pub seed: u64,
}

/// Parameter layout: per part (W, b), action (W, b), task table, then three dense layers (W, b).
struct Net {
    part_widths: Vec<usize>,
}

impl Net {
    fn forward(
        &self,
        p: &[Tensor],
        x: &Tensor,
        a: &Tensor,
        task: &Tensor,
    ) -> Result<Tensor, FqeError> {
        let mut pieces = Vec::with_capacity(self.part_widths.len() + 2);
        let mut offset = 0;
        for (i, w) in self.part_widths.iter().enumerate() {
            let xi = x.narrow(1, offset, *w)?;
            pieces.push(xi.matmul(&p[2 * i])?.broadcast_add(&p[2 * i + 1])?);
            offset += w;
        }
        let k = 2 * self.part_widths.len();
        pieces.push(a.matmul(&p[k])?.broadcast_add(&p[k + 1])?);
        pieces.push(p[k + 2].index_select(task, 0)?);
        let h = Tensor::cat(&pieces, 1)?.relu()?;
        let h = h.matmul(&p[k + 3])?.broadcast_add(&p[k + 4])?.relu()?;
        let h = h.matmul(&p[k + 5])?.broadcast_add(&p[k + 6])?.relu()?;
        Ok(h.matmul(&p[k + 7])?.broadcast_add(&p[k + 8])?.squeeze(1)?)
    }
}

/// PyTorch's default `nn.Linear` initialization, `U(−1/√fan_in, 1/√fan_in)`, from a seeded stream.
/// A `rows × cols` weight, or with `rows == 0` a bias vector of `cols`.
fn uniform_var(
    rng: &mut ChaCha8Rng,
    rows: usize,
    cols: usize,
    fan_in: usize,
) -> Result<Var, FqeError> {
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
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

fn init_params(
    rng: &mut ChaCha8Rng,
    part_widths: &[usize],
    action_dim: usize,
    n_tasks: usize,
    c: &NeuralFqeConfig,
) -> Result<Vec<Var>, FqeError> {
    let mut vars = Vec::new();
    for w in part_widths {
        vars.push(uniform_var(rng, *w, c.part_embedding, *w)?);
        vars.push(uniform_var(rng, 0, c.part_embedding, *w)?);
    }
    vars.push(uniform_var(
        rng,
        action_dim,
        c.action_embedding,
        action_dim,
    )?);
    vars.push(uniform_var(rng, 0, c.action_embedding, action_dim)?);
    vars.push(uniform_var(rng, n_tasks, c.task_embedding, 1)?);
    let concat = part_widths.len() * c.part_embedding + c.action_embedding + c.task_embedding;
    for (fan_in, out) in [(concat, c.hidden), (c.hidden, c.hidden), (c.hidden, 1)] {
        vars.push(uniform_var(rng, fan_in, out, fan_in)?);
        vars.push(uniform_var(rng, 0, out, fan_in)?);
    }
    Ok(vars)
}

/// Standardized copies of inputs, actions and target actions.
struct Prepared {
    dx: usize,
    da: usize,
    m: usize,
    x: Vec<f32>,
    a: Vec<f32>,
    target: Vec<f32>,
    task: Vec<u32>,
    reward: Vec<f32>,
    done: Vec<bool>,
}

#[allow(clippy::cast_possible_truncation)]
fn prepare(inputs: &FqeInputs, target: &TargetActions) -> Result<Prepared, FqeError> {
    let dx = inputs.input_dim();
    let n = inputs.n_frames();
    let mut x = Vec::with_capacity(n * dx);
    for k in 0..n {
        inputs.push_input(k, &mut x);
    }
    let (xm, xs) = column_stats(&x, dx);
    for row in x.chunks_exact_mut(dx) {
        for (j, v) in row.iter_mut().enumerate() {
            *v = ((f64::from(*v) - xm[j]) / xs[j]) as f32;
        }
    }
    let da = inputs.action_dim;
    let (am, asd) = column_stats(&inputs.actions, da);
    let z = |values: &[f32]| -> Vec<f32> {
        values
            .chunks_exact(da)
            .flat_map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(j, v)| ((f64::from(*v) - am[j]) / asd[j]) as f32)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (done, episode_of) = inputs.terminal_flags();
    let task = episode_of
        .iter()
        .map(|e| u32::try_from(inputs.episodes[*e].task))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| FqeError::InvalidInputs("too many tasks".into()))?;
    Ok(Prepared {
        dx,
        da,
        m: target.samples,
        x,
        a: z(&inputs.actions),
        target: z(&target.values),
        task,
        reward: inputs.rewards(),
        done,
    })
}

/// `(x, a', task)` tensors for `rows`, each repeated over the `M` target-action samples.
fn target_inputs(p: &Prepared, rows: &[usize]) -> Result<(Tensor, Tensor, Tensor), FqeError> {
    let (dx, da, m) = (p.dx, p.da, p.m);
    let mut x = Vec::with_capacity(rows.len() * m * dx);
    let mut a = Vec::with_capacity(rows.len() * m * da);
    let mut t = Vec::with_capacity(rows.len() * m);
    for &k in rows {
        for j in 0..m {
            x.extend_from_slice(&p.x[k * dx..(k + 1) * dx]);
            a.extend_from_slice(&p.target[(k * m + j) * da..(k * m + j + 1) * da]);
            t.push(p.task[k]);
        }
    }
    let n = rows.len() * m;
    Ok((
        Tensor::from_vec(x, (n, dx), &Device::Cpu)?,
        Tensor::from_vec(a, (n, da), &Device::Cpu)?,
        Tensor::from_vec(t, n, &Device::Cpu)?,
    ))
}

/// `mean_j Q(x_k, a'_j, l)` for each of `rows`, computed with parameters `params`.
fn mean_q(
    net: &Net,
    params: &[Tensor],
    p: &Prepared,
    rows: &[usize],
) -> Result<Vec<f32>, FqeError> {
    let mut out = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(1024) {
        let (x, a, t) = target_inputs(p, chunk)?;
        let q = net
            .forward(params, &x, &a, &t)?
            .reshape((chunk.len(), p.m))?
            .mean(D::Minus1)?;
        out.extend(q.to_vec1::<f32>()?);
    }
    Ok(out)
}

fn task_values(
    net: &Net,
    params: &[Tensor],
    p: &Prepared,
    inputs: &FqeInputs,
) -> Result<Vec<TaskEstimate>, FqeError> {
    (0..inputs.tasks.len())
        .map(|l| {
            let initial = inputs.initial_frames(l);
            if initial.is_empty() {
                return Ok(TaskEstimate {
                    task: l,
                    value: None,
                });
            }
            let q = mean_q(net, params, p, &initial)?;
            #[allow(clippy::cast_precision_loss)]
            let value = q.iter().map(|v| f64::from(*v)).sum::<f64>() / q.len() as f64;
            Ok(TaskEstimate {
                task: l,
                value: Some(value),
            })
        })
        .collect()
}

fn snapshot(vars: &[Var]) -> Result<Vec<Tensor>, FqeError> {
    Ok(vars
        .iter()
        .map(|v| v.as_tensor().copy())
        .collect::<Result<Vec<_>, _>>()?)
}

/// `(1 − τ) θ̄ + τ θ`, detached from the graph.
fn polyak(target: &[Tensor], vars: &[Var], tau: f64) -> Result<Vec<Tensor>, FqeError> {
    target
        .iter()
        .zip(vars)
        .map(|(t, v)| {
            let online = v.as_tensor().detach();
            Ok(((t * (1.0 - tau))? + (online * tau)?)?.detach())
        })
        .collect()
}

/// Trains neural FQE for one target policy and returns `V̂(π, l)` per task and the learning curve.
///
/// # Errors
/// [`FqeError::InvalidConfig`]/[`FqeError::InvalidInputs`] from validation; [`FqeError::Candle`]
/// from the tensor library; [`FqeError::Numerical`] when the loss becomes non-finite.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
pub fn fit_neural(
    inputs: &FqeInputs,
    target: &TargetActions,
    config: &NeuralFqeConfig,
) -> Result<NeuralFit, FqeError> {
    fit_neural_with_progress(inputs, target, config, &|_| {})
}

/// Gradient steps between two calls of the progress callback of [`fit_neural_with_progress`].
pub const PROGRESS_EVERY: usize = 50;

/// [`fit_neural`], calling `on_steps(k)` after every [`PROGRESS_EVERY`] gradient steps (and with
/// the remainder at the end), so the calls sum to `config.steps`. The callback may be called from
/// a rayon worker: it must be `Sync`. It does not change the fit.
///
/// # Errors
/// As [`fit_neural`].
pub fn fit_neural_with_progress(
    inputs: &FqeInputs,
    target: &TargetActions,
    config: &NeuralFqeConfig,
    on_steps: &(dyn Fn(usize) + Sync),
) -> Result<NeuralFit, FqeError> {
    config.validate()?;
    inputs.validate()?;
    inputs.validate_target(target)?;
    let p = prepare(inputs, target)?;
    let net = Net {
        part_widths: inputs.parts.iter().map(|q| q.width).collect(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let vars = init_params(&mut rng, &net.part_widths, p.da, inputs.tasks.len(), config)?;
    let mut opt = AdamW::new(
        vars.clone(),
        ParamsAdamW {
            lr: config.learning_rate,
            weight_decay: config.weight_decay,
            ..ParamsAdamW::default()
        },
    )?;
    let mut target_params = snapshot(&vars)?;
    let n = inputs.n_frames();
    let gamma = config.gamma as f32;
    let mut curve = Vec::new();
    let mut loss_sum = 0.0;
    let mut loss_count = 0usize;
    let b = config.batch_size;
    for step in 0..config.steps {
        let frac = step as f64 / config.steps as f64;
        opt.set_learning_rate(
            config.learning_rate * (1.0 - frac * (1.0 - config.final_lr_fraction)),
        );
        let rows: Vec<usize> = (0..b).map(|_| rng.random_range(0..n)).collect();
        // Terminal rows query their own frame; the (1 − done) factor zeroes that term.
        let next: Vec<usize> = rows
            .iter()
            .map(|&k| if p.done[k] { k } else { k + 1 })
            .collect();
        let q_next = mean_q(&net, &target_params, &p, &next)?;
        let y: Vec<f32> = rows
            .iter()
            .zip(&q_next)
            .map(|(&k, q)| p.reward[k] + if p.done[k] { 0.0 } else { gamma * q })
            .collect();
        let mut xb = Vec::with_capacity(b * p.dx);
        let mut ab = Vec::with_capacity(b * p.da);
        let mut tb = Vec::with_capacity(b);
        for &k in &rows {
            xb.extend_from_slice(&p.x[k * p.dx..(k + 1) * p.dx]);
            ab.extend_from_slice(&p.a[k * p.da..(k + 1) * p.da]);
            tb.push(p.task[k]);
        }
        let online: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
        let q = net.forward(
            &online,
            &Tensor::from_vec(xb, (b, p.dx), &Device::Cpu)?,
            &Tensor::from_vec(ab, (b, p.da), &Device::Cpu)?,
            &Tensor::from_vec(tb, b, &Device::Cpu)?,
        )?;
        let y = Tensor::from_vec(y, b, &Device::Cpu)?;
        let loss = candle_nn::loss::mse(&q, &y)?;
        let value = f64::from(loss.to_dtype(DType::F32)?.to_scalar::<f32>()?);
        if !value.is_finite() {
            return Err(FqeError::Numerical(format!(
                "neural FQE loss became non-finite at step {step}"
            )));
        }
        loss_sum += value;
        loss_count += 1;
        opt.backward_step(&loss)?;
        if config.target_tau > 0.0 {
            target_params = polyak(&target_params, &vars, config.target_tau)?;
        } else if (step + 1) % config.target_update_every == 0 {
            target_params = snapshot(&vars)?;
        }
        if (step + 1).is_multiple_of(PROGRESS_EVERY) {
            on_steps(PROGRESS_EVERY);
        } else if step + 1 == config.steps {
            on_steps(config.steps % PROGRESS_EVERY);
        }
        if (step + 1) % config.curve_every == 0 || step + 1 == config.steps {
            let online: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
            let values = task_values(&net, &online, &p, inputs)?;
            let known: Vec<f64> = values.iter().filter_map(|t| t.value).collect();
            curve.push(CurvePoint {
                step: step + 1,
                loss: loss_sum / loss_count.max(1) as f64,
                mean_value: known.iter().sum::<f64>() / known.len().max(1) as f64,
            });
            loss_sum = 0.0;
            loss_count = 0;
        }
    }
    let online: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
    Ok(NeuralFit {
        tasks: task_values(&net, &online, &p, inputs)?,
        curve,
        seed: config.seed,
    })
}
