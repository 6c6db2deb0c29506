//! Data layer of roboaudit: readers, validators and writers for the retrieval-audit input
//! files (SPEC.md §1 inputs) in CSV, Parquet and JSONL.
//!
//! - One reader per file kind ([`read_executions`], [`read_scenes`], [`read_experiences`],
//!   [`read_embeddings`], [`read_selections`]) returning the record types of
//!   `roboaudit-types`; the format follows the extension ([`Format`]).
//! - [`load_retrieval_inputs`] reads the five files named by [`RetrievalPaths`] and checks
//!   them across files ([`validate_retrieval_inputs`]), so the audit can trust every
//!   invariant documented on [`RetrievalInputs`](roboaudit_types::RetrievalInputs).
//! - Writers for every kind and format, plus [`ExecutionLogWriter`] for chunked, crash-safe
//!   execution logs.
//!
//! Every error is a [`DataError`] naming the file, and where applicable the 1-based data row
//! and the column. Parquet files are streamed by record batch, decoding only needed columns.
//!
//! ```no_run
//! use roboaudit_data::{RetrievalPaths, load_retrieval_inputs};
//! let inputs = load_retrieval_inputs(&RetrievalPaths::from_run_dir("runs/a"))?;
//! println!("{} executions", inputs.executions.len());
//! # Ok::<(), roboaudit_data::DataError>(())
//! ```

pub mod atomic;
mod cell;
mod error;
mod executions;
mod format;
pub mod lerobot;
mod loader;
mod log_writer;
mod memory_records;
pub mod outpath;
mod readers;
pub mod request;
mod rfc3339;
mod source;
mod table;
mod validate;
mod writers;

pub use error::DataError;
pub use executions::read_executions;
pub use format::Format;
pub use loader::{RUN_FILE_EXTENSIONS, RetrievalPaths, load_retrieval_inputs};
pub use log_writer::ExecutionLogWriter;
pub use memory_records::{MemoryLabel, MemoryRecord, read_memory_records, write_memory_records};
pub use readers::{read_embeddings, read_experiences, read_scenes, read_selections};
pub use validate::validate_retrieval_inputs;
pub use writers::{
    write_embeddings, write_embeddings_parquet, write_executions, write_executions_parquet,
    write_experiences, write_experiences_csv, write_scenes, write_scenes_csv, write_selections,
};
