//! The one error type of the learned reuse policies.

/// Why recording, training, saving, loading or running a per-experience image policy failed.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A training setting is out of its documented range (the message names it).
    #[error("invalid policy training configuration: {0}")]
    InvalidConfig(String),
    /// A checkpoint file cannot be read for its hash, or differs from what `collect.json`
    /// recorded for it.
    #[error("{path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A checkpoint folder is not one this crate writes: a file missing or unreadable, a config
    /// that does not parse or declares another schema, a missing, extra, mistyped or misshapen
    /// tensor (a checkpoint of another architecture), a non-finite value (the checks of
    /// [`roboaudit_encoders::policy::load_checkpoint`], naming the file).
    #[error(transparent)]
    Load(Box<roboaudit_encoders::EncoderError>),
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
        match self {
            Self::Load(e) => e.is_invalid_input(),
            other => matches!(other, Self::Checkpoint { .. } | Self::InvalidConfig(_)),
        }
    }
}

impl From<roboaudit_encoders::EncoderError> for PolicyError {
    /// A setting out of range stays [`PolicyError::InvalidConfig`] (the message unchanged), a
    /// tensor failure [`PolicyError::Tensor`]; every other error is a checkpoint's
    /// ([`PolicyError::Load`]).
    fn from(e: roboaudit_encoders::EncoderError) -> Self {
        use roboaudit_encoders::EncoderError as E;
        match e {
            E::InvalidConfig(m) => Self::InvalidConfig(m),
            E::Candle(t) => Self::Tensor(t),
            other => Self::Load(Box::new(other)),
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, PolicyError>;
