//! Stamps of the files a finished stage wrote (relative path, length, FNV-1a 64 hash), kept in
//! the resume state so that a rerun reuses a stage's files only while they are the very bytes
//! it wrote: a file truncated, edited or removed since (a full disk, a copy cut short) makes
//! the stage run again rather than end up in the finished collection.

use std::path::Path;

use roboaudit_types::seed::fingerprint;
use serde::{Deserialize, Serialize};

use crate::error::{Result, io_err};

/// One file of a stage: its path relative to the collection folder (`/`-separated), its length
/// in bytes and the FNV-1a 64 hash of its bytes (16 lowercase hex digits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Path relative to the collection folder.
    pub path: String,
    /// Length in bytes.
    pub bytes: u64,
    /// FNV-1a 64 of the bytes, hex.
    pub fnv1a64: String,
}

/// Stamps of every file under `root/dir` for each of `dirs`, in path order.
///
/// # Errors
/// [`crate::CollectError::Io`] when a folder cannot be listed or a file cannot be read.
pub fn stamp_dirs(root: &Path, dirs: &[&str]) -> Result<Vec<FileStamp>> {
    let mut stamps = Vec::new();
    for d in dirs {
        stamp_tree(root, &root.join(d), &mut stamps)?;
    }
    stamps.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(stamps)
}

fn stamp_tree(root: &Path, dir: &Path, out: &mut Vec<FileStamp>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let path = entry.map_err(io_err(dir))?.path();
        if path.is_dir() {
            stamp_tree(root, &path, out)?;
        } else {
            let bytes = std::fs::read(&path).map_err(io_err(&path))?;
            let rel = path.strip_prefix(root).unwrap_or(&path);
            out.push(FileStamp {
                path: rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
                bytes: bytes.len() as u64,
                fnv1a64: fingerprint(&bytes),
            });
        }
    }
    Ok(())
}

/// The first file of `stamps` that is no longer as stamped under `root` (missing, another
/// length or other bytes), as its relative path; `None` when every file is intact. Files added
/// beside them are not looked at.
#[must_use]
pub fn first_changed(root: &Path, stamps: &[FileStamp]) -> Option<String> {
    stamps
        .iter()
        .find(|s| {
            let path = root.join(&s.path);
            let intact = std::fs::metadata(&path).is_ok_and(|m| m.len() == s.bytes)
                && std::fs::read(&path).is_ok_and(|b| fingerprint(&b) == s.fnv1a64);
            !intact
        })
        .map(|s| s.path.clone())
}

#[cfg(test)]
mod tests {
    use super::{first_changed, stamp_dirs};

    #[test]
    fn a_truncated_removed_or_edited_file_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("dataset/data")).unwrap();
        std::fs::create_dir_all(root.join("policies")).unwrap();
        std::fs::write(root.join("dataset/data/a.parquet"), b"abcdef").unwrap();
        std::fs::write(root.join("policies/p.parquet"), b"xyz").unwrap();
        std::fs::write(root.join("other.txt"), b"not stamped").unwrap();
        let stamps = stamp_dirs(root, &["dataset", "policies"]).unwrap();
        let paths: Vec<&str> = stamps.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["dataset/data/a.parquet", "policies/p.parquet"]);
        // FNV-1a 64 of "xyz", computed in Python: h = 0xcbf29ce484222325; for each byte
        // h = ((h ^ b) * 0x100000001b3) mod 2^64.
        assert_eq!(stamps[1].fnv1a64, "bff4aa198026f420");
        assert_eq!(stamps[1].bytes, 3);
        assert_eq!(first_changed(root, &stamps), None);
        // Same length, other bytes.
        std::fs::write(root.join("policies/p.parquet"), b"xyZ").unwrap();
        assert_eq!(
            first_changed(root, &stamps).as_deref(),
            Some("policies/p.parquet")
        );
        std::fs::write(root.join("policies/p.parquet"), b"xyz").unwrap();
        std::fs::write(root.join("dataset/data/a.parquet"), b"abc").unwrap();
        assert_eq!(
            first_changed(root, &stamps).as_deref(),
            Some("dataset/data/a.parquet")
        );
        std::fs::remove_file(root.join("dataset/data/a.parquet")).unwrap();
        assert_eq!(
            first_changed(root, &stamps).as_deref(),
            Some("dataset/data/a.parquet")
        );
    }
}
