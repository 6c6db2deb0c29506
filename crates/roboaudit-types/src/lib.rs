//! Shared record types of roboaudit (serde only, no I/O).
//!
//! These are the rows of the retrieval-audit input contract (issue "Retrieval audit engine",
//! SPEC.md §1) after parsing. `roboaudit-data` reads and validates them; the audits consume them.
//! [`seed`] holds the hashing primitives of every seeded stream.

mod retrieval;
pub mod seed;

pub use retrieval::{
    EmbeddingKind, EmbeddingRecord, ExecutionRecord, ExperienceRecord, Perturbation, RecordedAt,
    RetrievalInputs, SceneRecord, SelectionRecord,
};
