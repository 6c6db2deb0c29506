//! Client of served robot policies (issue: audit the user's own policy).
//!
//! Speaks openpi's websocket policy protocol exactly, so an unmodified openpi server works:
//! on connecting the server sends one binary msgpack frame with its metadata; each query sends
//! one msgpack map (the observation) and receives one map with `actions` of shape
//! `(action_horizon, action_dim)`; arrays travel as msgpack-numpy ([`msgpack_numpy`]); a server
//! error arrives as a text frame followed by close code 1011. roboaudit's extensions are
//! optional and used only when the metadata declares them under
//! `"roboaudit": {"version": 1, "capabilities": [...]}`:
//!
//! | capability | message | meaning |
//! |---|---|---|
//! | `reset` | `{"roboaudit/command": "reset"}` → any map | a new episode: the policy clears its history |
//! | `action_seed` | key `roboaudit/action_seed` (int) in an observation | the sampling seed of that query |
//! | `memory_get` | `{"roboaudit/command": "memory_get"}` → `{"roboaudit/memory": {name: float32 array}}` | the memory's named components |
//! | `memory_set` | `{"roboaudit/command": "memory_set", "roboaudit/memory": {...}}` → any map | replaces them |
//!
//! [`dataset_actions`] queries a served policy at every frame of a LeRobot dataset and writes
//! the policy-actions file that `fqe fit` reads; [`server`] is an in-process server for tests.

pub mod client;
pub mod dataset_actions;
pub mod error;
pub mod latency;
pub mod msgpack_numpy;
pub mod options;
pub mod server;
pub mod summary;

pub use client::{
    ACTION_SEED_KEY, CAP_ACTION_SEED, CAP_MEMORY_GET, CAP_MEMORY_SET, CAP_RESET, ClientConfig,
    DEFAULT_URL, LatencySummary, PolicyClient, Reply,
};
pub use error::PolicyClientError;
pub use msgpack_numpy::{Field, NdArray};
pub use options::{ActionsOptions, ServedOptions};
