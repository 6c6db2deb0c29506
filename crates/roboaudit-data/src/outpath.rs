//! Output-path guards of the command pipelines: paths compared as the file system resolves
//! them, so that an output spelt another way (`./a.csv`, `dir/../a.csv`, an absolute path, a
//! symbolic link) is still recognised as the input it would overwrite, or as lying inside a
//! folder it must not write into; and the checks made before any work that an output path does
//! not destroy someone's data or result. Every refusal is an [`OutputPathError`]: the wrong
//! path was named (the CLI's exit code 2).

use std::path::{Component, Path, PathBuf};

/// An output path that must not be written (a file where a folder belongs, another command's
/// result, a path inside a dataset, a wrong extension). The string is the whole message: it
/// names the flag, the path and what to do instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OutputPathError(pub String);

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

/// The folder beside which files that accompany an output at `out` go (its parent), and
/// `out`'s own name: as spelt when `out` ends in a name (`runs/gt` gives `runs` and `gt`), from
/// the [`resolved`] path when it does not (`.`, `./`, `..`), so that a lock or work folder named
/// after `out` lands outside it. The parent is `.` for a bare name; the name is `out` for the
/// root folder, which has none.
#[must_use]
pub fn beside(out: &Path) -> (PathBuf, String) {
    let named = |p: &Path| {
        let name = p.file_name()?.to_string_lossy().into_owned();
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some((parent.to_path_buf(), name))
    };
    named(out)
        .or_else(|| named(&resolved(out)))
        .unwrap_or_else(|| (PathBuf::from("."), "out".to_owned()))
}

/// Whether two paths name the same file however they are spelt.
pub fn same_file(a: &Path, b: &Path) -> bool {
    resolved(a) == resolved(b)
}

/// Whether `p` is `dir` or lies inside it, however either is spelt.
pub fn is_within(p: &Path, dir: &Path) -> bool {
    resolved(p).starts_with(resolved(dir))
}

/// Refuses an output path inside the dataset folder (a usage error): writing into a LeRobot
/// dataset can corrupt it (a stray Parquet file under `data/` is read as data, `meta/` is
/// metadata), and a later fit on the dataset would read its own results.
pub fn refuse_inside_dataset(
    flag: &str,
    path: &Path,
    dataset: &Path,
) -> Result<(), OutputPathError> {
    if same_file(path, dataset) {
        return Err(OutputPathError(format!(
            "{flag} {} is a LeRobot dataset folder: writing there can corrupt the dataset; give a path outside it",
            path.display()
        )));
    }
    if is_within(path, dataset) {
        return Err(OutputPathError(format!(
            "{flag} {} is inside the dataset folder: writing there can corrupt the dataset; give a path outside the dataset folder {}",
            path.display(),
            dataset.display()
        )));
    }
    Ok(())
}

/// Refuses an output whose extension is not `ext` (a usage error, before any work): the file is
/// written in one format, and readers (the labels reader, `report`) pick the format by
/// extension, so a mismatched name is read back as something else; worse, a name like
/// `fit/fqe.json` or `fit/summary.md` would silently replace another command's result.
pub fn require_extension(
    flag: &str,
    path: &Path,
    ext: &str,
    what: &str,
) -> Result<(), OutputPathError> {
    if path.extension().and_then(|e| e.to_str()) != Some(ext) {
        return Err(OutputPathError(format!(
            "{flag} {}: {what} is written as {}; give it the extension .{ext}",
            path.display(),
            ext.to_uppercase()
        )));
    }
    Ok(())
}

/// Refuses a `--cache` that exists but is not a folder (a usage error): the cache is one file
/// per encoder inside a folder.
pub fn check_cache_folder(cache: &Path) -> Result<(), OutputPathError> {
    if cache.exists() && !cache.is_dir() {
        return Err(OutputPathError(format!(
            "--cache {} is a file: --cache must be a folder (the feature cache keeps one file per encoder in it)",
            cache.display()
        )));
    }
    Ok(())
}

/// Refuses an `--out` where no folder of results can be written (a usage error): `out` is a file
/// (also spelt with a trailing `/`), a dangling symbolic link, a file stands where one of its
/// missing parent folders would go, the path cannot be looked up (a name too long for the file
/// system), or the nearest folder of `out` that exists (`out` itself, or the one its missing
/// folders would be created in) does not let this process create a file, checked by creating
/// and removing one. Finding out only after the work is done wastes the run.
///
/// # Errors
/// [`OutputPathError`] naming `--out` and the reason.
pub fn refuse_out_file(out: &Path) -> Result<(), OutputPathError> {
    let whole: PathBuf = out.components().collect();
    if std::fs::metadata(&whole).is_ok_and(|m| !m.is_dir()) {
        return Err(OutputPathError(format!(
            "--out {} is a file, not a folder: give a folder for the results (it is created if missing)",
            out.display()
        )));
    }
    refuse_unwritable_place("--out", out, &whole, "a folder for the results")
}

/// Refuses a one-file output (`flag path`, a usage error) whose folder cannot be written: the
/// checks of [`refuse_out_file`] applied to the folder the file goes in (created if missing).
/// That `path` is not itself a folder is the caller's check.
///
/// # Errors
/// [`OutputPathError`] naming `flag` and the reason.
pub fn refuse_unwritable_file(flag: &str, path: &Path) -> Result<(), OutputPathError> {
    let folder: PathBuf = path
        .components()
        .collect::<PathBuf>()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    refuse_unwritable_place(
        flag,
        path,
        &folder,
        "a file name in a folder you can write to",
    )
}

/// The shared walk of [`refuse_out_file`] and [`refuse_unwritable_file`]: from `start` (a folder
/// to be created or filled; empty for the working folder) up to the nearest path that exists,
/// which must be a folder this process can create a file in. A path that is missing or lies
/// under a file (`ENOTDIR`) passes on to its parent; a symbolic link whose target is missing,
/// or any other lookup error, is refused.
fn refuse_unwritable_place(
    flag: &str,
    given: &Path,
    start: &Path,
    want: &str,
) -> Result<(), OutputPathError> {
    let refuse = |why: String| {
        Err(OutputPathError(format!(
            "{flag} {}: {why}: give {want}",
            given.display()
        )))
    };
    let mut base = if start.as_os_str().is_empty() {
        Path::new(".")
    } else {
        start
    };
    loop {
        match std::fs::metadata(base) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return refuse(format!(
                    "{} is a file, so no folder can be created under it",
                    base.display()
                ));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                if let Ok(target) = std::fs::read_link(base) {
                    return refuse(format!(
                        "{} is a symbolic link to {}, which does not exist",
                        base.display(),
                        target.display()
                    ));
                }
                let up = match base.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if up == base {
                    // The working folder itself is gone.
                    return refuse(format!("cannot look up {} ({e})", base.display()));
                }
                base = up;
            }
            Err(e) => return refuse(format!("cannot look up {} ({e})", base.display())),
        }
    }
    if let Err(e) = tempfile::Builder::new()
        .prefix(".roboaudit-write-check")
        .tempfile_in(base)
    {
        return refuse(format!("cannot create a file in {} ({e})", base.display()));
    }
    Ok(())
}

/// The one field every roboaudit result file shares, read without knowing which result it is.
#[derive(serde::Deserialize)]
struct SchemaTag {
    schema: Option<String>,
}

/// Refuses an `--out` folder that already holds a result of another kind (a usage error, before
/// any work): each `(file, schemas)` names a file this command writes into `out` and the
/// `schema` tags it may replace, or (with no schemas) another command's result file whose
/// companions this command would overwrite (an FQE result's `summary.md`). A file that is missing passes; one whose `schema` is another's
/// (a memory audit where a retrieval audit would go), or whose kind cannot be told (unreadable,
/// not JSON, no `schema`), is refused, because renaming the new result onto it would silently
/// destroy someone's audit and leave its companion files (a `summary.md`) stale beside ours.
pub fn refuse_foreign_results(
    out: &Path,
    expected: &[(&str, &[&str])],
) -> Result<(), OutputPathError> {
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
                return Err(OutputPathError(format!(
                    "--out {} holds {name}, which cannot be read ({e}), so it cannot be checked before it is replaced; choose another output folder",
                    out.display()
                )));
            }
        };
        let found = serde_json::from_slice::<SchemaTag>(&text)
            .ok()
            .and_then(|t| t.schema);
        let wanted = schemas
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(" or ");
        match found {
            Some(s) if schemas.contains(&s.as_str()) => {}
            found if schemas.is_empty() => {
                let s = found.unwrap_or_default();
                return Err(OutputPathError(format!(
                    "--out {} holds another kind of result ({name}, schema \"{s}\"); writing here would replace the files that go with it: choose another output folder",
                    out.display()
                )));
            }
            Some(s) => {
                return Err(OutputPathError(format!(
                    "--out {} holds another kind of result: {name} has schema \"{s}\", this command writes {wanted}; writing here would replace it: choose another output folder",
                    out.display()
                )));
            }
            None => {
                return Err(OutputPathError(format!(
                    "--out {} holds {name}, which is not a roboaudit result of schema {wanted} (not JSON or no `schema` field); writing here would replace it: choose another output folder",
                    out.display()
                )));
            }
        }
    }
    Ok(())
}

/// Header prefix every labels file starts with (`data labels`: `episode_index,success`;
/// `data detect` adds `source,probability`).
const LABELS_HEADER: &str = "episode_index,success";

/// Refuses a labels `--out` (a usage error, before any work) that exists and is not a labels file:
/// a CSV whose first line does not start with `episode_index,success` is someone's data (an
/// executions log), and replacing it with labels would destroy it. A labels file is replaced.
pub fn refuse_foreign_labels(flag: &str, path: &Path) -> Result<(), OutputPathError> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(());
    };
    if first_line(file).is_some_and(|l| l.starts_with(LABELS_HEADER)) {
        return Ok(());
    }
    Err(OutputPathError(format!(
        "{flag} {} exists and is not a labels file (its first line does not start with \"{LABELS_HEADER}\"); writing labels there would destroy it: choose another file name",
        path.display()
    )))
}

/// The first line of an open text file, without its line ending and byte-order mark: how a
/// CSV's kind is told from its header without reading the rest. `None` when it cannot be read.
#[must_use]
pub fn first_line(file: std::fs::File) -> Option<String> {
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(file), &mut first).ok()?;
    let line = first.trim_end_matches(['\n', '\r']);
    Some(line.trim_start_matches('\u{feff}').to_owned())
}

/// Files whose presence marks a folder as a collection's run folder (a retrieval or FQE
/// collection, a shard of one, a memory collection): the files in it, and in its subfolders
/// such as `policies/`, are that run's inputs.
pub const RUN_MARKERS: [&str; 4] = [
    "collect.json",
    "ground_truth.json",
    "shard.json",
    "manifest.json",
];

/// Refuses an `--out` folder that is another collection's run folder (a usage error, before any
/// work): it holds one of `foreign`, [`RUN_MARKERS`] of a run of another kind (an FQE
/// collection's `ground_truth.json`, a retrieval collection's `collect.json`), whose inputs the
/// new files would mix with.
///
/// # Errors
/// [`OutputPathError`] naming the folder and the file found.
pub fn refuse_other_run(out: &Path, foreign: &[&str]) -> Result<(), OutputPathError> {
    match foreign.iter().find(|name| out.join(name).exists()) {
        Some(name) => Err(OutputPathError(format!(
            "--out {} is another collection's run folder (it holds {name}); writing here would mix this run's files with its inputs: choose another output folder",
            out.display()
        ))),
        None => Ok(()),
    }
}

/// Refuses a file `--out` (a usage error, before any work) that exists and either lies in a
/// collection's run folder (its folder or the folder above holds one of [`RUN_MARKERS`]) or is
/// not a `kind` file by `is_kind`: replacing it would break that run or destroy someone's data.
/// A missing file, or a `kind` file outside any run folder (a rerun's own output), passes.
///
/// # Errors
/// [`OutputPathError`] naming `flag`, the file and the reason.
pub fn refuse_replacing(
    flag: &str,
    path: &Path,
    kind: &str,
    is_kind: &dyn Fn(&Path) -> bool,
) -> Result<(), OutputPathError> {
    if !path.is_file() {
        return Ok(());
    }
    let run = resolved(path).ancestors().skip(1).take(2).find_map(|dir| {
        RUN_MARKERS
            .iter()
            .find(|m| dir.join(m).is_file())
            .map(|m| (dir.to_path_buf(), *m))
    });
    if let Some((dir, marker)) = run {
        return Err(OutputPathError(format!(
            "{flag} {} is a file of the run in {} (it holds {marker}); writing {kind} there would replace that run's input: choose another file name",
            path.display(),
            dir.display()
        )));
    }
    if !is_kind(path) {
        return Err(OutputPathError(format!(
            "{flag} {} exists and is not {kind}; writing there would destroy it: choose another file name",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name is kept as spelt; a path without one (`.`, `./`, `..`) names the folder it
    /// resolves to, whose parent lies outside it.
    #[test]
    fn beside_names_the_folder_out_resolves_to() {
        assert_eq!(
            beside(Path::new("runs/gt")),
            (PathBuf::from("runs"), "gt".to_owned())
        );
        assert_eq!(
            beside(Path::new("gt")),
            (PathBuf::from("."), "gt".to_owned())
        );
        assert_eq!(
            beside(Path::new("runs/gt/.")),
            (PathBuf::from("runs"), "gt".to_owned())
        );
        let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
        for dot in [".", "./"] {
            let (parent, name) = beside(Path::new(dot));
            assert_eq!(parent.join(&name), cwd, "{dot}");
            assert!(!parent.starts_with(&cwd), "{dot}");
        }
        let up = cwd.parent().unwrap();
        let (parent, name) = beside(Path::new(".."));
        assert_eq!(parent.join(name), up);
        assert_eq!(
            beside(Path::new("/")),
            (PathBuf::from("."), "out".to_owned())
        );
    }

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

    /// An existing file is replaced only when it is of the command's kind and no run holds it.
    #[test]
    fn run_inputs_and_foreign_files_are_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let is_csv = |p: &Path| p.extension().is_some_and(|e| e == "csv");
        std::fs::write(d.join("own.csv"), "x").unwrap();
        std::fs::write(d.join("notes.txt"), "x").unwrap();
        refuse_replacing("--out", &d.join("new.csv"), "a scene set", &is_csv).unwrap();
        refuse_replacing("--out", &d.join("own.csv"), "a scene set", &is_csv).unwrap();
        let err =
            refuse_replacing("--out", &d.join("notes.txt"), "a scene set", &is_csv).unwrap_err();
        assert!(err.0.ends_with("exists and is not a scene set; writing there would destroy it: choose another file name"), "{err}");
        // In a run folder, or in a folder of one (policies/ of an FQE collection).
        std::fs::create_dir_all(d.join("run/policies")).unwrap();
        std::fs::write(d.join("run/ground_truth.json"), "{}").unwrap();
        std::fs::write(d.join("run/scenes.csv"), "x").unwrap();
        std::fs::write(d.join("run/policies/p.csv"), "x").unwrap();
        for f in ["run/scenes.csv", "run/policies/p.csv"] {
            let err = refuse_replacing("--out", &d.join(f), "a scene set", &is_csv).unwrap_err();
            assert!(err.0.contains("(it holds ground_truth.json)"), "{err}");
        }
        refuse_replacing("--out", &d.join("run/new.csv"), "a scene set", &is_csv).unwrap();
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
            assert!(err.to_string().contains(needle), "{err}");
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
        assert!(err.to_string().contains("is a file, not a folder"), "{err}");
        // A file where a missing parent folder would go.
        let err = refuse_out_file(&file.join("sub/res")).unwrap_err();
        let want = format!(
            "{} is a file, so no folder can be created under it",
            file.display()
        );
        assert!(err.to_string().contains(&want), "{err}");
        // The same file spelt as a folder.
        let slashed = PathBuf::from(format!("{}/", file.display()));
        let err = refuse_out_file(&slashed).unwrap_err();
        assert!(err.to_string().contains("is a file, not a folder"), "{err}");
        // The write check leaves nothing behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A symbolic link to a missing place cannot become the results folder (creating it fails
    /// with "File exists"), nor can a folder under it; a name longer than the file system allows
    /// cannot be looked up. Both are refused before any work.
    #[cfg(unix)]
    #[test]
    fn a_dangling_link_or_an_overlong_name_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        let nowhere = dir.path().join("nowhere/target");
        std::os::unix::fs::symlink(&nowhere, &link).unwrap();
        let want = format!(
            "{} is a symbolic link to {}, which does not exist",
            link.display(),
            nowhere.display()
        );
        for out in [link.clone(), link.join("sub")] {
            let err = refuse_out_file(&out).unwrap_err().to_string();
            assert!(err.contains(&want), "{err}");
        }
        let long = dir.path().join("a".repeat(300));
        let err = refuse_out_file(&long).unwrap_err().to_string();
        assert!(err.contains("cannot look up"), "{err}");
        // A link to a folder is a folder.
        let to_dir = dir.path().join("to-dir");
        std::os::unix::fs::symlink(dir.path(), &to_dir).unwrap();
        refuse_out_file(&to_dir.join("res")).unwrap();
    }

    /// A one-file output is checked in the folder it goes in: a missing folder under a file, or a
    /// folder no file can be created in (`/proc`), is refused; a file in a writable or missing
    /// folder, or in the working folder, passes.
    #[test]
    fn a_file_output_needs_a_folder_it_can_be_written_in() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("afile.txt");
        std::fs::write(&file, b"x").unwrap();
        refuse_unwritable_file("--out", &dir.path().join("new/x.png")).unwrap();
        refuse_unwritable_file("--out", Path::new("x.png")).unwrap();
        let err = refuse_unwritable_file("--out", &file.join("x.png"))
            .unwrap_err()
            .to_string();
        let want = format!(
            "--out {}/x.png: {} is a file, so no folder can be created under it",
            file.display(),
            file.display()
        );
        assert!(err.contains(&want), "{err}");
        if cfg!(target_os = "linux") {
            let err = refuse_unwritable_file("--out", Path::new("/proc/x.png"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("cannot create a file in /proc"), "{err}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A folder this process cannot create files in is refused before any work, for `--out`
    /// itself and for a missing `--out` under it. Root creates files anywhere, so the check only
    /// runs where the folder's permissions hold.
    #[cfg(unix)]
    #[test]
    fn an_out_where_nothing_can_be_written_is_a_usage_error() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let writable = tempfile::tempfile_in(&locked).is_ok();
        for out in [locked.clone(), locked.join("res")] {
            let got = refuse_out_file(&out);
            if writable {
                got.unwrap();
            } else {
                let err = got.unwrap_err().to_string();
                let want = format!("cannot create a file in {}", locked.display());
                assert!(err.contains(&want), "{err}");
            }
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
