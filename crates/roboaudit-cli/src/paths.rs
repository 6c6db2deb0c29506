//! Paths compared as the file system resolves them, so that an output spelt another way
//! (`./a.csv`, `dir/../a.csv`, an absolute path, a symbolic link) is still recognised as the
//! input it would overwrite, or as lying inside a folder it must not write into; and the
//! output-path checks that several commands make (exit code 2).

use std::path::{Component, Path, PathBuf};

use anyhow::Result;

use crate::exit::Usage;

/// Where `p` points once `.`/`..`, relative spelling and symbolic links are resolved: its
/// longest existing prefix canonicalized, followed by the components that do not exist yet
/// (a `..` among them removing the one before). `p` as given when no prefix resolves (the
/// working folder is gone).
pub fn resolved(p: &Path) -> PathBuf {
    let parts: Vec<Component<'_>> = p.components().collect();
    for existing in (0..=parts.len()).rev() {
        let prefix: PathBuf = parts[..existing].iter().collect();
        let prefix = if prefix.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            prefix
        };
        let Ok(mut out) = prefix.canonicalize() else {
            continue;
        };
        for part in &parts[existing..] {
            match part {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        return out;
    }
    p.to_path_buf()
}

/// Whether two paths name the same file however they are spelt.
pub fn same_file(a: &Path, b: &Path) -> bool {
    resolved(a) == resolved(b)
}

/// Whether `p` is `dir` or lies inside it, however either is spelt.
pub fn is_within(p: &Path, dir: &Path) -> bool {
    resolved(p).starts_with(resolved(dir))
}

/// Refuses an output path inside the dataset folder (exit code 2): writing into a LeRobot
/// dataset can corrupt it (a stray Parquet file under `data/` is read as data, `meta/` is
/// metadata), and a later fit on the dataset would read its own results.
pub fn refuse_inside_dataset(flag: &str, path: &Path, dataset: &Path) -> Result<()> {
    if is_within(path, dataset) {
        return Err(Usage(format!(
            "{flag} {} is inside the dataset folder: writing there can corrupt the dataset; give a path outside it, in {}",
            path.display(),
            dataset.display()
        ))
        .into());
    }
    Ok(())
}

/// Refuses an output whose extension is not `ext` (exit code 2, before any work): the file is
/// written in one format, and readers (the labels reader, `report`) pick the format by
/// extension, so a mismatched name is read back as something else; worse, a name like
/// `fit/fqe.json` or `fit/summary.md` would silently replace another command's result.
pub fn require_extension(flag: &str, path: &Path, ext: &str, what: &str) -> Result<()> {
    if path.extension().and_then(|e| e.to_str()) != Some(ext) {
        return Err(Usage(format!(
            "{flag} {}: {what} is written as {}; give it the extension .{ext}",
            path.display(),
            ext.to_uppercase()
        ))
        .into());
    }
    Ok(())
}

/// Refuses a `--cache` that exists but is not a folder (exit code 2): the cache is one file
/// per encoder inside a folder.
pub fn check_cache_folder(cache: &Path) -> Result<()> {
    if cache.exists() && !cache.is_dir() {
        return Err(Usage(format!(
            "--cache {} is a file: --cache must be a folder (the feature cache keeps one file per encoder in it)",
            cache.display()
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn spellings_of_one_place_resolve_alike_even_where_nothing_exists_yet() {
        let root = tempfile::tempdir().unwrap();
        let ds = root.path().join("dataset");
        std::fs::create_dir_all(ds.join("meta")).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&ds, &link).unwrap();
        // Two missing levels below a symbolic link, and a `..` among missing components.
        assert!(is_within(&link.join("res/deeper/labels.csv"), &ds));
        assert!(is_within(&ds.join("meta/../new/x"), &ds));
        assert!(!is_within(&ds.join("../elsewhere/x"), &ds));
        assert!(!is_within(&root.path().join("dataset-copy/x"), &ds));
        assert!(same_file(&ds.join("meta/../a.csv"), &link.join("a.csv")));
        assert!(!same_file(&ds.join("a.csv"), &ds.join("b.csv")));
    }
}
