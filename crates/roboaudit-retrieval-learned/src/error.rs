//! The one error type of the learned reuse policies.

/// Why recording, training, saving, loading or running a per-experience image policy failed.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A training setting is out of its documented range (the message names it).
    #[error("invalid policy training configuration: {0}")]
    InvalidConfig(String),
    /// A checkpoint file is missing, unreadable, or not what this crate writes: a config that does
    /// not parse or declares another schema, a missing, extra, mistyped or misshapen tensor (a
    /// checkpoint of another architecture), a non-finite value.
    #[error("{path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Writing a checkpoint file failed.
    #[error("{path}: cannot write: {message}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// Re-running an experience's demonstrator with rendering did not give back the recorded
    /// demonstration (the simulation or the demonstrator is not deterministic: a bug).
    #[error(
        "experience {experience_id}: the rendered demonstration differs from the recorded one: {message}"
    )]
    DemoMismatch {
        /// The experience (`e00`, …; empty before the library order is known).
        experience_id: String,
        /// What differs.
        message: String,
    },
    /// The tensor library failed (shapes inside the model; never the user's input).
    #[error("tensor computation failed")]
    Tensor(#[from] candle_core::Error),
    /// The simulator or the renderer failed.
    #[error("testbed")]
    Testbed(#[from] roboaudit_testbed::TestbedError),
}

impl PolicyError {
    /// [`PolicyError::Checkpoint`] naming `path`.
    pub(crate) fn checkpoint(path: &std::path::Path, message: impl Into<String>) -> Self {
        Self::Checkpoint {
            path: path.display().to_string(),
            message: message.into(),
        }
    }

    /// Whether the error is the user's input (a bad checkpoint or setting): exit code 3.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Self::Checkpoint { .. } | Self::InvalidConfig(_))
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, PolicyError>;
