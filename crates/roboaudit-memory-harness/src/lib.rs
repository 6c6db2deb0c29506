//! Counterfactual memory audit harness (SPEC.md §2; seed 002 §III–IV): a memory-policy interface,
//! built-in calibrator and bank policies, crossed histories on the MuJoCo testbed, and the
//! known-answer calibration.
//!
//! [`collect`] builds pairs of task-consistent histories that warrant different branches and
//! reconverge to one present, verifies the present (policy-visible packet bitwise equal in both
//! evaluator worlds, hidden physics within a declared [`Tolerance`]), excludes failing pairs before
//! any query, queries a frozen [`MemoryPolicy`] once per memory and action seed with common
//! randomness, executes every saved chunk in both worlds and returns one
//! [`roboaudit_data::MemoryRecord`] per (pair, memory, seed, world), ready for
//! [`roboaudit_memory::analyze`]. [`calibrate`] runs every calibrator through collect and audit
//! and compares the known answers. [`route_control`] is the irrelevant-history control over a
//! routed collection; [`intervene`] runs native-rollout history replacement and restoration;
//! [`natural`] runs untreated native episodes for the natural-occurrence analysis.
//!
//! ```no_run
//! use roboaudit_memory_harness::{BuiltinPolicy, CollectConfig, PolicyKind, PolicyParams, collect};
//! let mut policy = BuiltinPolicy::new(PolicyKind::Bank, PolicyParams::default())?;
//! let cfg = CollectConfig { pairs: 8, ..CollectConfig::default() };
//! let run = collect(&cfg, &mut policy, &mut |_, _| {})?;
//! let audit = roboaudit_memory::analyze(&run.records, &roboaudit_memory::Plan::default())?;
//! println!("F = {:?}", audit.faithfulness.value);
//! # Ok::<(), roboaudit_memory_harness::HarnessError>(())
//! ```

pub mod bank;
pub mod builtin;
mod calibrate;
mod collect;
mod error;
pub mod execute;
pub mod intervals;
pub mod intervene;
pub mod intervene_output;
pub mod intervene_shard;
pub mod natural;
pub mod natural_shard;
pub mod observe;
pub mod output;
pub mod pairs;
mod policy;
pub mod request;
pub mod resume;
pub mod served;
mod shard_parts;
pub mod tasks;

pub use builtin::{BuiltinPolicy, MAX_CHUNK_LEN, PolicyKind, PolicyParams};
pub use calibrate::{
    Calibration, Calibrator, CalibratorResult, Check, calibrate, calibrate_policy,
};
pub use collect::{
    CollectConfig, Collection, MANIFEST_SCHEMA, Manifest, PairExclusion, PairPart, Reuse, assemble,
    collect, collect_pair,
};
pub use error::HarnessError;
pub use observe::Tolerance;
pub use pairs::Route;
pub use policy::{
    ACTION_DIM, ActionChunk, Component, ComponentSpec, FeatureLayout, Frame, MemoryPolicy,
    MemorySpec, MemoryState, Observation, check_chunk,
};
pub use roboaudit_memory::{DEFAULT_MARGIN, RouteControl, route_control};
pub use served::ServedPolicy;
