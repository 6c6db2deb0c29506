//! Behaviour cloning of the recurrent policy (seeded, deterministic): record demonstrations,
//! fit the GRU and head by full-batch AdamW on the mean squared error of scaled actions,
//! backpropagating through the whole observation stream.
//!
//! Every query contributes two samples with the same target chunk: the hidden state after
//! observing the query's packet (the closed-loop protocol of native rollouts), and, for the
//! first query only, the hidden state before it (the protocol of `memory collect`, which sets
//! the history's memory and queries the present without observing it).

use candle_core::{Device, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use roboaudit_memory_harness::tasks::MemoryTask;
use roboaudit_memory_harness::{ACTION_DIM, FeatureLayout};
use roboaudit_testbed::TaskKind;

use crate::config::{CONFIG_SCHEMA, Family, LearnedConfig, QualifyConfig, TrainConfig, input_dim};
use crate::episodes::{Demo, Stream, record_demo, setup};
use crate::error::LearnedError;
use crate::model::{Dims, Norm, Weights, gru_cell, head};

/// A trained checkpoint in memory.
#[derive(Debug, Clone)]
pub struct Trained {
    /// Its configuration.
    pub config: LearnedConfig,
    /// Its weights.
    pub weights: Weights,
    /// Its normalization.
    pub norm: Norm,
}

/// Per-dimension action scale: the scripted transport's largest step (m) on translations, 1
/// on rotations and the gripper.
pub fn action_scale() -> [f32; ACTION_DIM] {
    let s = roboaudit_memory_harness::builtin::STEP as f32;
    [s, s, s, 1.0, 1.0, 1.0, 1.0]
}

/// Records `cfg.demos` demonstrations of `task`; `on_demo(done, total)` after each.
///
/// # Errors
/// [`LearnedError::NoDemonstrations`] when none reaches the present; simulator failures.
pub fn record_demos(
    task: TaskKind,
    cfg: &TrainConfig,
    on_demo: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<Demo>, FeatureLayout), LearnedError> {
    let mt = MemoryTask::new(task)?;
    let mut demos = Vec::new();
    let mut layout = None;
    for i in 0..cfg.demos {
        let level = cfg.layout_levels[i % cfg.layout_levels.len()];
        if let Some(s) = setup(&mt, Stream::Demo, cfg.seed, i, level, cfg.obs_every)?
            && let Some(o) = s.history.observations.first()
        {
            layout = Some(o.layout);
            demos.push(record_demo(&s, cfg.chunk_len, cfg.max_queries)?);
        }
        on_demo(i + 1, cfg.demos);
    }
    match layout {
        Some(l) if !demos.is_empty() => Ok((demos, l)),
        _ => Err(LearnedError::NoDemonstrations(task.name())),
    }
}

/// The padded training batch.
struct Batch {
    /// `[T, B, I]` normalized inputs, zero past each sequence's end.
    inputs: Vec<Tensor>,
    /// Row of the stacked hidden states (`t · B + b`, `t` in `0..=T`) of each sample.
    h_rows: Tensor,
    /// Row of the stacked inputs (`t · B + b`) of each sample.
    x_rows: Tensor,
    /// `[N, O]` scaled targets.
    targets: Tensor,
}

fn norm_of(demos: &[Demo], dim: usize) -> (Vec<f32>, Vec<f32>) {
    let rows = demos
        .iter()
        .flat_map(|d| d.history.iter().chain(&d.queries))
        .collect::<Vec<_>>();
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0.0f64; dim];
    for r in &rows {
        for (m, v) in mean.iter_mut().zip(r.iter()) {
            *m += f64::from(*v) / n;
        }
    }
    let mut var = vec![0.0f64; dim];
    for r in &rows {
        for ((s, m), v) in var.iter_mut().zip(&mean).zip(r.iter()) {
            *s += (f64::from(*v) - m).powi(2) / n;
        }
    }
    (
        mean.iter().map(|&m| m as f32).collect(),
        var.iter().map(|&s| s.sqrt().max(1e-2) as f32).collect(),
    )
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
    let pred = head(w, &hq, &xq)?;
    (pred - &data.targets)?.sqr()?.mean_all()
}

/// Trains a `family` policy for `task` (see the module docs); `on_step(step, loss)` after each
/// optimizer step. The same inputs give the same weights, bit for bit.
///
/// # Errors
/// [`LearnedError::InvalidConfig`] for out-of-range settings, [`LearnedError::NoDemonstrations`],
/// simulator and tensor failures.
pub fn train(
    task: TaskKind,
    family: Family,
    cfg: &TrainConfig,
    qualify: &QualifyConfig,
    on_demo: &mut dyn FnMut(usize, usize),
    on_step: &mut dyn FnMut(usize, f64),
) -> Result<Trained, LearnedError> {
    cfg.validate()?;
    crate::qualify::validate(qualify)?;
    let (demos, layout) = record_demos(task, cfg, on_demo)?;
    let dim = input_dim(&layout);
    let (mean, std) = norm_of(&demos, dim);
    let scale = action_scale();
    let data = batch(&demos, &mean, &std, &scale)?;
    let dims = Dims {
        input: dim,
        hidden: cfg.hidden,
        head: cfg.head,
        output: cfg.chunk_len * ACTION_DIM,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let init = Weights::init(&dims, &mut rng)?;
    let vars = init.vars()?;
    let mut opt = AdamW::new(
        vars.clone(),
        ParamsAdamW {
            lr: cfg.lr,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )?;
    let mut last = f64::NAN;
    for step in 0..cfg.steps {
        let w: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
        let l = loss(&w, &data, cfg.hidden)?;
        last = f64::from(l.to_scalar::<f32>()?);
        opt.backward_step(&l)?;
        on_step(step + 1, last);
    }
    let weights = Weights {
        tensors: vars
            .iter()
            .map(|v| v.as_tensor().copy())
            .collect::<candle_core::Result<_>>()?,
    };
    let dev = Device::Cpu;
    let norm = Norm {
        mean: Tensor::from_vec(mean, dim, &dev)?,
        std: Tensor::from_vec(std, dim, &dev)?,
        action_scale: Tensor::from_vec(scale.to_vec(), ACTION_DIM, &dev)?,
    };
    Ok(Trained {
        config: LearnedConfig {
            schema: CONFIG_SCHEMA.into(),
            family,
            task: task.name(),
            layout,
            input_dim: dim,
            train: cfg.clone(),
            qualify: qualify.clone(),
            demos_used: demos.len(),
            final_loss: last,
        },
        weights,
        norm,
    })
}
