//! Deterministic sharding of a collection's job list, for running one collection as many
//! processes (a Slurm job array, one array task per shard) and merging their folders back into
//! the run folder an unsharded collection writes.
//!
//! A collection is a fixed list of jobs `0..total_jobs`; job `j` writes one file (a Parquet part of
//! executions, say) whose bytes depend on the collection's configuration and on `j` only. Shard
//! `I/N` runs the jobs `j` with `j mod N = I` ([`Shard::owns`]): the job list, each job's seeds and
//! each job's bytes never depend on `N`, so the union of the shards' job files is the unsharded run's
//! set of job files. A shard folder also holds the files every shard writes identically (the
//! collection's manifest, scene and library tables) and [`SHARD_FILE`], the [`ShardManifest`]
//! with the configuration hash ([`config_hash`]).
//!
//! - [`status`]: jobs done per shard, from the files on disk (a half-finished array).
//! - [`check`]: what [`merge`] would refuse in a set of shard folders (what `status` reports).
//! - [`merge`]: checks that every folder comes from the same configuration, that every shard and
//!   every job is present exactly once, that the shared files agree byte for byte, then writes the
//!   merged run folder atomically. [`merge_with`] lets the collection finish the merged folder
//!   (assemble its records from the merged job files) before it is renamed into place;
//!   [`merge_checked`] and [`check_parts`] also let it judge each job file ([`PartCheck`]) in its
//!   shard folder first.
//! - [`ShardStatus::line`], [`Check::summary`], [`MergeOutcome::summary`], [`shard_done_line`]:
//!   the lines printed about shard folders.
//!
//! ```no_run
//! use roboaudit_shard::{merge, status};
//! let dirs = ["run/shard-0".into(), "run/shard-1".into()];
//! for s in status(&dirs)? {
//!     println!("{}: {} of {} jobs", s.dir.display(), s.done_jobs.len(), s.owned_jobs);
//! }
//! merge(&dirs, "run/merged".as_ref())?;
//! # Ok::<(), roboaudit_shard::ShardError>(())
//! ```

mod atomic;
pub mod error;
pub mod manifest;
pub mod merge;
mod render;
pub mod request;
pub mod spec;

pub use atomic::{Step, stage, write_atomic};
pub use error::{Result, ShardError};
pub use manifest::{JobFiles, MAX_JOBS, SHARD_FILE, SHARD_SCHEMA, ShardManifest, config_hash};
pub use merge::{
    Check, Finish, FinishError, MergeOutcome, PartCheck, ShardStatus, check, check_parts, merge,
    merge_checked, merge_with, status,
};
pub use render::{shard_done_line, status_lines};
pub use spec::Shard;
