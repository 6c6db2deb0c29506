//! Atomic file output shared by the collectors and the merge: a killed run never leaves a
//! truncated file, so a resumed or merged run can trust every file it finds.

use std::io::Write;
use std::path::Path;

/// The step of [`stage`] or [`write_atomic`] that failed, phrased to precede the path:
/// `"create a temporary file for"`, `"write"`, `"sync"` or `"rename onto"`.
pub type Step = &'static str;

/// `bytes` in full in a synced temporary sibling of `path` (mode 0644), ready to be renamed onto
/// it with `persist` (removed when dropped unpersisted): the first half of [`write_atomic`], for
/// writers that stage several files before renaming any.
///
/// # Errors
/// The [`Step`] that failed and its I/O error.
pub fn stage(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, (Step, std::io::Error)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        // The mode `File::create` gives (0o666 less the umask), not the owner-only default.
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| ("create a temporary file for", e))?;
    tmp.write_all(bytes).map_err(|e| ("write", e))?;
    tmp.as_file().sync_all().map_err(|e| ("sync", e))?;
    Ok(tmp)
}

/// Writes `bytes` to `path` through a synced temporary sibling (mode 0o666 less the umask) and a
/// rename.
///
/// # Errors
/// The [`Step`] that failed and its I/O error.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), (Step, std::io::Error)> {
    stage(path, bytes)?
        .persist(path)
        .map_err(|e| ("rename onto", e.error))?;
    Ok(())
}
