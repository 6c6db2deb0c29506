//! Paths compared as the file system resolves them and the output-path checks several commands
//! make (exit code 2), from [`roboaudit_data::outpath`].

pub use roboaudit_data::outpath::{
    check_cache_folder, is_within, refuse_inside_dataset, require_extension, same_file,
};

/// Refuses a one-file output that names an existing folder, or whose folder cannot be written
/// ([`roboaudit_data::outpath::refuse_unwritable_file`]) (exit code 2, before any work): the
/// write would fail only after the work.
///
/// # Errors
/// [`crate::exit::Usage`] naming `flag` and the folder, or the
/// [`roboaudit_data::outpath::OutputPathError`] of the folder check.
pub fn refuse_folder(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    if path.is_dir() {
        return Err(crate::exit::Usage(format!(
            "{flag} {} is a folder; give a file name",
            path.display()
        ))
        .into());
    }
    roboaudit_data::outpath::refuse_unwritable_file(flag, path)?;
    Ok(())
}

/// Refuses a folder option that names an existing file (exit code 2, before any work).
///
/// # Errors
/// [`crate::exit::Usage`] naming `flag` and the file.
pub fn refuse_file(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    if path.exists() && !path.is_dir() {
        return Err(crate::exit::Usage(format!(
            "{flag} {} is a file, not a folder: give a folder (it is created if missing)",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// Refuses an output path that is or lies inside a LeRobot dataset folder (exit code 2, before any
/// work): it or some folder above it holds `meta/info.json`. Commands that read a dataset check
/// against that dataset ([`refuse_inside_dataset`]); this check is for commands whose output could
/// land in anyone's dataset, where a stray file under `data/` or `meta/` is read as part of it.
///
/// # Errors
/// [`roboaudit_data::outpath::OutputPathError`] naming `flag`, the path and the dataset.
pub fn refuse_inside_any_dataset(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let resolved = roboaudit_data::outpath::resolved(path);
    if let Some(dataset) = resolved
        .ancestors()
        .find(|dir| dir.join("meta").join("info.json").is_file())
    {
        refuse_inside_dataset(flag, path, dataset)?;
    }
    Ok(())
}
