//! A whole Parquet file (selected columns) in memory, with typed column accessors that name
//! file, 1-based row and column in every error. LeRobot files are small (one episode, or
//! up to ~100 MB of chunked episodes), so whole-file reads keep the code simple.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::DataError;

/// Selected columns of one Parquet file.
pub(crate) struct ParquetTable {
    pub file: PathBuf,
    /// Every top-level column name of the file (not only the selected ones).
    pub all_names: Vec<String>,
    batches: Vec<RecordBatch>,
    pub rows: usize,
}

impl ParquetTable {
    /// Reads the columns accepted by `keep` (by name); absent columns are simply not there.
    pub fn read(file: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Self, DataError> {
        let parquet_err = |source| DataError::Parquet {
            file: file.to_path_buf(),
            row: None,
            action: "read",
            source,
        };
        let handle = std::fs::File::open(file).map_err(|e| DataError::io(file, "open", e))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(handle).map_err(parquet_err)?;
        let all_names: Vec<String> = builder
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let roots: Vec<usize> = all_names
            .iter()
            .enumerate()
            .filter(|(_, n)| keep(n))
            .map(|(k, _)| k)
            .collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(8192)
            .build()
            .map_err(parquet_err)?;
        let mut batches = Vec::new();
        let mut rows = 0;
        for batch in reader {
            let batch = batch.map_err(|e| DataError::Parquet {
                file: file.to_path_buf(),
                row: Some(rows + 1),
                action: "read",
                source: e.into(),
            })?;
            rows += batch.num_rows();
            batches.push(batch);
        }
        Ok(Self {
            file: file.to_path_buf(),
            all_names,
            batches,
            rows,
        })
    }

    /// Whether `name` was selected and is present.
    pub fn has(&self, name: &str) -> bool {
        self.batches
            .first()
            .is_some_and(|b| b.schema().index_of(name).is_ok())
            || (self.batches.is_empty() && self.all_names.iter().any(|n| n == name))
    }

    /// The Arrow type of column `name`, when selected and present.
    pub fn data_type(&self, name: &str) -> Option<DataType> {
        let batch = self.batches.first()?;
        let schema = batch.schema();
        schema
            .field_with_name(name)
            .ok()
            .map(|f| f.data_type().clone())
    }

    /// Column `name` of `batch`; a missing column is [`DataError::MissingColumn`].
    fn column<'b>(&self, batch: &'b RecordBatch, name: &str) -> Result<&'b ArrayRef, DataError> {
        batch
            .column_by_name(name)
            .ok_or_else(|| DataError::MissingColumn {
                file: self.file.clone(),
                column: name.to_owned(),
            })
    }

    /// Reads every row of column `name` with `cell(array, row_in_batch)`; a cell's error
    /// message becomes an [`DataError::Invalid`] naming file, 1-based row and column.
    fn cells<T>(
        &self,
        name: &str,
        cell: impl Fn(&ArrayRef, usize) -> Result<T, String>,
    ) -> Result<Vec<T>, DataError> {
        let mut out = Vec::with_capacity(self.rows);
        let mut offset = 0;
        for batch in &self.batches {
            let array = self.column(batch, name)?;
            for i in 0..batch.num_rows() {
                out.push(cell(array, i).map_err(|m| self.err(offset + i + 1, name, m))?);
            }
            offset += batch.num_rows();
        }
        Ok(out)
    }

    fn err(&self, row: usize, column: &str, message: impl Into<String>) -> DataError {
        DataError::invalid(&self.file, Some(row), Some(column), message)
    }

    /// An integer column (any integer type, or a one-element list of one); nulls are errors.
    pub fn ints(&self, name: &str) -> Result<Vec<i64>, DataError> {
        self.cells(name, |array, i| match scalar(array, i)? {
            Scalar::Int(v) => Ok(v),
            other => Err(format!("expected an integer, got {}", other.describe())),
        })
    }

    /// A numeric or boolean scalar column as `f64` (bool as 0/1); nulls are `None`.
    pub fn numbers(&self, name: &str) -> Result<Vec<Option<f64>>, DataError> {
        self.cells(name, |array, i| match scalar(array, i)? {
            Scalar::Null => Ok(None),
            Scalar::Int(v) => Ok(Some(v as f64)),
            Scalar::Float(v) => Ok(Some(v)),
            Scalar::Bool(b) => Ok(Some(if b { 1.0 } else { 0.0 })),
            other => Err(format!("expected a number, got {}", other.describe())),
        })
    }

    /// A numeric column as one `f32` vector per row: list, large list and fixed-size list
    /// columns of numbers, or scalars as one-element vectors. Nulls (rows or elements) are errors.
    pub fn vectors(&self, name: &str) -> Result<Vec<Vec<f32>>, DataError> {
        self.cells(name, vector)
    }

    /// A string column (UTF-8 of any width); nulls are `None`.
    pub fn strings(&self, name: &str) -> Result<Vec<Option<String>>, DataError> {
        self.cells(name, string_at)
    }

    /// A list-of-strings column (a plain string is a one-element list); nulls are empty lists.
    pub fn string_lists(&self, name: &str) -> Result<Vec<Vec<String>>, DataError> {
        self.cells(name, string_list_at)
    }

    /// The `{bytes, path}` struct of an `image` column at 0-based `index`.
    pub fn image_cell(&self, name: &str, index: usize) -> Result<ImageCell, DataError> {
        let mut offset = 0;
        for batch in &self.batches {
            if index < offset + batch.num_rows() {
                let array = self.column(batch, name)?;
                return image_cell(array, index - offset).map_err(|m| self.err(index + 1, name, m));
            }
            offset += batch.num_rows();
        }
        Err(self.err(index + 1, name, "row out of range"))
    }
}

/// The strings at `i` of a list-of-strings column (null items skipped), a plain string as a
/// one-element list, or an empty list for a null row.
fn string_list_at(array: &ArrayRef, i: usize) -> Result<Vec<String>, String> {
    if array.is_null(i) {
        return Ok(Vec::new());
    }
    let items = match array.data_type() {
        DataType::List(_) => array.as_list::<i32>().value(i),
        DataType::LargeList(_) => array.as_list::<i64>().value(i),
        _ => return Ok(string_at(array, i)?.into_iter().collect()),
    };
    let mut list = Vec::with_capacity(items.len());
    for k in 0..items.len() {
        if let Some(s) = string_at(&items, k)? {
            list.push(s);
        }
    }
    Ok(list)
}

/// An encoded image as LeRobot stores it: inline bytes, or a path relative to the dataset root.
pub(crate) struct ImageCell {
    pub bytes: Option<Vec<u8>>,
    pub path: Option<String>,
}

fn image_cell(array: &ArrayRef, i: usize) -> Result<ImageCell, String> {
    if array.is_null(i) {
        return Err("missing image (null)".to_owned());
    }
    match array.data_type() {
        DataType::Struct(_) => {
            let st = array.as_struct();
            let bytes = match st.column_by_name("bytes") {
                Some(b) if !b.is_null(i) => Some(binary_at(b, i)?),
                _ => None,
            };
            let path = match st.column_by_name("path") {
                Some(p) => string_at(p, i)?,
                None => None,
            };
            Ok(ImageCell { bytes, path })
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Ok(ImageCell {
            bytes: Some(binary_at(array, i)?),
            path: None,
        }),
        other => Err(format!(
            "expected an image struct {{bytes, path}} or binary, got Arrow type {other}"
        )),
    }
}

fn binary_at(array: &ArrayRef, i: usize) -> Result<Vec<u8>, String> {
    match array.data_type() {
        DataType::Binary => Ok(array.as_binary::<i32>().value(i).to_vec()),
        DataType::LargeBinary => Ok(array.as_binary::<i64>().value(i).to_vec()),
        DataType::BinaryView => Ok(array.as_binary_view().value(i).to_vec()),
        other => Err(format!(
            "expected binary image bytes, got Arrow type {other}"
        )),
    }
}

fn string_at(array: &ArrayRef, i: usize) -> Result<Option<String>, String> {
    if array.is_null(i) {
        return Ok(None);
    }
    match array.data_type() {
        DataType::Utf8 => Ok(Some(array.as_string::<i32>().value(i).to_owned())),
        DataType::LargeUtf8 => Ok(Some(array.as_string::<i64>().value(i).to_owned())),
        DataType::Utf8View => Ok(Some(array.as_string_view().value(i).to_owned())),
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = match scalar(dict.keys(), i)? {
                Scalar::Int(k) => usize::try_from(k).map_err(|_| "negative dictionary key")?,
                _ => return Err("bad dictionary key".to_owned()),
            };
            string_at(dict.values(), key)
        }
        other => Err(format!("expected a string, got Arrow type {other}")),
    }
}

/// One scalar value, before the caller decides which kinds it accepts.
pub(crate) enum Scalar {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    Other(String),
}

impl Scalar {
    fn describe(&self) -> String {
        match self {
            Self::Null => "a missing value".to_owned(),
            Self::Int(v) => v.to_string(),
            Self::Float(v) => format!("float {v}"),
            Self::Bool(b) => b.to_string(),
            Self::Other(s) => s.clone(),
        }
    }
}

/// The scalar at `i`; a one-element list counts as its element (some writers wrap scalars).
fn scalar(array: &dyn Array, i: usize) -> Result<Scalar, String> {
    if array.is_null(i) {
        return Ok(Scalar::Null);
    }
    Ok(match array.data_type() {
        DataType::Boolean => Scalar::Bool(array.as_boolean().value(i)),
        DataType::Int8 => Scalar::Int(array.as_primitive::<Int8Type>().value(i).into()),
        DataType::Int16 => Scalar::Int(array.as_primitive::<Int16Type>().value(i).into()),
        DataType::Int32 => Scalar::Int(array.as_primitive::<Int32Type>().value(i).into()),
        DataType::Int64 => Scalar::Int(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Scalar::Int(array.as_primitive::<UInt8Type>().value(i).into()),
        DataType::UInt16 => Scalar::Int(array.as_primitive::<UInt16Type>().value(i).into()),
        DataType::UInt32 => Scalar::Int(array.as_primitive::<UInt32Type>().value(i).into()),
        DataType::UInt64 => {
            let u = array.as_primitive::<UInt64Type>().value(i);
            i64::try_from(u).map_or_else(|_| Scalar::Other(format!("{u} (too large)")), Scalar::Int)
        }
        DataType::Float16 => Scalar::Float(array.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => Scalar::Float(array.as_primitive::<Float32Type>().value(i).into()),
        DataType::Float64 => Scalar::Float(array.as_primitive::<Float64Type>().value(i)),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => {
            let items = list_at(array, i)?;
            if items.len() == 1 {
                return scalar(items.as_ref(), 0);
            }
            Scalar::Other(format!("a list of {} values", items.len()))
        }
        other => Scalar::Other(format!("a value of Arrow type {other}")),
    })
}

fn list_at(array: &dyn Array, i: usize) -> Result<ArrayRef, String> {
    match array.data_type() {
        DataType::List(_) => Ok(array.as_list::<i32>().value(i)),
        DataType::LargeList(_) => Ok(array.as_list::<i64>().value(i)),
        DataType::FixedSizeList(_, _) => Ok(array.as_fixed_size_list().value(i)),
        other => Err(format!("expected a list, got Arrow type {other}")),
    }
}

// Cast: f32 is the frame contract
fn vector(array: &ArrayRef, i: usize) -> Result<Vec<f32>, String> {
    if array.is_null(i) {
        return Err("missing value (null)".to_owned());
    }
    let items: ArrayRef = match array.data_type() {
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => {
            list_at(array.as_ref(), i)?
        }
        _ => array.slice(i, 1),
    };
    let mut out = Vec::with_capacity(items.len());
    for k in 0..items.len() {
        out.push(match scalar(items.as_ref(), k)? {
            Scalar::Float(v) => v as f32,
            Scalar::Int(v) => v as f32,
            Scalar::Bool(b) => f32::from(u8::from(b)),
            Scalar::Null => return Err(format!("element {} is null", k + 1)),
            Scalar::Other(what) => return Err(format!("element {} is {what}", k + 1)),
        });
    }
    Ok(out)
}
