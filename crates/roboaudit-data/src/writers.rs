//! Writers for every input file kind, in any of the three formats, so that the testbed and
//! the tests produce exactly what the readers accept. All writes are atomic (temp + rename).

use std::collections::BTreeSet;
use std::path::Path;

use roboaudit_types::{
    EmbeddingRecord, ExecutionRecord, ExperienceRecord, RecordedAt, SceneRecord, SelectionRecord,
};

use crate::readers::kind_name;
use crate::table::{Column, Table, write_table};
use crate::{DataError, Format, rfc3339};

fn strings<T>(records: &[T], f: impl Fn(&T) -> &str) -> Column {
    Column::Str(records.iter().map(|r| Some(f(r).to_owned())).collect())
}

pub(crate) fn executions_table(records: &[ExecutionRecord]) -> Table {
    Table {
        names: vec!["experience_id", "scene_id", "seed", "success"],
        extra_names: Vec::new(),
        columns: vec![
            strings(records, |r| &r.experience_id),
            strings(records, |r| &r.scene_id),
            Column::Int(records.iter().map(|r| Some(r.seed)).collect()),
            Column::Bool(records.iter().map(|r| r.success).collect()),
        ],
        rows: records.len(),
    }
}

/// Writes an execution log; the format follows `path`'s extension.
///
/// # Errors
/// [`DataError::UnsupportedFormat`] for an unknown extension; I/O, CSV or Parquet errors.
pub fn write_executions(
    path: impl AsRef<Path>,
    records: &[ExecutionRecord],
) -> Result<(), DataError> {
    let path = path.as_ref();
    write_table(path, Format::from_path(path)?, &executions_table(records))
}

/// Writes an execution log as Parquet (`experience_id`, `scene_id`: utf8; `seed`: int64;
/// `success`: boolean) whatever `path`'s extension.
///
/// # Errors
/// I/O or Parquet errors.
pub fn write_executions_parquet(
    path: impl AsRef<Path>,
    records: &[ExecutionRecord],
) -> Result<(), DataError> {
    write_table(path.as_ref(), Format::Parquet, &executions_table(records))
}

fn scenes_table(path: &Path, records: &[SceneRecord]) -> Result<Table, DataError> {
    let extra: BTreeSet<&str> = records
        .iter()
        .flat_map(|r| r.extra.keys().map(String::as_str))
        .collect();
    let names = vec![
        "scene_id",
        "perturbation",
        "layout_level",
        "appearance_draw",
    ];
    if let Some(clash) = extra.iter().find(|k| names.contains(k)) {
        return Err(DataError::invalid(
            path,
            None,
            Some(clash),
            "extra column has the name of a standard scene column",
        ));
    }
    let mut columns = vec![
        strings(records, |r| &r.scene_id),
        strings(records, |r| r.perturbation.as_str()),
        Column::Int(records.iter().map(|r| Some(r.layout_level)).collect()),
        Column::Int(records.iter().map(|r| Some(r.appearance_draw)).collect()),
    ];
    for key in &extra {
        columns.push(Column::Str(
            records.iter().map(|r| r.extra.get(*key).cloned()).collect(),
        ));
    }
    Ok(Table {
        names,
        extra_names: extra.into_iter().map(str::to_owned).collect(),
        columns,
        rows: records.len(),
    })
}

/// Writes a scenes file; the format follows `path`'s extension. Extra columns (the union of
/// all records' `extra` keys, sorted) follow the four standard columns as text.
///
/// # Errors
/// [`DataError::UnsupportedFormat`]; an `extra` key equal to a standard column name;
/// I/O, CSV or Parquet errors.
pub fn write_scenes(path: impl AsRef<Path>, records: &[SceneRecord]) -> Result<(), DataError> {
    let path = path.as_ref();
    write_table(
        path,
        Format::from_path(path)?,
        &scenes_table(path, records)?,
    )
}

/// Writes a scenes file as CSV whatever `path`'s extension (see [`write_scenes`]).
///
/// # Errors
/// As [`write_scenes`].
pub fn write_scenes_csv(path: impl AsRef<Path>, records: &[SceneRecord]) -> Result<(), DataError> {
    let path = path.as_ref();
    write_table(path, Format::Csv, &scenes_table(path, records)?)
}

fn experiences_table(records: &[ExperienceRecord]) -> Table {
    // Integer orders stay integers; any timestamp turns the column into text (RFC 3339, UTC).
    let any_timestamp = records
        .iter()
        .any(|r| matches!(r.recorded_at, Some(RecordedAt::Timestamp { .. })));
    let recorded_at = if any_timestamp {
        Column::Str(
            records
                .iter()
                .map(|r| {
                    r.recorded_at.as_ref().map(|at| match at {
                        RecordedAt::Order(i) => i.to_string(),
                        RecordedAt::Timestamp {
                            unix_seconds,
                            nanos,
                        } => rfc3339::format(*unix_seconds, *nanos),
                    })
                })
                .collect(),
        )
    } else {
        Column::Int(
            records
                .iter()
                .map(|r| match r.recorded_at {
                    Some(RecordedAt::Order(i)) => Some(i),
                    _ => None,
                })
                .collect(),
        )
    };
    Table {
        names: vec![
            "experience_id",
            "base_scene_id",
            "recorded_at",
            "own_base_success",
        ],
        extra_names: Vec::new(),
        columns: vec![
            strings(records, |r| &r.experience_id),
            Column::Str(records.iter().map(|r| r.base_scene_id.clone()).collect()),
            recorded_at,
            Column::Float(records.iter().map(|r| r.own_base_success).collect()),
        ],
        rows: records.len(),
    }
}

/// Writes an experiences file (row order = library order); the format follows `path`'s
/// extension. `recorded_at` is an integer column unless some record has a timestamp, then
/// RFC 3339 text in UTC.
///
/// # Errors
/// [`DataError::UnsupportedFormat`]; I/O, CSV or Parquet errors.
pub fn write_experiences(
    path: impl AsRef<Path>,
    records: &[ExperienceRecord],
) -> Result<(), DataError> {
    let path = path.as_ref();
    write_table(path, Format::from_path(path)?, &experiences_table(records))
}

/// Writes an experiences file as CSV whatever `path`'s extension (see [`write_experiences`]).
///
/// # Errors
/// I/O or CSV errors.
pub fn write_experiences_csv(
    path: impl AsRef<Path>,
    records: &[ExperienceRecord],
) -> Result<(), DataError> {
    write_table(path.as_ref(), Format::Csv, &experiences_table(records))
}

fn embeddings_table(records: &[EmbeddingRecord]) -> Table {
    Table {
        names: vec!["representation", "kind", "id", "vector"],
        extra_names: Vec::new(),
        columns: vec![
            strings(records, |r| &r.representation),
            strings(records, |r| kind_name(r.kind)),
            strings(records, |r| &r.id),
            Column::Vectors(records.iter().map(|r| r.vector.clone()).collect()),
        ],
        rows: records.len(),
    }
}

/// Writes an embeddings file; the format follows `path`'s extension (vectors: Parquet
/// `list<float32>`, JSON arrays, or space-separated text in CSV).
///
/// # Errors
/// [`DataError::UnsupportedFormat`]; I/O, CSV or Parquet errors.
pub fn write_embeddings(
    path: impl AsRef<Path>,
    records: &[EmbeddingRecord],
) -> Result<(), DataError> {
    let path = path.as_ref();
    write_table(path, Format::from_path(path)?, &embeddings_table(records))
}

/// Writes an embeddings file as Parquet whatever `path`'s extension (see [`write_embeddings`]).
///
/// # Errors
/// I/O or Parquet errors.
pub fn write_embeddings_parquet(
    path: impl AsRef<Path>,
    records: &[EmbeddingRecord],
) -> Result<(), DataError> {
    write_table(path.as_ref(), Format::Parquet, &embeddings_table(records))
}

/// Writes a selection log; the format follows `path`'s extension.
///
/// # Errors
/// [`DataError::UnsupportedFormat`]; I/O, CSV or Parquet errors.
pub fn write_selections(
    path: impl AsRef<Path>,
    records: &[SelectionRecord],
) -> Result<(), DataError> {
    let path = path.as_ref();
    let table = Table {
        names: vec!["scene_id", "experience_id"],
        extra_names: Vec::new(),
        columns: vec![
            strings(records, |r| &r.scene_id),
            strings(records, |r| &r.experience_id),
        ],
        rows: records.len(),
    };
    write_table(path, Format::from_path(path)?, &table)
}
