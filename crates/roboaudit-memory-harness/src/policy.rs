//! The memory-policy interface (seed 002 §III-A, §III-D; SPEC.md §2): a frozen policy that
//! observes a history, keeps a declared memory with named components, and maps the present to an
//! action chunk under an explicit action seed.
//!
//! The interface is deliberately small so that a learned policy behind a bridge (another
//! process, a PyTorch model) fits it without change: everything crosses as flat `f32` tensors
//! with declared shapes, and the harness never looks inside a policy.

use serde::{Deserialize, Serialize};

use crate::error::HarnessError;

/// Number of `f32` elements of a testbed action (`[dx, dy, dz, droll, dpitch, dyaw, gripper]`).
pub const ACTION_DIM: usize = 7;

/// Counts that fix the layout of [`Observation::features`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureLayout {
    /// Number of blocks.
    pub n_blocks: usize,
    /// Number of trays.
    pub n_trays: usize,
    /// Number of pads.
    pub n_pads: usize,
}

impl FeatureLayout {
    /// Length of the proprioceptive head: 7 joints, TCP position (3), TCP quaternion (4),
    /// gripper opening (1), last gripper command (1).
    pub const PROPRIO: usize = 16;

    /// Total feature length: `16 + 4·n_blocks + 2·n_trays + 2·n_pads`.
    pub fn len(&self) -> usize {
        Self::PROPRIO + 4 * self.n_blocks + 2 * self.n_trays + 2 * self.n_pads
    }

    /// Always false (the proprioceptive head is never empty); present for clippy's `len` rule.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Offset of block `b`'s `[x, y, z, yaw]` (metres, radians).
    pub fn block(&self, b: usize) -> usize {
        Self::PROPRIO + 4 * b
    }

    /// Offset of tray `t`'s `[x, y]` centre (metres).
    pub fn tray(&self, t: usize) -> usize {
        Self::PROPRIO + 4 * self.n_blocks + 2 * t
    }

    /// Offset of pad `p`'s `[x, y]` centre (metres).
    pub fn pad(&self, p: usize) -> usize {
        Self::PROPRIO + 4 * self.n_blocks + 2 * self.n_trays + 2 * p
    }
}

/// An RGB camera frame: `width · height · 3` bytes, row-major from the top-left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// RGB bytes.
    pub rgb: Vec<u8>,
}

/// Everything a policy may see at one step (the *packet* of seed 002 §III-A, minus memory).
///
/// `features` is a perception vector (`f32`, layout [`FeatureLayout`]): proprioception, block
/// poses, tray and pad centres. `frame` is the scene camera image when the harness renders.
/// `branch_candidates` is set only at an audited present: the task's candidate branches at that
/// decision (tray indices, sorted), the same under both histories, so it reveals no world label.
/// The time step is not part of the packet: two histories reach the present after different
/// numbers of steps, and that count is memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Perception vector.
    pub features: Vec<f32>,
    /// Its layout.
    pub layout: FeatureLayout,
    /// Scene camera frame, when rendered.
    pub frame: Option<Frame>,
    /// Candidate branches at an audited decision (empty during a history).
    pub branch_candidates: Vec<usize>,
}

impl Observation {
    /// The bytes the present-identity check compares: feature bits, frame bytes and candidates.
    pub fn packet_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.features.iter().flat_map(|x| x.to_le_bytes()).collect();
        if let Some(f) = &self.frame {
            out.extend((f.width as u64).to_le_bytes());
            out.extend((f.height as u64).to_le_bytes());
            out.extend(&f.rgb);
        }
        for c in &self.branch_candidates {
            out.extend((*c as u64).to_le_bytes());
        }
        out
    }
}

/// An action chunk: `len · ACTION_DIM` values, action after action, executed open-loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionChunk {
    /// Flattened actions.
    pub values: Vec<f32>,
}

impl ActionChunk {
    /// Number of actions in the chunk.
    pub fn len(&self) -> usize {
        self.values.len() / ACTION_DIM
    }

    /// True when the chunk holds no action.
    pub fn is_empty(&self) -> bool {
        self.values.len() < ACTION_DIM
    }
}

/// Declaration of one named memory component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentSpec {
    /// Name (`anchor`, `window`, …), unique within a policy.
    pub name: String,
    /// Tensor shape; the component holds `shape.iter().product()` `f32` values.
    pub shape: Vec<usize>,
    /// A protected component is never overwritten by later observations (the anchor of seed
    /// 002 §IV-C2); interventions may still replace or restore it.
    pub protected: bool,
}

/// Declaration of a policy's memory: its components, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySpec {
    /// Components.
    pub components: Vec<ComponentSpec>,
}

/// A memory component's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Name, as declared.
    pub name: String,
    /// Values, `shape.iter().product()` of them.
    pub values: Vec<f32>,
    /// Number of valid leading rows for a ring-like component (a window part-filled); equals
    /// `shape[0]` for a full or fixed-size component.
    pub filled: usize,
}

/// A policy's whole memory, one entry per declared component in declaration order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryState {
    /// Components.
    pub components: Vec<Component>,
}

impl MemoryState {
    /// The component called `name`.
    pub fn get(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }

    /// Replaces component `name` by `other`'s (a native intervention on one carrier).
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] when either state lacks the component or sizes differ.
    pub fn splice(&mut self, name: &str, other: &MemoryState) -> Result<(), HarnessError> {
        let src = other
            .get(name)
            .ok_or_else(|| HarnessError::InvalidConfig(format!("no component `{name}`")))?;
        let dst = self
            .components
            .iter_mut()
            .find(|c| c.name == name)
            .ok_or_else(|| HarnessError::InvalidConfig(format!("no component `{name}`")))?;
        if dst.values.len() != src.values.len() {
            return Err(HarnessError::InvalidConfig(format!(
                "component `{name}` sizes differ: {} vs {}",
                dst.values.len(),
                src.values.len()
            )));
        }
        dst.clone_from(src);
        Ok(())
    }

    /// Bitwise equality (NaN-safe, unlike `==` on floats).
    pub fn bits_equal(&self, other: &MemoryState) -> bool {
        self.components.len() == other.components.len()
            && self.components.iter().zip(&other.components).all(|(a, b)| {
                a.name == b.name
                    && a.filled == b.filled
                    && a.values.len() == b.values.len()
                    && a.values
                        .iter()
                        .zip(&b.values)
                        .all(|(x, y)| x.to_bits() == y.to_bits())
            })
    }
}

/// A frozen history-conditioned policy (seed 002 §III-A).
///
/// Contract: `reset` empties the memory; `observe` folds one history observation into it;
/// `act` maps the present and an action seed to a chunk of [`MemoryPolicy::chunk_len`] actions and
/// must be a function of (memory, present, seed) only, so that the same seed gives the two
/// memories common randomness; `memory`/`set_memory` read and replace the declared memory
/// exactly (a state read and set back reproduces every later action bit for bit).
pub trait MemoryPolicy {
    /// A short stable name (used in records' provenance and error messages).
    fn name(&self) -> String;

    /// The declared memory components.
    fn memory_spec(&self) -> MemorySpec;

    /// Actions per chunk (≥ 1).
    fn chunk_len(&self) -> usize;

    /// Empties the memory (start of an episode).
    fn reset(&mut self);

    /// Updates the memory with one history observation.
    ///
    /// # Errors
    /// Policy-specific (a bridge may fail); built-in policies do not fail.
    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError>;

    /// The action chunk for the present under `action_seed`.
    ///
    /// # Errors
    /// Policy-specific (a bridge may fail); built-in policies do not fail.
    fn act(&mut self, present: &Observation, action_seed: u64)
    -> Result<ActionChunk, HarnessError>;

    /// A copy of the memory.
    ///
    /// # Errors
    /// Policy-specific (a served policy reads it over the wire); built-in policies do not fail.
    fn memory(&mut self) -> Result<MemoryState, HarnessError>;

    /// Replaces the memory.
    ///
    /// # Errors
    /// [`HarnessError::Policy`] when `state` does not match [`MemoryPolicy::memory_spec`].
    fn set_memory(&mut self, state: &MemoryState) -> Result<(), HarnessError>;
}

/// Checks a chunk against the policy's declared length and finiteness.
///
/// # Errors
/// [`HarnessError::Policy`] naming the policy.
pub fn check_chunk(policy: &dyn MemoryPolicy, chunk: &ActionChunk) -> Result<(), HarnessError> {
    let want = policy.chunk_len() * ACTION_DIM;
    let message = if chunk.values.len() != want {
        Some(format!(
            "chunk has {} values, expected {} actions × {ACTION_DIM}",
            chunk.values.len(),
            policy.chunk_len()
        ))
    } else if chunk.values.iter().any(|v| !v.is_finite()) {
        Some("chunk holds a non-finite value".to_owned())
    } else {
        None
    };
    match message {
        Some(message) => Err(HarnessError::Policy {
            policy: policy.name(),
            message,
        }),
        None => Ok(()),
    }
}
