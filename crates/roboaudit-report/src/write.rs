//! Atomic file output: a temporary sibling, synced, then renamed over the target.

use crate::ReportError;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (a reader sees the old file or the whole new one).
pub(crate) fn atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let fail = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Temporary files are owner-only; a report is meant to be shared.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(fail)?;
    }
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
