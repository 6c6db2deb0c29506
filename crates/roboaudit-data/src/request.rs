//! The `validate` request: one input file read with the reader the audits use, and what it
//! holds. Only the file's own checks run, not the cross-file ones of a whole audit input
//! ([`crate::validate_retrieval_inputs`]); nothing is printed here.

use std::path::PathBuf;

use crate::lerobot::read_policy_actions;
use crate::{
    DataError, read_embeddings, read_executions, read_experiences, read_memory_records,
    read_scenes, read_selections,
};

/// The input files `validate` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum InputKind {
    /// A retrieval execution log (`retrieval audit --executions`).
    Executions,
    /// A retrieval scenes file (`--scenes`).
    Scenes,
    /// A retrieval experiences file (`--experiences`).
    Experiences,
    /// A retrieval embeddings file (`--embeddings`).
    Embeddings,
    /// A user selection log (`selections` in a `--run` folder).
    Selections,
    /// Counterfactual-memory-audit records (`memory audit --records`).
    MemoryRecords,
    /// A policy-actions file (`fqe fit --policy-actions NAME=FILE`).
    PolicyActions,
}

/// A `validate` request: which reader reads which file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ValidateRequest {
    /// What the file is.
    #[cfg_attr(feature = "clap", arg(value_enum))]
    pub kind: InputKind,
    /// The file (CSV, Parquet or JSONL, by extension; an execution log may be a folder of parts).
    pub file: PathBuf,
}

impl ValidateRequest {
    /// Reads the file as its kind and says what it holds: how many rows (`12 scenes`), or for a
    /// policy-actions file `F frames x S samples, action width W`.
    ///
    /// # Errors
    /// The reader's [`DataError`], naming the file, the row and the column.
    pub fn summary(&self) -> Result<String, DataError> {
        let file = &self.file;
        Ok(match self.kind {
            InputKind::Executions => format!("{} executions", read_executions(file)?.len()),
            InputKind::Scenes => format!("{} scenes", read_scenes(file)?.len()),
            InputKind::Experiences => format!("{} experiences", read_experiences(file)?.len()),
            InputKind::Embeddings => format!("{} embeddings", read_embeddings(file)?.len()),
            InputKind::Selections => format!("{} selections", read_selections(file)?.len()),
            InputKind::MemoryRecords => {
                format!("{} memory records", read_memory_records(file)?.len())
            }
            InputKind::PolicyActions => {
                let a = read_policy_actions(file)?;
                format!(
                    "{} frames x {} samples, action width {}",
                    a.index.len(),
                    a.samples,
                    a.action_dim
                )
            }
        })
    }
}
