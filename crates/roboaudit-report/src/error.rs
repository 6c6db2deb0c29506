//! The crate's one error type.

use std::path::PathBuf;

/// Errors of report building and rendering. A path, when there is one, ends the message.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A folder given as input does not exist or is not a folder.
    #[error("not a folder: {}", .0.display())]
    NotAFolder(PathBuf),
    /// A folder holds no audit output this crate knows.
    #[error(
        "no audit output found (expected audit.json from `retrieval audit`, `memory audit` or `demo`, fqe.json, or a retrieval run folder; natural.json and interventions.json are read beside a memory audit's audit.json: write them with --out into that folder), in {}",
        .0.display()
    )]
    NoAudit(PathBuf),
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file is malformed or does not match its schema (the cause names line and column).
    #[error("malformed JSON in {}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause, with line and column.
        source: serde_json::Error,
    },
    /// A JSON file carries a schema tag this crate does not read.
    #[error("unknown schema \"{found}\" (expected {expected}), in {}", path.display())]
    Schema {
        /// The file.
        path: PathBuf,
        /// The schema found.
        found: String,
        /// The schemas accepted there.
        expected: String,
    },
    /// A JSON file has no `schema` field.
    #[error("no `schema` field (expected {expected}), in {}", path.display())]
    NoSchema {
        /// The file.
        path: PathBuf,
        /// The schemas accepted there.
        expected: String,
    },
    /// A table of a retrieval run folder is malformed (the cause names file, row and column).
    #[error(transparent)]
    Data(#[from] roboaudit_data::DataError),
    /// A run folder's tables do not form the transfer matrix of the audit they belong to.
    #[error("{message}, in {}", path.display())]
    Matrix {
        /// The run folder.
        path: PathBuf,
        /// What is wrong (naming the experience and scene of a missing cell).
        message: String,
    },
    /// A run folder given as input matches no retrieval audit of the report.
    #[error(
        "this retrieval run folder matches no retrieval audit given (same experiences and scene count), in {}",
        .0.display()
    )]
    UnmatchedRun(PathBuf),
    /// Writing an output file failed.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A plot could not be drawn (an internal error of the SVG backend).
    #[error("cannot draw plot {id}: {message}")]
    Plot {
        /// The plot id.
        id: String,
        /// The backend's message.
        message: String,
    },
}

impl ReportError {
    /// True when the error lies in the user's input (a missing folder, an unknown or damaged
    /// file), false for I/O and rendering failures. The CLI exits with code 3 for the former, 1
    /// for the latter.
    pub fn is_invalid_input(&self) -> bool {
        match self {
            // A missing file, a folder where a file belongs, or a file whose bytes are not UTF-8
            // text is the input's fault.
            Self::Read { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::IsADirectory
                    | std::io::ErrorKind::InvalidData
            ),
            Self::Write { .. } | Self::Plot { .. } => false,
            Self::NotAFolder(_)
            | Self::NoAudit(_)
            | Self::Json { .. }
            | Self::Schema { .. }
            | Self::NoSchema { .. }
            | Self::Data(_)
            | Self::Matrix { .. }
            | Self::UnmatchedRun(_) => true,
        }
    }
}
