//! Behaviour cloning of one experience's policy on its own demonstration: Adam on the mean squared
//! error of the normalized targets, full batch or in seeded mini-batches
//! ([`TrainConfig::batch`]), with optional seeded Gaussian noise on the inputs at every step
//! (deterministic: the same samples and settings give the same weights, bit for bit).
//! The reported final loss is that of the final weights on the clean inputs.

use candle_core::{Device, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};

use crate::config::{CONFIG_SCHEMA, IMAGE_SIDE, LOW_DIM, PolicyConfig, TARGET_DIM, TrainConfig};
use crate::error::{PolicyError, Result};
use crate::frames::Sample;
use crate::model::{Norm, Weights, features_of_patches, head, image_patches};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A trained policy in memory: its configuration, weights and normalization.
#[derive(Debug, Clone)]
pub struct Trained {
    /// Its configuration.
    pub config: PolicyConfig,
    /// Its weights.
    pub weights: Weights,
    /// Its normalization.
    pub norm: Norm,
}

/// Per-column mean and standard deviation (floored at `floor`) of `rows`, accumulated in `f64`.
fn mean_std(rows: &[&[f32]], floor: f64) -> (Vec<f32>, Vec<f32>) {
    let dim = rows.first().map_or(0, |r| r.len());
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0.0f64; dim];
    for r in rows {
        for (m, v) in mean.iter_mut().zip(r.iter()) {
            *m += f64::from(*v) / n;
        }
    }
    let mut var = vec![0.0f64; dim];
    for r in rows {
        for ((s, m), v) in var.iter_mut().zip(&mean).zip(r.iter()) {
            *s += (f64::from(*v) - m).powi(2) / n;
        }
    }
    (
        mean.iter().map(|&m| m as f32).collect(),
        var.iter().map(|&s| s.sqrt().max(floor) as f32).collect(),
    )
}

/// `n` Gaussian draws of standard deviation `sd` (Box–Muller), as `f32`.
fn normals(rng: &mut ChaCha8Rng, n: usize, sd: f64) -> Vec<f32> {
    let mut out = Vec::with_capacity(n + 1);
    while out.len() < n {
        let u1 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        let u2 = rng.random::<f64>();
        let r = (-2.0 * u1.ln()).sqrt() * sd;
        let t = std::f64::consts::TAU * u2;
        out.push((r * t.cos()) as f32);
        out.push((r * t.sin()) as f32);
    }
    out.truncate(n);
    out
}

/// Seeded mini-batches: the sample indices in a fresh shuffle (Fisher–Yates) every epoch, taken
/// `size` at a time; an epoch's remainder shorter than `size` is skipped.
struct Batches {
    rng: ChaCha8Rng,
    order: Vec<u32>,
    at: usize,
    size: usize,
}

impl Batches {
    fn new(n: usize, size: usize, seed: u64) -> Batches {
        Batches {
            rng: ChaCha8Rng::seed_from_u64(seed),
            order: (0..n as u32).collect(),
            at: n,
            size,
        }
    }

    fn next_batch(&mut self) -> Vec<u32> {
        if self.at + self.size > self.order.len() {
            for i in (1..self.order.len()).rev() {
                let j = self.rng.random_range(0..=i);
                self.order.swap(i, j);
            }
            self.at = 0;
        }
        self.at += self.size;
        self.order[self.at - self.size..self.at].to_vec()
    }
}

/// Where the demonstration came from, for the checkpoint's config.
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// Task name.
    pub task: String,
    /// Base scene id.
    pub base_scene_id: String,
    /// Episode seed of the recording.
    pub recording_seed: u64,
}

/// Trains a policy on `samples`; `on_step(step, loss)` after each optimizer step.
///
/// # Errors
/// [`PolicyError::InvalidConfig`] for settings out of range or no samples; tensor failures.
pub fn train(
    samples: &[Sample],
    cfg: &TrainConfig,
    provenance: &Provenance,
    on_step: &mut dyn FnMut(usize, f64),
) -> Result<Trained> {
    cfg.validate()?;
    if samples.is_empty() {
        return Err(PolicyError::InvalidConfig(
            "the demonstration has no steps".into(),
        ));
    }
    let dev = Device::Cpu;
    let n = samples.len();
    let lows: Vec<&[f32]> = samples.iter().map(|s| s.obs.low.as_slice()).collect();
    let targets: Vec<&[f32]> = samples.iter().map(|s| s.target.as_slice()).collect();
    let (lm, ls) = mean_std(&lows, 1e-2);
    let (tm, ts) = mean_std(&targets, 1e-3);
    let norm = Norm {
        low_mean: Tensor::from_vec(lm, LOW_DIM, &dev)?,
        low_std: Tensor::from_vec(ls, LOW_DIM, &dev)?,
        target_mean: Tensor::from_vec(tm, TARGET_DIM, &dev)?,
        target_std: Tensor::from_vec(ts, TARGET_DIM, &dev)?,
    };
    let images = Tensor::from_vec(
        samples
            .iter()
            .flat_map(|s| s.obs.image.iter().copied())
            .collect::<Vec<f32>>(),
        (n, 3, IMAGE_SIDE, IMAGE_SIDE),
        &dev,
    )?;
    let low = Tensor::from_vec(lows.concat(), (n, LOW_DIM), &dev)?
        .broadcast_sub(&norm.low_mean)?
        .broadcast_div(&norm.low_std)?;
    let target = Tensor::from_vec(targets.concat(), (n, TARGET_DIM), &dev)?
        .broadcast_sub(&norm.target_mean)?
        .broadcast_div(&norm.target_std)?;
    let vars = Weights::init(cfg)?.vars()?;
    // The augmentation noise has its own stream, so it does not shift the initialization's.
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x9e37_79b9_7f4a_7c15);
    let clean_patches = image_patches(&images)?;
    let mut opt = AdamW::new(
        vars.clone(),
        ParamsAdamW {
            lr: cfg.lr,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )?;
    // Mini-batches have a stream of their own, so they shift neither of the others.
    let mut batches = cfg
        .batch
        .filter(|&b| b < n)
        .map(|b| Batches::new(n, b, cfg.seed ^ 0x6a09_e667_f3bc_c908));
    for step in 0..cfg.steps {
        let w: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
        let (images_b, low_b, target_b, patches_b) = match &mut batches {
            Some(b) => {
                let idx = Tensor::from_vec(b.next_batch(), b.size, &dev)?;
                let img = images.index_select(&idx, 0)?;
                let p = image_patches(&img)?;
                (
                    img,
                    low.index_select(&idx, 0)?,
                    target.index_select(&idx, 0)?,
                    p,
                )
            }
            None => (
                images.clone(),
                low.clone(),
                target.clone(),
                clean_patches.clone(),
            ),
        };
        let nb = images_b.dim(0)?;
        let p1 = if cfg.pixel_noise > 0.0 {
            let noise = normals(&mut rng, 3 * IMAGE_SIDE * IMAGE_SIDE, cfg.pixel_noise);
            let noise = Tensor::from_vec(noise, (1, 3, IMAGE_SIDE, IMAGE_SIDE), &dev)?;
            image_patches(&images_b.broadcast_add(&noise)?)?
        } else {
            patches_b
        };
        let low_in = if cfg.low_noise > 0.0 {
            let noise = normals(&mut rng, nb * LOW_DIM, cfg.low_noise);
            (&low_b + Tensor::from_vec(noise, (nb, LOW_DIM), &dev)?)?
        } else {
            low_b
        };
        let pred = head(&w, &features_of_patches(&w, &p1, nb)?, &low_in)?;
        let loss = (pred - &target_b)?.sqr()?.mean_all()?;
        let l = f64::from(loss.to_scalar::<f32>()?);
        opt.backward_step(&loss)?;
        on_step(step + 1, l);
    }
    // The loss of the final weights (the loop reports the loss before each update).
    let w: Vec<Tensor> = vars
        .iter()
        .map(|v| v.as_tensor().copy())
        .collect::<candle_core::Result<_>>()?;
    let final_loss = f64::from(
        (head(&w, &features_of_patches(&w, &clean_patches, n)?, &low)? - &target)?
            .sqr()?
            .mean_all()?
            .to_scalar::<f32>()?,
    );
    Ok(Trained {
        config: PolicyConfig {
            schema: CONFIG_SCHEMA.into(),
            task: provenance.task.clone(),
            base_scene_id: provenance.base_scene_id.clone(),
            recording_seed: provenance.recording_seed,
            image_side: IMAGE_SIDE,
            low_dim: LOW_DIM,
            target_dim: TARGET_DIM,
            train: cfg.clone(),
            samples: n,
            final_loss,
        },
        weights: Weights { tensors: w },
        norm,
    })
}
