//! Locating and loading the five retrieval-audit input files.

use std::path::{Path, PathBuf};

use roboaudit_types::RetrievalInputs;

use crate::executions::read_executions;
use crate::readers::{read_embeddings, read_experiences, read_scenes, read_selections};
use crate::{DataError, validate_retrieval_inputs};

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
    /// When `executions.parquet` is absent but an `executions/` directory exists (written by
    /// [`crate::ExecutionLogWriter`]), that directory is used instead. Nothing is read here.
    ///
    /// ```
    /// let paths = roboaudit_data::RetrievalPaths::from_run_dir("runs/a");
    /// assert!(paths.scenes.ends_with("scenes.csv"));
    /// ```
    pub fn from_run_dir(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let single = dir.join("executions.parquet");
        let parts = dir.join("executions");
        let selections = dir.join("selections.csv");
        Self {
            executions: if !single.exists() && parts.is_dir() {
                parts
            } else {
                single
            },
            scenes: dir.join("scenes.csv"),
            experiences: dir.join("experiences.csv"),
            embeddings: dir.join("embeddings.parquet"),
            selections: selections.is_file().then_some(selections),
        }
    }
}

/// Reads all retrieval-audit inputs and checks them across files
/// ([`validate_retrieval_inputs`]); the result satisfies every invariant documented on
/// [`RetrievalInputs`].
///
/// # Errors
/// The first [`DataError`] of any reader, then of the cross-file checks.
pub fn load_retrieval_inputs(paths: &RetrievalPaths) -> Result<RetrievalInputs, DataError> {
    let inputs = RetrievalInputs {
        experiences: read_experiences(&paths.experiences)?,
        scenes: read_scenes(&paths.scenes)?,
        executions: read_executions(&paths.executions)?,
        embeddings: read_embeddings(&paths.embeddings)?,
        selections: paths.selections.as_ref().map(read_selections).transpose()?,
    };
    validate_retrieval_inputs(&inputs, paths)?;
    Ok(inputs)
}
