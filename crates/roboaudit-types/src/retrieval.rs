//! Rows of the retrieval-audit input files (SPEC.md §1).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One execution of a stored experience in a query scene: a row of the execution log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionRecord {
    /// Identifier of the executed experience (must appear in the experiences file).
    pub experience_id: String,
    /// Identifier of the query scene (must appear in the scenes file).
    pub scene_id: String,
    /// Execution seed; `(experience_id, scene_id, seed)` is unique in a log.
    pub seed: i64,
    /// Whether the execution succeeded.
    pub success: bool,
}

/// How a query scene differs from the base scenes (seed 000 §II).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Perturbation {
    /// Only appearance changed (colours, textures, light, camera); physics identical.
    Appearance,
    /// Physical layout changed (object displacement, articulation, obstacles).
    Layout,
    /// A freshly drawn scene.
    Fresh,
}

impl Perturbation {
    /// The lower-case name used in files: `appearance`, `layout` or `fresh`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Appearance => "appearance",
            Self::Layout => "layout",
            Self::Fresh => "fresh",
        }
    }
}

/// A query scene: a row of the scenes file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SceneRecord {
    /// Unique scene identifier.
    pub scene_id: String,
    /// Kind of perturbation.
    pub perturbation: Perturbation,
    /// Layout level (0 = base layout; higher displaces objects further).
    pub layout_level: i64,
    /// Index of the appearance draw.
    pub appearance_draw: i64,
    /// Extra columns, kept verbatim as strings and ignored by the audit.
    pub extra: BTreeMap<String, String>,
}

/// When an experience was recorded: an integer order or an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RecordedAt {
    /// Integer order (larger = later).
    Order(i64),
    /// Seconds since the Unix epoch (UTC) parsed from RFC 3339, kept as (seconds, nanoseconds).
    Timestamp {
        /// Whole seconds since 1970-01-01T00:00:00Z.
        unix_seconds: i64,
        /// Nanoseconds within the second.
        nanos: u32,
    },
}

/// A stored experience: a row of the experiences file. File order is the library order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperienceRecord {
    /// Unique experience identifier.
    pub experience_id: String,
    /// Scene in which it was recorded, if known.
    pub base_scene_id: Option<String>,
    /// When it was recorded, if known (the recency rule needs it).
    pub recorded_at: Option<RecordedAt>,
    /// Success rate on its own base scene, in [0, 1], if measured.
    pub own_base_success: Option<f64>,
}

/// Whether an embedding belongs to a stored experience or a query scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbeddingKind {
    /// Embedding of a stored experience.
    Experience,
    /// Embedding of a query scene.
    Scene,
}

/// One embedding vector: a row of the embeddings file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingRecord {
    /// Name of the representation (e.g. `pixels32`, `dinov2`, `structural`).
    pub representation: String,
    /// Experience or scene.
    pub kind: EmbeddingKind,
    /// The experience or scene identifier.
    pub id: String,
    /// The vector; all finite, one dimension per representation.
    pub vector: Vec<f32>,
}

/// A user-supplied selection: in `scene_id`, the user's rule chose `experience_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectionRecord {
    /// Query scene.
    pub scene_id: String,
    /// Chosen experience.
    pub experience_id: String,
}

/// Validated inputs of a retrieval audit, as produced by `roboaudit-data`.
///
/// Invariants (checked by the loader, relied upon by the audit): ids are unique within
/// `scenes` and `experiences`; every execution names a known experience and scene; every
/// (experience, scene) cell of library × query scenes has at least one execution, except that
/// executions of an experience in its own base scene need not be in `scenes`; no duplicate
/// `(experience, scene, seed)`; each representation in `embeddings` covers every experience and
/// every scene exactly once with one dimension and finite values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievalInputs {
    /// Execution log rows, in file order.
    pub executions: Vec<ExecutionRecord>,
    /// Query scenes, in file order.
    pub scenes: Vec<SceneRecord>,
    /// Library experiences, in library (file) order.
    pub experiences: Vec<ExperienceRecord>,
    /// Embedding rows, in file order.
    pub embeddings: Vec<EmbeddingRecord>,
    /// Optional user selection log.
    pub selections: Option<Vec<SelectionRecord>>,
}

/// Which task a retrieval run folder was collected on, under which reuse mechanism (seed 000
/// §II), with its appearance-caused failures: written by `retrieval collect`'s harness into
/// `retrieval audit`'s `audit.json` and into the demo's, read by the report to name a section and
/// to set the audits of one task under two or more mechanisms side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMechanism {
    /// Task name (`stack`, `door`).
    pub task: String,
    /// `replay`, `policy` or `policy-dr`.
    pub mechanism: String,
    /// Appearance-caused failures of the collection (docs/methods.md §1.8), when measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub appearance_caused_failures: Option<AppearanceFailures>,
}

/// Appearance-caused failures of a reuse mechanism (seed 000 §II: "Policy+DR lowers
/// appearance-caused failures from 26% to 2%"; the paper gives no formula, this is the testbed
/// harness's, docs/methods.md §1.8): over the executions of each experience in the
/// appearance-perturbed query scenes built on *its own* base layout (the same physical state;
/// only camera, light and palette changed), the ones that failed. Only appearance differs from
/// the scene the experience was recorded in, so a failure there is caused by appearance (or by
/// the execution noise every seed carries: `own_base` says how often the experience fails in its
/// base scene itself). Counts, so equal rates compare exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppearanceFailures {
    /// Executions in own-layout appearance queries (all experiences, all seeds).
    pub executions: usize,
    /// Of those, the failures (≤ `executions`).
    pub failed: usize,
    /// Experiences with at least one own-layout appearance query (≤ the library size).
    pub experiences: usize,
    /// Own-base executions of those experiences, and how many of them failed.
    pub own_base: (usize, usize),
}

impl AppearanceFailures {
    /// `failed / executions` in [0, 1]; `None` when no experience had an own-layout appearance
    /// query.
    #[must_use]
    pub fn rate(&self) -> Option<f64> {
        (self.executions > 0).then(|| self.failed as f64 / self.executions as f64)
    }

    /// Failure rate of the same experiences in their own base scenes, in [0, 1]; `None` when
    /// there were none.
    #[must_use]
    pub fn own_base_rate(&self) -> Option<f64> {
        let (n, failed) = self.own_base;
        (n > 0).then(|| failed as f64 / n as f64)
    }
}

/// One line, as `retrieval collect`, the demo and an audit's `summary.md` print it:
/// `appearance-caused failures: F of N executions (P %) in appearance-perturbed queries on the
/// experience's own base layout (E experience(s)); own base scenes: F' of N' failed`, or that no
/// experience had such a query.
impl std::fmt::Display for AppearanceFailures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.rate() {
            None => f.write_str(
                "appearance-caused failures: undefined (no experience has an \
                 appearance-perturbed query on its own base layout)",
            ),
            Some(rate) => write!(
                f,
                "appearance-caused failures: {} of {} executions ({:.1} %) in \
                 appearance-perturbed queries on the experience's own base layout ({} \
                 experience(s)); own base scenes: {} of {} failed",
                self.failed,
                self.executions,
                100.0 * rate,
                self.experiences,
                self.own_base.1,
                self.own_base.0,
            ),
        }
    }
}
