//! What a target policy reads: the recorded proprioception and object poses of one frame.
//!
//! Target policies are functions of this observation (plus seeded noise), so their actions can be
//! computed at any recorded dataset frame exactly as when they drive an episode (SPEC.md §3: the
//! policy-actions file gives `π(x_t)` at every frame). Values are the `f32` numbers the dataset stores.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_testbed::{Episode, Frame};

/// Width of the proprioception vector (`observation.state`).
pub const STATE_DIM: usize = 15;

/// One frame's policy-visible numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Proprioception, 15 values: joints j1..j7 (rad), tool-centre point x, y, z (m), its quaternion
    /// (w, x, y, z), gripper opening in `[0, 1]` (the dataset's `observation.state`).
    pub state: Vec<f32>,
    /// Per block (red, green, blue, yellow) position x, y, z (m) and quaternion w, x, y, z
    /// (the dataset's `observation.environment_state`, 28 values in the push suite).
    pub env: Vec<f32>,
}

impl Observation {
    /// The observation of an episode's present state, converted to `f32` exactly as
    /// [`roboaudit_testbed::record_episode`] records it.
    pub fn of_episode(ep: &Episode) -> Observation {
        Observation {
            state: roboaudit_testbed::record::recorded_state(ep),
            env: roboaudit_testbed::record::env_state(ep),
        }
    }

    /// The observation recorded in a frame (before its action).
    pub fn of_frame(f: &Frame) -> Observation {
        Observation {
            state: f.state.clone(),
            env: f.env_state.clone(),
        }
    }

    /// Tool-centre point position (m); zeros when the state is too short.
    pub fn tcp(&self) -> [f64; 3] {
        [7, 8, 9].map(|k| self.state.get(k).map_or(0.0, |&v| f64::from(v)))
    }

    /// Yaw of the tool-centre point (rad, in `(−π, π]`).
    pub fn tcp_yaw(&self) -> f64 {
        let q = [10, 11, 12, 13].map(|k| self.state.get(k).map_or(0.0, |&v| f64::from(v)));
        let [w, x, y, z] = q;
        (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z))
    }

    /// Position of block `i` (m), if recorded.
    pub fn block(&self, i: usize) -> Option<[f64; 3]> {
        let s = self.env.get(i * 7..i * 7 + 3)?;
        Some([f64::from(s[0]), f64::from(s[1]), f64::from(s[2])])
    }
}

/// Where a draw of policy noise belongs: the noise of a target policy at a frame is a pure function of
/// the policy's seed, this key and the sample number, so that the same frame gives the same actions
/// whether the policy drives or is queried afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NoiseKey {
    /// Stream: an episode's seed when the policy drives, or the dataset (for policy-action files).
    pub stream: u64,
    /// Frame: step within the episode, or global dataset frame index.
    pub frame: u64,
    /// Sample number `0..M`.
    pub sample: u64,
}

/// SplitMix64's output function: a well-mixed 64-bit hash step.
pub(crate) use roboaudit_types::seed::splitmix64 as mix;

/// A ChaCha8 generator seeded from a seed and any number of keys.
pub(crate) fn rng_for(seed: u64, keys: &[u64]) -> ChaCha8Rng {
    let mut h = mix(seed);
    for &k in keys {
        h = mix(h ^ k);
    }
    ChaCha8Rng::seed_from_u64(h)
}

/// A standard normal draw (Box–Muller).
pub(crate) fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
