//! The error type of the crate.

use roboaudit_testbed::TestbedError;

/// Errors of collection: bad configuration, testbed failures, served-policy failures, output
/// failures.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A configuration value is out of range (the message names it and the valid range).
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// The testbed failed (model compilation, rendering, stepping).
    #[error("testbed")]
    Testbed(#[from] TestbedError),
    /// Reading or writing a file failed.
    #[error("cannot read or write {path}")]
    Io {
        /// The underlying error.
        source: std::io::Error,
        /// The file or folder.
        path: String,
    },
    /// A served target policy failed: unreachable, timed out, died, or answered unusable actions
    /// (the source names its address and the step: task, rollout and step, or dataset frame).
    #[error("served policy {policy}")]
    Served {
        /// The policy's name.
        policy: String,
        /// What went wrong (boxed: it is large, and rare).
        source: Box<roboaudit_policy_client::PolicyClientError>,
    },
    /// Reading back the written dataset failed (for a served policy's actions).
    #[error("reading the dataset")]
    Dataset(#[from] roboaudit_data::DataError),
    /// The output folder of a shard belongs to another shard or configuration, or to an
    /// unsharded run.
    #[error(transparent)]
    Shard(#[from] roboaudit_shard::ShardError),
    /// The work folder holds an interrupted run of other settings or targets: it is kept (it may
    /// hold hours of rollouts), and the run stops.
    #[error(
        "{dir} holds an interrupted run with other settings or targets: rerun that command to continue it, or delete {dir} to start over"
    )]
    OtherRun {
        /// The work folder.
        dir: String,
    },
    /// The work folder of an interrupted run cannot be resumed (the message says why).
    #[error("{0}")]
    Resume(String),
    /// Encoding a Parquet or JSON output failed.
    #[error("encoding {what}: {message}")]
    Encode {
        /// What was being encoded.
        what: String,
        /// The encoder's message.
        message: String,
    },
}

/// Result with [`CollectError`].
pub type Result<T> = std::result::Result<T, CollectError>;

pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> CollectError + '_ {
    move |source| CollectError::Io {
        source,
        path: path.display().to_string(),
    }
}

pub(crate) fn encode_err(what: &str) -> impl FnOnce(String) -> CollectError + '_ {
    move |message| CollectError::Encode {
        what: what.to_string(),
        message,
    }
}
