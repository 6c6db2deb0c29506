//! Neural FQE (SPEC.md §3, seed 003 §3.4) on the CPU: a hand-written network ([`mlp`]) that the
//! tests check against candle.
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
//! draw comes from `seed`. Within one target-network period each frame's
//! `mean_j Q_θ̄(x_{t+1}, a'_j, l)` is computed once and reused when the frame is drawn again
//! ([`target_cache`]).

mod auto;
mod config;
mod kernel;
mod mlp;
#[cfg(test)]
mod net;
mod resample;
mod target_cache;
#[cfg(test)]
mod tests;

pub(crate) use auto::target_period_note;
pub use auto::{
    CAP_BACKUPS, MIN_TARGET_PERIOD, SETTLE_ABS, SETTLE_REL, SETTLE_WINDOW, target_period,
};
pub use config::{NeuralFqeConfig, QHead};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::inputs::{FqeInputs, TargetActions};
use crate::linalg::column_stats;
use crate::{FqeError, TaskEstimate};
use mlp::{AdamW, Mlp, Work};
use resample::Resample;
use target_cache::TargetCache;

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
    /// Gradient steps made: `config.steps`, or fewer when `auto_steps` stopped the fit.
    pub steps: usize,
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

/// Gathered inputs of `rows`: input rows, tasks, and `m` actions per row from `actions`
/// (`da·m` values per frame).
#[derive(Default)]
struct Batch {
    x: Vec<f32>,
    a: Vec<f32>,
    task: Vec<u32>,
}

impl Batch {
    fn gather(&mut self, p: &Prepared, rows: &[usize], actions: &[f32], m: usize) {
        let (dx, da) = (p.dx, p.da);
        self.x.clear();
        self.a.clear();
        self.task.clear();
        for &k in rows {
            self.x.extend_from_slice(&p.x[k * dx..(k + 1) * dx]);
            self.a
                .extend_from_slice(&actions[k * m * da..(k + 1) * m * da]);
            self.task.push(p.task[k]);
        }
    }
}

/// `mean_j Q(x_k, a'_j, l)` for each of `rows`, with parameters `theta`, appended to `out`.
fn mean_q(
    net: &Mlp,
    theta: &[f32],
    p: &Prepared,
    rows: &[usize],
    batch: &mut Batch,
    work: &mut Work,
    out: &mut Vec<f32>,
) {
    let inv_m = 1.0 / p.m as f32;
    for chunk in rows.chunks(1024) {
        batch.gather(p, chunk, &p.target, p.m);
        net.forward(theta, &batch.x, &batch.a, &batch.task, p.m, work);
        out.extend(
            work.q
                .chunks_exact(p.m)
                .map(|s| s.iter().sum::<f32>() * inv_m),
        );
    }
}

fn task_values(
    net: &Mlp,
    theta: &[f32],
    p: &Prepared,
    inputs: &FqeInputs,
    resample: Option<&Resample>,
    batch: &mut Batch,
    work: &mut Work,
) -> Vec<TaskEstimate> {
    let mut q = Vec::new();
    (0..inputs.tasks.len())
        .map(|l| {
            let initial = match resample {
                Some(r) => r.initial[l].clone(),
                None => inputs.initial_frames(l),
            };
            if initial.is_empty() {
                return TaskEstimate {
                    task: l,
                    value: None,
                };
            }
            q.clear();
            mean_q(net, theta, p, &initial, batch, work, &mut q);
            let value = q.iter().map(|v| f64::from(*v)).sum::<f64>() / q.len() as f64;
            TaskEstimate {
                task: l,
                value: Some(value),
            }
        })
        .collect()
}

/// Trains neural FQE for one target policy and returns `V̂(π, l)` per task and the learning curve.
///
/// # Errors
/// [`FqeError::InvalidConfig`]/[`FqeError::InvalidInputs`] from validation; [`FqeError::Candle`]
/// from the tensor library; [`FqeError::Numerical`] when the loss becomes non-finite.
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
    train(inputs, target, config, None, on_steps)
}

/// Episode-bootstrap replicate `replicate` of [`fit_neural_with_progress`]: the same training on
/// the episodes of one resample (see the `resample` module: per task, as many episodes as it
/// has, drawn with replacement from `config.seed`'s stream `replicate + 1`); the estimate
/// averages over the resampled episodes' first frames. Same seed and replicate ⇒ same bytes.
///
/// # Errors
/// As [`fit_neural`].
pub fn fit_neural_replicate(
    inputs: &FqeInputs,
    target: &TargetActions,
    config: &NeuralFqeConfig,
    replicate: u64,
    on_steps: &(dyn Fn(usize) + Sync),
) -> Result<NeuralFit, FqeError> {
    config.validate()?;
    inputs.validate()?;
    inputs.validate_target(target)?;
    let resample = Resample::draw(inputs, config.seed, replicate);
    train(inputs, target, config, Some(resample), on_steps)
}

fn train(
    inputs: &FqeInputs,
    target: &TargetActions,
    config: &NeuralFqeConfig,
    resample: Option<Resample>,
    on_steps: &(dyn Fn(usize) + Sync),
) -> Result<NeuralFit, FqeError> {
    let p = prepare(inputs, target)?;
    let pool: &[usize] = resample.as_ref().map_or(&[], |r| &r.frames);
    let parts: Vec<(usize, usize)> = inputs
        .parts
        .iter()
        .map(|q| (q.width, config.embedding_of(&q.name)))
        .collect();
    let net = Mlp::new(&parts, p.da, inputs.tasks.len(), config);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut theta = net.init(&mut rng);
    let mut opt = AdamW::new(net.len(), config.weight_decay);
    let mut grad = vec![0.0f32; net.len()];
    let mut target_theta = theta.clone();
    let (mut batch, mut work) = (Batch::default(), Work::default());
    let n = inputs.n_frames();
    let gamma = config.gamma as f32;
    let mut curve = Vec::new();
    let mut loss_sum = 0.0;
    let mut loss_count = 0usize;
    let b = config.batch_size;
    let mut rows = Vec::with_capacity(b);
    let mut next = Vec::with_capacity(b);
    let mut q_next = Vec::with_capacity(b);
    let mut targets = TargetCache::new(n);
    let mut y = Vec::with_capacity(b);
    let stop = config
        .auto_steps
        .then(|| auto::StopRule::new(config, inputs));
    let mut reported = 0;
    let mut done_steps = config.steps;
    // The values at the last curve point: the final step always makes one (the cap, or the
    // step where the fit settled), so they are the fit's estimates.
    let mut values = Vec::new();
    for step in 0..config.steps {
        let frac = step as f64 / config.steps as f64;
        let lr = config.learning_rate * (1.0 - frac * (1.0 - config.final_lr_fraction));
        rows.clear();
        if pool.is_empty() {
            rows.extend((0..b).map(|_| rng.random_range(0..n)));
        } else {
            rows.extend((0..b).map(|_| pool[rng.random_range(0..pool.len())]));
        }
        // Terminal rows query their own frame; the (1 − done) factor zeroes that term.
        next.clear();
        next.extend(rows.iter().map(|&k| if p.done[k] { k } else { k + 1 }));
        q_next.clear();
        targets.values_of(&next, &mut q_next, |missing, out| {
            mean_q(&net, &target_theta, &p, missing, &mut batch, &mut work, out);
        });
        y.clear();
        y.extend(
            rows.iter()
                .zip(&q_next)
                .map(|(&k, q)| p.reward[k] + if p.done[k] { 0.0 } else { gamma * q }),
        );
        batch.gather(&p, &rows, &p.a, 1);
        grad.fill(0.0);
        let value = net.loss_grad(
            &theta,
            &batch.x,
            &batch.a,
            &batch.task,
            &y,
            &mut grad,
            &mut work,
        );
        if !value.is_finite() {
            return Err(FqeError::Numerical(format!(
                "neural FQE loss became non-finite at step {step}"
            )));
        }
        loss_sum += value;
        loss_count += 1;
        opt.step(&mut theta, &grad, lr);
        if config.target_tau > 0.0 {
            let (keep, take) = ((1.0 - config.target_tau) as f32, config.target_tau as f32);
            for (t, o) in target_theta.iter_mut().zip(&theta) {
                *t = *t * keep + *o * take;
            }
            targets.invalidate();
        } else if (step + 1) % config.target_update_every == 0 {
            target_theta.copy_from_slice(&theta);
            targets.invalidate();
        }
        if (step + 1).is_multiple_of(PROGRESS_EVERY) {
            on_steps(PROGRESS_EVERY);
            reported += PROGRESS_EVERY;
        }
        if (step + 1) % config.curve_every == 0 || step + 1 == config.steps {
            values = task_values(
                &net,
                &theta,
                &p,
                inputs,
                resample.as_ref(),
                &mut batch,
                &mut work,
            );
            let known: Vec<f64> = values.iter().filter_map(|t| t.value).collect();
            curve.push(CurvePoint {
                step: step + 1,
                loss: loss_sum / loss_count.max(1) as f64,
                mean_value: known.iter().sum::<f64>() / known.len().max(1) as f64,
            });
            loss_sum = 0.0;
            loss_count = 0;
            if stop.as_ref().is_some_and(|s| s.settled(&curve)) {
                done_steps = step + 1;
                break;
            }
        }
    }
    // The progress calls sum to the cap whether or not the fit stopped early, so that a bar
    // sized by `fit_work` ends full.
    if config.steps > reported {
        on_steps(config.steps - reported);
    }
    Ok(NeuralFit {
        tasks: values,
        curve,
        seed: config.seed,
        steps: done_steps,
    })
}
