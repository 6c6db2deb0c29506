//! The execution-log reader: one file or a directory of numbered Parquet parts.
//!
//! Duplicate `(experience, scene, seed)` rows are found after reading by sorting compact
//! interned keys (24 bytes a row) rather than with a hash map of every key, which would need
//! several times that for logs of millions of rows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use roboaudit_types::ExecutionRecord;

use crate::DataError;
use crate::cell;
use crate::log_writer::list_parts;
use crate::readers::{id, required};
use crate::source::{Columns, scan};

/// Reads an execution log (columns `experience_id`, `scene_id`, `seed`, `success`).
///
/// `path` is a `.csv`, `.parquet`, `.jsonl`/`.ndjson` file, or a directory of
/// `part-NNNNNN.parquet` files written by [`crate::ExecutionLogWriter`] (read in part order).
/// Rows come back in file order.
///
/// # Errors
/// [`DataError`] naming file, row and column for a bad or missing value, an empty file, and a
/// duplicate `(experience_id, scene_id, seed)` (the message names both rows; of all duplicates,
/// the one whose second row comes first is reported).
pub fn read_executions(path: impl AsRef<Path>) -> Result<Vec<ExecutionRecord>, DataError> {
    read_execution_parts(path.as_ref()).map(|(records, _)| records)
}

/// Which file each row of a concatenated execution log came from, so that an error about a row
/// names the part file and its own row rather than a position no file shows.
#[derive(Debug, Clone)]
pub(crate) struct ExecutionSources {
    files: Vec<PathBuf>,
    /// Position in the log of each file's first row.
    starts: Vec<usize>,
}

impl ExecutionSources {
    /// One file holding the whole log (or a log whose parts are unknown).
    pub(crate) fn single(file: &Path) -> Self {
        Self {
            files: vec![file.to_path_buf()],
            starts: vec![0],
        }
    }

    /// The file holding the log's 0-based row `position`, and its 1-based row there.
    pub(crate) fn locate(&self, position: usize) -> (&Path, usize) {
        let k = self
            .starts
            .partition_point(|s| *s <= position)
            .saturating_sub(1);
        (&self.files[k], position - self.starts[k] + 1)
    }
}

/// [`read_executions`], with where each row came from.
pub(crate) fn read_execution_parts(
    path: &Path,
) -> Result<(Vec<ExecutionRecord>, ExecutionSources), DataError> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let parts = list_parts(path)?;
        if parts.is_empty() {
            return Err(no_parts(path));
        }
        parts.into_iter().map(|(_, p)| p).collect()
    } else {
        vec![path.to_path_buf()]
    };
    let columns = Columns {
        required: &["experience_id", "scene_id", "seed", "success"],
        optional: &[],
        all: false,
    };
    let mut ids = Interner::default();
    let mut keys: Vec<Key> = Vec::new();
    let mut out: Vec<ExecutionRecord> = Vec::new();
    // Position in `out` of each file's first row.
    let mut starts = Vec::with_capacity(files.len());
    for file in &files {
        starts.push(out.len());
        scan(file, &columns, &mut |r, row| {
            let record = ExecutionRecord {
                experience_id: id(file, r, row, "experience_id")?,
                scene_id: id(file, r, row, "scene_id")?,
                seed: required(file, row, "seed", cell::to_int(r.get("seed")))?,
                success: required(file, row, "success", cell::to_bool(r.get("success")))?,
            };
            keys.push(Key {
                experience: ids.intern(&record.experience_id),
                scene: ids.intern(&record.scene_id),
                seed: record.seed,
                position: out.len(),
            });
            out.push(record);
            Ok(())
        })?;
    }
    let sources = ExecutionSources { files, starts };
    if let Some((first, second)) = first_duplicate(&mut keys) {
        let (first_file, first_row) = sources.locate(first);
        let (second_file, second_row) = sources.locate(second);
        let whence = if first_file == second_file {
            String::new()
        } else {
            format!(" of {}", first_file.display())
        };
        let record = &out[second];
        return Err(DataError::invalid(
            second_file,
            Some(second_row),
            None,
            format!(
                "duplicate execution (experience \"{}\", scene \"{}\", seed {}) already at row {first_row}{whence}",
                record.experience_id, record.scene_id, record.seed
            ),
        ));
    }
    Ok((out, sources))
}

/// The error for a folder given as an execution log that holds no parts: what it holds instead
/// (a folder of input files given where one file was meant is the usual mistake).
fn no_parts(dir: &Path) -> DataError {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let log = names.iter().find(|n| {
        Path::new(n.as_str())
            .file_stem()
            .is_some_and(|s| s == "executions")
            && crate::format::Format::from_path(Path::new(n.as_str())).is_ok()
    });
    let holds = if names.is_empty() {
        "it is empty".to_owned()
    } else {
        const SHOWN: usize = 8;
        let mut list = names
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > SHOWN {
            list.push_str(&format!(" and {} more", names.len() - SHOWN));
        }
        format!("it holds {list}")
    };
    let hint = match log {
        Some(log) => format!(
            "; to read {log}, pass the file itself: {}",
            dir.join(log).display()
        ),
        None => String::new(),
    };
    DataError::invalid(
        dir,
        None,
        None,
        format!("the execution-log folder holds no part-NNNNNN.parquet files ({holds}){hint}"),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    experience: u32,
    scene: u32,
    seed: i64,
    position: usize,
}

impl Key {
    fn same_cell_and_seed(&self, other: &Self) -> bool {
        (self.experience, self.scene, self.seed) == (other.experience, other.scene, other.seed)
    }
}

/// Positions `(first, second)` of the duplicate whose second occurrence comes earliest, i.e.
/// the pair a row-by-row check would have stopped at. Sorts `keys`.
fn first_duplicate(keys: &mut [Key]) -> Option<(usize, usize)> {
    keys.sort_unstable();
    let mut best: Option<(usize, usize)> = None;
    for (i, pair) in keys.windows(2).enumerate() {
        let starts_group = i == 0 || !keys[i - 1].same_cell_and_seed(&pair[0]);
        if starts_group && pair[0].same_cell_and_seed(&pair[1]) {
            let candidate = (pair[0].position, pair[1].position);
            if best.is_none_or(|b| candidate.1 < b.1) {
                best = Some(candidate);
            }
        }
    }
    best
}

/// Maps each distinct id to a small integer.
#[derive(Default)]
struct Interner(HashMap<String, u32>);

impl Interner {
    fn intern(&mut self, id: &str) -> u32 {
        if let Some(&k) = self.0.get(id) {
            return k;
        }
        // More than u32::MAX distinct ids cannot fit in memory anyway.
        let next = u32::try_from(self.0.len()).unwrap_or(u32::MAX);
        self.0.insert(id.to_owned(), next);
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(experience: u32, seed: i64, position: usize) -> Key {
        Key {
            experience,
            scene: 0,
            seed,
            position,
        }
    }

    #[test]
    fn reports_the_duplicate_a_streaming_check_meets_first() {
        // Rows: 0:(a,1) 1:(b,1) 2:(b,1) 3:(a,1) 4:(b,1): the check stops at row 2 (second b).
        let mut keys = vec![
            key(0, 1, 0),
            key(1, 1, 1),
            key(1, 1, 2),
            key(0, 1, 3),
            key(1, 1, 4),
        ];
        assert_eq!(first_duplicate(&mut keys), Some((1, 2)));
        let mut keys = vec![key(0, 1, 0), key(0, 2, 1), key(1, 1, 2)];
        assert_eq!(first_duplicate(&mut keys), None);
    }
}
