//! JSONL rows: one JSON object per non-blank line; a missing key is a null.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::Row;
use crate::DataError;
use crate::cell::Cell;

struct JsonRow<'a>(&'a Map<String, Value>);

impl Row for JsonRow<'_> {
    fn get(&self, column: &str) -> Cell<'_> {
        self.0.get(column).map_or(Cell::Null, to_cell)
    }

    fn column_names(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

fn to_cell(value: &Value) -> Cell<'_> {
    match value {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Cell::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cell::BigUInt(u)
            } else {
                n.as_f64()
                    .map_or(Cell::Other(format!("number {n}")), Cell::Float)
            }
        }
        Value::String(s) => Cell::Str(Cow::Borrowed(s)).normalized(),
        Value::Array(items) => items
            .iter()
            .map(Value::as_f64)
            .collect::<Option<Vec<f64>>>()
            .map_or_else(
                || Cell::Other("a JSON array with non-numeric elements".to_owned()),
                Cell::Floats,
            ),
        Value::Object(_) => Cell::Other("a JSON object".to_owned()),
    }
}

pub(super) fn scan(
    path: &Path,
    visit: &mut dyn FnMut(&dyn Row, usize) -> Result<(), DataError>,
) -> Result<usize, DataError> {
    let file = std::fs::File::open(path).map_err(|e| DataError::io(path, "open", e))?;
    let reader = std::io::BufReader::new(file);
    let mut rows = 0;
    for line in reader.lines() {
        let line = line.map_err(|e| DataError::io(path, "read", e))?;
        let line = if rows == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            &line
        };
        if line.trim().is_empty() {
            continue;
        }
        rows += 1;
        let object: Map<String, Value> =
            serde_json::from_str(line).map_err(|e| DataError::Json {
                file: path.to_path_buf(),
                row: rows,
                message: format!("expected a JSON object: {e}"),
            })?;
        visit(&JsonRow(&object), rows)?;
    }
    Ok(rows)
}
