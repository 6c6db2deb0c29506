//! The crate's error type.

use std::path::{Path, PathBuf};

/// Errors of loading an encoder, encoding images and writing embeddings.
///
/// The weights-file variants ([`NotSafetensors`](Self::NotSafetensors) …
/// [`Weights`](Self::Weights)) end their message with `: <file>`, and name the tensor at fault in
/// double quotes where one is; [`EncoderError::weights_fault`] gives both.
#[derive(Debug, thiserror::Error)]
pub enum EncoderError {
    /// A setting is out of range (checked before any file is read): a command-line usage error.
    #[error("invalid encoder configuration: {0}")]
    InvalidConfig(String),
    /// The input size an encoder was asked for is one its weights cannot take (e.g. a CLIP
    /// checkpoint whose position embeddings fix its input at another size), or a preprocessed
    /// input of the wrong length.
    #[error("wrong image size for {encoder}: {message}")]
    ImageSize {
        /// The encoder (its id, or its kind and file).
        encoder: String,
        /// What size was asked for and what the encoder takes.
        message: String,
    },
    /// A file could not be read or written.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was attempted (`read`, `write`, `create`, `list`).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The weights file is not a safetensors file (or is truncated).
    #[error("not a valid safetensors file ({message}): {}", path.display())]
    NotSafetensors {
        /// The weights file.
        path: PathBuf,
        /// The parser's complaint.
        message: String,
    },
    /// The weights file holds another model: the tensor that identifies the expected
    /// architecture is absent.
    #[error(
        "not a {expected} checkpoint: no tensor \"{missing}\"{}: {}",
        found.map(|f| format!("; the tensor names are those of {f}")).unwrap_or_default(),
        path.display()
    )]
    WrongArchitecture {
        /// The weights file.
        path: PathBuf,
        /// The architecture and layout that was expected, e.g. `ResNet-18 (torchvision layout)`.
        expected: &'static str,
        /// The architecture the tensor names look like, when recognised.
        found: Option<&'static str>,
        /// The identifying tensor that is missing.
        missing: String,
    },
    /// A tensor the model needs is absent.
    #[error("no tensor \"{tensor}\" ({architecture} needs it): {}", path.display())]
    MissingTensor {
        /// The weights file.
        path: PathBuf,
        /// The missing tensor's name.
        tensor: String,
        /// The architecture (with the sizes inferred so far) that needs it.
        architecture: String,
    },
    /// A tensor has the wrong shape.
    #[error("tensor \"{tensor}\" has shape {shape:?}, expected {expected:?} ({layout}): {}", path.display())]
    TensorShape {
        /// The weights file.
        path: PathBuf,
        /// The tensor's name.
        tensor: String,
        /// Its shape in the file.
        shape: Vec<usize>,
        /// The shape the model needs.
        expected: Vec<usize>,
        /// The layout the expectation comes from (the architecture, or the tensor's axes).
        layout: &'static str,
    },
    /// A tensor the model reads is not of a float type.
    #[error("tensor \"{tensor}\" has type {dtype}, expected a float type: {}", path.display())]
    TensorType {
        /// The weights file.
        path: PathBuf,
        /// The tensor's name.
        tensor: String,
        /// Its type in the file.
        dtype: String,
    },
    /// A tensor that is not part of the architecture (another variant of the model).
    #[error("unexpected tensor \"{tensor}\" ({count} not in the {architecture} layout): {}", path.display())]
    UnexpectedTensor {
        /// The weights file.
        path: PathBuf,
        /// The first unexpected tensor by name.
        tensor: String,
        /// How many tensors are unexpected.
        count: usize,
        /// The expected architecture.
        architecture: &'static str,
    },
    /// Any other fault of a weights file (too wide, registers, cannot be written).
    #[error("{message}: {}", path.display())]
    Weights {
        /// The weights file.
        path: PathBuf,
        /// The tensor at fault, if one is.
        tensor: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A policy checkpoint's `config.json` is not a retrieval policy config: it does not parse,
    /// declares another schema or input size, or training settings out of range
    /// ([`crate::policy::read_config`]).
    #[error("{message}: {}", path.display())]
    PolicyConfig {
        /// The config file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An image file cannot be decoded, or an image is empty or inconsistent.
    #[error("{message}: {}", path.display())]
    BadImage {
        /// The image file (or the in-memory image's description).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An image buffer is empty or does not match its size.
    #[error("invalid image: {0}")]
    InvalidImage(String),
    /// Nothing to embed, or inputs of the embed pipeline that do not fit together.
    #[error("{message}: {}", path.display())]
    BadInput {
        /// The folder or dataset.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An encoder produced a non-finite value (weights that overflow).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// The embeddings file could not be written (nothing is left at its path).
    #[error("cannot write {}: {message}", path.display())]
    Write {
        /// The embeddings file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Reading a dataset failed (boxed: the error type stays small).
    #[error(transparent)]
    Data(Box<roboaudit_data::DataError>),
    /// The neural network library failed.
    #[error("neural network")]
    Candle(#[from] candle_core::Error),
}

impl From<roboaudit_data::DataError> for EncoderError {
    fn from(e: roboaudit_data::DataError) -> Self {
        Self::Data(Box::new(e))
    }
}

impl EncoderError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    /// For an error of a weights file: the file and the tensor at fault (if one is).
    pub fn weights_fault(&self) -> Option<(&Path, Option<&str>)> {
        match self {
            Self::NotSafetensors { path, .. } => Some((path, None)),
            Self::WrongArchitecture { path, missing, .. } => Some((path, Some(missing))),
            Self::MissingTensor { path, tensor, .. }
            | Self::TensorShape { path, tensor, .. }
            | Self::TensorType { path, tensor, .. }
            | Self::UnexpectedTensor { path, tensor, .. } => Some((path, Some(tensor))),
            Self::Weights { path, tensor, .. } => Some((path, tensor.as_deref())),
            _ => None,
        }
    }

    /// Whether the error is the user's input (a weights file, image or dataset that is missing,
    /// unreadable or wrong, or an input size the weights cannot take): the CLI's exit code 3.
    /// [`InvalidConfig`](Self::InvalidConfig) is a usage error instead (exit code 2).
    pub fn is_invalid_input(&self) -> bool {
        match self {
            Self::Io { action, .. } => matches!(*action, "read" | "list"),
            Self::InvalidConfig(_) | Self::Numerical(_) | Self::Candle(_) | Self::Write { .. } => {
                false
            }
            _ => true,
        }
    }
}
