//! Atomic output: every file is written to a temporary sibling and renamed into place, so a killed
//! run never leaves a truncated result, and an audit that fails leaves `--out` untouched.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file in the same directory, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    staged(path, bytes)?
        .persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes several files as one result: every file is first written in full to a temporary
/// sibling (fsync'd), and only when all of them are is each renamed into place. A full disk, a
/// folder in the way or a read-only file stops the run before any result file is touched, so an
/// audit never leaves its `audit.json` without the `summary.md` that goes with it (and a rerun
/// is not refused for a half-written result). Only a failure of the renames themselves, within
/// one folder each, could leave part of the set.
pub fn write_all_atomic(files: &[(&Path, &[u8])]) -> Result<()> {
    let mut staged_files = Vec::with_capacity(files.len());
    for &(path, bytes) in files {
        staged_files.push((path, staged(path, bytes)?));
    }
    for (path, tmp) in staged_files {
        tmp.persist(path)
            .map_err(|e| e.error)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// `bytes` in a synced temporary file beside `path`, ready to be renamed onto it (the file is
/// removed when dropped unpersisted). A folder at `path` is refused here, before anything is
/// renamed.
fn staged(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
    if path.is_dir() {
        anyhow::bail!("cannot write {}: it is a folder", path.display());
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // A temporary file is created owner-only; results are meant to be shared like any other file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .with_context(|| format!("cannot set permissions of {}", path.display()))?;
    }
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("cannot sync {}", path.display()))?;
    Ok(tmp)
}

/// Creates `dir` (and parents) if missing.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output folder {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A later file that cannot be written leaves the earlier one unwritten too (and no
    /// temporary file behind), where writing them one by one would leave the first.
    #[test]
    fn a_set_is_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("audit.json"), dir.path().join("summary.md"));
        std::fs::create_dir(&b).unwrap();
        let err = write_all_atomic(&[(&a, b"{}"), (&b, b"# s")]).unwrap_err();
        assert!(format!("{err:#}").contains("it is a folder"), "{err:#}");
        assert!(!a.exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only the folder in the way: {left:?}");
        std::fs::remove_dir(&b).unwrap();
        write_all_atomic(&[(&a, b"{}"), (&b, b"# s")]).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"{}");
        assert_eq!(std::fs::read(&b).unwrap(), b"# s");
    }
}
