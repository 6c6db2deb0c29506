//! `roboaudit validate KIND FILE`: reads an input file with the reader the audits use and reports
//! what it holds, or the reader's error (file, row, column; exit code 3). The Python writers
//! (`roboaudit.writers`) call it after writing, so a harness's file is checked by the same code
//! that will later read it.

use anyhow::Result;
use clap::{Args, ValueEnum};
use roboaudit_data::lerobot::read_policy_actions;
use roboaudit_data::{
    read_embeddings, read_executions, read_experiences, read_memory_records, read_scenes,
    read_selections,
};
use std::path::PathBuf;

/// The input files `validate` reads.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Kind {
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

/// Arguments of `roboaudit validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// What the file is.
    #[arg(value_enum)]
    pub kind: Kind,
    /// The file (CSV, Parquet or JSONL, by extension; an execution log may be a folder of parts).
    pub file: PathBuf,
}

/// Reads `args.file` as `args.kind` and prints one line: the file and how many rows it holds.
///
/// # Errors
/// The reader's [`roboaudit_data::DataError`] (exit code 3); only the file's own checks run,
/// not the cross-file ones of a whole audit input.
pub fn run(args: &ValidateArgs) -> Result<()> {
    let file = &args.file;
    let summary = match args.kind {
        Kind::Executions => format!("{} executions", read_executions(file)?.len()),
        Kind::Scenes => format!("{} scenes", read_scenes(file)?.len()),
        Kind::Experiences => format!("{} experiences", read_experiences(file)?.len()),
        Kind::Embeddings => format!("{} embeddings", read_embeddings(file)?.len()),
        Kind::Selections => format!("{} selections", read_selections(file)?.len()),
        Kind::MemoryRecords => format!("{} memory records", read_memory_records(file)?.len()),
        Kind::PolicyActions => {
            let a = read_policy_actions(file)?;
            format!(
                "{} frames x {} samples, action width {}",
                a.index.len(),
                a.samples,
                a.action_dim
            )
        }
    };
    outln!("ok: {}: {summary}", file.display())?;
    Ok(())
}
