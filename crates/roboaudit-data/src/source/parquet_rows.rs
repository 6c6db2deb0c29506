//! Parquet rows, streamed one record batch at a time (only the needed columns are decoded).

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::{Columns, Row, check_required, check_unique};
use crate::DataError;
use crate::cell::Cell;

/// Rows per decoded batch: large enough to amortize decoding, small enough to keep memory flat.
const BATCH_ROWS: usize = 8192;

struct ParquetRow<'a> {
    names: &'a [String],
    batch: &'a RecordBatch,
    index: usize,
}

impl Row for ParquetRow<'_> {
    fn get(&self, column: &str) -> Cell<'_> {
        self.names
            .iter()
            .position(|n| n == column)
            .map_or(Cell::Null, |k| {
                cell_at(self.batch.column(k).as_ref(), self.index).normalized()
            })
    }

    fn column_names(&self) -> Vec<&str> {
        self.names.iter().map(String::as_str).collect()
    }
}

pub(super) fn scan(
    path: &Path,
    columns: &Columns<'_>,
    visit: &mut dyn FnMut(&dyn Row, usize) -> Result<(), DataError>,
) -> Result<usize, DataError> {
    let parquet_err =
        |row: Option<usize>, source: parquet::errors::ParquetError| DataError::Parquet {
            file: path.to_path_buf(),
            row,
            action: "read",
            source,
        };
    let file = std::fs::File::open(path).map_err(|e| DataError::io(path, "open", e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_err(None, e))?;
    let schema = builder.schema().clone();
    let all_names = schema.fields().iter().map(|f| f.name().as_str());
    check_unique(path, all_names.clone())?;
    check_required(path, columns, all_names)?;
    let keep: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            // Extra columns are documented as ignored: a list or struct one is not even decoded.
            (columns.all && !f.data_type().is_nested())
                || columns.required.contains(&f.name().as_str())
                || columns.optional.contains(&f.name().as_str())
        })
        .map(|(k, _)| k)
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), keep);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| parquet_err(None, e))?;
    let mut rows = 0;
    for batch in reader {
        let batch = batch.map_err(|e| parquet_err(Some(rows + 1), e.into()))?;
        let names: Vec<String> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        for index in 0..batch.num_rows() {
            rows += 1;
            let row = ParquetRow {
                names: &names,
                batch: &batch,
                index,
            };
            visit(&row, rows)?;
        }
    }
    Ok(rows)
}

/// The value at `i`, dispatched on the Arrow type (dictionaries resolved recursively).
fn cell_at(array: &dyn Array, i: usize) -> Cell<'_> {
    if array.is_null(i) {
        return Cell::Null;
    }
    match array.data_type() {
        DataType::Utf8 => Cell::Str(array.as_string::<i32>().value(i).into()),
        DataType::LargeUtf8 => Cell::Str(array.as_string::<i64>().value(i).into()),
        DataType::Utf8View => Cell::Str(array.as_string_view().value(i).into()),
        DataType::Boolean => Cell::Bool(array.as_boolean().value(i)),
        DataType::Float32 => Cell::Float(f64::from(
            array
                .as_primitive::<arrow_array::types::Float32Type>()
                .value(i),
        )),
        DataType::Float64 => Cell::Float(
            array
                .as_primitive::<arrow_array::types::Float64Type>()
                .value(i),
        ),
        DataType::Int8 => Cell::Int(array.as_primitive::<Int8Type>().value(i).into()),
        DataType::Int16 => Cell::Int(array.as_primitive::<Int16Type>().value(i).into()),
        DataType::Int32 => Cell::Int(array.as_primitive::<Int32Type>().value(i).into()),
        DataType::Int64 => Cell::Int(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Cell::Int(array.as_primitive::<UInt8Type>().value(i).into()),
        DataType::UInt16 => Cell::Int(array.as_primitive::<UInt16Type>().value(i).into()),
        DataType::UInt32 => Cell::Int(array.as_primitive::<UInt32Type>().value(i).into()),
        DataType::UInt64 => {
            let u = array.as_primitive::<UInt64Type>().value(i);
            i64::try_from(u).map_or(Cell::BigUInt(u), Cell::Int)
        }
        DataType::Timestamp(unit, _) => timestamp(array, *unit, i),
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            match cell_at(dict.keys(), i) {
                Cell::Int(k) => usize::try_from(k)
                    .ok()
                    .filter(|k| *k < dict.values().len())
                    .map_or_else(
                        || Cell::Other(format!("dictionary key {k} out of range")),
                        |k| cell_at(dict.values().as_ref(), k),
                    ),
                other => other,
            }
        }
        DataType::List(_) => floats(&array.as_list::<i32>().value(i)),
        DataType::LargeList(_) => floats(&array.as_list::<i64>().value(i)),
        DataType::FixedSizeList(_, _) => floats(&array.as_fixed_size_list().value(i)),
        other => Cell::Other(format!("a value of Parquet/Arrow type {other}")),
    }
}

fn timestamp(array: &dyn Array, unit: TimeUnit, i: usize) -> Cell<'static> {
    let (value, per_second) = match unit {
        TimeUnit::Second => (array.as_primitive::<TimestampSecondType>().value(i), 1),
        TimeUnit::Millisecond => (
            array.as_primitive::<TimestampMillisecondType>().value(i),
            1_000,
        ),
        TimeUnit::Microsecond => (
            array.as_primitive::<TimestampMicrosecondType>().value(i),
            1_000_000,
        ),
        TimeUnit::Nanosecond => (
            array.as_primitive::<TimestampNanosecondType>().value(i),
            1_000_000_000,
        ),
    };
    let nanos = value.rem_euclid(per_second) * (1_000_000_000 / per_second);
    // `nanos` is in 0..1e9 by construction, so the conversion cannot fail.
    Cell::Timestamp(
        value.div_euclid(per_second),
        u32::try_from(nanos).unwrap_or(0),
    )
}

/// A list's elements as `f64` (float32 and float64 elements; nulls are rejected).
fn floats(values: &ArrayRef) -> Cell<'static> {
    if values.null_count() > 0 {
        return Cell::Other("a list with null elements".to_owned());
    }
    match values.data_type() {
        DataType::Float32 => Cell::Floats(
            values
                .as_primitive::<arrow_array::types::Float32Type>()
                .values()
                .iter()
                .map(|v| f64::from(*v))
                .collect(),
        ),
        DataType::Float64 => Cell::Floats(
            values
                .as_primitive::<arrow_array::types::Float64Type>()
                .values()
                .to_vec(),
        ),
        other => Cell::Other(format!("a list of {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int8Type;
    use arrow_array::{DictionaryArray, TimestampMillisecondArray, TimestampNanosecondArray};

    #[test]
    fn timestamps_before_the_epoch_floor_to_whole_seconds() {
        let ms = TimestampMillisecondArray::from(vec![-1, 1_500]);
        assert_eq!(cell_at(&ms, 0), Cell::Timestamp(-1, 999_000_000));
        assert_eq!(cell_at(&ms, 1), Cell::Timestamp(1, 500_000_000));
        let ns = TimestampNanosecondArray::from(vec![-1_000_000_001]);
        assert_eq!(cell_at(&ns, 0), Cell::Timestamp(-2, 999_999_999));
    }

    #[test]
    fn dictionary_values_and_null_keys() {
        let dict: DictionaryArray<Int8Type> = vec![Some("b"), None, Some("a"), Some("b")]
            .into_iter()
            .collect();
        let got: Vec<Cell<'_>> = (0..4).map(|i| cell_at(&dict, i)).collect();
        assert_eq!(
            got,
            vec![
                Cell::Str("b".into()),
                Cell::Null,
                Cell::Str("a".into()),
                Cell::Str("b".into())
            ]
        );
    }
}
