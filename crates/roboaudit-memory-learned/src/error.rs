//! The one error type of the learned memory policies.

use roboaudit_memory_harness::HarnessError;

/// Why training, saving, loading or qualifying a learned memory policy failed.
#[derive(Debug, thiserror::Error)]
pub enum LearnedError {
    /// A training or qualification setting is out of its documented range (the message names it).
    #[error("invalid learned-policy configuration: {0}")]
    InvalidConfig(String),
    /// A checkpoint file is missing, unreadable, or not what this crate writes: wrong tensor
    /// names, shapes or dtype, a config that does not parse, another architecture or task.
    #[error("{path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The output folder already holds a checkpoint (a `config.json`), which training would
    /// replace.
    #[error("{path} already holds a checkpoint; choose another --out")]
    ExistingCheckpoint {
        /// The folder.
        path: String,
    },
    /// Writing a checkpoint file failed.
    #[error("{path}: cannot write: {message}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// The checkpoint's native success rate is below its registered threshold: it is refused
    /// for the audit (seed 002 §IV-A: only qualified policies are audited).
    #[error(
        "{path}: policy not qualified for the audit on {task}: native success {successes}/{episodes} = {rate:.3} is below the registered rate {threshold:.3}"
    )]
    NotQualified {
        /// The checkpoint folder.
        path: String,
        /// The task.
        task: String,
        /// Successful qualification episodes.
        successes: usize,
        /// Qualification episodes run.
        episodes: usize,
        /// `successes / episodes`.
        rate: f64,
        /// The registered rate.
        threshold: f64,
    },
    /// No demonstration reached the audited present (the expert failed on every drawn scene).
    #[error("no demonstration of {0} reached the audited present")]
    NoDemonstrations(String),
    /// The tensor library failed (shapes inside the model; never the user's input).
    #[error("tensor computation failed")]
    Tensor(#[from] candle_core::Error),
    /// The harness or the simulator failed.
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// An unknown task name (kept whole: its kind decides the caller's exit code).
    #[error(transparent)]
    Task(#[from] roboaudit_testbed::UnknownTask),
}

impl LearnedError {
    /// [`LearnedError::Checkpoint`] naming `path`.
    pub(crate) fn checkpoint(path: &std::path::Path, message: impl Into<String>) -> Self {
        Self::Checkpoint {
            path: path.display().to_string(),
            message: message.into(),
        }
    }

    /// Whether the error is the user's input (a bad or refused checkpoint): exit code 3.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Self::Checkpoint { .. } | Self::NotQualified { .. })
    }
}

impl From<roboaudit_testbed::TestbedError> for LearnedError {
    fn from(e: roboaudit_testbed::TestbedError) -> Self {
        Self::Harness(HarnessError::Testbed(e))
    }
}
