//! Behaviour cloning of either family (seeded, deterministic): record demonstrations, fit the
//! network by full-batch AdamW on the mean squared error of scaled actions. The recurrent family
//! backpropagates through the whole observation stream ([`crate::recurrent::Batch`]); the
//! anchor-window family through the embeddings of the anchor, window and present
//! ([`crate::anchor_window::Batch`]).
//!
//! Every query contributes two samples with the same target chunk: the memory after observing
//! the query's packet (the closed-loop protocol of native rollouts), and, for the first query
//! only, the memory before it (the protocol of `memory collect`, which sets the history's memory
//! and queries the present without observing it).

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
use crate::model::{Dims, Norm, Weights};

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
    let dims = Dims {
        input: dim,
        hidden: cfg.hidden,
        head: cfg.head,
        output: cfg.chunk_len * ACTION_DIM,
        window: cfg.window,
    };
    type Loss = Box<dyn Fn(&[Tensor]) -> candle_core::Result<Tensor>>;
    let loss: Loss = match family {
        Family::Recurrent => {
            let batch = crate::recurrent::Batch::new(&demos, &mean, &std, &scale)?;
            let hidden = cfg.hidden;
            Box::new(move |w: &[Tensor]| batch.loss(w, hidden))
        }
        Family::AnchorWindow => {
            let batch = crate::anchor_window::Batch::new(&demos, &mean, &std, &scale, cfg.window)?;
            Box::new(move |w: &[Tensor]| batch.loss(w))
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let init = Weights::init(family, &dims, &mut rng)?;
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
        let l = loss(&w)?;
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
