//! [`LearnedPolicy`]: a trained checkpoint of either family behind the harness's
//! [`MemoryPolicy`] interface. Its memory is what the audit's crossing, replacement and
//! restoration machinery reads and sets: the GRU hidden state, one component `hidden` `[H]`
//! (recurrent), or the components `anchor` `[D]` (protected: set by the first observation after
//! a reset, never overwritten by later ones) and `window` `[W, D]` (the embeddings of the `W`
//! most recent observations, oldest first, `filled` rows valid) (anchor-window).

use candle_core::{Device, Tensor};
use roboaudit_memory_harness::{
    ACTION_DIM, ActionChunk, Component, ComponentSpec, HarnessError, MemoryPolicy, MemorySpec,
    MemoryState, Observation,
};

use crate::anchor_window;
use crate::config::Family;
use crate::episodes::input_of;
use crate::model::{gru_cell, head};
use crate::train::Trained;

/// Name of the recurrent policy's memory component.
pub const HIDDEN: &str = "hidden";
/// Name of the anchor-window policy's protected anchor component (the harness's restoration
/// study restores the component of this name).
pub const ANCHOR: &str = roboaudit_memory_harness::bank::ANCHOR;
/// Name of the anchor-window policy's window component.
pub const WINDOW: &str = roboaudit_memory_harness::bank::WINDOW;

/// The memory of one family.
#[derive(Debug, Clone)]
enum State {
    /// `[H]`.
    Recurrent { hidden: Vec<f32> },
    /// Anchor `[D]` (meaningful when `anchor_set`), window rows oldest first (≤ `W`).
    AnchorWindow {
        anchor: Vec<f32>,
        anchor_set: bool,
        window: Vec<Vec<f32>>,
    },
}

/// A trained policy (deterministic: the action seed is not used, so every action seed gives
/// the same chunk; the audit's common randomness holds trivially).
#[derive(Debug, Clone)]
pub struct LearnedPolicy {
    trained: Trained,
    state: State,
}

impl LearnedPolicy {
    /// The policy of checkpoint `trained`, with an empty memory (a zero hidden state; no
    /// anchor, an empty window).
    pub fn new(trained: Trained) -> LearnedPolicy {
        let h = trained.config.train.hidden;
        let state = match trained.config.family {
            Family::Recurrent => State::Recurrent {
                hidden: vec![0.0; h],
            },
            Family::AnchorWindow => State::AnchorWindow {
                anchor: vec![0.0; h],
                anchor_set: false,
                window: Vec::new(),
            },
        };
        LearnedPolicy { trained, state }
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

    fn row(&self, v: Vec<f32>) -> Result<Tensor, HarnessError> {
        let n = v.len();
        Tensor::from_vec(v, (1, n), &Device::Cpu).map_err(|e| self.tensor_err(e))
    }

    fn flat(&self, t: candle_core::Result<Tensor>) -> Result<Vec<f32>, HarnessError> {
        t.and_then(|t| t.flatten_all()?.to_vec1::<f32>())
            .map_err(|e| self.tensor_err(e))
    }

    /// The memory readout for the head: the hidden state, or the attention context of the
    /// present over the anchor and window (zero when both are empty).
    fn readout(&self, x: &Tensor) -> Result<Tensor, HarnessError> {
        let w = &self.trained.weights.tensors;
        match &self.state {
            State::Recurrent { hidden } => self.row(hidden.clone()),
            State::AnchorWindow {
                anchor,
                anchor_set,
                window,
            } => {
                let d = anchor.len();
                let slots = self.trained.config.train.window + 1;
                if !anchor_set && window.is_empty() {
                    return self.row(vec![0.0; d]);
                }
                let mut m = anchor.clone();
                let mut filled = vec![f32::from(u8::from(*anchor_set))];
                for row in window {
                    m.extend_from_slice(row);
                    filled.push(1.0);
                }
                m.resize(slots * d, 0.0);
                filled.resize(slots, 0.0);
                let dev = Device::Cpu;
                Tensor::from_vec(m, (1, slots, d), &dev)
                    .and_then(|m| {
                        let f = Tensor::from_vec(filled, (1, slots), &dev)?;
                        let e = anchor_window::embed(w, x)?;
                        anchor_window::attend(w, &e, &m, &f)
                    })
                    .map_err(|e| self.tensor_err(e))
            }
        }
    }

    fn head_weights(&self) -> &[Tensor] {
        let w = &self.trained.weights.tensors;
        match self.state {
            State::Recurrent { .. } => &w[4..8],
            State::AnchorWindow { .. } => &w[6..10],
        }
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
        let h = self.trained.config.train.hidden;
        let components = match self.state {
            State::Recurrent { .. } => vec![ComponentSpec {
                name: HIDDEN.into(),
                shape: vec![h],
                protected: false,
            }],
            State::AnchorWindow { .. } => vec![
                ComponentSpec {
                    name: ANCHOR.into(),
                    shape: vec![h],
                    protected: true,
                },
                ComponentSpec {
                    name: WINDOW.into(),
                    shape: vec![self.trained.config.train.window, h],
                    protected: false,
                },
            ],
        };
        MemorySpec { components }
    }

    fn chunk_len(&self) -> usize {
        self.trained.config.train.chunk_len
    }

    fn reset(&mut self) {
        match &mut self.state {
            State::Recurrent { hidden } => hidden.iter_mut().for_each(|v| *v = 0.0),
            State::AnchorWindow {
                anchor,
                anchor_set,
                window,
            } => {
                anchor.iter_mut().for_each(|v| *v = 0.0);
                *anchor_set = false;
                window.clear();
            }
        }
    }

    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        let x = self.input(obs)?;
        let w = &self.trained.weights.tensors;
        let w_len = self.trained.config.train.window;
        let next = match &self.state {
            State::Recurrent { hidden } => {
                let h = self.row(hidden.clone())?;
                self.flat(gru_cell(w, &x, &h))?
            }
            State::AnchorWindow { .. } => self.flat(anchor_window::embed(w, &x))?,
        };
        match &mut self.state {
            State::Recurrent { hidden } => *hidden = next,
            State::AnchorWindow {
                anchor,
                anchor_set,
                window,
            } => {
                if !*anchor_set {
                    anchor.clone_from(&next);
                    *anchor_set = true;
                }
                if window.len() == w_len {
                    window.remove(0);
                }
                window.push(next);
            }
        }
        Ok(())
    }

    fn act(
        &mut self,
        present: &Observation,
        _action_seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        let x = self.input(present)?;
        let h = self.readout(&x)?;
        let out = self.flat(head(self.head_weights(), &h, &x))?;
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
        let components = match &self.state {
            State::Recurrent { hidden } => vec![Component {
                name: HIDDEN.into(),
                values: hidden.clone(),
                filled: hidden.len(),
            }],
            State::AnchorWindow {
                anchor,
                anchor_set,
                window,
            } => {
                let d = anchor.len();
                let mut values: Vec<f32> = window.concat();
                values.resize(self.trained.config.train.window * d, 0.0);
                vec![
                    Component {
                        name: ANCHOR.into(),
                        values: anchor.clone(),
                        filled: usize::from(*anchor_set),
                    },
                    Component {
                        name: WINDOW.into(),
                        values,
                        filled: window.len(),
                    },
                ]
            }
        };
        Ok(MemoryState { components })
    }

    fn set_memory(&mut self, state: &MemoryState) -> Result<(), HarnessError> {
        let spec = self.memory_spec();
        let names: Vec<&str> = spec.components.iter().map(|c| c.name.as_str()).collect();
        let matches = state.components.len() == spec.components.len()
            && spec.components.iter().all(|c| {
                state.get(&c.name).is_some_and(|s| {
                    let rows = if c.name == ANCHOR { 1 } else { c.shape[0] };
                    s.values.len() == c.shape.iter().product::<usize>() && s.filled <= rows
                })
            });
        if !matches {
            return Err(self.bad(format!(
                "memory must be the components {names:?} of shapes {:?} (filled ≤ rows; ≤ 1 for the anchor)",
                spec.components.iter().map(|c| &c.shape).collect::<Vec<_>>()
            )));
        }
        let get = |n: &str| state.get(n).map(|c| (c.values.clone(), c.filled));
        match &mut self.state {
            State::Recurrent { hidden } => {
                if let Some((v, _)) = get(HIDDEN) {
                    *hidden = v;
                }
            }
            State::AnchorWindow {
                anchor,
                anchor_set,
                window,
            } => {
                if let (Some((a, af)), Some((wv, wf))) = (get(ANCHOR), get(WINDOW)) {
                    let d = a.len();
                    *anchor = a;
                    *anchor_set = af == 1;
                    *window = wv.chunks(d.max(1)).take(wf).map(<[f32]>::to_vec).collect();
                }
            }
        }
        Ok(())
    }
}
