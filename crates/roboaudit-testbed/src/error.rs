//! The error type of the testbed.

use thiserror::Error;

/// Everything that can fail in the testbed.
#[derive(Debug, Error)]
pub enum TestbedError {
    /// MuJoCo rejected the generated MJCF model (a bug in the generator, or an incompatible library).
    #[error("MuJoCo could not compile the scene model: {0}")]
    Model(String),
    /// A named body, joint, site or camera is missing from the compiled model.
    #[error("the compiled model has no {kind} named `{name}`")]
    MissingName {
        /// Object kind (body, joint, site, camera, equality, actuator, geom).
        kind: &'static str,
        /// The name looked up.
        name: String,
    },
    /// An unknown task name was given.
    #[error(transparent)]
    UnknownTask(#[from] roboaudit_types::task::UnknownTask),
    /// A parameter is out of its documented range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// An action had the wrong length or a non-finite entry.
    #[error("invalid action: {0}")]
    InvalidAction(String),
    /// A snapshot taken from a different episode layout was restored.
    #[error("snapshot does not fit this episode: {0}")]
    SnapshotMismatch(String),
    /// Offscreen rendering failed (no EGL, no GL context, size above the offscreen buffer).
    #[error("rendering failed: {0}")]
    Render(String),
    /// Writing or reading a file failed.
    #[error("I/O error on {path}")]
    Io {
        /// The underlying error.
        source: std::io::Error,
        /// The file.
        path: String,
    },
    /// CSV serialization failed.
    #[error("CSV error")]
    Csv(#[from] csv::Error),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
    /// The dataset writer refused its input or could not write a file.
    #[error(transparent)]
    Data(#[from] roboaudit_data::DataError),
    /// Encoding a camera as video failed.
    #[error("video encoding failed")]
    Video(#[from] roboaudit_video::EncodeError),
}

/// Result alias of the testbed.
pub type Result<T> = std::result::Result<T, TestbedError>;
