//! One value of one row, as any of the three formats delivers it, and the conversions to
//! the record fields. Conversions are the same for every format, so a CSV string `"1"`,
//! a JSON `1` and a Parquet `int32` 1 are all read as the same seed.

use std::borrow::Cow;

use roboaudit_types::RecordedAt;

use crate::rfc3339;

/// A cell before conversion. `Null` covers absent columns, nulls and empty strings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell<'a> {
    Null,
    Str(Cow<'a, str>),
    Int(i64),
    /// Unsigned integers above `i64::MAX` (Parquet `uint64`).
    BigUInt(u64),
    Float(f64),
    Bool(bool),
    /// A float list (Parquet list column or JSON array of numbers).
    Floats(Vec<f64>),
    /// A Parquet timestamp, already converted to UTC seconds and nanoseconds.
    Timestamp(i64, u32),
    /// A value of a type no field accepts, described for the error message.
    Other(String),
}

impl Cell<'_> {
    /// Normalizes empty strings to `Null` so that every format agrees on "missing".
    pub(crate) fn normalized(self) -> Self {
        match self {
            Cell::Str(s) if s.trim().is_empty() => Cell::Null,
            other => other,
        }
    }

    /// The same cell, owning its text (to outlive the row it was read from).
    pub(crate) fn into_owned(self) -> Cell<'static> {
        match self {
            Cell::Null => Cell::Null,
            Cell::Str(s) => Cell::Str(Cow::Owned(s.into_owned())),
            Cell::Int(i) => Cell::Int(i),
            Cell::BigUInt(u) => Cell::BigUInt(u),
            Cell::Float(f) => Cell::Float(f),
            Cell::Bool(b) => Cell::Bool(b),
            Cell::Floats(v) => Cell::Floats(v),
            Cell::Timestamp(s, n) => Cell::Timestamp(s, n),
            Cell::Other(what) => Cell::Other(what),
        }
    }

    fn describe(&self) -> String {
        match self {
            Cell::Null => "a missing value".to_owned(),
            Cell::Str(s) => format!("\"{s}\""),
            Cell::Int(i) => i.to_string(),
            Cell::BigUInt(u) => u.to_string(),
            Cell::Float(f) => format!("float {f}"),
            Cell::Bool(b) => b.to_string(),
            Cell::Floats(v) => format!("a list of {} numbers", v.len()),
            Cell::Timestamp(s, n) => format!("timestamp {}", rfc3339::format(*s, *n)),
            Cell::Other(what) => what.clone(),
        }
    }
}

/// Conversion failure: the message only; the caller adds file, row and column.
pub(crate) type CellResult<T> = Result<T, String>;

fn expected<T>(what: &str, cell: &Cell<'_>) -> CellResult<T> {
    Err(format!("expected {what}, got {}", cell.describe()))
}

/// Identifier: a non-empty string; integers are accepted and rendered in decimal.
pub(crate) fn to_id(cell: Cell<'_>) -> CellResult<Option<String>> {
    match cell {
        Cell::Null => Ok(None),
        Cell::Str(s) => Ok(Some(s.trim().to_owned())),
        Cell::Int(i) => Ok(Some(i.to_string())),
        Cell::BigUInt(u) => Ok(Some(u.to_string())),
        other => expected("a string identifier", &other),
    }
}

/// An integer too large (or small) for the signed 64-bit values roboaudit stores.
fn out_of_range(value: &str) -> String {
    format!(
        "integer {value} is out of range (from {} to {})",
        i64::MIN,
        i64::MAX
    )
}

/// Integer: an integer value or a string holding one (no fractional forms like `3.0`).
pub(crate) fn to_int(cell: Cell<'_>) -> CellResult<Option<i64>> {
    match cell {
        Cell::Null => Ok(None),
        Cell::Int(i) => Ok(Some(i)),
        Cell::BigUInt(u) => Err(out_of_range(&u.to_string())),
        Cell::Str(ref s) => match s.trim().parse::<i64>() {
            Ok(i) => Ok(Some(i)),
            Err(_) if s.trim().parse::<i128>().is_ok() => Err(out_of_range(s.trim())),
            Err(_) => expected("an integer", &cell),
        },
        other => expected("an integer", &other),
    }
}

/// Boolean: `true`/`false` (any case), or the numbers 0/1, as values or strings. Floats exactly
/// 0.0 or 1.0 are accepted because pandas writes an integer column with a missing value as float;
/// 0.5 or NaN stay errors.
pub(crate) fn to_bool(cell: Cell<'_>) -> CellResult<Option<bool>> {
    const WHAT: &str = "0/1 or true/false";
    match cell {
        Cell::Null => Ok(None),
        Cell::Bool(b) => Ok(Some(b)),
        Cell::Int(0) => Ok(Some(false)),
        Cell::Int(1) => Ok(Some(true)),
        Cell::Float(0.0) => Ok(Some(false)),
        Cell::Float(1.0) => Ok(Some(true)),
        Cell::Str(ref s) => {
            // Compared without a lowercase copy: this runs once per execution row.
            let s = s.trim();
            let is = |word: &str| s.eq_ignore_ascii_case(word);
            if s == "0" || s == "0.0" || is("false") {
                Ok(Some(false))
            } else if s == "1" || s == "1.0" || is("true") {
                Ok(Some(true))
            } else {
                expected(WHAT, &cell)
            }
        }
        other => expected(WHAT, &other),
    }
}

/// Finite real number (integers accepted); NaN and infinities are errors.
pub(crate) fn to_finite(cell: Cell<'_>) -> CellResult<Option<f64>> {
    let value = match cell {
        Cell::Null => return Ok(None),
        Cell::Float(f) => f,
        // Cast: rates are 0/1 when given as integers
        Cell::Int(i) => i as f64,
        Cell::Str(ref s) => match s.trim().parse::<f64>() {
            Ok(f) => f,
            Err(_) => return expected("a number", &cell),
        },
        other => return expected("a number", &other),
    };
    if value.is_finite() {
        Ok(Some(value))
    } else {
        Err(format!("expected a finite number, got {value}"))
    }
}

/// Embedding vector: a float list, or (CSV) a string of numbers separated by spaces (commas
/// and surrounding brackets are tolerated).
/// Every value must be finite once stored as `f32` (so `1e300` is rejected too).
pub(crate) fn to_vector(cell: Cell<'_>) -> CellResult<Option<Vec<f32>>> {
    let vector: Vec<f32> = match cell {
        Cell::Null => return Ok(None),
        // Cast: f64 sources are narrowed to the f32 contract
        Cell::Floats(values) => values.into_iter().map(|v| v as f32).collect(),
        Cell::Str(ref s) => {
            // `[0.1, 0.2]` (how pandas writes a list column) is accepted as well.
            let trimmed = s.trim();
            let inner = trimmed
                .strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))
                .unwrap_or(trimmed);
            let tokens = inner
                .split(|c: char| c == ',' || c.is_ascii_whitespace())
                .filter(|t| !t.is_empty());
            let mut out = Vec::new();
            for (k, token) in tokens.enumerate() {
                match token.parse::<f32>() {
                    Ok(v) if v.is_finite() => out.push(v),
                    // Named as written: `1e40` is finite text that float32 cannot hold.
                    Ok(_) => {
                        let beyond = if token.parse::<f64>().is_ok_and(f64::is_finite) {
                            ", beyond the float32 range"
                        } else {
                            ""
                        };
                        return Err(format!(
                            "element {} is {token}{beyond} (vectors must be finite as float32)",
                            k + 1
                        ));
                    }
                    Err(_) => {
                        return Err(format!(
                            "expected space-separated numbers, element {} is \"{token}\"",
                            k + 1
                        ));
                    }
                }
            }
            out
        }
        other => return expected("a list of numbers", &other),
    };
    if vector.is_empty() {
        return Err("empty vector".to_owned());
    }
    if let Some(k) = vector.iter().position(|v| !v.is_finite()) {
        return Err(format!(
            "element {} is {} (vectors must be finite as float32)",
            k + 1,
            vector[k]
        ));
    }
    Ok(Some(vector))
}

/// `recorded_at`: an integer order, or an RFC 3339 timestamp (string or Parquet timestamp).
pub(crate) fn to_recorded_at(cell: Cell<'_>) -> CellResult<Option<RecordedAt>> {
    match cell {
        Cell::Null => Ok(None),
        Cell::Int(i) => Ok(Some(RecordedAt::Order(i))),
        Cell::Timestamp(unix_seconds, nanos) => Ok(Some(RecordedAt::Timestamp {
            unix_seconds,
            nanos,
        })),
        Cell::Str(s) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                return Ok(Some(RecordedAt::Order(i)));
            }
            let (unix_seconds, nanos) = rfc3339::parse(s)?;
            Ok(Some(RecordedAt::Timestamp {
                unix_seconds,
                nanos,
            }))
        }
        other => expected("an integer order or an RFC 3339 timestamp", &other),
    }
}

/// Extra scene column: any scalar, rendered as text; `None` when null or not a scalar (a list or
/// object is ignored, as extra columns are documented to be, rather than failing the file).
pub(crate) fn to_extra(cell: Cell<'_>) -> CellResult<Option<String>> {
    match cell {
        Cell::Null | Cell::Floats(_) | Cell::Other(_) => Ok(None),
        Cell::Str(s) => Ok(Some(s.into_owned())),
        Cell::Int(i) => Ok(Some(i.to_string())),
        Cell::BigUInt(u) => Ok(Some(u.to_string())),
        Cell::Float(f) => Ok(Some(f.to_string())),
        Cell::Bool(b) => Ok(Some(b.to_string())),
        Cell::Timestamp(s, n) => Ok(Some(rfc3339::format(s, n))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn s(text: &str) -> Cell<'_> {
        Cell::Str(Cow::Borrowed(text))
    }

    #[test]
    fn bool_accepts_documented_spellings_only() {
        assert_eq!(to_bool(s("TRUE")).unwrap(), Some(true));
        assert_eq!(to_bool(s("0")).unwrap(), Some(false));
        assert_eq!(to_bool(Cell::Int(1)).unwrap(), Some(true));
        assert_eq!(
            to_bool(s("yes")).unwrap_err(),
            "expected 0/1 or true/false, got \"yes\""
        );
        assert!(to_bool(Cell::Int(2)).is_err());
        assert_eq!(to_bool(Cell::Float(1.0)).unwrap(), Some(true));
        assert_eq!(to_bool(s("0.0")).unwrap(), Some(false));
        assert!(to_bool(Cell::Float(0.5)).is_err());
        assert!(to_bool(Cell::Float(f64::NAN)).is_err());
        assert!(to_bool(s("1.5")).is_err());
    }

    #[test]
    fn int_rejects_fractional_forms() {
        assert_eq!(to_int(s(" -7 ")).unwrap(), Some(-7));
        assert!(to_int(s("3.0")).is_err());
        assert!(to_int(Cell::Float(3.0)).is_err());
    }

    #[test]
    fn vector_parsing_and_finiteness() {
        assert_eq!(
            to_vector(s("1 -2.5  3e-1")).unwrap(),
            Some(vec![1.0, -2.5, 0.3])
        );
        assert!(to_vector(s("1 NaN")).unwrap_err().contains("element 2"));
        assert!(to_vector(Cell::Floats(vec![1.0, 1e300])).is_err());
        assert!(to_vector(s("1 x")).unwrap_err().contains("\"x\""));
        assert_eq!(
            to_vector(s("[1, 2.5,3]")).unwrap(),
            Some(vec![1.0, 2.5, 3.0])
        );
        assert_eq!(to_vector(s("[]")).unwrap_err(), "empty vector");
    }

    #[test]
    fn recorded_at_integer_before_timestamp() {
        assert_eq!(
            to_recorded_at(s("42")).unwrap(),
            Some(RecordedAt::Order(42))
        );
        assert_eq!(
            to_recorded_at(s("1970-01-01T00:00:01Z")).unwrap(),
            Some(RecordedAt::Timestamp {
                unix_seconds: 1,
                nanos: 0
            })
        );
        assert!(to_recorded_at(s("yesterday")).is_err());
    }
}
