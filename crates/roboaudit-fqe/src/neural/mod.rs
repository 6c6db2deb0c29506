//! Neural FQE (SPEC.md §3, seed 003 §3.4) with candle on the CPU.
//!
//! `Q(x, a, l)`: each input part of `x` (frozen image features, proprioception, …) and the action
//! get their own learned linear embedding, the task its embedding row; the concatenation goes
//! through two ReLU layers of width `hidden` to a scalar, through a logistic output by default
//! ([`QHead`]). Training minimizes the MSE to the Bellman
//! target `y = r_t + γ (1 − done_t) mean_j Q_θ̄(x_{t+1}, a'_j, l)` over uniformly drawn
//! mini-batches, with the target network `θ̄` copied from `θ` every `target_update_every` steps (or
//! moved by a Polyak average with rate `target_tau` every step) and
//! the learning rate decayed linearly to `final_lr_fraction × learning_rate`. The estimate is
//! `V̂(π, l) = mean_{i ∈ l} mean_j Q_θ(x_0^i, a_j, l)`. Inputs and actions are standardized with the
//! dataset's per-column mean and deviation; target actions are first clipped to the range the
//! dataset's actions span in each dimension ([`FqeInputs::action_range`]), because the network
//! has seen nothing outside it (an action dimension the data barely moves would otherwise reach
//! the network at a hundred deviations; the coverage diagnostics flag such policies). Every random
//! draw comes from `seed`.

mod config;
mod net;

pub use config::{NeuralFqeConfig, QHead};

use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::inputs::{FqeInputs, TargetActions};
use crate::linalg::column_stats;
use crate::{FqeError, TaskEstimate};
use net::Net;

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
    let (lo, hi) = inputs.action_range();
    let z = |values: &[f32]| -> Vec<f32> {
        values
            .chunks_exact(da)
            .flat_map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(j, v)| ((f64::from(v.max(lo[j]).min(hi[j])) - am[j]) / asd[j]) as f32)
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

/// `(x, a', task)` tensors for `rows`: one input and task per row, its `M` target-action
/// samples (`rows·M × da`).
fn target_inputs(p: &Prepared, rows: &[usize]) -> Result<(Tensor, Tensor, Tensor), FqeError> {
    let (dx, da, m) = (p.dx, p.da, p.m);
    let mut x = Vec::with_capacity(rows.len() * dx);
    let mut a = Vec::with_capacity(rows.len() * m * da);
    let mut t = Vec::with_capacity(rows.len());
    for &k in rows {
        x.extend_from_slice(&p.x[k * dx..(k + 1) * dx]);
        a.extend_from_slice(&p.target[k * m * da..(k + 1) * m * da]);
        t.push(p.task[k]);
    }
    let n = rows.len();
    Ok((
        Tensor::from_vec(x, (n, dx), &Device::Cpu)?,
        Tensor::from_vec(a, (n * m, da), &Device::Cpu)?,
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
        let q = net.forward(params, &x, &a, &t, p.m)?.mean(D::Minus1)?;
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
    // candle splits every matrix product and element-wise op over rayon's threads. For a network
    // this small the splitting costs more than it saves, and inside `fit_all`, which already runs
    // one fit per thread, it nests pools: each fit runs on a pool of its own single thread.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| {
            FqeError::Candle(candle_core::Error::Msg(format!(
                "cannot start the training thread: {e}"
            )))
        })?;
    pool.install(|| train(inputs, target, config, on_steps))
}

fn train(
    inputs: &FqeInputs,
    target: &TargetActions,
    config: &NeuralFqeConfig,
    on_steps: &(dyn Fn(usize) + Sync),
) -> Result<NeuralFit, FqeError> {
    let p = prepare(inputs, target)?;
    let net = Net::new(inputs.parts.iter().map(|q| q.width).collect(), config);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let vars = net.init(&mut rng, p.da, inputs.tasks.len())?;
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
        let q = net
            .forward(
                &online,
                &Tensor::from_vec(xb, (b, p.dx), &Device::Cpu)?,
                &Tensor::from_vec(ab, (b, p.da), &Device::Cpu)?,
                &Tensor::from_vec(tb, b, &Device::Cpu)?,
                1,
            )?
            .squeeze(1)?;
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
