//! [`LearnedPolicy`]: a trained recurrent checkpoint behind the harness's [`MemoryPolicy`]
//! interface. Its memory is the GRU hidden state, one component `hidden` of shape `[H]`: what
//! the audit's crossing, replacement and restoration machinery reads and sets.

use candle_core::{Device, Tensor};
use roboaudit_memory_harness::{
    ACTION_DIM, ActionChunk, Component, ComponentSpec, HarnessError, MemoryPolicy, MemorySpec,
    MemoryState, Observation,
};

use crate::episodes::input_of;
use crate::model::{gru_cell, head};
use crate::train::Trained;

/// Name of the recurrent policy's memory component.
pub const HIDDEN: &str = "hidden";

/// A trained recurrent policy (deterministic: the action seed is not used, so every action
/// seed gives the same chunk; the audit's common randomness holds trivially).
#[derive(Debug, Clone)]
pub struct LearnedPolicy {
    trained: Trained,
    hidden: Vec<f32>,
}

impl LearnedPolicy {
    /// The policy of checkpoint `trained`, with an empty (zero) memory.
    pub fn new(trained: Trained) -> LearnedPolicy {
        let h = trained.config.train.hidden;
        LearnedPolicy {
            trained,
            hidden: vec![0.0; h],
        }
    }

    /// The checkpoint.
    pub fn trained(&self) -> &Trained {
        &self.trained
    }

    fn bad(&self, message: String) -> HarnessError {
        HarnessError::Policy {
            policy: self.name(),
            message,
        }
    }

    fn tensor_err(&self, e: candle_core::Error) -> HarnessError {
        self.bad(format!("tensor computation failed: {e}"))
    }

    /// The normalized input row `[1, I]` of `obs`.
    fn input(&self, obs: &Observation) -> Result<Tensor, HarnessError> {
        let c = &self.trained.config;
        if obs.layout != c.layout {
            return Err(self.bad(format!(
                "observation layout {:?} differs from the trained layout {:?} (trained on {})",
                obs.layout, c.layout, c.task
            )));
        }
        let x = Tensor::from_vec(input_of(obs), (1, c.input_dim), &Device::Cpu)
            .and_then(|x| x.broadcast_sub(&self.trained.norm.mean))
            .and_then(|x| x.broadcast_div(&self.trained.norm.std))
            .map_err(|e| self.tensor_err(e))?;
        Ok(x)
    }

    fn h(&self) -> Result<Tensor, HarnessError> {
        Tensor::from_vec(self.hidden.clone(), (1, self.hidden.len()), &Device::Cpu)
            .map_err(|e| self.tensor_err(e))
    }
}

impl MemoryPolicy for LearnedPolicy {
    fn name(&self) -> String {
        format!(
            "learned-{}-{}",
            self.trained.config.family.name(),
            self.trained.config.task
        )
    }

    fn memory_spec(&self) -> MemorySpec {
        MemorySpec {
            components: vec![ComponentSpec {
                name: HIDDEN.into(),
                shape: vec![self.hidden.len()],
                protected: false,
            }],
        }
    }

    fn chunk_len(&self) -> usize {
        self.trained.config.train.chunk_len
    }

    fn reset(&mut self) {
        self.hidden.iter_mut().for_each(|v| *v = 0.0);
    }

    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        let x = self.input(obs)?;
        let h = self.h()?;
        let next = gru_cell(&self.trained.weights.tensors, &x, &h)
            .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
            .map_err(|e| self.tensor_err(e))?;
        self.hidden = next;
        Ok(())
    }

    fn act(
        &mut self,
        present: &Observation,
        _action_seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        let x = self.input(present)?;
        let h = self.h()?;
        let out = head(&self.trained.weights.tensors, &h, &x)
            .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
            .map_err(|e| self.tensor_err(e))?;
        let scale = self
            .trained
            .norm
            .action_scale
            .to_vec1::<f32>()
            .map_err(|e| self.tensor_err(e))?;
        let values = out
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let k = i % ACTION_DIM;
                // The gripper is a binary command: the sign of the prediction.
                if k == ACTION_DIM - 1 {
                    if *v > 0.0 { 1.0 } else { -1.0 }
                } else {
                    v * scale[k]
                }
            })
            .collect();
        Ok(ActionChunk { values })
    }

    fn memory(&mut self) -> Result<MemoryState, HarnessError> {
        Ok(MemoryState {
            components: vec![Component {
                name: HIDDEN.into(),
                values: self.hidden.clone(),
                filled: self.hidden.len(),
            }],
        })
    }

    fn set_memory(&mut self, state: &MemoryState) -> Result<(), HarnessError> {
        let c = state
            .get(HIDDEN)
            .ok_or_else(|| self.bad(format!("memory state lacks `{HIDDEN}`")))?;
        if c.values.len() != self.hidden.len() || state.components.len() != 1 {
            return Err(self.bad(format!(
                "memory must be one component `{HIDDEN}` of {} values",
                self.hidden.len()
            )));
        }
        self.hidden.clone_from(&c.values);
        Ok(())
    }
}
