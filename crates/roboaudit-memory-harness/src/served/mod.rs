//! A [`MemoryPolicy`] served by another process over openpi's websocket protocol (the user's own
//! policy; see `roboaudit-policy-client`).
//!
//! A served policy's memory lives on the server, and a deployed policy folds every packet it is
//! queried with. Two ways to hold it, chosen from the server's declared capabilities:
//!
//! - **Native memory** (the server declares `memory_get` and `memory_set`): the memory is the
//!   server's own named float32 components, read and replaced by those commands. The spec is
//!   read once at connection (after a `reset`): one component per name, shape `[len]`,
//!   protected when named in the metadata's `roboaudit.protected` list. A present is queried
//!   between a `memory_get` and a `memory_set` of the same memory, so an answer never changes
//!   the memory (the [`MemoryPolicy`] contract). Native interventions (`memory intervene`) need
//!   this mode.
//! - **History token** (`reset` only): the harness keeps the history on its side;
//!   [`MemoryPolicy::memory`] returns a token naming the observations folded since the last
//!   reset (component `history`, four 16-bit pieces of their FNV-1a hash, exact in `f32`), and
//!   before a query whose memory the server does not hold, the server is `reset` and the
//!   history replayed (each observation queried and its answer discarded).
//!
//! Both memories thus start from the same empty memory, as SPEC §2 requires; a server without
//! `reset` is refused. With `action_seed` each query carries the harness's action seed (common
//! randomness); without it every present is queried twice from the same memory and a policy
//! whose two answers differ is refused as non-deterministic. A connection replaced mid-run (one
//! reconnection per query, see the client) is recovered by replaying from a reset in token mode
//! and by setting the saved memory again in native mode; an observation folded across a
//! reconnection in native mode cannot be recovered and fails the run, which a rerun resumes.
//!
//! Wire mapping of an [`Observation`] (keys renamed by the server's `observation_keys`
//! metadata for `state` and `image`): `observation/state` = `features` (float32, layout
//! [`crate::FeatureLayout`]), `observation/image` = the camera frame (uint8 HWC) when rendered,
//! `roboaudit/layout` = `[n_blocks, n_trays, n_pads]`, `roboaudit/branch_candidates` = the
//! candidate trays (empty during a history). The answer's `actions` must have shape
//! `(chunk_len, 7)`: testbed actions `[dx, dy, dz, droll, dpitch, dyaw, gripper]` in metres,
//! radians and the gripper command in [−1, 1], checked on every answer.

mod native;
pub mod serve;
mod token;

use roboaudit_policy_client::{
    ACTION_SEED_KEY, CAP_ACTION_SEED, CAP_MEMORY_GET, CAP_MEMORY_SET, CAP_RESET, Field, NdArray,
    PolicyClient, PolicyClientError,
};

use crate::error::HarnessError;
use crate::policy::{ACTION_DIM, ActionChunk, MemoryPolicy, MemorySpec, MemoryState, Observation};

pub use token::HISTORY;

/// Observation key of the feature layout.
pub const LAYOUT_KEY: &str = "roboaudit/layout";
/// Observation key of the branch candidates.
pub const CANDIDATES_KEY: &str = "roboaudit/branch_candidates";
/// Metadata key (under `roboaudit`) listing the protected memory components of a native-memory
/// server.
pub const PROTECTED_KEY: &str = "protected";

/// How the memory is held (see the module docs).
enum Memory {
    Native(native::NativeMemory),
    Token(token::TokenMemory),
}

/// The connection and what a packet looks like on it.
struct Wire {
    name: String,
    client: PolicyClient,
    chunk_len: usize,
    state_key: String,
    image_key: String,
}

/// A served memory policy (see the module docs).
pub struct ServedPolicy {
    wire: Wire,
    memory: Memory,
}

impl std::fmt::Debug for ServedPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedPolicy")
            .field("name", &self.wire.name)
            .field("client", &self.wire.client)
            .field("native_memory", &self.has_native_memory())
            .finish_non_exhaustive()
    }
}

impl ServedPolicy {
    /// Wraps a connected client as the memory policy `name`. The chunk length is the server's
    /// `action_horizon` metadata when it declares one, else `chunk_len`. A server declaring
    /// `memory_get` and `memory_set` is reset and its memory read once, for the spec.
    ///
    /// # Errors
    /// [`HarnessError::Policy`] when the server does not declare `reset` (the memory audit's
    /// two histories must start from the same empty memory), declares an `action_horizon`
    /// outside 1..=[`crate::MAX_CHUNK_LEN`], or (native memory) answers `memory_get` with no
    /// component; [`HarnessError::Served`] when those first commands fail.
    pub fn new(
        name: &str,
        mut client: PolicyClient,
        chunk_len: usize,
    ) -> Result<ServedPolicy, HarnessError> {
        let policy_error = |message: String| HarnessError::Policy {
            policy: name.to_owned(),
            message,
        };
        client
            .require(
                CAP_RESET,
                "the memory audit: its two histories must start from the same empty memory",
            )
            .map_err(|e| policy_error(roboaudit_types::error_chain(&e)))?;
        let declared = client
            .metadata()
            .get("action_horizon")
            .and_then(Field::as_f64);
        let chunk_len = match declared {
            Some(h) if h >= 1.0 && h <= crate::MAX_CHUNK_LEN as f64 && h.fract() == 0.0 => {
                h as usize
            }
            Some(h) => {
                return Err(policy_error(format!(
                    "metadata action_horizon {h} is not in 1..={}",
                    crate::MAX_CHUNK_LEN
                )));
            }
            None => chunk_len,
        };
        let state_key = client
            .observation_key("state")
            .unwrap_or_else(|| "observation/state".into());
        let image_key = client
            .observation_key("image")
            .unwrap_or_else(|| "observation/image".into());
        let memory = if client.has(CAP_MEMORY_GET) && client.has(CAP_MEMORY_SET) {
            Memory::Native(native::NativeMemory::connect(name, &mut client)?)
        } else {
            Memory::Token(token::TokenMemory::default())
        };
        Ok(ServedPolicy {
            wire: Wire {
                name: name.to_owned(),
                client,
                chunk_len,
                state_key,
                image_key,
            },
            memory,
        })
    }

    /// The client (latency, capabilities).
    pub fn client(&self) -> &PolicyClient {
        &self.wire.client
    }

    /// Whether the memory is the server's own components (`memory_get` and `memory_set`
    /// declared), as native interventions need.
    pub fn has_native_memory(&self) -> bool {
        matches!(self.memory, Memory::Native(_))
    }

    /// The chunk for the present from the current memory, leaving the memory as it was.
    fn query(&mut self, present: &Observation, seed: u64) -> Result<ActionChunk, HarnessError> {
        match &mut self.memory {
            Memory::Native(m) => m.query(&mut self.wire, present, seed),
            Memory::Token(t) => t.query(&mut self.wire, present, seed),
        }
    }
}

impl Wire {
    /// The wire packet of `obs`, with the action seed when given.
    fn packet(&self, obs: &Observation, seed: Option<u64>) -> Vec<(String, Field)> {
        let l = obs.layout;
        let ints = |v: &[usize]| Field::List(v.iter().map(|&n| Field::Int(n as i64)).collect());
        let mut p = vec![
            (
                self.state_key.clone(),
                Field::Array(NdArray::from_f32(vec![obs.features.len()], &obs.features)),
            ),
            (
                LAYOUT_KEY.to_owned(),
                ints(&[l.n_blocks, l.n_trays, l.n_pads]),
            ),
            (CANDIDATES_KEY.to_owned(), ints(&obs.branch_candidates)),
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

    /// Folds one observation into the server's memory (answer discarded).
    fn fold(&mut self, obs: &Observation, k: usize) -> Result<(), PolicyClientError> {
        let p = self.packet(obs, None);
        self.client
            .infer(p, &format!("memory audit (history observation {k})"))
            .map(|_| ())
    }

    /// One query of the present from the memory the server holds; checks the answer's shape.
    fn ask(&mut self, present: &Observation, seed: u64) -> Result<ActionChunk, HarnessError> {
        let seeded = self.client.has(CAP_ACTION_SEED);
        let p = self.packet(present, seeded.then_some(seed));
        let step = format!("memory audit (present, action seed {seed})");
        let reply = self.client.infer(p, &step)?;
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

    /// A query of the present made by `attempt` (which returns the answer and whether the
    /// connection stayed the same while the present was asked), made again once when the
    /// connection was replaced meanwhile: the answer's memory is then unknown.
    fn ask_on_one_connection(
        &mut self,
        mut attempt: impl FnMut(&mut Wire) -> Result<(ActionChunk, bool), HarnessError>,
    ) -> Result<ActionChunk, HarnessError> {
        for _ in 0..2 {
            if let (chunk, true) = attempt(self)? {
                return Ok(chunk);
            }
        }
        Err(self.contract(
            "the connection was replaced twice while the present was queried; the answer's memory is unknown",
        ))
    }

    fn contract(&self, message: &str) -> HarnessError {
        HarnessError::Policy {
            policy: self.name.clone(),
            message: message.to_owned(),
        }
    }
}

impl MemoryPolicy for ServedPolicy {
    fn name(&self) -> String {
        self.wire.name.clone()
    }

    fn memory_spec(&self) -> MemorySpec {
        match &self.memory {
            Memory::Native(m) => m.spec.clone(),
            Memory::Token(_) => token::spec(),
        }
    }

    fn chunk_len(&self) -> usize {
        self.wire.chunk_len
    }

    fn reset(&mut self) {
        match &mut self.memory {
            Memory::Native(m) => m.reset_pending = true,
            Memory::Token(t) => t.history.clear(),
        }
    }

    fn observe(&mut self, obs: &Observation) -> Result<(), HarnessError> {
        match &mut self.memory {
            Memory::Native(m) => m.observe(&mut self.wire, obs),
            Memory::Token(t) => t.observe(&mut self.wire, obs),
        }
    }

    fn act(
        &mut self,
        present: &Observation,
        action_seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        let chunk = self.query(present, action_seed)?;
        if !self.wire.client.has(CAP_ACTION_SEED) {
            let again = self.query(present, action_seed)?;
            let same = chunk.values.len() == again.values.len()
                && chunk
                    .values
                    .iter()
                    .zip(&again.values)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            if !same {
                return Err(self.wire.contract(
                    "non-deterministic: the same present from the same memory gave two different chunks, and the server does not declare `action_seed`, so the two memories cannot share common randomness (docs/methods.md §2); declare action_seed or serve a deterministic policy",
                ));
            }
        }
        Ok(chunk)
    }

    fn memory(&mut self) -> Result<MemoryState, HarnessError> {
        match &mut self.memory {
            Memory::Native(m) => m.memory(&mut self.wire),
            Memory::Token(t) => Ok(t.token()),
        }
    }

    fn set_memory(&mut self, state: &MemoryState) -> Result<(), HarnessError> {
        match &mut self.memory {
            Memory::Native(m) => m.set_memory(&mut self.wire, state),
            Memory::Token(t) => t.set_memory(&self.wire, state),
        }
    }
}
