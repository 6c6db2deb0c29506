//! Atomic output: every file is written to a temporary sibling and renamed into place, so a killed
//! run never leaves a truncated result, and an audit that fails leaves `--out` untouched.

use crate::exit::Usage;
use anyhow::Result;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file in the same directory, fsync, rename),
/// creating the directory if missing ([`roboaudit_data::atomic::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(roboaudit_data::atomic::write_atomic(path, bytes)?)
}

/// Writes several files as one result, staged whole before any is renamed
/// ([`roboaudit_data::atomic::write_all_atomic`]): an audit never leaves its `audit.json`
/// without the `summary.md` that goes with it.
pub fn write_all_atomic(files: &[(&Path, &[u8])]) -> Result<()> {
    Ok(roboaudit_data::atomic::write_all_atomic(files)?)
}

/// Refuses an `--out` that exists and is not a folder (exit code 2): the user named a file where
/// a folder of results belongs, and finding out only after the work is done wastes the run.
pub fn refuse_out_file(out: &Path) -> Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(Usage(format!(
            "--out {} is a file, not a folder: give a folder for the results (it is created if missing)",
            out.display()
        ))
        .into());
    }
    Ok(())
}

/// Refuses an `--out` folder that already holds a result of another kind (exit code 2, before
/// any work): each `(file, schemas)` names a file this command writes into `out` and the
/// `schema` tags it may replace, or (with no schemas) another command's result file whose
/// companions this command would overwrite (an FQE result's `summary.md`). A file that is missing passes; one whose `schema` is another's
/// (a memory audit where a retrieval audit would go), or whose kind cannot be told (unreadable,
/// not JSON, no `schema`), is refused, because renaming the new result onto it would silently
/// destroy someone's audit and leave its companion files (a `summary.md`) stale beside ours.
pub fn refuse_foreign_results(out: &Path, expected: &[(&str, &[&str])]) -> Result<()> {
    for &(name, schemas) in expected {
        let file = out.join(name);
        if file.is_dir() {
            // Nothing to lose there; the write itself reports the folder in the way.
            continue;
        }
        let text = match std::fs::read(&file) {
            Ok(text) => text,
            // Not there (a path through a file included: the write reports that one).
            Err(_) if !file.exists() => continue,
            Err(e) => {
                return Err(Usage(format!(
                    "--out {} holds {name}, which cannot be read ({e}), so it cannot be checked before it is replaced; choose another output folder",
                    out.display()
                ))
                .into());
            }
        };
        let found = serde_json::from_slice::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("schema").and_then(|s| s.as_str()).map(str::to_owned));
        let wanted = schemas
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(" or ");
        match found {
            Some(s) if schemas.contains(&s.as_str()) => {}
            found if schemas.is_empty() => {
                let s = found.unwrap_or_default();
                return Err(Usage(format!(
                    "--out {} holds another kind of result ({name}, schema \"{s}\"); writing here would replace the files that go with it: choose another output folder",
                    out.display()
                ))
                .into());
            }
            Some(s) => {
                return Err(Usage(format!(
                    "--out {} holds another kind of result: {name} has schema \"{s}\", this command writes {wanted}; writing here would replace it: choose another output folder",
                    out.display()
                ))
                .into());
            }
            None => {
                return Err(Usage(format!(
                    "--out {} holds a {name} that is not a roboaudit result of schema {wanted} (not JSON or no `schema` field); writing here would replace it: choose another output folder",
                    out.display()
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// Header prefix every labels file starts with (`data labels`: `episode_index,success`;
/// `data detect` adds `source,probability`).
const LABELS_HEADER: &str = "episode_index,success";

/// Refuses a labels `--out` (exit code 2, before any work) that exists and is not a labels file:
/// a CSV whose first line does not start with `episode_index,success` is someone's data (an
/// executions log), and replacing it with labels would destroy it. A labels file is replaced.
pub fn refuse_foreign_labels(flag: &str, path: &Path) -> Result<()> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(());
    };
    let mut first = String::new();
    let read = std::io::BufRead::read_line(&mut std::io::BufReader::new(file), &mut first);
    if read.is_ok()
        && first
            .trim_start_matches('\u{feff}')
            .starts_with(LABELS_HEADER)
    {
        return Ok(());
    }
    Err(Usage(format!(
        "{flag} {} exists and is not a labels file (its first line does not start with \"{LABELS_HEADER}\"); writing labels there would destroy it: choose another file name",
        path.display()
    ))
    .into())
}

/// Creates `dir` (and parents) if missing.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    Ok(roboaudit_data::atomic::create_dir(dir)?)
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

    /// A result of the kind the command writes may be replaced; another kind, or a file whose
    /// kind cannot be told, is refused as a usage error and left as it was.
    #[test]
    fn foreign_results_in_out_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let expected: &[(&str, &[&str])] = &[("audit.json", &["roboaudit.retrieval.v1"])];
        refuse_foreign_results(dir.path(), expected).unwrap();
        let audit = dir.path().join("audit.json");
        std::fs::write(&audit, br#"{"schema": "roboaudit.retrieval.v1"}"#).unwrap();
        refuse_foreign_results(dir.path(), expected).unwrap();
        for (body, needle) in [
            (
                &br#"{"schema": "roboaudit.memory.v1"}"#[..],
                "schema \"roboaudit.memory.v1\"",
            ),
            (&b"not json"[..], "not a roboaudit result"),
            (&br#"{"tasks": []}"#[..], "not a roboaudit result"),
        ] {
            std::fs::write(&audit, body).unwrap();
            let err = refuse_foreign_results(dir.path(), expected).unwrap_err();
            assert_eq!(crate::exit::code_for(&err), crate::exit::USAGE, "{err:#}");
            assert!(format!("{err:#}").contains(needle), "{err:#}");
            assert_eq!(std::fs::read(&audit).unwrap(), body);
        }
    }

    #[test]
    fn an_out_file_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        refuse_out_file(dir.path()).unwrap();
        refuse_out_file(&dir.path().join("missing")).unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let err = refuse_out_file(&file).unwrap_err();
        assert_eq!(crate::exit::code_for(&err), crate::exit::USAGE);
        assert!(
            format!("{err:#}").contains("is a file, not a folder"),
            "{err:#}"
        );
    }
}
