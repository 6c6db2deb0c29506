//! The crate's single error type.

use std::fmt;
use std::path::{Path, PathBuf};

/// Every failure of reading, validating or writing roboaudit input files.
///
/// Each variant names the file; value errors also name the 1-based data row (the header is
/// not counted; in JSONL, blank lines are not counted) and the column. Messages put the file
/// path last, e.g.
/// `row 17, column "success": expected 0/1 or true/false, got "yes", in runs/a/executions.csv`.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file extension is not one of `.csv`, `.parquet`, `.jsonl`, `.ndjson`.
    #[error(
        "unsupported file extension (expected .csv, .parquet, .jsonl or .ndjson), in {}",
        file.display()
    )]
    UnsupportedFormat {
        /// The offending file.
        file: PathBuf,
    },
    /// The operating system refused a read, write, rename or directory listing.
    #[error("cannot {action} {}", file.display())]
    Io {
        /// The file or directory concerned.
        file: PathBuf,
        /// What was attempted (`open`, `read`, `list`, ...), phrased to precede the path.
        action: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The Parquet decoder or encoder failed (corrupt file, unsupported encoding).
    #[error("{}cannot {action} Parquet data in {}", Location(*row, None), file.display())]
    Parquet {
        /// The Parquet file.
        file: PathBuf,
        /// First data row of the failing batch, when known.
        row: Option<usize>,
        /// `read` or `write`.
        action: &'static str,
        /// The underlying error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The CSV tokenizer failed (unequal field counts, invalid UTF-8) or a write failed.
    #[error("{}malformed CSV in {}", Location(*row, None), file.display())]
    Csv {
        /// The CSV file.
        file: PathBuf,
        /// 1-based data row, when known.
        row: Option<usize>,
        /// The underlying error.
        #[source]
        source: csv::Error,
    },
    /// A JSONL line is not a JSON object.
    #[error("{}{message}, in {}", Location(Some(*row), None), file.display())]
    Json {
        /// The JSONL file.
        file: PathBuf,
        /// 1-based data row (non-blank line).
        row: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// A required column is absent from the file's header or schema.
    #[error("missing required column \"{column}\", in {}", file.display())]
    MissingColumn {
        /// The file.
        file: PathBuf,
        /// The absent column.
        column: String,
    },
    /// The file has a header but no data rows.
    #[error("no data rows, in {}", file.display())]
    Empty {
        /// The file.
        file: PathBuf,
    },
    /// A value, or a row or set of rows, breaks the input contract (bad value, missing value,
    /// duplicate, unknown id, missing cell, inconsistent dimension).
    #[error("{}{message}, in {}", Location(*row, column.as_deref()), file.display())]
    Invalid {
        /// The file holding the offending value (for cross-file checks, the file whose rows
        /// refer to the others).
        file: PathBuf,
        /// 1-based data row, when one row is at fault.
        row: Option<usize>,
        /// Column name, when one column is at fault.
        column: Option<String>,
        /// What is wrong, quoting the offending value.
        message: String,
    },
    /// An output file could not be written (staged and renamed atomically; the message names it).
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// A frame of a `video` feature cannot be read: the MP4 file is missing, truncated or
    /// undecodable, or has no frame within the tolerance of the frame's timestamp.
    #[error("episode {episode}{}, video feature \"{feature}\"", frame.map(|f| format!(", frame {f}")).unwrap_or_default())]
    Video {
        /// The episode being read.
        episode: i64,
        /// Its `frame_index`, when one frame is at fault.
        frame: Option<i64>,
        /// The video feature key.
        feature: String,
        /// What the video layer found (it names the MP4 file).
        #[source]
        error: roboaudit_video::VideoError,
    },
}

impl DataError {
    /// The file the error is about.
    pub fn file(&self) -> &Path {
        match self {
            Self::UnsupportedFormat { file }
            | Self::Io { file, .. }
            | Self::Parquet { file, .. }
            | Self::Csv { file, .. }
            | Self::Json { file, .. }
            | Self::MissingColumn { file, .. }
            | Self::Empty { file }
            | Self::Invalid { file, .. } => file,
            Self::Video { error, .. } => error.file(),
            Self::Write(e) => &e.path,
        }
    }

    /// The 1-based data row (header not counted), when the error is about one row.
    pub fn row(&self) -> Option<usize> {
        match self {
            Self::Parquet { row, .. } | Self::Csv { row, .. } | Self::Invalid { row, .. } => *row,
            Self::Json { row, .. } => Some(*row),
            _ => None,
        }
    }

    /// The column name, when the error is about one column.
    pub fn column(&self) -> Option<&str> {
        match self {
            Self::MissingColumn { column, .. } => Some(column),
            Self::Invalid { column, .. } => column.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn invalid(
        file: &Path,
        row: Option<usize>,
        column: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            file: file.to_path_buf(),
            row,
            column: column.map(str::to_owned),
            message: message.into(),
        }
    }

    pub(crate) fn io(file: &Path, action: &'static str, source: std::io::Error) -> Self {
        Self::Io {
            file: file.to_path_buf(),
            action,
            source,
        }
    }
}

/// Renders the `row R, column "C": ` prefix (or nothing).
struct Location<'a>(Option<usize>, Option<&'a str>);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0, self.1) {
            (Some(r), Some(c)) => write!(f, "row {r}, column \"{c}\": "),
            (Some(r), None) => write!(f, "row {r}: "),
            (None, Some(c)) => write!(f, "column \"{c}\": "),
            (None, None) => Ok(()),
        }
    }
}
