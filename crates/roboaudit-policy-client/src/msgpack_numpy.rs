//! msgpack-numpy, as openpi's `openpi_client.msgpack_numpy` writes and reads it.
//!
//! An array is a map with the keys `__ndarray__` (true), `data` (C-order bytes), `dtype` (NumPy's
//! dtype string: `<f4`, `|u1`, …) and `shape` (list of ints); a NumPy scalar is a map with
//! `__npgeneric__` (true), `data` (the value) and `dtype`. The marker keys are Python `bytes`,
//! so they travel as msgpack **bin**: [`Field::to_value`] writes them that way (an openpi
//! server does not recognise str keys), and decoding accepts bin or str.

use rmpv::Value;

/// Element types of msgpack-numpy arrays that actions and observations use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// IEEE half (`f2`).
    F16,
    /// `f4`.
    F32,
    /// `f8`.
    F64,
    /// Signed integers of 1, 2, 4 or 8 bytes (`i1` … `i8`).
    Int(usize),
    /// Unsigned integers of 1, 2, 4 or 8 bytes (`u1` … `u8`).
    UInt(usize),
    /// `b1`.
    Bool,
}

impl Element {
    fn size(self) -> usize {
        match self {
            Element::F16 => 2,
            Element::F32 => 4,
            Element::F64 => 8,
            Element::Int(n) | Element::UInt(n) => n,
            Element::Bool => 1,
        }
    }
}

/// A NumPy dtype string parsed: element type and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DType {
    /// Element type.
    pub element: Element,
    /// Big-endian (`>`); otherwise little-endian or single-byte (`<`, `|`, `=` on the
    /// little-endian machines this runs on).
    pub big_endian: bool,
}

impl DType {
    /// Parses `<f4`, `>i8`, `|u1`, `|b1`, … (complex, object, void and string types are refused).
    ///
    /// # Errors
    /// A message naming the dtype.
    pub fn parse(s: &str) -> Result<DType, String> {
        let bad = || format!("unsupported dtype `{s}`");
        let mut chars = s.chars();
        let (order, rest) = match chars.next() {
            Some(c @ ('<' | '>' | '|' | '=')) => (c, chars.as_str()),
            _ => ('=', s),
        };
        let kind = rest.chars().next().ok_or_else(bad)?;
        let size: usize = rest[1..].parse().map_err(|_| bad())?;
        let element = match (kind, size) {
            ('f', 2) => Element::F16,
            ('f', 4) => Element::F32,
            ('f', 8) => Element::F64,
            ('i', 1 | 2 | 4 | 8) => Element::Int(size),
            ('u', 1 | 2 | 4 | 8) => Element::UInt(size),
            ('b', 1) => Element::Bool,
            _ => return Err(bad()),
        };
        Ok(DType {
            element,
            big_endian: order == '>',
        })
    }
}

/// An n-dimensional array as msgpack-numpy carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct NdArray {
    /// NumPy dtype string (`<f4`, `|u1`, …).
    pub dtype: String,
    /// Shape (C order); empty for a 0-d array.
    pub shape: Vec<usize>,
    /// `shape.product() × element size` bytes, C order.
    pub data: Vec<u8>,
}

impl NdArray {
    /// A little-endian float32 array (`<f4`) of `shape` holding `values`.
    pub fn from_f32(shape: Vec<usize>, values: &[f32]) -> NdArray {
        NdArray {
            dtype: "<f4".into(),
            shape,
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// A uint8 array (`|u1`) of `shape`, e.g. an HWC image.
    pub fn from_u8(shape: Vec<usize>, bytes: Vec<u8>) -> NdArray {
        NdArray {
            dtype: "|u1".into(),
            shape,
            data: bytes,
        }
    }

    /// Number of elements (`shape.product()`; 1 for a 0-d array).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as `f32` (floats rounded, integers converted, booleans 0/1).
    ///
    /// # Errors
    /// A message when the dtype is unsupported or the byte count does not match shape × size.
    pub fn to_f32(&self) -> Result<Vec<f32>, String> {
        let dt = DType::parse(&self.dtype)?;
        let size = dt.element.size();
        let n = self.len();
        if n.checked_mul(size) != Some(self.data.len()) {
            return Err(format!(
                "array of shape {:?} and dtype {} needs {} bytes, got {}",
                self.shape,
                self.dtype,
                n.saturating_mul(size),
                self.data.len()
            ));
        }
        let word = |c: &[u8]| -> u64 {
            let mut b = [0u8; 8];
            if dt.big_endian {
                b[8 - c.len()..].copy_from_slice(c);
                u64::from_be_bytes(b)
            } else {
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            }
        };
        Ok(self
            .data
            .chunks_exact(size)
            .map(|c| {
                let w = word(c);
                match dt.element {
                    Element::F16 => half_to_f32(w as u16),
                    Element::F32 => f32::from_bits(w as u32),
                    Element::F64 => f64::from_bits(w) as f32,
                    Element::Int(n) => {
                        let shift = 64 - 8 * n as u32;
                        (((w << shift) as i64) >> shift) as f32
                    }
                    Element::UInt(_) => w as f32,
                    Element::Bool => f32::from(u8::from(w != 0)),
                }
            })
            .collect())
    }
}

/// IEEE 754 binary16 → f32 (exact).
fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = frac · 2^-24, exact in f32.
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// A decoded msgpack document: what observations, answers and metadata are made of.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// nil / None.
    Nil,
    /// Boolean.
    Bool(bool),
    /// Integer (msgpack ints beyond `i64` are refused when decoding).
    Int(i64),
    /// Float.
    Float(f64),
    /// Text.
    Text(String),
    /// Raw bytes (msgpack bin).
    Bytes(Vec<u8>),
    /// List.
    List(Vec<Field>),
    /// Map with text keys, in wire order (bin keys are decoded as UTF-8).
    Map(Vec<(String, Field)>),
    /// A msgpack-numpy array (or scalar, as a 0-d array).
    Array(NdArray),
}

impl Field {
    /// The value of key `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Field> {
        match self {
            Field::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text, if this is text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Field::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The number as `f64`, if this is a number (a 0-d numeric array counts).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Field::Int(i) => Some(*i as f64),
            Field::Float(f) => Some(*f),
            Field::Array(a) if a.shape.is_empty() => a
                .to_f32()
                .ok()
                .and_then(|v| v.first().map(|&x| f64::from(x))),
            _ => None,
        }
    }

    /// The msgpack value, arrays in msgpack-numpy form with bin marker keys.
    pub fn to_value(&self) -> Value {
        match self {
            Field::Nil => Value::Nil,
            Field::Bool(b) => Value::Boolean(*b),
            Field::Int(i) => Value::from(*i),
            Field::Float(f) => Value::F64(*f),
            Field::Text(s) => Value::from(s.as_str()),
            Field::Bytes(b) => Value::Binary(b.clone()),
            Field::List(l) => Value::Array(l.iter().map(Field::to_value).collect()),
            Field::Map(m) => Value::Map(
                m.iter()
                    .map(|(k, v)| (Value::from(k.as_str()), v.to_value()))
                    .collect(),
            ),
            Field::Array(a) => Value::Map(vec![
                (Value::Binary(b"__ndarray__".to_vec()), Value::Boolean(true)),
                (
                    Value::Binary(b"data".to_vec()),
                    Value::Binary(a.data.clone()),
                ),
                (
                    Value::Binary(b"dtype".to_vec()),
                    Value::from(a.dtype.as_str()),
                ),
                (
                    Value::Binary(b"shape".to_vec()),
                    Value::Array(a.shape.iter().map(|&d| Value::from(d as u64)).collect()),
                ),
            ]),
        }
    }

    /// Decodes a msgpack value, turning msgpack-numpy maps into [`Field::Array`].
    ///
    /// # Errors
    /// A message for a malformed array map, a non-text map key, an integer beyond `i64`, or an
    /// extension type.
    pub fn from_value(v: &Value) -> Result<Field, String> {
        Ok(match v {
            Value::Nil => Field::Nil,
            Value::Boolean(b) => Field::Bool(*b),
            Value::Integer(i) => Field::Int(
                i.as_i64()
                    .ok_or_else(|| format!("integer {i} is beyond the 64-bit signed range"))?,
            ),
            Value::F32(f) => Field::Float(f64::from(*f)),
            Value::F64(f) => Field::Float(*f),
            Value::String(s) => Field::Text(
                s.as_str()
                    .ok_or_else(|| "a string is not valid UTF-8".to_owned())?
                    .to_owned(),
            ),
            Value::Binary(b) => Field::Bytes(b.clone()),
            Value::Array(l) => {
                Field::List(l.iter().map(Field::from_value).collect::<Result<_, _>>()?)
            }
            Value::Map(m) => {
                let mut entries = Vec::with_capacity(m.len());
                for (k, v) in m {
                    entries.push((key_text(k)?, v));
                }
                let has = |name: &str| entries.iter().any(|(k, _)| k == name);
                if has("__ndarray__") {
                    return array_of(&entries).map(Field::Array);
                }
                if has("__npgeneric__") {
                    return scalar_of(&entries);
                }
                Field::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| Field::from_value(v).map(|f| (k, f)))
                        .collect::<Result<_, _>>()?,
                )
            }
            Value::Ext(t, _) => {
                return Err(format!(
                    "msgpack extension type {t} is not used by the protocol"
                ));
            }
        })
    }

    /// A JSON rendering for manifests (arrays summarized by dtype and shape).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Field::Nil => J::Null,
            Field::Bool(b) => J::Bool(*b),
            Field::Int(i) => J::from(*i),
            Field::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Field::Text(s) => J::String(s.clone()),
            Field::Bytes(b) => J::String(format!("<{} bytes>", b.len())),
            Field::List(l) => J::Array(l.iter().map(Field::to_json).collect()),
            Field::Map(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Field::Array(a) => J::String(format!("<array {} {:?}>", a.dtype, a.shape)),
        }
    }
}

fn key_text(k: &Value) -> Result<String, String> {
    match k {
        Value::String(s) => s
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "a map key is not valid UTF-8".to_owned()),
        Value::Binary(b) => {
            String::from_utf8(b.clone()).map_err(|_| "a map key is not valid UTF-8".to_owned())
        }
        other => Err(format!("map key {other} is neither text nor bytes")),
    }
}

fn lookup<'a>(entries: &[(String, &'a Value)], key: &str) -> Option<&'a Value> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

fn array_of(entries: &[(String, &Value)]) -> Result<NdArray, String> {
    let data = match lookup(entries, "data") {
        Some(Value::Binary(b)) => b.clone(),
        _ => return Err("msgpack-numpy array without bytes `data`".into()),
    };
    let dtype = match lookup(entries, "dtype") {
        Some(Value::String(s)) => s.as_str().unwrap_or_default().to_owned(),
        Some(Value::Binary(b)) => String::from_utf8_lossy(b).into_owned(),
        _ => return Err("msgpack-numpy array without text `dtype`".into()),
    };
    let shape = match lookup(entries, "shape") {
        Some(Value::Array(l)) => l
            .iter()
            .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| "msgpack-numpy array shape holds a non-integer".to_owned())?,
        _ => return Err("msgpack-numpy array without a list `shape`".into()),
    };
    DType::parse(&dtype)?;
    let a = NdArray { dtype, shape, data };
    let want = a
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .and_then(|n| {
            n.checked_mul(
                DType::parse(&a.dtype)
                    .map(|t| t.element.size())
                    .unwrap_or(1),
            )
        });
    if want != Some(a.data.len()) {
        return Err(format!(
            "msgpack-numpy array of shape {:?} and dtype {} holds {} bytes",
            a.shape,
            a.dtype,
            a.data.len()
        ));
    }
    Ok(a)
}

fn scalar_of(entries: &[(String, &Value)]) -> Result<Field, String> {
    match lookup(entries, "data") {
        Some(v) => Field::from_value(v),
        None => Err("msgpack-numpy scalar without `data`".into()),
    }
}

/// Encodes a document to msgpack bytes.
pub fn pack(field: &Field) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = rmpv::encode::write_value(&mut out, &field.to_value());
    out
}

/// Decodes msgpack bytes (one value, nothing after it).
///
/// # Errors
/// A message when the bytes are not one msgpack value or hold something [`Field::from_value`]
/// refuses.
pub fn unpack(bytes: &[u8]) -> Result<Field, String> {
    let mut rest = bytes;
    let v = rmpv::decode::read_value(&mut rest).map_err(|e| format!("not msgpack ({e})"))?;
    if !rest.is_empty() {
        return Err(format!("{} bytes after the msgpack value", rest.len()));
    }
    Field::from_value(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_keys_are_bin_on_the_wire() {
        let bytes = pack(&Field::Array(NdArray::from_f32(vec![2], &[1.0, 2.0])));
        // fixmap of 4, then bin8 (0xc4) of length 11 "__ndarray__".
        assert_eq!(&bytes[..3], &[0x84, 0xc4, 11]);
        assert_eq!(&bytes[3..14], b"__ndarray__");
    }

    #[test]
    fn half_floats_convert_exactly() {
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
        assert_eq!(half_to_f32(0x0001), 2f32.powi(-24));
        assert!(half_to_f32(0x7e00).is_nan());
        assert_eq!(half_to_f32(0x7bff), 65504.0);
    }

    #[test]
    fn big_endian_and_signed_ints_decode() {
        let a = NdArray {
            dtype: ">i2".into(),
            shape: vec![2],
            data: vec![0xff, 0xfe, 0x01, 0x00],
        };
        assert_eq!(a.to_f32().unwrap(), vec![-2.0, 256.0]);
        let b = NdArray {
            dtype: "<i1".into(),
            shape: vec![1],
            data: vec![0x80],
        };
        assert_eq!(b.to_f32().unwrap(), vec![-128.0]);
    }

    #[test]
    fn wrong_byte_count_is_refused() {
        let v = Field::Array(NdArray {
            dtype: "<f4".into(),
            shape: vec![3],
            data: vec![0; 8],
        })
        .to_value();
        assert!(Field::from_value(&v).unwrap_err().contains("holds 8 bytes"));
    }
}
