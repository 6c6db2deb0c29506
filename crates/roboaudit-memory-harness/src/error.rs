//! The one error type of the memory harness.

use roboaudit_data::DataError;
use roboaudit_memory::MemoryError;
use roboaudit_stats::StatsError;
use roboaudit_testbed::TestbedError;

/// Why a harness run, a policy query or a calibration could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A configuration value is out of its documented range (the message names it).
    #[error("invalid harness configuration: {0}")]
    InvalidConfig(String),
    /// The task has no memory decision this harness can cross (the message says why).
    #[error("unsupported task: {0}")]
    UnsupportedTask(String),
    /// A policy broke the interface contract (wrong chunk shape, non-finite action, a memory
    /// state that does not match its declared spec).
    #[error("policy `{policy}` broke the memory-policy contract: {message}")]
    Policy {
        /// The policy's name.
        policy: String,
        /// What is wrong.
        message: String,
    },
    /// The simulator failed.
    #[error(transparent)]
    Testbed(#[from] TestbedError),
    /// Writing the records failed.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The analysis of the collected records failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A bootstrap interval could not be computed.
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// The partial folder of a resumable collection holds another configuration's pairs, or a
    /// file in it is not what this run wrote (invalid input: the user named that folder).
    #[error("{path}: {message}")]
    ForeignPartial {
        /// The folder or file.
        path: String,
        /// What is wrong, and the remedy.
        message: String,
    },
    /// A file of a collection's output or partial folder cannot be read or written.
    #[error("{path}: {message}")]
    Partial {
        /// The folder or file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The output folder belongs to another shard or configuration of a sharded collection, or
    /// to an unsharded one.
    #[error(transparent)]
    Shard(#[from] roboaudit_shard::ShardError),
    /// A served policy could not be reached or answered unusably.
    #[error(transparent)]
    Served(#[from] roboaudit_policy_client::PolicyClientError),
}

impl HarnessError {
    /// [`HarnessError::Partial`]: `path: cannot {what}: {e}`.
    pub(crate) fn partial(path: &std::path::Path, what: &str, e: impl std::fmt::Display) -> Self {
        Self::Partial {
            path: path.display().to_string(),
            message: format!("cannot {what}: {e}"),
        }
    }

    /// [`HarnessError::ForeignPartial`] naming `path`.
    pub(crate) fn foreign(path: &std::path::Path, message: String) -> Self {
        Self::ForeignPartial {
            path: path.display().to_string(),
            message,
        }
    }
}
