//! The crate's error type.

use std::path::PathBuf;

/// Errors of fitted Q evaluation.
#[derive(Debug, thiserror::Error)]
pub enum FqeError {
    /// Reading a dataset, labels or policy-actions file failed.
    #[error(transparent)]
    Data(#[from] roboaudit_data::DataError),
    /// A metric could not be computed.
    #[error(transparent)]
    Stats(#[from] roboaudit_stats::StatsError),
    /// The transitions, target actions or ground truth are inconsistent (shapes, indices, labels).
    #[error("invalid FQE inputs: {0}")]
    InvalidInputs(String),
    /// A configuration value is out of range.
    #[error("invalid FQE configuration: {0}")]
    InvalidConfig(String),
    /// A setting a user chooses is out of its bounds (the bounds a fit accepts live here, in
    /// the config types' `validate`, once); `message` follows the setting's name, e.g.
    /// `"0 is out of range 1..=65536"`.
    #[error("{} {message}", setting.name())]
    Setting {
        /// The setting at fault.
        setting: Setting,
        /// Its value and the bound it breaks.
        message: String,
    },
    /// A linear system could not be solved (not positive definite) or an iteration diverged.
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// The neural network library failed.
    #[error("neural network")]
    Candle(#[from] candle_core::Error),
    /// A file could not be read or written.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was attempted (`read`, `write`, `create`).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A pretrained encoder's weights file is not a usable checkpoint: not safetensors, a
    /// tensor missing, of the wrong shape or type, or of another layout. The message names the
    /// tensor where one is at fault; the file goes last.
    #[error("{message}: {}", path.display())]
    Weights {
        /// The weights file.
        path: PathBuf,
        /// The tensor at fault, if one is.
        tensor: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A file has the wrong content (feature cache, ground truth, checkpoint).
    #[error("{message}: {}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The encoders' errors in FQE's terms, so that `Encoder::dinov2` and FQE's callers keep one
/// error type: an unreadable file stays [`FqeError::Io`], every fault of a weights file becomes
/// [`FqeError::Weights`] with the same file, tensor and message, a setting or input size out of
/// range [`FqeError::InvalidConfig`], an empty image [`FqeError::InvalidInputs`].
impl From<roboaudit_encoders::EncoderError> for FqeError {
    fn from(e: roboaudit_encoders::EncoderError) -> Self {
        use roboaudit_encoders::EncoderError as E;
        if let Some((path, tensor)) = e.weights_fault() {
            let text = e.to_string();
            let suffix = format!(": {}", path.display());
            return FqeError::Weights {
                path: path.to_path_buf(),
                tensor: tensor.map(str::to_owned),
                message: text.strip_suffix(&suffix).unwrap_or(&text).to_owned(),
            };
        }
        match e {
            E::Io {
                action,
                path,
                source,
            } => FqeError::Io {
                action,
                path,
                source,
            },
            E::InvalidConfig(m) => FqeError::InvalidConfig(m),
            E::ImageSize { .. } => FqeError::InvalidConfig(e.to_string()),
            E::InvalidImage(m) => FqeError::InvalidInputs(m),
            E::Numerical(m) => FqeError::Numerical(m),
            E::Candle(c) => FqeError::Candle(c),
            E::Data(d) => FqeError::Data(*d),
            other => FqeError::InvalidInputs(other.to_string()),
        }
    }
}

/// A user-chosen setting of a fit, named by [`FqeError::Setting`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Principal components of the frame features ([`crate::LoadOptions::components`]).
    Components,
    /// Discount γ.
    Gamma,
    /// Neural training seeds ([`crate::FitConfig::seeds`]).
    Seeds,
    /// A fixed number of neural gradient steps.
    Steps,
    /// The cap on neural gradient steps when a fit stops once settled.
    MaxSteps,
    /// Episode-bootstrap refits per policy.
    Bootstrap,
    /// Neural mini-batch rows.
    BatchSize,
    /// Width of the neural Q network's hidden layers.
    Hidden,
    /// Target network copy period.
    TargetUpdate,
    /// Polyak rate of the target network.
    TargetTau,
    /// Neural learning rate at step 0.
    LearningRate,
    /// Linear FQE ridge λ.
    Ridge,
    /// Coverage threshold on the standardized action distance.
    CoverageThreshold,
    /// The success detector's inverse L2 regularization strength `C`
    /// ([`crate::detector::LogisticConfig::c`]).
    C,
    /// The success detector's holdout fraction ([`crate::detector::Validation::Holdout`]).
    Holdout,
    /// The success detector's cross-validation folds ([`crate::detector::Validation::KFold`]).
    Folds,
    /// Threads of the pool a fit runs on ([`crate::bounds_settings::check_threads`]).
    Threads,
}

impl Setting {
    /// The setting's name in messages (`snake_case`, as the config field).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Components => "components",
            Self::Gamma => "gamma",
            Self::Seeds => "seeds",
            Self::Steps => "steps",
            Self::MaxSteps => "max_steps",
            Self::Bootstrap => "bootstrap",
            Self::BatchSize => "batch_size",
            Self::Hidden => "hidden",
            Self::TargetUpdate => "target_update_every",
            Self::TargetTau => "target_tau",
            Self::LearningRate => "learning_rate",
            Self::Ridge => "ridge",
            Self::CoverageThreshold => "coverage_threshold",
            Self::C => "c",
            Self::Holdout => "holdout",
            Self::Folds => "folds",
            Self::Threads => "threads",
        }
    }
}

impl FqeError {
    /// A [`FqeError::Setting`] error.
    pub(crate) fn setting(setting: Setting, message: impl Into<String>) -> Self {
        Self::Setting {
            setting,
            message: message.into(),
        }
    }

    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn bad_file(path: &std::path::Path, message: impl Into<String>) -> Self {
        Self::BadFile {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
