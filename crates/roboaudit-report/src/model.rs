//! The serializable report model (`schema = "roboaudit.report.v1"`): every audit's own report,
//! unchanged, plus the data its plots need and the list of plots.

use roboaudit_fqe::FqeReport;
use roboaudit_memory::MemoryAudit;
use roboaudit_retrieval::AuditReport;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Schema tag of `report.json`.
pub const SCHEMA: &str = "roboaudit.report.v1";

/// One report over any set of audit outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The folders read, in the order given, with what each held.
    pub sources: Vec<Source>,
    /// Retrieval audits (SPEC.md §1), one per audited task, in input order.
    pub retrieval: Vec<RetrievalSection>,
    /// Counterfactual memory audits (SPEC.md §2), in input order.
    pub memory: Vec<MemorySection>,
    /// Fitted Q evaluations (SPEC.md §3), in input order.
    pub fqe: Vec<FqeSection>,
    /// Every plot the report can draw, with whether its data is present (see [`PlotSpec`]).
    pub plots: Vec<PlotSpec>,
    /// What the reader should know about the inputs: folders given twice, parts of a recognised
    /// file that were not read. Printed to stderr by `roboaudit report` and shown on the page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What an input folder held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// `audit.json` of `roboaudit retrieval audit` (`roboaudit.retrieval.v1`).
    RetrievalAudit,
    /// `audit.json` of `roboaudit demo` (`roboaudit.demo.v1`), one retrieval audit per task.
    Demo,
    /// A retrieval run folder (executions, scenes): the transfer matrix of an audit given beside it.
    RetrievalRun,
    /// `audit.json` of `roboaudit memory audit` (`roboaudit.memory.v1`).
    MemoryAudit,
    /// `fqe.json` of `roboaudit fqe fit` (`roboaudit.fqe.v1`).
    Fqe,
}

/// One input folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The folder as given.
    pub path: PathBuf,
    /// What it held (a folder may hold several outputs, e.g. a memory audit and `fqe.json`).
    pub kinds: Vec<SourceKind>,
}

/// The transfer matrix `P[e, s]` (SPEC.md §1) of one retrieval audit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferMatrix {
    /// Experience ids, library order (rows).
    pub experiences: Vec<String>,
    /// Query scene ids, scene file order (columns).
    pub scenes: Vec<String>,
    /// `success[e][s]` = mean success over seeds, in [0, 1].
    pub success: Vec<Vec<f64>>,
    /// Executions behind the matrix (library × query cells only).
    pub executions: usize,
    /// Row order of the heatmap: experience indices by quality `q(e)` (mean over all query
    /// scenes) descending, compared exactly from the success counts (SPEC.md §0), ties in
    /// library order.
    pub row_order: Vec<usize>,
    /// Column order: query-scene indices by mean success over the library descending, compared
    /// exactly, ties in scene file order.
    pub column_order: Vec<usize>,
}

/// One retrieval audit (one task of a demo, or one `retrieval audit` output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievalSection {
    /// Display name: the demo task, else the audit folder's name.
    pub name: String,
    /// Anchor id in the HTML page (`retrieval-<name>`), unique in the report.
    pub id: String,
    /// The `audit.json` read.
    pub audit_file: PathBuf,
    /// The run folder the transfer matrix was read from, when found.
    pub run_dir: Option<PathBuf>,
    /// The transfer matrix; `null` when no run folder was found (see `transfer_note`).
    pub transfer: Option<TransferMatrix>,
    /// Why `transfer` is null.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub transfer_note: Option<String>,
    /// The audit, unchanged (`roboaudit.retrieval.v1`).
    pub audit: AuditReport,
    /// The task and reuse mechanism (`replay`, `policy`, `policy-dr`) of a demo task; absent for
    /// a `retrieval audit` output, whose inputs do not say. Sections of one task under several
    /// mechanisms are compared side by side.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mechanism: Option<TaskMechanism>,
}

pub use roboaudit_types::TaskMechanism;

/// One counterfactual memory audit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemorySection {
    /// Display name: the audit folder's name.
    pub name: String,
    /// Anchor id (`memory-<name>`), unique in the report.
    pub id: String,
    /// The `audit.json` read.
    pub audit_file: PathBuf,
    /// The audit, unchanged (`roboaudit.memory.v1`).
    pub audit: MemoryAudit,
    /// `control.json` of `roboaudit memory control` in the same folder.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub control: Option<roboaudit_memory::RouteControl>,
    /// `interventions.json` of `roboaudit memory intervene` in the same folder.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub interventions: Option<roboaudit_memory::interventions::InterventionStudy>,
    /// `natural.json` of `roboaudit memory natural` in the same folder: an observational
    /// cohort, shown apart from the constructed pairs and never pooled with them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub natural: Option<roboaudit_memory::natural::NaturalStudy>,
}

/// One fitted Q evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FqeSection {
    /// Display name: the folder's name.
    pub name: String,
    /// Anchor id (`fqe-<name>`), unique in the report.
    pub id: String,
    /// The `fqe.json` read.
    pub file: PathBuf,
    /// The report, unchanged (`roboaudit.fqe.v1`).
    pub report: FqeReport,
    /// First and last camera frames per task of the dataset the estimates were fitted on, when
    /// the dataset was found (see `frames_note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<FrameStrip>,
    /// Why `frames` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames_note: Option<String>,
}

/// What an FQE section evaluated, seen through its camera: for each task, the first and last
/// frames of the task's first episode, as small thumbnails embedded in the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameStrip {
    /// The dataset folder the frames were read from (its fingerprint equals the fit's).
    pub dataset: PathBuf,
    /// The camera feature shown: the fit's image feature, else the dataset's first camera.
    pub camera: String,
    /// One row per task of the report that has an episode, in the report's task order.
    pub tasks: Vec<TaskFrames>,
}

/// One task's row of a [`FrameStrip`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskFrames {
    /// Task text.
    pub task: String,
    /// `episode_index` of the task's first episode in the metadata.
    pub episode: i64,
    /// Its first frame (index 0) and its last, in that order.
    pub frames: Vec<Thumbnail>,
}

/// One frame as an embedded image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thumbnail {
    /// `frame_index` within the episode.
    pub frame: i64,
    /// Thumbnail width in pixels (at most [`crate::THUMBNAIL_HEIGHT`] high, aspect kept).
    pub width: u32,
    /// Thumbnail height in pixels.
    pub height: u32,
    /// The thumbnail as an 8-bit RGB PNG, base64 (standard alphabet, padded).
    pub png_base64: String,
}

/// The kinds of plot the report draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    /// Transfer matrix heat map, rows by experience quality, columns by scene difficulty.
    TransferHeatmap,
    /// Each rule's selection distribution against the oracle's.
    Selection,
    /// The frequency-matched shuffle envelope with each rule's success.
    ShuffleEnvelope,
    /// Pooled vs within-query AUROC per rule and representation.
    Auroc,
    /// Concentration across random sub-libraries.
    SubsetConcentration,
    /// Memory audit: pair × seed branch choices.
    MemoryReliability,
    /// Memory audit: matched-world values `V(m, w)`.
    MatchedWorld,
    /// FQE: estimates against ground truth with seed spread.
    FqeEstimates,
    /// FQE: neural learning curves.
    FqeCurves,
    /// FQE: first and last camera frames per task (a strip of thumbnails, not a chart).
    FqeFrames,
}

/// One plot of the report: drawn in `index.html` when `available`, else replaced by `note`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotSpec {
    /// Element id of the `<figure>` in `index.html`, unique (`<section id>-<kind>`).
    pub id: String,
    /// What is drawn.
    pub kind: PlotKind,
    /// Id of the section the plot belongs to.
    pub section: String,
    /// Title.
    pub title: String,
    /// One sentence saying how to read the plot.
    pub caption: String,
    /// Horizontal axis label, with units.
    pub x_label: String,
    /// Vertical axis label, with units.
    pub y_label: String,
    /// Whether the data the plot needs is present.
    pub available: bool,
    /// Why the plot is skipped, when it is.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}
