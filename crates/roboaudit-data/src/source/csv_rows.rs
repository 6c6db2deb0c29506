//! CSV rows: every cell is text; conversions happen in `cell`.

use std::borrow::Cow;
use std::path::Path;

use csv::{ReaderBuilder, StringRecord, Trim};

use super::{Columns, Row, check_required, check_unique};
use crate::DataError;
use crate::cell::Cell;

struct CsvRow<'a> {
    headers: &'a StringRecord,
    record: &'a StringRecord,
}

impl Row for CsvRow<'_> {
    fn get(&self, column: &str) -> Cell<'_> {
        self.headers
            .iter()
            .position(|h| h == column)
            .and_then(|k| self.record.get(k))
            .map_or(Cell::Null, |s| Cell::Str(Cow::Borrowed(s)).normalized())
    }

    fn column_names(&self) -> Vec<&str> {
        self.headers.iter().collect()
    }
}

pub(super) fn scan(
    path: &Path,
    columns: &Columns<'_>,
    visit: &mut dyn FnMut(&dyn Row, usize) -> Result<(), DataError>,
) -> Result<usize, DataError> {
    let file = std::fs::File::open(path).map_err(|e| DataError::io(path, "open", e))?;
    // A 0-byte file has no header either; "missing required column" would send the user
    // looking for a typo in a header that does not exist.
    if file.metadata().is_ok_and(|m| m.len() == 0) {
        return Err(DataError::invalid(
            path,
            None,
            None,
            format!(
                "the file is empty (0 bytes; expected a header row naming {})",
                columns.required.join(", ")
            ),
        ));
    }
    let mut reader = ReaderBuilder::new()
        .trim(Trim::All)
        .from_reader(std::io::BufReader::new(file));
    let csv_err = |row: Option<usize>, source: csv::Error| DataError::Csv {
        file: path.to_path_buf(),
        row,
        source,
    };
    // Spreadsheet exports start with a UTF-8 byte-order mark that would hide the first column.
    let headers: StringRecord = reader
        .headers()
        .map_err(|e| csv_err(None, e))?
        .iter()
        .enumerate()
        .map(|(k, h)| {
            if k == 0 {
                h.trim_start_matches('\u{feff}')
            } else {
                h
            }
        })
        .collect();
    check_unique(path, headers.iter())?;
    if let Some(missing) = columns
        .required
        .iter()
        .find(|c| !headers.iter().any(|h| h == **c))
        && headers.len() == 1
        && headers[0].contains(';')
    {
        // A spreadsheet in a semicolon locale exports the whole header as one column.
        return Err(DataError::invalid(
            path,
            None,
            Some(missing),
            format!(
                "missing required column (the header \"{}\" looks separated by ';'; roboaudit reads comma-separated CSV: export with ',' as the delimiter)",
                &headers[0]
            ),
        ));
    }
    check_required(path, columns, headers.iter())?;
    let mut record = StringRecord::new();
    let mut rows = 0;
    loop {
        let more = reader
            .read_record(&mut record)
            .map_err(|e| csv_err(Some(rows + 1), e))?;
        if !more {
            break;
        }
        rows += 1;
        visit(
            &CsvRow {
                headers: &headers,
                record: &record,
            },
            rows,
        )?;
    }
    Ok(rows)
}
