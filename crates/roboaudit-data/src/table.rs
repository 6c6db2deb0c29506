//! A small column table that every writer fills, and its encoders for the three formats.
//! Files are written atomically: into a temporary file in the target directory, synced, then
//! renamed over the target, so a crash leaves either the old file or the new one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::{DataError, Format};

/// One column's values; `None` is written as null (Parquet, JSONL) or an empty field (CSV).
pub(crate) enum Column {
    Str(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    /// Written as 0/1 in CSV (SPEC.md §1 `success ∈ {0,1}`).
    Bool(Vec<bool>),
    Float(Vec<Option<f64>>),
    Vectors(Vec<Vec<f32>>),
}

pub(crate) struct Table {
    pub names: Vec<&'static str>,
    pub extra_names: Vec<String>,
    pub columns: Vec<Column>,
    pub rows: usize,
}

impl Table {
    fn names(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .copied()
            .chain(self.extra_names.iter().map(String::as_str))
    }
}

/// Writes `table` to `path` in `format`, atomically.
pub(crate) fn write_table(path: &Path, format: Format, table: &Table) -> Result<(), DataError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = crate::atomic::result_file_builder()
        .prefix(TMP_PREFIX)
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| DataError::io(path, "create a temporary file next to", e))?;
    match format {
        Format::Csv => write_csv(path, tmp.as_file_mut(), table)?,
        Format::Jsonl => write_jsonl(path, tmp.as_file_mut(), table)?,
        Format::Parquet => write_parquet(path, tmp.as_file_mut(), table)?,
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| DataError::io(path, "sync", e))?;
    tmp.persist(path)
        .map_err(|e| DataError::io(path, "rename a temporary file onto", e.error))?;
    Ok(())
}

/// Prefix of temporary files; stale ones may be removed by [`crate::ExecutionLogWriter::open`].
pub(crate) const TMP_PREFIX: &str = ".roboaudit-";

fn write_csv(path: &Path, file: &mut File, table: &Table) -> Result<(), DataError> {
    let csv_err = |source| DataError::Csv {
        file: path.to_path_buf(),
        row: None,
        source,
    };
    let mut writer = csv::Writer::from_writer(BufWriter::new(file));
    writer.write_record(table.names()).map_err(csv_err)?;
    let mut fields: Vec<String> = Vec::with_capacity(table.columns.len());
    for i in 0..table.rows {
        fields.clear();
        for column in &table.columns {
            fields.push(match column {
                Column::Str(v) => v[i].clone().unwrap_or_default(),
                Column::Int(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
                Column::Bool(v) => if v[i] { "1" } else { "0" }.to_owned(),
                // Rust prints the shortest text that parses back to the same f64/f32.
                Column::Float(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
                Column::Vectors(v) => v[i]
                    .iter()
                    .map(f32::to_string)
                    .collect::<Vec<_>>()
                    .join(" "),
            });
        }
        writer.write_record(&fields).map_err(csv_err)?;
    }
    writer
        .flush()
        .map_err(|e| DataError::io(path, "write", e))?;
    Ok(())
}

/// One JSONL row, serialized without building a `serde_json::Value`.
struct JsonRow<'a> {
    table: &'a Table,
    index: usize,
}

impl Serialize for JsonRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let i = self.index;
        let mut map = serializer.serialize_map(Some(self.table.columns.len()))?;
        for (name, column) in self.table.names().zip(&self.table.columns) {
            match column {
                Column::Str(v) => map.serialize_entry(name, &v[i])?,
                Column::Int(v) => map.serialize_entry(name, &v[i])?,
                Column::Bool(v) => map.serialize_entry(name, &v[i])?,
                Column::Float(v) => map.serialize_entry(name, &v[i])?,
                // Widened to f64 so that any reader (which parses JSON numbers as f64) gets the
                // exact f32 back; shortest f32 text could double-round through f64.
                Column::Vectors(v) => map.serialize_entry(
                    name,
                    &v[i].iter().map(|x| f64::from(*x)).collect::<Vec<f64>>(),
                )?,
            }
        }
        map.end()
    }
}

fn write_jsonl(path: &Path, file: &mut File, table: &Table) -> Result<(), DataError> {
    let write_err = |e| DataError::io(path, "write", e);
    let mut out = BufWriter::new(file);
    for index in 0..table.rows {
        serde_json::to_writer(&mut out, &JsonRow { table, index })
            .map_err(|e| write_err(std::io::Error::other(e)))?;
        out.write_all(b"\n").map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    Ok(())
}

fn write_parquet(path: &Path, file: &mut File, table: &Table) -> Result<(), DataError> {
    let parquet_err = |source| DataError::Parquet {
        file: path.to_path_buf(),
        row: None,
        action: "write",
        source,
    };
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (name, column) in table.names().zip(&table.columns) {
        let (data_type, nullable, array): (DataType, bool, ArrayRef) = match column {
            Column::Str(v) => (
                DataType::Utf8,
                true,
                Arc::new(StringArray::from_iter(v.iter().map(Option::as_deref))),
            ),
            Column::Int(v) => (DataType::Int64, true, Arc::new(Int64Array::from(v.clone()))),
            Column::Bool(v) => (
                DataType::Boolean,
                false,
                Arc::new(BooleanArray::from(v.clone())),
            ),
            Column::Float(v) => (
                DataType::Float64,
                true,
                Arc::new(Float64Array::from(v.clone())),
            ),
            Column::Vectors(v) => {
                let item = Arc::new(Field::new_list_field(DataType::Float32, false));
                let mut builder =
                    ListBuilder::new(Float32Builder::new()).with_field(Arc::clone(&item));
                for vector in v {
                    builder.values().append_slice(vector);
                    builder.append(true);
                }
                (DataType::List(item), false, Arc::new(builder.finish()))
            }
        };
        fields.push(Field::new(name, data_type, nullable));
        arrays.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch =
        RecordBatch::try_new(Arc::clone(&schema), arrays).map_err(|e| parquet_err(e.into()))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer = ArrowWriter::try_new(file, schema, Some(props)).map_err(parquet_err)?;
    writer.write(&batch).map_err(parquet_err)?;
    writer.close().map_err(parquet_err)?;
    Ok(())
}
