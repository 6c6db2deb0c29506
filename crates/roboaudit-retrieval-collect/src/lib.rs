//! Retrieval audit on the testbed (seed 000 §II–V): experience libraries, Reuse by Replay and
//! exhaustive execution into a run folder that `roboaudit retrieval audit --run DIR` reads.
//!
//! - [`library`]: expert demonstrations recorded in their own base scenes; failed recordings are
//!   rejected and counted; library order = acceptance order (nested libraries are prefixes).
//! - [`door_demo`]: a door demonstrator with per-experience style, so door replays can fail.
//! - [`scenes`]: query scenes (appearance / layout / fresh) and their `scenes.csv` rows.
//! - [`embed`]: raw 32×32 pixels and structural object poses.
//! - [`reuse`]: the mechanism's part of a collection (acceptance, execution, manifest record);
//!   Replay here, learned policies in `roboaudit-retrieval-learned`.
//! - [`collect()`]: every (experience, query scene, seed) plus own-base executions, in parallel,
//!   streamed in atomic parts, resumable.
//! - [`shard`]: `--shard I/N`: one process writes every N-th part (a Slurm array task), and
//!   `roboaudit merge` rebuilds the unsharded run folder byte for byte.
//! - [`CollectOutcome::summary`]: what a run did, in the lines the CLI prints.
//!
//! ```no_run
//! use roboaudit_retrieval_collect::{CollectConfig, RunOptions, collect};
//! let config = CollectConfig { library: 10, scenes: 20, seeds: 2, ..CollectConfig::default() };
//! let out = collect(&config, "runs/stack".as_ref(), &RunOptions::default(), &|_| {})?;
//! assert!(out.complete);
//! # Ok::<(), roboaudit_retrieval_collect::CollectError>(())
//! ```

pub mod appearance;
pub mod collect;
pub mod config;
pub mod door_demo;
pub mod embed;
pub mod error;
pub mod jobs;
pub mod library;
pub mod manifest;
pub mod request;
pub mod reuse;
pub mod scenes;
pub mod seeding;
pub mod shard;
mod summary;

pub use appearance::appearance_caused_failures;
pub use collect::{
    CollectOutcome, EXECUTIONS_DIR, MANIFEST_FILE, Progress, RunOptions, collect, collect_with,
};
pub use config::{AuditTask, CollectConfig, Mechanism, SceneSplit};
pub use error::{CollectError, Result};
pub use library::{DemoStyle, Library, LibraryItem, record_library, record_library_with};
pub use manifest::{LibraryStats, Manifest};
pub use reuse::{ReplayReuse, Representation, Reuse};
pub use roboaudit_shard::Shard;
