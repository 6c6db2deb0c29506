//! On-disk feature cache (SPEC.md §3): one file per (encoder, weights hash), records keyed by a
//! 64-bit FNV-1a hash of the frame's encoded image bytes, so the same frame is encoded once
//! across runs and datasets. Layout: the header `RAFQC1`, the feature width as `u32` LE, then
//! fixed-size records `key: u64 LE, values: [f32 LE; width]`. A truncated last record (a killed
//! run) is ignored.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::FqeError;

const MAGIC: &[u8; 6] = b"RAFQC1";
const HEADER: u64 = 10;

/// 64-bit FNV-1a hash (stable across platforms and Rust versions).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// An open feature cache.
pub struct FeatureCache {
    path: PathBuf,
    width: usize,
    rows: HashMap<u64, u64>,
    count: u64,
    writer: BufWriter<File>,
    reader: File,
}

impl FeatureCache {
    /// Opens or creates `dir/<encoder_id>-<weights_hash>.fqecache` for features of `width`.
    ///
    /// # Errors
    /// [`FqeError::Io`] on file errors; [`FqeError::BadFile`] for a foreign file or a width mismatch.
    pub fn open(
        dir: &Path,
        encoder_id: &str,
        weights_hash: &str,
        width: usize,
    ) -> Result<Self, FqeError> {
        std::fs::create_dir_all(dir).map_err(|e| FqeError::io("create", dir, e))?;
        let path = dir.join(format!("{encoder_id}-{weights_hash}.fqecache"));
        let exists = path.exists();
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| FqeError::io("open", &path, e))?;
        let w32 = u32::try_from(width)
            .map_err(|_| FqeError::InvalidInputs("feature width too large".into()))?;
        let record = 8 + 4 * width as u64;
        let mut rows = HashMap::new();
        let mut count = 0;
        let mut reader = file
            .try_clone()
            .map_err(|e| FqeError::io("open", &path, e))?;
        let mut writer = BufWriter::new(file);
        let len = std::fs::metadata(&path)
            .map_err(|e| FqeError::io("read", &path, e))?
            .len();
        if exists && len >= HEADER {
            let mut head = [0u8; 10];
            reader
                .seek(SeekFrom::Start(0))
                .map_err(|e| FqeError::io("read", &path, e))?;
            reader
                .read_exact(&mut head)
                .map_err(|e| FqeError::io("read", &path, e))?;
            if &head[..6] != MAGIC {
                return Err(FqeError::bad_file(&path, "not a roboaudit feature cache"));
            }
            let got = u32::from_le_bytes([head[6], head[7], head[8], head[9]]);
            if got != w32 {
                return Err(FqeError::bad_file(
                    &path,
                    format!("cache holds width {got}, expected {width}"),
                ));
            }
            count = (len - HEADER) / record;
            let mut key = [0u8; 8];
            for r in 0..count {
                reader
                    .seek(SeekFrom::Start(HEADER + r * record))
                    .map_err(|e| FqeError::io("read", &path, e))?;
                reader
                    .read_exact(&mut key)
                    .map_err(|e| FqeError::io("read", &path, e))?;
                rows.insert(u64::from_le_bytes(key), r);
            }
            if HEADER + count * record != len {
                // Drop the torn tail so that appends stay aligned.
                writer
                    .get_ref()
                    .set_len(HEADER + count * record)
                    .map_err(|e| FqeError::io("write", &path, e))?;
            }
        } else {
            writer
                .get_ref()
                .set_len(0)
                .map_err(|e| FqeError::io("write", &path, e))?;
            writer
                .write_all(MAGIC)
                .map_err(|e| FqeError::io("write", &path, e))?;
            writer
                .write_all(&w32.to_le_bytes())
                .map_err(|e| FqeError::io("write", &path, e))?;
        }
        Ok(Self {
            path,
            width,
            rows,
            count,
            writer,
            reader,
        })
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `key` is cached.
    pub fn contains(&self, key: u64) -> bool {
        self.rows.contains_key(&key)
    }

    /// Number of cached frames.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Appends the features of `key` (no-op when cached).
    ///
    /// # Errors
    /// [`FqeError::Io`]; [`FqeError::InvalidInputs`] for a wrong width.
    pub fn put(&mut self, key: u64, values: &[f32]) -> Result<(), FqeError> {
        if values.len() != self.width {
            return Err(FqeError::InvalidInputs(format!(
                "feature of width {} for a cache of width {}",
                values.len(),
                self.width
            )));
        }
        if self.rows.contains_key(&key) {
            return Ok(());
        }
        let io = |e| FqeError::io("write", &self.path, e);
        let mut buf = Vec::with_capacity(8 + 4 * self.width);
        buf.extend_from_slice(&key.to_le_bytes());
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        self.writer.write_all(&buf).map_err(io)?;
        self.rows.insert(key, self.count);
        self.count += 1;
        Ok(())
    }

    /// Reads the features of `key`, if cached.
    ///
    /// # Errors
    /// [`FqeError::Io`].
    pub fn get(&mut self, key: u64) -> Result<Option<Vec<f32>>, FqeError> {
        let Some(row) = self.rows.get(&key).copied() else {
            return Ok(None);
        };
        self.writer
            .flush()
            .map_err(|e| FqeError::io("write", &self.path, e))?;
        let record = 8 + 4 * self.width as u64;
        let io = |e| FqeError::io("read", &self.path, e);
        self.reader
            .seek(SeekFrom::Start(HEADER + row * record + 8))
            .map_err(io)?;
        let mut buf = vec![0u8; 4 * self.width];
        self.reader.read_exact(&mut buf).map_err(io)?;
        Ok(Some(
            buf.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }

    /// Flushes appended records.
    ///
    /// # Errors
    /// [`FqeError::Io`].
    pub fn flush(&mut self) -> Result<(), FqeError> {
        self.writer
            .flush()
            .map_err(|e| FqeError::io("write", &self.path, e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cache_round_trips_and_survives_reopening_and_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        c.put(7, &[1.0, 2.0, 3.0]).unwrap();
        c.put(9, &[4.0, 5.0, 6.5]).unwrap();
        assert_eq!(c.get(9).unwrap(), Some(vec![4.0, 5.0, 6.5]));
        c.flush().unwrap();
        let path = c.path().to_path_buf();
        drop(c);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[1, 2, 3]).unwrap();
        drop(f);
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(7).unwrap(), Some(vec![1.0, 2.0, 3.0]));
        assert!(c.get(8).unwrap().is_none());
        c.put(8, &[0.0; 3]).unwrap();
        assert_eq!(c.get(8).unwrap(), Some(vec![0.0; 3]));
        assert!(FeatureCache::open(dir.path(), "raw2", "none", 4).is_err());
        assert_ne!(fnv1a64(b"a"), fnv1a64(b"b"));
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    }
}
