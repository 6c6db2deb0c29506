//! A [`MemoryPolicy`] served by another process over openpi's websocket protocol (the user's own
//! policy; see `roboaudit-policy-client`).
//!
//! A served policy's memory lives on the server, and a deployed policy folds every packet it is
//! queried with. The harness therefore keeps the history on its side: [`MemoryPolicy::memory`]
//! returns a token naming the observations folded since the last reset (component `history`,
//! four 16-bit pieces of their FNV-1a hash, exact in `f32`), and before a query whose memory
//! the server does not hold, the server is `reset` and the history replayed (each observation
//! queried and its answer discarded). Both memories thus start from the same empty memory, as
//! SPEC §2 requires; the server must declare `reset` (refused otherwise). With `action_seed`
//! each query carries the harness's action seed (common randomness); without it every present
//! is queried twice from the same memory and a policy whose two answers differ is refused as
//! non-deterministic.
//!
//! Wire mapping of an [`Observation`] (keys renamed by the server's `observation_keys`
//! metadata for `state` and `image`): `observation/state` = `features` (float32, layout
//! [`crate::FeatureLayout`]), `observation/image` = the camera frame (uint8 HWC) when rendered,
//! `roboaudit/layout` = `[n_blocks, n_trays, n_pads]`, `roboaudit/branch_candidates` = the
//! candidate trays (empty during a history). The answer's `actions` must have shape
//! `(chunk_len, 7)`: testbed actions `[dx, dy, dz, droll, dpitch, dyaw, gripper]` in metres,
//! radians and the gripper command in [−1, 1], checked on every answer.

use std::cell::RefCell;
use std::collections::HashMap;

use roboaudit_policy_client::{
    ACTION_SEED_KEY, CAP_ACTION_SEED, CAP_RESET, Field, NdArray, PolicyClient,
};

use crate::error::HarnessError;
use crate::policy::{
    ACTION_DIM, ActionChunk, Component, ComponentSpec, MemoryPolicy, MemorySpec, MemoryState,
    Observation,
};

/// Name of the history-token component.
pub const HISTORY: &str = "history";
/// Observation key of the feature layout.
pub const LAYOUT_KEY: &str = "roboaudit/layout";
/// Observation key of the branch candidates.
pub const CANDIDATES_KEY: &str = "roboaudit/branch_candidates";

/// A served memory policy (see the module docs).
pub struct ServedPolicy {
    name: String,
    client: PolicyClient,
    chunk_len: usize,
    state_key: String,
    image_key: String,
    history: Vec<Observation>,
    known: RefCell<HashMap<u64, Vec<Observation>>>,
    /// The history the server's memory holds, by hash; `None` after a query that folded a
    /// present (or before the first reset).
    server: Option<u64>,
}

impl std::fmt::Debug for ServedPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedPolicy")
            .field("name", &self.name)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn history_hash(obs: &[Observation]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    fnv(&mut h, &(obs.len() as u64).to_le_bytes());
    for o in obs {
        let p = o.packet_bytes();
        fnv(&mut h, &(p.len() as u64).to_le_bytes());
        fnv(&mut h, &p);
    }
    h
}

impl ServedPolicy {
    /// Wraps a connected client as the memory policy `name`. The chunk length is the server's
    /// `action_horizon` metadata when it declares one, else `chunk_len`.
    ///
    /// # Errors
    /// [`HarnessError::Policy`] when the server does not declare `reset` (the memory audit's
    /// two histories must start from the same empty memory), or declares an `action_horizon`
    /// outside 1..=[`crate::MAX_CHUNK_LEN`].
    pub fn new(
        name: &str,
        client: PolicyClient,
        chunk_len: usize,
    ) -> Result<ServedPolicy, HarnessError> {
        client
            .require(
                CAP_RESET,
                "the memory audit: its two histories must start from the same empty memory",
            )
            .map_err(|e| HarnessError::Policy {
                policy: name.to_owned(),
                message: e.to_string(),
            })?;
        let declared = client
            .metadata()
            .get("action_horizon")
            .and_then(Field::as_f64);
        let chunk_len = match declared {
            Some(h) if h >= 1.0 && h <= crate::MAX_CHUNK_LEN as f64 && h.fract() == 0.0 => {
                h as usize
            }
            Some(h) => {
                return Err(HarnessError::Policy {
                    policy: name.to_owned(),
                    message: format!(
                        "metadata action_horizon {h} is not in 1..={}",
                        crate::MAX_CHUNK_LEN
                    ),
                });
            }
            None => chunk_len,
        };
        let state_key = client
            .observation_key("state")
            .unwrap_or_else(|| "observation/state".into());
        let image_key = client
            .observation_key("image")
            .unwrap_or_else(|| "observation/image".into());
        Ok(ServedPolicy {
            name: name.to_owned(),
            client,
            chunk_len,
            state_key,
            image_key,
            history: Vec::new(),
            known: RefCell::new(HashMap::new()),
            server: None,
        })
    }

    /// The client (latency, capabilities).
    pub fn client(&self) -> &PolicyClient {
        &self.client
    }

    fn packet(&self, obs: &Observation, seed: Option<u64>) -> Vec<(String, Field)> {
        let l = obs.layout;
        let mut p = vec![
            (
                self.state_key.clone(),
                Field::Array(NdArray::from_f32(vec![obs.features.len()], &obs.features)),
            ),
            (
                LAYOUT_KEY.to_owned(),
                Field::List(
                    [l.n_blocks, l.n_trays, l.n_pads]
                        .iter()
                        .map(|&n| Field::Int(n as i64))
                        .collect(),
                ),
            ),
            (
                CANDIDATES_KEY.to_owned(),
                Field::List(
                    obs.branch_candidates
                        .iter()
                        .map(|&c| Field::Int(c as i64))
                        .collect(),
                ),
            ),
        ];
        if let Some(f) = &obs.frame {
            p.push((
                self.image_key.clone(),
                Field::Array(NdArray::from_u8(vec![f.height, f.width, 3], f.rgb.clone())),
            ));
        }
        if let Some(s) = seed {
            // Collect configs keep seeds ≤ i64::MAX; a larger one wraps rather than fails.
            p.push((ACTION_SEED_KEY.to_owned(), Field::Int(s as i64)));
        }
        p
    }

    fn err(&self, e: roboaudit_policy_client::PolicyClientError) -> HarnessError {
        HarnessError::Served(e)
    }

    /// Makes the server hold the current history: reset, then replay it.
    fn sync(&mut self) -> Result<(), HarnessError> {
        let h = history_hash(&self.history);
        if self.server == Some(h) {
            return Ok(());
        }
        self.client
            .reset("memory audit (reset before a history)")
            .map_err(|e| self.err(e))?;
        for k in 0..self.history.len() {
            let p = self.packet(&self.history[k], None);
            self.client
                .infer(p, &format!("memory audit (history observation {k})"))
                .map_err(|e| self.err(e))?;
        }
        self.server = Some(h);
        Ok(())
    }

    fn query(&mut self, present: &Observation, seed: u64) -> Result<ActionChunk, HarnessError> {
        self.sync()?;
        let seeded = self.client.has(CAP_ACTION_SEED);
        let p = self.packet(present, seeded.then_some(seed));
        let step = format!("memory audit (present, action seed {seed})");
        let reply = self.client.infer(p, &step).map_err(|e| self.err(e))?;
        self.server = None;
        if reply.horizon != self.chunk_len || reply.dim != ACTION_DIM {
            return Err(HarnessError::Policy {
                policy: self.name.clone(),
                message: format!(
                    "actions have shape ({}, {}); the harness needs ({}, {ACTION_DIM}): {} actions per chunk (the server's action_horizon metadata or --chunk-len) of [dx, dy, dz, droll, dpitch, dyaw, gripper] in metres, radians and [-1, 1]",
                    reply.horizon, reply.dim, self.chunk_len, self.chunk_len
                ),
            });
        }
        Ok(ActionChunk {
            values: reply.actions,
        })
    }
}

impl MemoryPolicy for ServedPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn memory_spec(&self) -> MemorySpec {
        MemorySpec {
            components: vec![ComponentSpec {
                name: HISTORY.into(),
                shape: vec![4],
                protected: false,
            }],
        }
    }

    fn chunk_len(&self) -> usize {
        self.chunk_len
    }

    fn reset(&mut self) {
        self.history.clear();
    }

    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        self.sync()?;
        let p = self.packet(obs, None);
        let k = self.history.len();
        self.client
            .infer(p, &format!("memory audit (history observation {k})"))
            .map_err(|e| self.err(e))?;
        self.history.push(obs.clone());
        self.server = Some(history_hash(&self.history));
        Ok(())
    }

    fn act(
        &mut self,
        present: &Observation,
        action_seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        let chunk = self.query(present, action_seed)?;
        if !self.client.has(CAP_ACTION_SEED) {
            let again = self.query(present, action_seed)?;
            let same = chunk.values.len() == again.values.len()
                && chunk
                    .values
                    .iter()
                    .zip(&again.values)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            if !same {
                return Err(HarnessError::Policy {
                    policy: self.name.clone(),
                    message: "non-deterministic: the same present from the same memory gave two different chunks, and the server does not declare `action_seed`, so the two memories cannot share common randomness (SPEC §2); declare action_seed or serve a deterministic policy".into(),
                });
            }
        }
        Ok(chunk)
    }

    fn memory(&self) -> MemoryState {
        let h = history_hash(&self.history);
        self.known
            .borrow_mut()
            .entry(h)
            .or_insert_with(|| self.history.clone());
        MemoryState {
            components: vec![Component {
                name: HISTORY.into(),
                values: (0..4).map(|k| ((h >> (16 * k)) & 0xffff) as f32).collect(),
                filled: 4,
            }],
        }
    }

    fn set_memory(&mut self, state: &MemoryState) -> Result<(), HarnessError> {
        let bad = |m: &str| HarnessError::Policy {
            policy: self.name.clone(),
            message: m.to_owned(),
        };
        let c = state
            .get(HISTORY)
            .filter(|c| c.values.len() == 4)
            .ok_or_else(|| bad("a served policy's memory is a `history` token of 4 values"))?;
        let mut h = 0u64;
        for (k, v) in c.values.iter().enumerate() {
            if !(v.is_finite() && *v >= 0.0 && *v < 65536.0 && v.fract() == 0.0) {
                return Err(bad(
                    "the history token holds a value that is not a 16-bit integer",
                ));
            }
            h |= (*v as u64) << (16 * k);
        }
        let history = self
            .known
            .borrow()
            .get(&h)
            .cloned()
            .ok_or_else(|| bad("the history token names no history this policy has seen (a served policy's memory can only be set to one it produced)"))?;
        self.history = history;
        Ok(())
    }
}
