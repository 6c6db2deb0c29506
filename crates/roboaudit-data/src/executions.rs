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
    let path = path.as_ref();
    let files: Vec<PathBuf> = if path.is_dir() {
        let parts = list_parts(path)?;
        if parts.is_empty() {
            return Err(DataError::Empty {
                file: path.to_path_buf(),
            });
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
    if let Some((first, second)) = first_duplicate(&mut keys) {
        let locate = |position: usize| {
            let k = starts.partition_point(|s| *s <= position) - 1;
            (k, position - starts[k] + 1)
        };
        let (first_file, first_row) = locate(first);
        let (second_file, second_row) = locate(second);
        let whence = if first_file == second_file {
            String::new()
        } else {
            format!(" of {}", files[first_file].display())
        };
        let record = &out[second];
        return Err(DataError::invalid(
            &files[second_file],
            Some(second_row),
            None,
            format!(
                "duplicate execution (experience \"{}\", scene \"{}\", seed {}) already at row {first_row}{whence}",
                record.experience_id, record.scene_id, record.seed
            ),
        ));
    }
    Ok(out)
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
