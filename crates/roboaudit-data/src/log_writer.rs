//! Append-only execution log stored as numbered Parquet part files, for runs that write
//! executions in chunks and must resume after a crash.

use std::path::{Path, PathBuf};

use roboaudit_types::ExecutionRecord;

use crate::table::{TMP_PREFIX, write_table};
use crate::writers::executions_table;
use crate::{DataError, Format};

/// Writes an execution log as `dir/part-000000.parquet`, `part-000001.parquet`, ...
///
/// Each [`append`](Self::append) writes one complete part atomically (temporary file, fsync,
/// rename), so after a crash `dir` holds only whole parts; reopening continues numbering after
/// the highest part, and [`crate::read_executions`] on `dir` reads the parts in order. One
/// writer per directory at a time.
#[derive(Debug)]
pub struct ExecutionLogWriter {
    dir: PathBuf,
    next_part: u64,
}

impl ExecutionLogWriter {
    /// Opens (creating if needed) the log directory, removes temporary files left by an
    /// interrupted write, and positions after the highest existing part.
    ///
    /// # Errors
    /// [`DataError::Io`] when the directory cannot be created, listed or cleaned.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DataError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)
            .map_err(|e| DataError::io(&dir, "create the directory", e))?;
        for entry in std::fs::read_dir(&dir).map_err(|e| DataError::io(&dir, "list", e))? {
            let entry = entry.map_err(|e| DataError::io(&dir, "list", e))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(TMP_PREFIX) && name.ends_with(".tmp") {
                std::fs::remove_file(entry.path()).map_err(|e| {
                    DataError::io(&entry.path(), "remove the stale temporary file", e)
                })?;
            }
        }
        let next_part = list_parts(&dir)?.last().map_or(0, |(n, _)| n + 1);
        Ok(Self { dir, next_part })
    }

    /// The log directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of the part the next [`append`](Self::append) writes (= parts written so far
    /// when numbering has no gaps).
    pub fn next_part(&self) -> u64 {
        self.next_part
    }

    /// Writes `records` as part `number` (whatever the parts already there) and returns its path;
    /// the numbering then continues after the highest part written. For collections split into
    /// shards, where one process writes every N-th part: a part's bytes depend on its records only.
    ///
    /// # Errors
    /// As [`append`](Self::append).
    pub fn write_part(
        &mut self,
        number: u64,
        records: &[ExecutionRecord],
    ) -> Result<PathBuf, DataError> {
        let next = self.next_part;
        self.next_part = number;
        let written = self.append(records);
        self.next_part = if written.is_ok() {
            next.max(number + 1)
        } else {
            next
        };
        written
    }

    /// Writes `records` as the next part and returns its path.
    ///
    /// # Errors
    /// [`DataError::Invalid`] for an empty chunk (an empty part would make the log unreadable);
    /// I/O or Parquet errors (the part is then absent and numbering unchanged).
    pub fn append(&mut self, records: &[ExecutionRecord]) -> Result<PathBuf, DataError> {
        let path = self.dir.join(format!("part-{:06}.parquet", self.next_part));
        if records.is_empty() {
            return Err(DataError::invalid(
                &path,
                None,
                None,
                "refusing to write an empty chunk",
            ));
        }
        write_table(&path, Format::Parquet, &executions_table(records))?;
        self.next_part += 1;
        Ok(path)
    }
}

/// The `part-NNNNNN.parquet` files of `dir`, sorted by number.
pub(crate) fn list_parts(dir: &Path) -> Result<Vec<(u64, PathBuf)>, DataError> {
    let mut parts = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| DataError::io(dir, "list", e))? {
        let entry = entry.map_err(|e| DataError::io(dir, "list", e))?;
        let name = entry.file_name();
        let number = name
            .to_str()
            .and_then(|n| n.strip_prefix("part-"))
            .and_then(|n| n.strip_suffix(".parquet"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(number) = number {
            parts.push((number, entry.path()));
        }
    }
    parts.sort();
    Ok(parts)
}
