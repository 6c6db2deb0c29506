//! File format chosen by extension.

use std::path::Path;

use crate::DataError;

/// The three supported file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Comma-separated values with a header row (`.csv`).
    Csv,
    /// Apache Parquet (`.parquet`).
    Parquet,
    /// One JSON object per line (`.jsonl` or `.ndjson`).
    Jsonl,
}

impl Format {
    /// The format named by `path`'s extension (case-insensitive).
    ///
    /// # Errors
    /// [`DataError::UnsupportedFormat`] for any other extension, or none.
    pub fn from_path(path: &Path) -> Result<Self, DataError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("csv") => Ok(Self::Csv),
            Some("parquet") => Ok(Self::Parquet),
            Some("jsonl" | "ndjson") => Ok(Self::Jsonl),
            _ => Err(DataError::UnsupportedFormat {
                file: path.to_path_buf(),
            }),
        }
    }
}
