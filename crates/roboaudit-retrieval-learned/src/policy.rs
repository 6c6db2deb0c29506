//! Closed-loop execution of a trained policy: at every step the scene camera is rendered, the
//! network predicts the commanded pose after the step, and the action is its difference from the
//! present command (translation and yaw; roll and pitch are not commanded, as by the
//! demonstrator), which the world clips to its per-step limits. The gripper command is the sign
//! of the prediction: demonstrators command it fully open (−1) or fully closed (+1).

use candle_core::{Device, Tensor};
use roboaudit_testbed::geom::wrap_angle;
use roboaudit_testbed::{Action, CompiledScene, Episode, EpisodeConfig, TaskKind};

use crate::config::{IMAGE_SIDE, LOW_DIM};
use crate::error::Result;
use crate::frames::{Camera, Observation};
use crate::model::{features, forward};
use crate::train::Trained;

/// A trained policy ready to act.
#[derive(Debug, Clone)]
pub struct ImagePolicy {
    trained: Trained,
}

impl ImagePolicy {
    /// Wraps a trained (or loaded) policy.
    pub fn new(trained: Trained) -> ImagePolicy {
        ImagePolicy { trained }
    }

    /// The trained policy.
    pub fn trained(&self) -> &Trained {
        &self.trained
    }

    fn inputs(&self, obs: &Observation) -> Result<(Tensor, Tensor)> {
        let dev = Device::Cpu;
        let n = &self.trained.norm;
        let img = Tensor::from_slice(&obs.image, (1, 3, IMAGE_SIDE, IMAGE_SIDE), &dev)?;
        let low = Tensor::from_slice(&obs.low, (1, LOW_DIM), &dev)?
            .broadcast_sub(&n.low_mean)?
            .broadcast_div(&n.low_std)?;
        Ok((img, low))
    }

    /// The predicted commanded pose after the step: `x, y, z` (m), yaw (rad), gripper.
    ///
    /// # Errors
    /// [`crate::PolicyError::Tensor`] (never for a checked checkpoint).
    pub fn predict(&self, obs: &Observation) -> Result<Vec<f32>> {
        let (img, low) = self.inputs(obs)?;
        let n = &self.trained.norm;
        let out = forward(&self.trained.weights.tensors, &img, &low)?
            .broadcast_mul(&n.target_std)?
            .broadcast_add(&n.target_mean)?;
        Ok(out.flatten_all()?.to_vec1::<f32>()?)
    }

    /// The visual feature of an image (`[3, 32, 32]` values in `[0, 1]`): the policy encoder.
    ///
    /// # Errors
    /// [`crate::PolicyError::Tensor`] when the image has another size.
    pub fn encode(&self, image: &[f32]) -> Result<Vec<f32>> {
        let img = Tensor::from_slice(image, (1, 3, IMAGE_SIDE, IMAGE_SIDE), &Device::Cpu)?;
        Ok(features(&self.trained.weights.tensors, &img)?
            .flatten_all()?
            .to_vec1::<f32>()?)
    }

    /// The action for `ep`'s present state.
    ///
    /// # Errors
    /// Rendering and tensor failures.
    pub fn act(&self, ep: &mut Episode, camera: &mut Camera) -> Result<Action> {
        let obs = camera.observe(ep)?;
        let p = self.predict(&obs)?;
        let w = ep.world();
        let c = w.commanded_tcp();
        Ok(Action {
            dpos: [0, 1, 2].map(|k| f64::from(p[k]) - c[k]),
            drot: [0.0, 0.0, wrap_angle(f64::from(p[3]) - w.commanded_rpy()[2])],
            // The demonstrations command the gripper fully open or fully closed.
            gripper: if p[4] >= 0.0 { 1.0 } else { -1.0 },
        })
    }

    /// Runs the policy closed loop in `scene` until success or the task's step limit; returns
    /// whether the task succeeded.
    ///
    /// # Errors
    /// Testbed, rendering and tensor failures.
    pub fn execute(
        &self,
        scene: &CompiledScene,
        task: TaskKind,
        cfg: &EpisodeConfig,
        camera: &mut Camera,
    ) -> Result<bool> {
        let mut ep = Episode::new(scene, task, cfg)?;
        while !ep.done() {
            let a = self.act(&mut ep, camera)?;
            ep.step(&a)?;
        }
        Ok(ep.success())
    }
}
