//! One reader per input file kind (SPEC.md §1 input contract). Each checks what one file
//! can show on its own: types, missing values, duplicates, vector dimensions and finiteness.
//! Checks across files live in `validate`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use roboaudit_types::{
    EmbeddingKind, EmbeddingRecord, ExperienceRecord, Perturbation, RecordedAt, SceneRecord,
    SelectionRecord,
};

use crate::DataError;
use crate::cell::{self, Cell, CellResult};
use crate::source::{Columns, Row, scan};
use rayon::prelude::*;

/// Attaches file, row and column to a conversion result.
pub(crate) fn optional<T>(
    file: &Path,
    row: usize,
    column: &str,
    result: CellResult<Option<T>>,
) -> Result<Option<T>, DataError> {
    result.map_err(|message| DataError::invalid(file, Some(row), Some(column), message))
}

/// Like [`optional`], but a missing value is an error.
pub(crate) fn required<T>(
    file: &Path,
    row: usize,
    column: &str,
    result: CellResult<Option<T>>,
) -> Result<T, DataError> {
    optional(file, row, column, result)?.ok_or_else(|| {
        DataError::invalid(
            file,
            Some(row),
            Some(column),
            "missing value in required column",
        )
    })
}

/// A required identifier column of row `r`.
pub(crate) fn id(file: &Path, r: &dyn Row, row: usize, column: &str) -> Result<String, DataError> {
    required(file, row, column, cell::to_id(r.get(column)))
}

const SCENE_COLUMNS: [&str; 4] = [
    "scene_id",
    "perturbation",
    "layout_level",
    "appearance_draw",
];

/// Reads the scenes file (`scene_id`, `perturbation`, `layout_level` ≥ 0, `appearance_draw`;
/// every other column is kept as text in [`SceneRecord::extra`], nulls omitted). File order is
/// kept. A layout level counts displacement steps from the base layout (0); the testbed draws
/// levels 0–3, another harness may use more, so only a negative level is refused.
///
/// # Errors
/// [`DataError`] for a bad or missing value, an unknown perturbation, a negative layout level,
/// an empty file, or a repeated `scene_id` (naming both rows).
pub fn read_scenes(path: impl AsRef<Path>) -> Result<Vec<SceneRecord>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: &SCENE_COLUMNS,
        optional: &[],
        all: true,
    };
    let mut out = Vec::new();
    let mut first_row: HashMap<String, usize> = HashMap::new();
    scan(file, &columns, &mut |r, row| {
        let scene_id = id(file, r, row, "scene_id")?;
        check_unique_id(file, row, "scene_id", &scene_id, &mut first_row)?;
        let perturbation = required(
            file,
            row,
            "perturbation",
            perturbation(r.get("perturbation")),
        )?;
        let mut extra = BTreeMap::new();
        for name in r.column_names() {
            if !SCENE_COLUMNS.contains(&name)
                && let Some(text) = optional(file, row, name, cell::to_extra(r.get(name)))?
            {
                extra.insert(name.to_owned(), text);
            }
        }
        let layout_level = required(
            file,
            row,
            "layout_level",
            cell::to_int(r.get("layout_level")),
        )?;
        if layout_level < 0 {
            return Err(DataError::invalid(
                file,
                Some(row),
                Some("layout_level"),
                format!(
                    "layout level {layout_level} is negative (a level counts displacement \
                     steps from the base layout, 0)"
                ),
            ));
        }
        out.push(SceneRecord {
            scene_id,
            perturbation,
            layout_level,
            appearance_draw: required(
                file,
                row,
                "appearance_draw",
                cell::to_int(r.get("appearance_draw")),
            )?,
            extra,
        });
        Ok(())
    })?;
    Ok(out)
}

fn check_unique_id(
    file: &Path,
    row: usize,
    column: &str,
    value: &str,
    first_row: &mut HashMap<String, usize>,
) -> Result<(), DataError> {
    if let Some(first) = first_row.get(value) {
        return Err(DataError::invalid(
            file,
            Some(row),
            Some(column),
            format!("duplicate id \"{value}\", first at row {first}"),
        ));
    }
    first_row.insert(value.to_owned(), row);
    Ok(())
}

fn perturbation(cell: Cell<'_>) -> CellResult<Option<Perturbation>> {
    let Some(text) = cell::to_id(cell)? else {
        return Ok(None);
    };
    match text.to_ascii_lowercase().as_str() {
        "appearance" => Ok(Some(Perturbation::Appearance)),
        "layout" => Ok(Some(Perturbation::Layout)),
        "fresh" => Ok(Some(Perturbation::Fresh)),
        // `testbed scenes` lists the library's base scenes beside the queries.
        "base" => Err(
            "expected appearance, layout or fresh, got \"base\": the scenes file lists query scenes only; drop the base rows (as `testbed scenes` writes them) and name each experience's base scene in the experiences file's base_scene_id".to_owned(),
        ),
        _ => Err(format!(
            "expected appearance, layout or fresh, got \"{text}\""
        )),
    }
}

/// Reads the experiences file (`experience_id`; optional `base_scene_id`, `recorded_at`,
/// `own_base_success`). Row order is the library order.
///
/// `recorded_at` is an integer order or an RFC 3339 timestamp; one file must not mix the two
/// (they are not comparable for the recency rule).
///
/// # Errors
/// [`DataError`] for a bad or missing value, `own_base_success` outside [0, 1], mixed
/// `recorded_at` kinds, an empty file, or a repeated `experience_id` (naming both rows).
pub fn read_experiences(path: impl AsRef<Path>) -> Result<Vec<ExperienceRecord>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: &["experience_id"],
        optional: &["base_scene_id", "recorded_at", "own_base_success"],
        all: false,
    };
    let mut out = Vec::new();
    let mut first_row: HashMap<String, usize> = HashMap::new();
    // Row and kind (true = timestamp) of the first non-null recorded_at.
    let mut first_recorded: Option<(usize, bool)> = None;
    scan(file, &columns, &mut |r, row| {
        let experience_id = id(file, r, row, "experience_id")?;
        check_unique_id(file, row, "experience_id", &experience_id, &mut first_row)?;
        let recorded_at = optional(
            file,
            row,
            "recorded_at",
            cell::to_recorded_at(r.get("recorded_at")),
        )?;
        if let Some(at) = &recorded_at {
            let is_timestamp = matches!(at, RecordedAt::Timestamp { .. });
            match first_recorded {
                None => first_recorded = Some((row, is_timestamp)),
                Some((first, kind)) if kind != is_timestamp => {
                    return Err(DataError::invalid(
                        file,
                        Some(row),
                        Some("recorded_at"),
                        format!(
                            "mixes integer orders and RFC 3339 timestamps (row {first} has {})",
                            if kind {
                                "a timestamp"
                            } else {
                                "an integer order"
                            }
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        let own_base_success = optional(
            file,
            row,
            "own_base_success",
            cell::to_finite(r.get("own_base_success")),
        )?;
        if let Some(rate) = own_base_success
            && !(0.0..=1.0).contains(&rate)
        {
            return Err(DataError::invalid(
                file,
                Some(row),
                Some("own_base_success"),
                format!("expected a rate in [0, 1], got {rate}"),
            ));
        }
        out.push(ExperienceRecord {
            experience_id,
            base_scene_id: optional(
                file,
                row,
                "base_scene_id",
                cell::to_id(r.get("base_scene_id")),
            )?,
            recorded_at,
            own_base_success,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Reads an embeddings file (`representation`, `kind` = `experience` | `scene`, `id`,
/// `vector`: a float list in Parquet, a JSON array in JSONL, a space-separated string in CSV).
///
/// # Errors
/// [`DataError`] for a bad or missing value, a non-finite or empty vector, a vector whose
/// length differs from the first one of its representation, a repeated
/// `(representation, kind, id)` (naming both rows), or an empty file.
pub fn read_embeddings(path: impl AsRef<Path>) -> Result<Vec<EmbeddingRecord>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: &["representation", "kind", "id", "vector"],
        optional: &[],
        all: false,
    };
    // Rows are read in batches, each row's identifying cells checked in row order and its
    // vector cell kept as it came; a full batch has its vectors parsed in parallel (the numbers
    // are most of the file), then each row's vector, dimension and uniqueness checked in row
    // order. A row's checks run in the order of a row-by-row reader, so the first error is the
    // one such a reader meets: an error while reading stops the scan, and is reported after the
    // rows before it have passed every check.
    let mut checks = EmbeddingChecks {
        file,
        dims: HashMap::new(),
        first_row: HashMap::new(),
        out: Vec::new(),
    };
    let mut pending: Vec<PendingEmbedding> = Vec::with_capacity(EMBEDDING_BATCH);
    let stopped = scan(file, &columns, &mut |r, row| {
        let representation = id(file, r, row, "representation")?;
        let kind = required(file, row, "kind", embedding_kind(r.get("kind")))?;
        let item = id(file, r, row, "id")?;
        pending.push((
            row,
            representation,
            kind,
            item,
            r.get("vector").into_owned(),
        ));
        // A batch's error stops the scan and is the one `scan` returns; the failed batch is
        // left empty, so the check of the rest below passes it through.
        if pending.len() == EMBEDDING_BATCH {
            checks.batch(&mut pending)?;
        }
        Ok(())
    })
    .err();
    checks.batch(&mut pending)?;
    match stopped {
        Some(error) => Err(error),
        None => Ok(checks.out),
    }
}

/// Rows of an embeddings file checked together (a batch's vectors are parsed in parallel).
const EMBEDDING_BATCH: usize = 1024;

/// A row read but not yet checked: row number, representation, kind, id and the vector cell.
type PendingEmbedding = (usize, String, EmbeddingKind, String, Cell<'static>);

/// The checks of [`read_embeddings`] that span rows, and the records that passed them.
struct EmbeddingChecks<'a> {
    file: &'a Path,
    /// representation -> (dimension, first row)
    dims: HashMap<String, (usize, usize)>,
    first_row: HashMap<(String, EmbeddingKind, String), usize>,
    out: Vec<EmbeddingRecord>,
}

impl EmbeddingChecks<'_> {
    /// Parses the vectors of `pending` (in parallel), then checks each row in order: its
    /// vector, its representation's dimension and that its key is new. Empties `pending`, on error too.
    fn batch(&mut self, pending: &mut Vec<PendingEmbedding>) -> Result<(), DataError> {
        let file = self.file;
        let vectors: Vec<CellResult<Option<Vec<f32>>>> = pending
            .par_iter_mut()
            .map(|entry| cell::to_vector(std::mem::replace(&mut entry.4, Cell::Null)))
            .collect();
        for ((row, representation, kind, item, _), vector) in pending.drain(..).zip(vectors) {
            let vector = required(file, row, "vector", vector)?;
            let (dim, dim_row) = *self
                .dims
                .entry(representation.clone())
                .or_insert((vector.len(), row));
            if vector.len() != dim {
                return Err(DataError::invalid(
                    file,
                    Some(row),
                    Some("vector"),
                    format!(
                        "representation \"{representation}\" has dimension {dim} (row {dim_row}), this vector has {}",
                        vector.len()
                    ),
                ));
            }
            let key = (representation, kind, item);
            if let Some(first) = self.first_row.get(&key) {
                return Err(DataError::invalid(
                    file,
                    Some(row),
                    None,
                    format!(
                        "duplicate embedding (representation \"{}\", {} \"{}\"), first at row {first}",
                        key.0,
                        kind_name(kind),
                        key.2
                    ),
                ));
            }
            self.first_row.insert(key.clone(), row);
            let (representation, kind, id) = key;
            self.out.push(EmbeddingRecord {
                representation,
                kind,
                id,
                vector,
            });
        }
        Ok(())
    }
}

pub(crate) fn kind_name(kind: EmbeddingKind) -> &'static str {
    match kind {
        EmbeddingKind::Experience => "experience",
        EmbeddingKind::Scene => "scene",
    }
}

fn embedding_kind(cell: Cell<'_>) -> CellResult<Option<EmbeddingKind>> {
    let Some(text) = cell::to_id(cell)? else {
        return Ok(None);
    };
    match text.to_ascii_lowercase().as_str() {
        "experience" => Ok(Some(EmbeddingKind::Experience)),
        "scene" => Ok(Some(EmbeddingKind::Scene)),
        _ => Err(format!("expected experience or scene, got \"{text}\"")),
    }
}

/// Reads a user selection log (`scene_id`, `experience_id`): one selection per scene.
///
/// # Errors
/// [`DataError`] for a missing value, an empty file, or a scene selected twice (naming both rows).
pub fn read_selections(path: impl AsRef<Path>) -> Result<Vec<SelectionRecord>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: &["scene_id", "experience_id"],
        optional: &[],
        all: false,
    };
    let mut out = Vec::new();
    let mut first_row: HashMap<String, usize> = HashMap::new();
    scan(file, &columns, &mut |r, row| {
        let scene_id = id(file, r, row, "scene_id")?;
        check_unique_id(file, row, "scene_id", &scene_id, &mut first_row)?;
        out.push(SelectionRecord {
            scene_id,
            experience_id: id(file, r, row, "experience_id")?,
        });
        Ok(())
    })?;
    Ok(out)
}
