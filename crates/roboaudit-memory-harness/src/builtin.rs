//! Built-in memory policies: calibrators whose audit answer is known (SPEC.md §2 known-answer
//! calibration; seed 002 §IV-D1) and a bank policy that reads its memory imperfectly.
//!
//! All of them keep a [`Bank`] (protected anchor + window) and act by one scripted transport
//! chunk toward a tray: from the present tool-centre point, straight toward the tray at transport
//! height, at most [`STEP`] per axis and action, gripper closed; once over the tray it descends to
//! [`PLACE_Z`], releases and lifts (so closed-loop rollouts can finish the task); plus Gaussian
//! translation noise
//! of `noise_std` drawn from the action seed and the present only (common randomness: both
//! memories get the same noise). What differs between them is which tray they head for:
//!
//! | policy | tray | known answer |
//! |---|---|---|
//! | `faithful` | the remembered tray (below) | F = 1, every pair reliable |
//! | `blind` | the candidate nearest the gripper, memory unread | F = U1 = S = 0 |
//! | `anti` | the candidate that is *not* the remembered tray | F = −1 |
//! | `random` | a candidate drawn from (seed, present) | F = U1 = S = 0 |
//! | `bank` | the remembered tray with probability `r(tray)`, else the other candidate | F = 2 r̄ − 1 |
//!
//! The remembered tray is the one the anchor shows the held block in (put_back, rearrange); when
//! that tray is not among the present's branch candidates, the held block is being swapped and
//! belongs where another block started: the candidate the anchor shows another block in (swap).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_types::seed::Fnv1a;
use serde::{Deserialize, Serialize};

use crate::bank::Bank;
use crate::error::HarnessError;
use crate::policy::{
    ACTION_DIM, ActionChunk, FeatureLayout, MemoryPolicy, MemorySpec, MemoryState, Observation,
};

/// Largest planned translation per action and axis (m), below the testbed's 1.5 cm clip.
pub const STEP: f64 = 0.014;
/// Transport height of the tool-centre point (m), as the testbed's expert uses.
pub const TRANSPORT_Z: f64 = 0.2;
/// Tool-centre-point height at which a carried block is released over a tray (m): tray floor
/// 6 mm + half block 2 cm + 8 mm, as the testbed's expert places.
pub const PLACE_Z: f64 = 0.034;
/// Planar distance to the tray centre (m) below which the chunk descends to place.
pub const PLACE_RADIUS: f64 = 0.002;

/// Which built-in policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyKind {
    /// Memory-faithful calibrator (F = 1).
    Faithful,
    /// Memory-blind calibrator (F = 0).
    Blind,
    /// Anti-faithful calibrator (F = −1).
    Anti,
    /// Random calibrator (memory-independent: F = U1 = 0).
    Random,
    /// Imperfect-recall bank policy.
    Bank,
}

impl PolicyKind {
    /// Every kind.
    pub const ALL: [PolicyKind; 5] = [
        PolicyKind::Faithful,
        PolicyKind::Blind,
        PolicyKind::Anti,
        PolicyKind::Random,
        PolicyKind::Bank,
    ];

    /// Stable name: `faithful`, `blind`, `anti`, `random`, `bank`.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Faithful => "faithful",
            PolicyKind::Blind => "blind",
            PolicyKind::Anti => "anti",
            PolicyKind::Random => "random",
            PolicyKind::Bank => "bank",
        }
    }

    /// Parses a [`PolicyKind::name`].
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] listing the valid names.
    pub fn parse(s: &str) -> Result<PolicyKind, HarnessError> {
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name() == s.trim())
            .ok_or_else(|| {
                HarnessError::InvalidConfig(format!(
                    "unknown policy `{s}`; valid: faithful, blind, anti, random, bank"
                ))
            })
    }
}

/// Largest chunk length: longer than any task's step limit, so no chunk is cut short by it,
/// and small enough that a chunk's buffer size cannot overflow.
pub const MAX_CHUNK_LEN: usize = 1_000;

/// Settings of the built-in policies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyParams {
    /// Actions per chunk (1 to [`MAX_CHUNK_LEN`]).
    pub chunk_len: usize,
    /// Standard deviation of the per-action translation noise (m, ≥ 0, finite).
    pub noise_std: f64,
    /// Window length of the bank (observations, ≥ 1).
    pub window_len: usize,
    /// Bank policy: probability of recalling the right tray, per tray index; trays past the end
    /// use the last entry. Each in [0, 1].
    pub reliability: Vec<f64>,
    /// Bank policy: seed of its recall draws (mixed with the anchor and the action seed).
    pub seed: u64,
}

impl Default for PolicyParams {
    /// 12-action chunks, 2 mm noise, an 8-observation window, and a target-dependent bank
    /// (trays 0 and 1 recalled with probability 0.95, tray 2 with 0.3: a weak target as in seed
    /// 002 §IV-B).
    fn default() -> Self {
        PolicyParams {
            chunk_len: 12,
            noise_std: 0.002,
            window_len: 8,
            reliability: vec![0.95, 0.95, 0.3],
            seed: 0,
        }
    }
}

impl PolicyParams {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<(), HarnessError> {
        let bad = |m: &str| Err(HarnessError::InvalidConfig(m.to_owned()));
        if !(1..=MAX_CHUNK_LEN).contains(&self.chunk_len) {
            return Err(HarnessError::InvalidConfig(format!(
                "chunk_len must be in 1..={MAX_CHUNK_LEN}, got {}",
                self.chunk_len
            )));
        }
        if !(self.noise_std.is_finite() && self.noise_std >= 0.0) {
            return bad("noise_std must be finite and ≥ 0");
        }
        if self.window_len == 0 {
            return bad("window_len must be ≥ 1");
        }
        if self.reliability.is_empty() || self.reliability.iter().any(|r| !(0.0..=1.0).contains(r))
        {
            return Err(HarnessError::InvalidConfig(format!(
                "reliability needs at least one entry, each in [0, 1], got {:?}",
                self.reliability
            )));
        }
        Ok(())
    }

    /// The bank's recall probability for `tray`.
    pub fn reliability_of(&self, tray: usize) -> f64 {
        self.reliability
            .get(tray)
            .or(self.reliability.last())
            .copied()
            .unwrap_or(1.0)
    }
}

/// A built-in policy (see the module table).
#[derive(Debug, Clone)]
pub struct BuiltinPolicy {
    kind: PolicyKind,
    params: PolicyParams,
    bank: Bank,
}

/// FNV-1a over `u64` words, for seeding draws from content.
fn mix(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = Fnv1a::new();
    for w in words {
        h.write_u64(w);
    }
    h.finish()
}

fn bits(v: &[f32]) -> impl Iterator<Item = u64> + '_ {
    v.iter().map(|x| u64::from(x.to_bits()))
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The block held at the present: the highest one (ties: lowest index).
fn held_block(obs: &Observation) -> usize {
    let l = obs.layout;
    let z = |b: usize| {
        obs.features
            .get(l.block(b) + 2)
            .copied()
            .unwrap_or(f32::MIN)
    };
    (0..l.n_blocks).fold(0, |best, b| if z(b) > z(best) { b } else { best })
}

/// The tray whose centre (from `trays_from`) is nearest to block `b` as seen in `block_from`.
fn nearest_tray(block_from: &[f32], trays_from: &Observation, b: usize) -> usize {
    let l = trays_from.layout;
    let at = |v: &[f32], i: usize| f64::from(v.get(i).copied().unwrap_or(0.0));
    let (bx, by) = (at(block_from, l.block(b)), at(block_from, l.block(b) + 1));
    let d = |t: usize| {
        let o = l.tray(t);
        (at(&trays_from.features, o) - bx).hypot(at(&trays_from.features, o + 1) - by)
    };
    (0..l.n_trays).fold(0, |best, t| if d(t) < d(best) { t } else { best })
}

/// The scripted transport chunk from the present toward tray `tray` (see the module docs).
pub fn transport_chunk(
    present: &Observation,
    tray: usize,
    chunk_len: usize,
    noise: Option<(f64, u64)>,
) -> ActionChunk {
    let l: FeatureLayout = present.layout;
    let f = |i: usize| f64::from(present.features.get(i).copied().unwrap_or(0.0));
    let target = [f(l.tray(tray)), f(l.tray(tray) + 1), TRANSPORT_Z];
    let mut pos = [f(7), f(8), f(9)];
    // Index 15 is the last gripper command: a released block means the place is done.
    let mut grip = if f(FeatureLayout::PROPRIO - 1) > 0.0 {
        1.0
    } else {
        -1.0
    };
    let mut rng = noise.map(|(_, seed)| {
        ChaCha8Rng::seed_from_u64(mix(std::iter::once(seed).chain(bits(&present.features))))
    });
    let std = noise.map_or(0.0, |(s, _)| s);
    let mut values = Vec::with_capacity(chunk_len * ACTION_DIM);
    for _ in 0..chunk_len {
        let planar = (target[0] - pos[0]).hypot(target[1] - pos[1]);
        // Transport at height; over the tray descend; at the bottom release; then lift.
        let goal = if grip < 0.0 {
            [pos[0], pos[1], TRANSPORT_Z]
        } else if planar > PLACE_RADIUS {
            target
        } else if pos[2] > PLACE_Z + 0.003 {
            [target[0], target[1], PLACE_Z]
        } else {
            grip = -1.0;
            pos
        };
        let mut d = [0.0f64; 3];
        for k in 0..3 {
            d[k] = (goal[k] - pos[k]).clamp(-STEP, STEP);
            pos[k] += d[k];
        }
        if let Some(rng) = rng.as_mut() {
            for v in &mut d {
                *v += std * normal(rng);
            }
        }
        values.extend(d.iter().map(|&v| v as f32));
        values.extend([0.0f32, 0.0, 0.0, grip as f32]);
    }
    ActionChunk { values }
}

impl BuiltinPolicy {
    /// A built-in policy of `kind`.
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] when `params` fail [`PolicyParams::validate`].
    pub fn new(kind: PolicyKind, params: PolicyParams) -> Result<BuiltinPolicy, HarnessError> {
        params.validate()?;
        let bank = Bank::new(params.window_len);
        Ok(BuiltinPolicy { kind, params, bank })
    }

    /// The kind.
    pub fn kind(&self) -> PolicyKind {
        self.kind
    }

    /// Its parameters.
    pub fn params(&self) -> &PolicyParams {
        &self.params
    }

    /// The tray the anchor remembers for the block held now (`None` without an anchor): its own
    /// origin, or, when that is no branch candidate (swap), another block's origin that is.
    fn recalled(&self, present: &Observation) -> Option<usize> {
        let anchor = self.bank.anchor()?;
        let held = held_block(present);
        let own = nearest_tray(anchor, present, held);
        let candidates = &present.branch_candidates;
        if candidates.is_empty() || candidates.contains(&own) {
            return Some(own);
        }
        Some(
            (0..present.layout.n_blocks)
                .filter(|&b| b != held)
                .map(|b| nearest_tray(anchor, present, b))
                .find(|t| candidates.contains(t))
                .unwrap_or(own),
        )
    }

    fn other_candidate(present: &Observation, tray: usize) -> usize {
        present
            .branch_candidates
            .iter()
            .copied()
            .find(|&c| c != tray)
            .unwrap_or(tray)
    }

    fn first_candidate(present: &Observation) -> usize {
        present.branch_candidates.first().copied().unwrap_or(0)
    }

    fn choose(&self, present: &Observation, action_seed: u64) -> usize {
        let recalled = self
            .recalled(present)
            .unwrap_or_else(|| Self::first_candidate(present));
        match self.kind {
            PolicyKind::Faithful => recalled,
            PolicyKind::Blind => Self::first_candidate(present),
            PolicyKind::Anti => Self::other_candidate(present, recalled),
            PolicyKind::Random => {
                let mut rng = ChaCha8Rng::seed_from_u64(mix(
                    std::iter::once(action_seed ^ 0x5eed).chain(bits(&present.features))
                ));
                let n = present.branch_candidates.len().max(1);
                let i = ((rng.random::<f64>() * n as f64) as usize).min(n - 1);
                present.branch_candidates.get(i).copied().unwrap_or(0)
            }
            PolicyKind::Bank => {
                let anchor = self.bank.anchor().unwrap_or(&[]);
                let mut rng = ChaCha8Rng::seed_from_u64(mix([self.params.seed, action_seed]
                    .into_iter()
                    .chain(bits(anchor))));
                if rng.random::<f64>() < self.params.reliability_of(recalled) {
                    recalled
                } else {
                    Self::other_candidate(present, recalled)
                }
            }
        }
    }
}

impl MemoryPolicy for BuiltinPolicy {
    fn name(&self) -> String {
        self.kind.name().to_owned()
    }

    fn memory_spec(&self) -> MemorySpec {
        self.bank.spec()
    }

    fn chunk_len(&self) -> usize {
        self.params.chunk_len
    }

    fn reset(&mut self) {
        self.bank.clear();
    }

    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        self.bank.observe(obs);
        Ok(())
    }

    fn act(
        &mut self,
        present: &Observation,
        action_seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        let tray = self.choose(present, action_seed);
        Ok(transport_chunk(
            present,
            tray,
            self.params.chunk_len,
            Some((self.params.noise_std, action_seed)),
        ))
    }

    fn memory(&mut self) -> Result<MemoryState, HarnessError> {
        Ok(self.bank.state())
    }

    fn set_memory(&mut self, state: &MemoryState) -> Result<(), HarnessError> {
        self.bank.set_state(state, self.kind.name())
    }
}
