//! Atomic output ([`roboaudit_data::atomic`]: a temporary sibling renamed into place, so a
//! killed run never leaves a truncated result, and an audit that fails leaves `--out`
//! untouched) and the checks that `--out` destroys nothing ([`roboaudit_data::outpath`],
//! exit code 2).

pub use roboaudit_data::atomic::create_dir as ensure_dir;
pub use roboaudit_data::outpath::{
    refuse_foreign_labels, refuse_foreign_results, refuse_other_run, refuse_replacing,
};

/// Refuses an `--out` folder that exists as a file, or lies inside a LeRobot dataset folder
/// (exit code 2, before any work).
///
/// # Errors
/// [`roboaudit_data::outpath::OutputPathError`] naming the path.
pub fn refuse_out_file(out: &std::path::Path) -> anyhow::Result<()> {
    roboaudit_data::outpath::refuse_out_file(out)?;
    crate::paths::refuse_inside_any_dataset("--out", out)
}

/// A collection's hold on its `--out` folder: an exclusive advisory lock
/// ([`std::fs::File::try_lock`]) on `.<name of OUT>.roboaudit.lock` beside it, so that a second
/// collection into the same folder stops before it writes anything. The operating system
/// releases the lock when the process ends however it ends, so a killed run leaves no lock
/// behind (at most the empty file, which the next run locks again); a run that ends normally
/// removes the file when the hold is dropped.
#[derive(Debug)]
pub struct OutLock {
    path: std::path::PathBuf,
    /// Holds the lock while open.
    _file: std::fs::File,
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // Best effort: a file left behind holds no lock.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The lock file of a collection into `out`: `.<name of OUT>.roboaudit.lock` in `out`'s parent
/// (beside it, not inside, also for `--out .`: the folder's contents are the collection's
/// results alone).
#[must_use]
pub fn lock_path(out: &std::path::Path) -> std::path::PathBuf {
    let (parent, name) = roboaudit_data::outpath::beside(out);
    parent.join(format!(".{name}.roboaudit.lock"))
}

/// Takes the hold of a collection on `out` (creating `out`'s parent when missing).
///
/// # Errors
/// [`crate::exit::InvalidInput`] (exit code 3) naming `out` when another process holds it; an
/// I/O error when the lock file cannot be created or locked.
pub fn lock_out(out: &std::path::Path) -> anyhow::Result<OutLock> {
    use anyhow::Context;
    let path = lock_path(out);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create output folder {}", parent.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot create the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(OutLock { path, _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(crate::exit::InvalidInput(format!(
            "{} is being written by another roboaudit run (it holds {}); wait for that run to end, or choose another --out",
            out.display(),
            path.display()
        ))
        .into()),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(anyhow::Error::new(e).context(format!("cannot lock {}", path.display())))
        }
    }
}
