//! Atomic file output shared by the collectors and the merge: a killed run never leaves a
//! truncated file, so a resumed or merged run can trust every file it finds.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a synced temporary sibling (mode 0644) and a rename.
///
/// # Errors
/// The step that failed (`"create a temporary file for"`, `"write"`, `"sync"` or
/// `"rename onto"`, phrased to precede the path) and its I/O error.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), (&'static str, std::io::Error)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(|e| ("create a temporary file for", e))?;
    tmp.write_all(bytes).map_err(|e| ("write", e))?;
    tmp.as_file().sync_all().map_err(|e| ("sync", e))?;
    tmp.persist(path).map_err(|e| ("rename onto", e.error))?;
    Ok(())
}
