//! Counterfactual-memory-audit records (docs/methods.md §2): one row per (pair, memory, action
//! seed, world). Reader, writer and the checks one file can show on its own. The record type is
//! [`roboaudit_types::MemoryRecord`], re-exported from this crate's root.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

pub use roboaudit_types::{MemoryLabel, MemoryRecord};

use crate::cell::{self, Cell, CellResult};
use crate::readers::{id, optional, required};
use crate::source::{Columns, scan};
use crate::table::{Column, Table, write_table};
use crate::{DataError, Format};

const REQUIRED: [&str; 9] = [
    "pair_id",
    "memory",
    "action_seed",
    "world",
    "progress_warranted",
    "progress_other",
    "value",
    "action",
    "present_equal",
];

fn label(cell: Cell<'_>) -> CellResult<Option<MemoryLabel>> {
    let Some(text) = cell::to_id(cell)? else {
        return Ok(None);
    };
    match text.to_ascii_uppercase().as_str() {
        "A" => Ok(Some(MemoryLabel::A)),
        "B" => Ok(Some(MemoryLabel::B)),
        _ => Err(format!("expected A or B, got \"{text}\"")),
    }
}

type Key = (String, MemoryLabel, i64, MemoryLabel);

/// Reads counterfactual-memory-audit records (`pair_id`, `memory` A|B, `action_seed`, `world`
/// A|B, `progress_warranted`, `progress_other`, `value`, `action`, `present_equal`; optional
/// `route`, `stratum`, `plan_hash`) from CSV, Parquet or JSONL (by extension). `action` is a
/// float list in Parquet, a JSON array in JSONL, a space-separated string in CSV. Rows come
/// back in file order.
///
/// # Errors
/// [`DataError`] naming file, row and column for: a bad or missing value; `value` outside
/// [0, 1]; a non-finite progress or action element; an action whose dimension differs from
/// the first row's; a repeated (pair, memory, action_seed, world) (naming both rows);
/// `present_equal`, `route`, `stratum` or `plan_hash` varying within a pair (`plan_hash`:
/// within the file); a pair lacking one of its four (memory, world) rows for some seed of the
/// file; the two world rows of one (pair, memory, seed) holding different actions; an empty file.
pub fn read_memory_records(path: impl AsRef<Path>) -> Result<Vec<MemoryRecord>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: &REQUIRED,
        optional: &["route", "stratum", "plan_hash"],
        all: false,
    };
    let mut out: Vec<MemoryRecord> = Vec::new();
    let mut first_row: HashMap<Key, usize> = HashMap::new();
    let mut dimension: Option<(usize, usize)> = None;
    scan(file, &columns, &mut |r, row| {
        let value = required(file, row, "value", cell::to_finite(r.get("value")))?;
        if !(0.0..=1.0).contains(&value) {
            return Err(DataError::invalid(
                file,
                Some(row),
                Some("value"),
                format!("expected a normalized value in [0, 1], got {value}"),
            ));
        }
        let action = required(file, row, "action", cell::to_vector(r.get("action")))?;
        let (dim, dim_row) = *dimension.get_or_insert((action.len(), row));
        if action.len() != dim {
            return Err(DataError::invalid(
                file,
                Some(row),
                Some("action"),
                format!(
                    "action has {} elements, row {dim_row} has {dim} (one dimension per file)",
                    action.len()
                ),
            ));
        }
        let record = MemoryRecord {
            pair_id: id(file, r, row, "pair_id")?,
            memory: required(file, row, "memory", label(r.get("memory")))?,
            action_seed: required(file, row, "action_seed", cell::to_int(r.get("action_seed")))?,
            world: required(file, row, "world", label(r.get("world")))?,
            progress_warranted: required(
                file,
                row,
                "progress_warranted",
                cell::to_finite(r.get("progress_warranted")),
            )?,
            progress_other: required(
                file,
                row,
                "progress_other",
                cell::to_finite(r.get("progress_other")),
            )?,
            value,
            action,
            present_equal: required(
                file,
                row,
                "present_equal",
                cell::to_bool(r.get("present_equal")),
            )?,
            route: optional(file, row, "route", cell::to_id(r.get("route")))?,
            stratum: optional(file, row, "stratum", cell::to_id(r.get("stratum")))?,
            plan_hash: optional(file, row, "plan_hash", cell::to_id(r.get("plan_hash")))?,
        };
        let key = (
            record.pair_id.clone(),
            record.memory,
            record.action_seed,
            record.world,
        );
        if let Some(first) = first_row.get(&key) {
            return Err(DataError::invalid(
                file,
                Some(row),
                None,
                format!(
                    "duplicate record (pair \"{}\", memory {}, action_seed {}, world {}), first at row {first}",
                    key.0,
                    key.1.as_str(),
                    key.2,
                    key.3.as_str()
                ),
            ));
        }
        first_row.insert(key, row);
        out.push(record);
        Ok(())
    })?;
    check_pairs(file, &out, &first_row)?;
    Ok(out)
}

/// Row-level checks across the rows of one pair; `first_row` maps each key to its 1-based row.
fn check_pairs(
    file: &Path,
    records: &[MemoryRecord],
    first_row: &HashMap<Key, usize>,
) -> Result<(), DataError> {
    let seeds: BTreeSet<i64> = records.iter().map(|r| r.action_seed).collect();
    // Rows of each pair (0-based positions), pairs in order of first appearance.
    let mut order: Vec<&str> = Vec::new();
    let mut rows_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        rows_of
            .entry(&r.pair_id)
            .or_insert_with(|| {
                order.push(&r.pair_id);
                Vec::new()
            })
            .push(i);
    }
    let file_hash = records.first().and_then(|r| r.plan_hash.as_deref());
    for pair in order {
        let rows = &rows_of[pair];
        let first = &records[rows[0]];
        for &i in rows {
            let r = &records[i];
            let mismatch = if r.present_equal != first.present_equal {
                Some("present_equal")
            } else if r.route != first.route {
                Some("route")
            } else if r.stratum != first.stratum {
                Some("stratum")
            } else if r.plan_hash.as_deref() != file_hash {
                Some("plan_hash")
            } else {
                None
            };
            if let Some(column) = mismatch {
                let scope = if column == "plan_hash" {
                    "file"
                } else {
                    "pair"
                };
                return Err(DataError::invalid(
                    file,
                    Some(i + 1),
                    Some(column),
                    format!(
                        "{column} differs from row {} (it must be constant within a {scope}; pair \"{pair}\")",
                        if column == "plan_hash" {
                            1
                        } else {
                            rows[0] + 1
                        }
                    ),
                ));
            }
        }
        for &seed in &seeds {
            for memory in MemoryLabel::BOTH {
                let row_in = |world: MemoryLabel| {
                    first_row
                        .get(&(pair.to_owned(), memory, seed, world))
                        .copied()
                };
                let (Some(row_a), Some(row_b)) = (row_in(MemoryLabel::A), row_in(MemoryLabel::B))
                else {
                    let world = if row_in(MemoryLabel::A).is_none() {
                        "A"
                    } else {
                        "B"
                    };
                    return Err(DataError::invalid(
                        file,
                        None,
                        None,
                        format!(
                            "pair \"{pair}\" has no row for (memory {}, action_seed {seed}, world {world}); every pair needs both memories × both worlds for every action seed of the file",
                            memory.as_str()
                        ),
                    ));
                };
                let bits = |row: usize| -> Vec<u32> {
                    records[row - 1]
                        .action
                        .iter()
                        .map(|x| x.to_bits())
                        .collect()
                };
                if bits(row_a) != bits(row_b) {
                    return Err(DataError::invalid(
                        file,
                        Some(row_b),
                        Some("action"),
                        format!(
                            "action differs from row {row_a} (same pair \"{pair}\", memory {}, action_seed {seed}, world A): one saved chunk is executed in both worlds",
                            memory.as_str()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reads one optional text column of a record.
type OptionalColumn = fn(&MemoryRecord) -> Option<String>;

fn memory_table(records: &[MemoryRecord]) -> Table {
    let strings = |f: &dyn Fn(&MemoryRecord) -> String| {
        Column::Str(records.iter().map(|r| Some(f(r))).collect())
    };
    let floats = |f: &dyn Fn(&MemoryRecord) -> f64| {
        Column::Float(records.iter().map(|r| Some(f(r))).collect())
    };
    // The required columns, in the order `columns` fills them below.
    let mut names = REQUIRED.to_vec();
    let mut columns = vec![
        strings(&|r| r.pair_id.clone()),
        strings(&|r| r.memory.as_str().to_owned()),
        Column::Int(records.iter().map(|r| Some(r.action_seed)).collect()),
        strings(&|r| r.world.as_str().to_owned()),
        floats(&|r| r.progress_warranted),
        floats(&|r| r.progress_other),
        floats(&|r| r.value),
        Column::Vectors(records.iter().map(|r| r.action.clone()).collect()),
        Column::Bool(records.iter().map(|r| r.present_equal).collect()),
    ];
    // Optional columns are written only when some record has them, so plain files stay plain.
    let optional: [(&'static str, OptionalColumn); 3] = [
        ("route", |r| r.route.clone()),
        ("stratum", |r| r.stratum.clone()),
        ("plan_hash", |r| r.plan_hash.clone()),
    ];
    for (name, get) in optional {
        if records.iter().any(|r| get(r).is_some()) {
            names.push(name);
            columns.push(Column::Str(records.iter().map(get).collect()));
        }
    }
    Table {
        names,
        extra_names: Vec::new(),
        columns,
        rows: records.len(),
    }
}

/// Writes memory-audit records; the format follows `path`'s extension (`action`: Parquet
/// `list<float32>`, JSON array, or space-separated text in CSV; `memory`/`world` as `A`/`B`).
/// `route`, `stratum` and `plan_hash` are written only when some record has them. Atomic.
///
/// # Errors
/// [`DataError::UnsupportedFormat`]; I/O, CSV or Parquet errors.
pub fn write_memory_records(
    path: impl AsRef<Path>,
    records: &[MemoryRecord],
) -> Result<(), DataError> {
    let path = path.as_ref();
    write_table(path, Format::from_path(path)?, &memory_table(records))
}
