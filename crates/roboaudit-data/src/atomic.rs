//! Atomic result files: every file is written in full to a synced temporary sibling (made by
//! [`result_file_builder`], so it gets the mode `File::create` gives) and renamed into place, so a
//! killed run never leaves a truncated result; a set of files is staged whole before any is
//! renamed, so a failure leaves none of them touched.

use std::io::Write as _;
use std::path::Path;

/// A result file that could not be written. The message names the step and the path
/// (`cannot write PATH`, `cannot create output folder DIR`, `cannot write PATH: it is a folder`).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct WriteError {
    /// What failed, and where.
    pub message: String,
    /// The file (or folder) concerned.
    pub path: std::path::PathBuf,
    /// The I/O failure (`None`: a folder stands where the file goes).
    #[source]
    pub source: Option<std::io::Error>,
}

impl WriteError {
    fn io(message: String, path: &Path, source: std::io::Error) -> Self {
        Self {
            message,
            path: path.to_path_buf(),
            source: Some(source),
        }
    }
}

/// Creates `dir` (and parents) if missing.
///
/// # Errors
/// `cannot create output folder DIR` with the I/O error.
pub fn create_dir(dir: &Path) -> Result<(), WriteError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        WriteError::io(
            format!("cannot create output folder {}", dir.display()),
            dir,
            e,
        )
    })
}

/// A [`tempfile::Builder`] for a temporary file that becomes a result when renamed into place:
/// the file gets the mode `File::create` gives (0o666 less the umask), not tempfile's owner-only
/// default, so results are shared like any other file the user makes.
#[must_use]
pub fn result_file_builder<'a, 'b>() -> tempfile::Builder<'a, 'b> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
}

/// [`result_file_builder`] for a temporary folder renamed into place as a result folder: it gets
/// the mode `create_dir` gives (0o777 less the umask).
#[must_use]
pub fn result_folder_builder<'a, 'b>() -> tempfile::Builder<'a, 'b> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777));
    builder
}

/// Writes `bytes` to `path` atomically (a synced temporary sibling renamed onto it), creating
/// the folder if missing.
///
/// # Errors
/// A [`WriteError`] naming the step that failed; `path` is then untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_all_atomic(&[(path, bytes)])
}

/// Writes several files as one result: every file is first written in full to a synced
/// temporary sibling, and only when all of them are is each renamed into place. A full disk, a
/// folder in the way or a read-only file stops before any result file is touched; only a
/// failure of the renames themselves could leave part of the set.
///
/// # Errors
/// A [`WriteError`] naming the step and the file that failed.
pub fn write_all_atomic(files: &[(&Path, &[u8])]) -> Result<(), WriteError> {
    let mut staged_files = Vec::with_capacity(files.len());
    for &(path, bytes) in files {
        staged_files.push((path, staged(path, bytes)?));
    }
    for (path, tmp) in staged_files {
        tmp.persist(path).map_err(|e| {
            WriteError::io(format!("cannot write {}", path.display()), path, e.error)
        })?;
    }
    Ok(())
}

/// `bytes` in a synced temporary file beside `path`, ready to be renamed onto it (removed when
/// dropped unpersisted). A folder at `path` is refused here, before anything is renamed.
fn staged(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, WriteError> {
    if path.is_dir() {
        return Err(WriteError {
            message: format!("cannot write {}: it is a folder", path.display()),
            path: path.to_path_buf(),
            source: None,
        });
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // A missing folder is created here rather than by each caller: every result file lands
    // where its path says.
    create_dir(dir)?;
    let mut tmp = result_file_builder().tempfile_in(dir).map_err(|e| {
        WriteError::io(
            format!("cannot create a temporary file in {}", dir.display()),
            dir,
            e,
        )
    })?;
    tmp.write_all(bytes)
        .map_err(|e| WriteError::io(format!("cannot write {}", path.display()), path, e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| WriteError::io(format!("cannot sync {}", path.display()), path, e))?;
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A later file that cannot be written leaves the earlier one unwritten too (and no
    /// temporary file behind).
    #[test]
    fn a_set_is_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("audit.json"), dir.path().join("summary.md"));
        std::fs::create_dir(&b).unwrap();
        let err = write_all_atomic(&[(&a, b"{}"), (&b, b"# s")]).unwrap_err();
        assert!(err.to_string().contains("it is a folder"), "{err}");
        assert!(!a.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::remove_dir(&b).unwrap();
        write_all_atomic(&[(&a, b"{}"), (&b, b"# s")]).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"{}");
        assert_eq!(std::fs::read(&b).unwrap(), b"# s");
    }

    /// A result gets the mode `File::create` gives in the same folder (the umask's), not the
    /// owner-only mode of a temporary file nor a fixed 0o644.
    #[cfg(unix)]
    #[test]
    fn a_result_gets_the_mode_of_a_created_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let written = dir.path().join("audit.json");
        write_atomic(&written, b"{}").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&written), mode(&plain));
    }
}
