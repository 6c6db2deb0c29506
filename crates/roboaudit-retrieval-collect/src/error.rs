//! The error type of the collection crate.

use thiserror::Error;

/// Everything that can go wrong while collecting a retrieval-audit run folder.
#[derive(Debug, Error)]
pub enum CollectError {
    /// A configuration value is out of range (the message names the field).
    #[error("invalid collection config: {0}")]
    InvalidConfig(String),
    /// The testbed failed (model compilation, rendering, an episode step).
    #[error("testbed")]
    Testbed(#[from] roboaudit_testbed::TestbedError),
    /// Reading or writing a data file failed.
    #[error(transparent)]
    Data(#[from] roboaudit_data::DataError),
    /// Too few demonstrations succeeded in their base scenes to fill the pool.
    #[error(
        "only {accepted} of {attempts} recorded demonstrations succeeded; the pool needs {pool}"
    )]
    TooManyRejections {
        /// Accepted recordings.
        accepted: usize,
        /// Recordings tried.
        attempts: usize,
        /// Requested pool size.
        pool: usize,
    },
    /// The output folder holds files but no collection of ours (someone else's files, which a
    /// collection would mix with or overwrite): the wrong folder was named.
    #[error("{path} is not empty and holds no {manifest}; collect into an empty or new folder")]
    Occupied {
        /// The run folder.
        path: String,
        /// The manifest a collection's folder holds (`collect.json`).
        manifest: &'static str,
    },
    /// The output folder holds a different or damaged collection, so resuming would mix runs.
    #[error("cannot resume in {path}: {reason}")]
    Resume {
        /// The run folder.
        path: String,
        /// What does not match.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("cannot {action} {path}")]
    Io {
        /// What was attempted.
        action: &'static str,
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A shard manifest could not be read, written or hashed.
    #[error(transparent)]
    Shard(roboaudit_shard::ShardError),
    /// The reuse mechanism failed (e.g. training or loading a learned policy). The message
    /// repeats the cause, which [`roboaudit_types::error_chain`] then prints once; it is also the
    /// `source`, so a caller can tell a damaged checkpoint (bad input) from a failure.
    #[error("reuse mechanism: {0}")]
    Reuse(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The manifest could not be encoded or decoded.
    #[error("manifest {path}")]
    Manifest {
        /// The manifest file.
        path: String,
        /// The cause.
        source: serde_json::Error,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, CollectError>;
