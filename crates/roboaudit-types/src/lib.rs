//! Shared record types of roboaudit (serde only, no I/O).
//!
//! These are the rows of the retrieval-audit input contract (docs/methods.md §1) and of the
//! counterfactual-memory-audit records (§2) after parsing. `roboaudit-data` reads and validates them; the audits consume them.
//! [`error_chain`] renders an error with its causes, the one way every crate flattens an error
//! into text. [`seed`] holds the hashing primitives of every seeded stream; [`task`] the testbed's task
//! identities, which result files of every audit name.

mod error;
mod memory;
mod retrieval;
pub mod seed;
pub mod task;

/// The one glyph every table, summary and console line prints for a value that is not defined
/// (an undefined correlation, a missing estimate, a latency never measured): an em dash, never
/// `0`, `NaN` or an empty cell.
pub const NO_VALUE: &str = "—";

pub use error::error_chain;
pub use memory::{MemoryLabel, MemoryRecord};
pub use retrieval::{
    AppearanceFailures, EmbeddingKind, EmbeddingRecord, ExecutionRecord, ExperienceRecord,
    Perturbation, RecordedAt, RetrievalInputs, SceneRecord, SelectionRecord, TaskMechanism,
};
