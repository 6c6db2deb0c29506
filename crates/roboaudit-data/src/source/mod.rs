//! Row-at-a-time access to CSV, JSONL and Parquet files behind one trait, so that each
//! record kind is parsed by one function whatever the format.

mod csv_rows;
mod jsonl_rows;
mod parquet_rows;

use std::path::Path;

use crate::cell::Cell;
use crate::{DataError, Format};

/// One data row. Cells are looked up by column name.
pub(crate) trait Row {
    /// The cell of `column`, with absent columns, nulls and blank strings as [`Cell::Null`].
    fn get(&self, column: &str) -> Cell<'_>;
    /// Names of the columns present in this row, in file order.
    fn column_names(&self) -> Vec<&str>;
}

/// Which columns a reader needs.
pub(crate) struct Columns<'a> {
    /// Must be present in the header or schema (JSONL: checked per row as values).
    pub required: &'a [&'a str],
    /// Read when present.
    pub optional: &'a [&'a str],
    /// Read every column (scenes keep extra columns); otherwise Parquet reads only the named ones.
    pub all: bool,
}

/// Calls `visit(row, row_number)` for every data row of `path` (row numbers are 1-based,
/// header not counted) and returns the number of rows.
///
/// # Errors
/// Format errors, a missing required column, an empty file, or the first error of `visit`.
pub(crate) fn scan(
    path: &Path,
    columns: &Columns<'_>,
    visit: &mut dyn FnMut(&dyn Row, usize) -> Result<(), DataError>,
) -> Result<usize, DataError> {
    let rows = match Format::from_path(path)? {
        Format::Csv => csv_rows::scan(path, columns, visit)?,
        Format::Jsonl => jsonl_rows::scan(path, visit)?,
        Format::Parquet => parquet_rows::scan(path, columns, visit)?,
    };
    if rows == 0 {
        return Err(DataError::Empty {
            file: path.to_path_buf(),
        });
    }
    Ok(rows)
}

/// Fails with [`DataError::MissingColumn`] when a required column is not in `names`.
fn check_required<'n>(
    path: &Path,
    columns: &Columns<'_>,
    names: impl Iterator<Item = &'n str> + Clone,
) -> Result<(), DataError> {
    for required in columns.required {
        if !names.clone().any(|n| n == *required) {
            return Err(DataError::MissingColumn {
                file: path.to_path_buf(),
                column: (*required).to_owned(),
            });
        }
    }
    Ok(())
}

/// Fails when a header names the same column twice (lookups by name would be ambiguous). One
/// column without a name is accepted (pandas' `to_csv` writes its index so), two are named as
/// such: the columns are stray delimiters, not one name twice.
fn check_unique<'n>(path: &Path, names: impl Iterator<Item = &'n str>) -> Result<(), DataError> {
    let mut seen = std::collections::HashMap::new();
    for (index, name) in names.enumerate() {
        if let Some(first) = seen.insert(name, index) {
            let message = if name.trim().is_empty() {
                format!(
                    "columns {} and {} of the header have no name (stray delimiters?)",
                    first + 1,
                    index + 1
                )
            } else {
                "column appears more than once in the header".to_owned()
            };
            let column = (!name.trim().is_empty()).then_some(name);
            return Err(DataError::invalid(path, None, column, message));
        }
    }
    Ok(())
}
