//! Locating and loading the five retrieval-audit input files.

use std::path::{Path, PathBuf};

use roboaudit_types::RetrievalInputs;

use crate::DataError;
use crate::executions::read_execution_parts;
use crate::readers::{read_embeddings, read_experiences, read_scenes, read_selections};
use crate::validate::validate_with_sources;

/// Where the retrieval-audit inputs live (SPEC.md §1). Each path's extension picks its format.
///
/// `Default` gives empty paths, to be filled field by field (e.g. from command-line flags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetrievalPaths {
    /// Execution log: a file, or a directory of `part-NNNNNN.parquet` files.
    pub executions: PathBuf,
    /// Query scenes.
    pub scenes: PathBuf,
    /// Library experiences (row order = library order).
    pub experiences: PathBuf,
    /// Embeddings of every experience and scene, per representation.
    pub embeddings: PathBuf,
    /// Optional user selection log.
    pub selections: Option<PathBuf>,
}

impl RetrievalPaths {
    /// The standard layout of a run folder: `executions.parquet`, `scenes.csv`,
    /// `experiences.csv`, `embeddings.parquet`, and `selections.csv` when that file exists.
    /// Each file may be in any supported format (`<stem>.parquet`, `.csv`, `.jsonl` or `.ndjson`,
    /// first found in that order); an `executions/` part directory (written by
    /// [`crate::ExecutionLogWriter`]) is used unless `executions.parquet` exists, or it holds no
    /// parts and another `executions.<ext>` does. When a file is
    /// missing, the standard name is kept so the reader's error names it. Nothing is read here.
    ///
    /// ```
    /// let paths = roboaudit_data::RetrievalPaths::from_run_dir("runs/a");
    /// assert!(paths.scenes.ends_with("scenes.csv"));
    /// ```
    pub fn from_run_dir(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        // A part directory written by the resumable log writer wins over a CSV/JSONL copy, but
        // not over a consolidated `executions.parquet`.
        let parts = dir.join("executions");
        // An empty part directory (a collection stopped before its first part) does not hide
        // an executions file beside it; with nothing else there, it is kept so the error names it.
        let has_parts = crate::log_writer::list_parts(&parts).is_ok_and(|p| !p.is_empty());
        let executions = match find_stem(dir, "executions") {
            Some(file) if file.extension().is_some_and(|e| e == "parquet") => file,
            _ if has_parts => parts,
            Some(file) => file,
            None if parts.is_dir() => parts,
            None => dir.join("executions.parquet"),
        };
        Self {
            executions,
            scenes: find_stem(dir, "scenes").unwrap_or_else(|| dir.join("scenes.csv")),
            experiences: find_stem(dir, "experiences")
                .unwrap_or_else(|| dir.join("experiences.csv")),
            embeddings: find_stem(dir, "embeddings")
                .unwrap_or_else(|| dir.join("embeddings.parquet")),
            selections: find_stem(dir, "selections"),
        }
    }
}

/// The extensions [`RetrievalPaths::from_run_dir`] looks for, in the order it prefers them
/// (Parquet wins when a harness wrote several formats).
pub const RUN_FILE_EXTENSIONS: [&str; 4] = ["parquet", "csv", "jsonl", "ndjson"];

/// The first existing `dir/stem.<ext>` in the order of [`RUN_FILE_EXTENSIONS`].
fn find_stem(dir: &Path, stem: &str) -> Option<PathBuf> {
    RUN_FILE_EXTENSIONS
        .iter()
        .map(|ext| dir.join(format!("{stem}.{ext}")))
        .find(|p| p.is_file())
}

/// Reads all retrieval-audit inputs and checks them across files
/// ([`crate::validate_retrieval_inputs`]); the result satisfies every invariant documented on
/// [`RetrievalInputs`].
///
/// # Errors
/// The first [`DataError`] of the readers in the order experiences, scenes, executions,
/// embeddings, selections (the embeddings are read beside the other files), then of the
/// cross-file checks.
pub fn load_retrieval_inputs(paths: &RetrievalPaths) -> Result<RetrievalInputs, DataError> {
    // The embeddings (most of the text) beside the other files; the errors in file order.
    let ((experiences, scenes, executions), embeddings) = rayon::join(
        || {
            (
                read_experiences(&paths.experiences),
                read_scenes(&paths.scenes),
                read_execution_parts(&paths.executions),
            )
        },
        || read_embeddings(&paths.embeddings),
    );
    let (experiences, scenes) = (experiences?, scenes?);
    let (executions, sources) = executions?;
    let inputs = RetrievalInputs {
        experiences,
        scenes,
        executions,
        embeddings: embeddings?,
        selections: paths.selections.as_ref().map(read_selections).transpose()?,
    };
    validate_with_sources(&inputs, paths, &sources)?;
    Ok(inputs)
}
