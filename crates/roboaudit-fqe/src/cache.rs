//! On-disk feature cache (SPEC.md §3): one file per (encoder, weights hash), records keyed by a
//! 64-bit FNV-1a hash of the frame's encoded image bytes, so the same frame is encoded once
//! across runs and datasets. Layout: the header `RAFQC2`, the feature width as `u32` LE, then
//! fixed-size records `key: u64 LE, values: [f32 LE; width], check: u64 LE`, where `check` is the
//! FNV-1a hash of the record's key and value bytes: a record damaged on disk is an error naming
//! the file when it is read, never features that silently change the estimates. A truncated last
//! record (a file appended to in place and cut short) is ignored. A cache of the earlier format
//! `RAFQC1` (no checks) is read as empty and replaced at the next commit: its frames are encoded
//! again once.
//!
//! The cache file is never written in place: the first new record of a run starts a temporary
//! copy in the same folder (the committed records, then the new ones), and
//! [`FeatureCache::commit`] renames it over the cache file. A run that fails before committing
//! (a corrupt frame, a bad setting found late) leaves the folder as it found it — the temporary
//! file is deleted when the cache is dropped — at the price that its newly encoded frames are
//! encoded again next time. The folder itself is created only when the first record is written,
//! and removed again (with any parents created for it) when nothing was committed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::FqeError;

const MAGIC: &[u8; 6] = b"RAFQC2";
/// The format before per-record checks: replaced, not read.
const MAGIC_UNCHECKED: &[u8; 6] = b"RAFQC1";
const HEADER: u64 = 10;
/// What to do with a cache that cannot be read: its features are derived data, so encoding the
/// frames again loses nothing.
const REBUILD: &str = "delete it and rerun to encode the frames again";

/// 64-bit FNV-1a hash (stable across platforms and Rust versions).
pub use roboaudit_types::seed::fnv1a64;

/// The uncommitted copy of the cache file: the committed records, then this run's.
struct Pending {
    writer: BufWriter<File>,
    /// Deletes the file when dropped uncommitted.
    tmp: tempfile::TempPath,
}

/// An open feature cache.
pub struct FeatureCache {
    dir: PathBuf,
    path: PathBuf,
    width: usize,
    rows: HashMap<u64, u64>,
    count: u64,
    /// The file every cached record is read from: the committed file, or the pending copy once
    /// this run has added a record (`None` while there is neither).
    reader: Option<File>,
    pending: Option<Pending>,
    /// Folders created for the pending copy, deepest first: removed again if it is dropped
    /// uncommitted.
    created: Vec<PathBuf>,
}

impl Drop for FeatureCache {
    fn drop(&mut self) {
        if let Some(p) = self.pending.take() {
            drop(p);
            for dir in &self.created {
                // Only empty folders go; one another process wrote into stays.
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

impl FeatureCache {
    /// Opens `dir/<encoder_id>-<weights_hash>.fqecache` for features of `width`, reading the
    /// keys it holds; nothing is created or written until [`put`](Self::put) adds a record.
    ///
    /// # Errors
    /// [`FqeError::Io`] on file errors; [`FqeError::BadFile`] for a foreign file or a width mismatch.
    pub fn open(
        dir: &Path,
        encoder_id: &str,
        weights_hash: &str,
        width: usize,
    ) -> Result<Self, FqeError> {
        let path = dir.join(format!("{encoder_id}-{weights_hash}.fqecache"));
        let w32 = u32::try_from(width)
            .map_err(|_| FqeError::InvalidInputs("feature width too large".into()))?;
        let record = record_len(width);
        let mut rows = HashMap::new();
        let mut count = 0;
        let mut reader = None;
        if path.exists() {
            let mut file = File::open(&path).map_err(|e| FqeError::io("open", &path, e))?;
            let len = file
                .metadata()
                .map_err(|e| FqeError::io("read", &path, e))?
                .len();
            // A file shorter than its header holds nothing: the first record replaces it.
            if len >= HEADER {
                let mut head = [0u8; 10];
                file.read_exact(&mut head)
                    .map_err(|e| FqeError::io("read", &path, e))?;
                if &head[..6] == MAGIC_UNCHECKED {
                    return Ok(Self::empty(dir, path, width));
                }
                if &head[..6] != MAGIC {
                    return Err(FqeError::bad_file(
                        &path,
                        format!("not a roboaudit feature cache; {REBUILD}"),
                    ));
                }
                let got = u32::from_le_bytes([head[6], head[7], head[8], head[9]]);
                if got != w32 {
                    return Err(FqeError::bad_file(
                        &path,
                        format!("cache holds width {got}, expected {width}; {REBUILD}"),
                    ));
                }
                count = (len - HEADER) / record;
                let mut key = [0u8; 8];
                for r in 0..count {
                    file.seek(SeekFrom::Start(HEADER + r * record))
                        .map_err(|e| FqeError::io("read", &path, e))?;
                    file.read_exact(&mut key)
                        .map_err(|e| FqeError::io("read", &path, e))?;
                    rows.insert(u64::from_le_bytes(key), r);
                }
                reader = Some(file);
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            path,
            width,
            rows,
            count,
            reader,
            pending: None,
            created: Vec::new(),
        })
    }

    /// A cache with no readable records at `path`: the first record starts a new file that
    /// replaces whatever is there at commit.
    fn empty(dir: &Path, path: PathBuf, width: usize) -> Self {
        Self {
            dir: dir.to_path_buf(),
            path,
            width,
            rows: HashMap::new(),
            count: 0,
            reader: None,
            pending: None,
            created: Vec::new(),
        }
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

    fn record_len(&self) -> u64 {
        record_len(self.width)
    }

    /// The pending copy, started (folder created, committed records copied) if need be.
    fn pending(&mut self) -> Result<&mut Pending, FqeError> {
        if self.pending.is_none() {
            self.created = self
                .dir
                .ancestors()
                .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
                .map(Path::to_path_buf)
                .collect();
            std::fs::create_dir_all(&self.dir).map_err(|e| FqeError::io("create", &self.dir, e))?;
            let name = self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            remove_orphans(&self.dir, &name);
            let tmp = roboaudit_data::atomic::result_file_builder()
                .prefix(&tmp_prefix(&name))
                .suffix(".tmp")
                .tempfile_in(&self.dir)
                .map_err(|e| FqeError::io("create", &self.dir, e))?;
            let io = |e| FqeError::io("write", tmp.path(), e);
            let read_handle = tmp.as_file().try_clone().map_err(io)?;
            let mut writer = BufWriter::new(tmp.as_file().try_clone().map_err(io)?);
            let committed = HEADER + self.count * self.record_len();
            match self.reader.as_mut().filter(|_| self.count > 0) {
                Some(old) => {
                    old.seek(SeekFrom::Start(0))
                        .map_err(|e| FqeError::io("read", &self.path, e))?;
                    let copied = std::io::copy(&mut old.take(committed), &mut writer)
                        .map_err(|e| FqeError::io("read", &self.path, e))?;
                    if copied != committed {
                        return Err(FqeError::bad_file(
                            &self.path,
                            "cache file shrank while open",
                        ));
                    }
                }
                None => {
                    let w32 = u32::try_from(self.width).unwrap_or(u32::MAX);
                    writer.write_all(MAGIC).map_err(io)?;
                    writer.write_all(&w32.to_le_bytes()).map_err(io)?;
                }
            }
            self.reader = Some(read_handle);
            self.pending = Some(Pending {
                writer,
                tmp: tmp.into_temp_path(),
            });
        }
        self.pending
            .as_mut()
            .ok_or_else(|| FqeError::bad_file(&self.path, "no pending cache copy"))
    }

    /// Adds the features of `key` (no-op when cached) to the pending copy; they reach the cache
    /// file at [`commit`](Self::commit).
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
        let mut buf = Vec::with_capacity(16 + 4 * self.width);
        buf.extend_from_slice(&key.to_le_bytes());
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        let check = fnv1a64(&buf);
        buf.extend_from_slice(&check.to_le_bytes());
        let pending = self.pending()?;
        let written = pending.writer.write_all(&buf);
        written.map_err(|e| FqeError::io("write", &pending.tmp, e))?;
        self.rows.insert(key, self.count);
        self.count += 1;
        Ok(())
    }

    /// Reads the features of `key`, if cached (committed or pending).
    ///
    /// # Errors
    /// [`FqeError::Io`]; [`FqeError::BadFile`] naming the cache file and record when the record
    /// fails its check (damaged on disk: deleting the file makes the next run encode again).
    pub fn get(&mut self, key: u64) -> Result<Option<Vec<f32>>, FqeError> {
        let Some(row) = self.rows.get(&key).copied() else {
            return Ok(None);
        };
        if let Some(p) = &mut self.pending {
            p.writer
                .flush()
                .map_err(|e| FqeError::io("write", &p.tmp, e))?;
        }
        let record = self.record_len();
        let io = |e| FqeError::io("read", &self.path, e);
        let reader = self
            .reader
            .as_mut()
            .ok_or_else(|| FqeError::bad_file(&self.path, "cached frame has no file"))?;
        reader
            .seek(SeekFrom::Start(HEADER + row * record))
            .map_err(io)?;
        let mut buf = vec![0u8; 16 + 4 * self.width];
        reader.read_exact(&mut buf).map_err(io)?;
        let (body, check) = buf.split_at(8 + 4 * self.width);
        let stored = u64::from_le_bytes(check.try_into().unwrap_or_default());
        if body[..8] != key.to_le_bytes() || fnv1a64(body) != stored {
            return Err(FqeError::bad_file(
                &self.path,
                format!(
                    "record {} (frame key {key:016x}) fails its check: the file is damaged; \
                     {REBUILD}",
                    row + 1
                ),
            ));
        }
        Ok(Some(
            body[8..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }

    /// Makes the records added since opening (or the last commit) part of the cache file:
    /// the pending copy is synced and renamed over it. A no-op when nothing was added.
    ///
    /// # Errors
    /// [`FqeError::Io`].
    pub fn commit(&mut self) -> Result<(), FqeError> {
        let Some(mut p) = self.pending.take() else {
            return Ok(());
        };
        let io = |e| FqeError::io("write", &self.path, e);
        p.writer.flush().map_err(io)?;
        let file = p.writer.get_ref();
        file.sync_all().map_err(io)?;
        p.tmp.persist(&self.path).map_err(|e| io(e.error))?;
        self.created.clear();
        Ok(())
    }
}

/// Bytes of one record of `width` features: key, values, check.
fn record_len(width: usize) -> u64 {
    16 + 4 * width as u64
}

/// This machine's name as it may appear in a file name (empty when it cannot be read).
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().replace(['.', '/'], "_"))
        .unwrap_or_default()
}

/// `.{name}.{host}-{pid}.`: the start of this process's temporary copies of the cache file
/// `name`, so that a copy left by a killed process can be told from one being written.
fn tmp_prefix(name: &str) -> String {
    format!(".{name}.{}-{}.", host(), std::process::id())
}

/// Removes temporary copies of `name` written by processes of this machine that no longer run
/// (killed mid-write: each such copy is as large as the cache). Copies of live processes and of
/// other machines (a cache folder shared over a cluster's file system) are left alone; where
/// processes cannot be looked up (`/proc`), nothing is removed. Failures are ignored: this is
/// tidying, and the write that follows reports a folder it cannot use.
fn remove_orphans(dir: &Path, name: &str) {
    let host = host();
    let (true, Ok(entries)) = (
        !host.is_empty() && Path::new("/proc/self").exists(),
        std::fs::read_dir(dir),
    ) else {
        return;
    };
    let head = format!(".{name}.{host}-");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&head)) else {
            continue;
        };
        let pid = rest
            .split_once('.')
            .and_then(|(p, _)| p.parse::<u32>().ok());
        let dead =
            |pid: &u32| *pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
        if pid
            .filter(|_| rest.ends_with(".tmp"))
            .is_some_and(|p| dead(&p))
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn cache_round_trips_and_survives_reopening_and_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        c.put(7, &[1.0, 2.0, 3.0]).unwrap();
        c.put(9, &[4.0, 5.0, 6.5]).unwrap();
        assert_eq!(c.get(9).unwrap(), Some(vec![4.0, 5.0, 6.5]));
        assert!(!c.path().exists(), "records reach the file only at commit");
        c.commit().unwrap();
        let path = c.path().to_path_buf();
        drop(c);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[1, 2, 3]).unwrap();
        drop(f);
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(7).unwrap(), Some(vec![1.0, 2.0, 3.0]));
        assert!(c.get(8).unwrap().is_none());
        c.put(8, &[0.0; 3]).unwrap();
        assert_eq!(c.get(8).unwrap(), Some(vec![0.0; 3]));
        assert_eq!(c.get(7).unwrap(), Some(vec![1.0, 2.0, 3.0]));
        c.commit().unwrap();
        // The torn tail is gone: header and three whole records of 8 + 12 + 8 bytes.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 10 + 3 * 28);
        assert_eq!(names(dir.path()), vec!["raw2-none.fqecache"]);
        assert!(FeatureCache::open(dir.path(), "raw2", "none", 4).is_err());
        assert_ne!(fnv1a64(b"a"), fnv1a64(b"b"));
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    }

    /// A copy left by a killed process of this machine is removed when the cache is next
    /// written; copies of a live process (pid 1) and of another machine are kept.
    #[test]
    fn copies_left_by_killed_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let name = "raw2-none.fqecache";
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let host = host();
        let orphan = format!(".{name}.{host}-{dead}.AbC123.tmp");
        let live = format!(".{name}.{host}-1.XyZ789.tmp");
        let remote = format!(".{name}.elsewhere-{dead}.QwE456.tmp");
        for f in [&orphan, &live, &remote] {
            std::fs::write(dir.path().join(f), b"partial").unwrap();
        }
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        c.put(1, &[1.0; 3]).unwrap();
        c.commit().unwrap();
        let mut expected = vec![live, remote, name.to_owned()];
        expected.sort();
        assert_eq!(names(dir.path()), expected);
    }

    #[test]
    fn an_uncommitted_run_leaves_the_folder_as_it_found_it() {
        let root = tempfile::tempdir().unwrap();
        // A new cache in a folder that does not exist yet: neither is left behind.
        let dir = root.path().join("cache");
        let mut c = FeatureCache::open(&dir, "raw2", "none", 3).unwrap();
        c.put(1, &[1.0; 3]).unwrap();
        assert_eq!(c.get(1).unwrap(), Some(vec![1.0; 3]));
        drop(c);
        assert!(!dir.exists(), "{:?}", names(root.path()));
        // An existing cache keeps its bytes, and no temporary file is left beside it.
        let mut c = FeatureCache::open(&dir, "raw2", "none", 3).unwrap();
        c.put(1, &[1.0; 3]).unwrap();
        c.commit().unwrap();
        let before = std::fs::read(c.path()).unwrap();
        drop(c);
        let mut c = FeatureCache::open(&dir, "raw2", "none", 3).unwrap();
        c.put(2, &[2.0; 3]).unwrap();
        let path = c.path().to_path_buf();
        drop(c);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(names(&dir), vec!["raw2-none.fqecache"]);
        let c = FeatureCache::open(&dir, "raw2", "none", 3).unwrap();
        assert!(c.contains(1) && !c.contains(2));
    }

    /// A flipped byte in a record's values is an error naming the file and record, not
    /// features that silently differ; a cache of the unchecked format is replaced.
    #[test]
    fn a_damaged_record_is_an_error_and_an_unchecked_cache_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        c.put(7, &[1.0, 2.0, 3.0]).unwrap();
        c.put(9, &[4.0, 5.0, 6.5]).unwrap();
        c.commit().unwrap();
        let path = c.path().to_path_buf();
        drop(c);
        let mut bytes = std::fs::read(&path).unwrap();
        // Record 2's second value: header 10, record 28, key 8, first value 4.
        bytes[10 + 28 + 8 + 4] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        assert_eq!(c.get(7).unwrap(), Some(vec![1.0, 2.0, 3.0]));
        let err = c.get(9).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(
            err.contains("record 2 (frame key 0000000000000009) fails its check"),
            "{err}"
        );
        drop(c);

        bytes[..6].copy_from_slice(MAGIC_UNCHECKED);
        std::fs::write(&path, &bytes).unwrap();
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        assert!(c.is_empty() && !c.contains(7));
        c.put(7, &[1.0, 2.0, 3.0]).unwrap();
        c.commit().unwrap();
        let replaced = std::fs::read(&path).unwrap();
        assert_eq!((&replaced[..6], replaced.len()), (&MAGIC[..], 10 + 28));
    }

    /// A file of another format or another feature width names itself and how to recover.
    #[test]
    fn a_foreign_or_resized_cache_says_how_to_recover() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = FeatureCache::open(dir.path(), "raw2", "none", 3).unwrap();
        c.put(7, &[1.0, 2.0, 3.0]).unwrap();
        c.commit().unwrap();
        let path = c.path().to_path_buf();
        drop(c);
        let Err(err) = FeatureCache::open(dir.path(), "raw2", "none", 4) else {
            panic!("a cache of width 3 opened at width 4");
        };
        let err = err.to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(
            err.contains("cache holds width 3, expected 4; delete it and rerun"),
            "{err}"
        );
        std::fs::write(&path, b"garbage garbage garbage").unwrap();
        let Err(err) = FeatureCache::open(dir.path(), "raw2", "none", 3) else {
            panic!("a file of garbage opened as a cache");
        };
        let err = err.to_string();
        assert!(
            err.contains("not a roboaudit feature cache; delete it and rerun to encode"),
            "{err}"
        );
    }
}
