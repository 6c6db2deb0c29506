//! The history bank shared by the built-in policies: a protected anchor (a fixed-size embedding
//! of the first observation, 1024 `f32` = 4096 bytes as in seed 002 §IV-C2) and a ring window of
//! the most recent observations.

use crate::error::HarnessError;
use crate::policy::{Component, ComponentSpec, MemorySpec, MemoryState, Observation};

/// Anchor length (`f32` values): 4096 bytes.
pub const ANCHOR_DIM: usize = 1024;
/// Width of one window row (`f32` values); features are zero-padded or truncated to it.
pub const WINDOW_DIM: usize = 64;
/// Name of the anchor component.
pub const ANCHOR: &str = "anchor";
/// Name of the window component.
pub const WINDOW: &str = "window";

/// Embeds an observation into `dim` values: its features, zero-padded (truncated past `dim`).
/// Frames are not embedded: the built-in policies read the perception vector.
pub fn embed(obs: &Observation, dim: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dim];
    for (dst, src) in v.iter_mut().zip(&obs.features) {
        *dst = *src;
    }
    v
}

/// Anchor + window memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Bank {
    anchor: Vec<f32>,
    anchor_set: bool,
    /// Rows in insertion order, oldest first, at most `window_len`.
    window: Vec<Vec<f32>>,
    window_len: usize,
}

impl Bank {
    /// An empty bank whose window keeps `window_len` (≥ 1) observations.
    pub fn new(window_len: usize) -> Bank {
        Bank {
            anchor: vec![0.0; ANCHOR_DIM],
            anchor_set: false,
            window: Vec::new(),
            window_len: window_len.max(1),
        }
    }

    /// The declared components: `anchor` `[1024]` (protected), `window` `[window_len, 64]`.
    pub fn spec(&self) -> MemorySpec {
        MemorySpec {
            components: vec![
                ComponentSpec {
                    name: ANCHOR.into(),
                    shape: vec![ANCHOR_DIM],
                    protected: true,
                },
                ComponentSpec {
                    name: WINDOW.into(),
                    shape: vec![self.window_len, WINDOW_DIM],
                    protected: false,
                },
            ],
        }
    }

    /// Empties the bank.
    pub fn clear(&mut self) {
        self.anchor.iter_mut().for_each(|x| *x = 0.0);
        self.anchor_set = false;
        self.window.clear();
    }

    /// Folds in one observation: the first one becomes the anchor; every one enters the window.
    pub fn observe(&mut self, obs: &Observation) {
        if !self.anchor_set {
            self.anchor = embed(obs, ANCHOR_DIM);
            self.anchor_set = true;
        }
        if self.window.len() == self.window_len {
            self.window.remove(0);
        }
        self.window.push(embed(obs, WINDOW_DIM));
    }

    /// The anchor, when one has been set.
    pub fn anchor(&self) -> Option<&[f32]> {
        self.anchor_set.then_some(self.anchor.as_slice())
    }

    /// The memory state (anchor `filled` is 1 when set, else 0).
    pub fn state(&self) -> MemoryState {
        let mut window = Vec::with_capacity(self.window_len * WINDOW_DIM);
        for row in &self.window {
            window.extend_from_slice(row);
        }
        window.resize(self.window_len * WINDOW_DIM, 0.0);
        MemoryState {
            components: vec![
                Component {
                    name: ANCHOR.into(),
                    values: self.anchor.clone(),
                    filled: usize::from(self.anchor_set),
                },
                Component {
                    name: WINDOW.into(),
                    values: window,
                    filled: self.window.len(),
                },
            ],
        }
    }

    /// Replaces the bank by `state`.
    ///
    /// # Errors
    /// [`HarnessError::Policy`] (named `policy`) when the state does not match [`Bank::spec`].
    pub fn set_state(&mut self, state: &MemoryState, policy: &str) -> Result<(), HarnessError> {
        let bad = |message: String| HarnessError::Policy {
            policy: policy.to_owned(),
            message,
        };
        let (Some(anchor), Some(window)) = (state.get(ANCHOR), state.get(WINDOW)) else {
            return Err(bad("memory state lacks `anchor` or `window`".into()));
        };
        if anchor.values.len() != ANCHOR_DIM || anchor.filled > 1 {
            return Err(bad(format!(
                "anchor must hold {ANCHOR_DIM} values and filled ≤ 1"
            )));
        }
        if window.values.len() != self.window_len * WINDOW_DIM || window.filled > self.window_len {
            return Err(bad(format!(
                "window must hold {} × {WINDOW_DIM} values and filled ≤ {}",
                self.window_len, self.window_len
            )));
        }
        self.anchor.clone_from(&anchor.values);
        self.anchor_set = anchor.filled == 1;
        self.window = window
            .values
            .chunks(WINDOW_DIM)
            .take(window.filled)
            .map(<[f32]>::to_vec)
            .collect();
        Ok(())
    }
}
