//! Fitted Q evaluation (SPEC.md §3, seed 003 "RoboFQE"): estimate a target policy's value per task
//! from a fixed offline dataset with terminal success labels, and say how good the estimate is.
//!
//! Pipeline: [`inputs::FqeInputs`] (frozen features, proprioception, actions, tasks, labels) and
//! [`inputs::TargetActions`] (`M` target-policy action samples per frame) feed three estimators —
//! neural FQE ([`neural::fit_neural`], a hand-written network on the CPU), linear FQE ([`linear::fit_linear`], closed-form
//! ridge iterated) and the naive dataset-return average ([`naive::naive_estimate`]). Coverage
//! diagnostics ([`coverage`]) and metrics against ground truth ([`metrics`]) make the report.
//! Image features come from a frozen [`Encoder`] — raw 32×32 pixels, or a pretrained DINOv2
//! loaded from a local safetensors file ([`dinov2`], candle-transformers) — through an on-disk
//! feature cache ([`cache`]) keyed by encoder id, weights hash and frame ([`load`]).
//! Where only some episodes carry a success label, [`detector`] learns the label from their
//! terminal frames, reports its held-out accuracy and labels the rest.
//!
//! ```
//! use roboaudit_data::lerobot::{LeRobotDataset, read_policy_actions};
//! use roboaudit_fqe::synthetic::{ChainRun, write_chain_run};
//! use roboaudit_fqe::{LinearFqeConfig, LoadOptions, align_target_actions, fit_linear, load_lerobot};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! write_chain_run(dir.path(), &ChainRun { episodes: 40, ..ChainRun::default() })?;
//! let ds = LeRobotDataset::open(dir.path().join("dataset"))?;
//! let loaded = load_lerobot(&ds, &LoadOptions::push_defaults())?;
//! let actions = read_policy_actions(dir.path().join("policies/pi0.parquet"))?;
//! let target = align_target_actions(&loaded, &actions)?;
//! let config = LinearFqeConfig { gamma: 0.9, ..LinearFqeConfig::default() };
//! let fit = fit_linear(&loaded.inputs, &target, &config)?;
//! let v = fit.tasks[0].value.ok_or("no estimate")?;
//! assert!((0.0..=1.0).contains(&v));
//! # Ok(()) }
//! ```

use serde::Serialize;

mod bounded;
pub mod bounds_settings;
pub mod cache;
mod camera;
pub mod coverage;
pub mod detector;
/// The DINOv2 encoder, which lives in `roboaudit-encoders` (re-exported at its old path).
pub use roboaudit_encoders::dinov2;
pub mod encoder;
pub mod error;
pub mod evaluate;
pub mod ground_truth;
pub mod headline;
pub mod inputs;
pub(crate) mod linalg;
pub mod linear;
pub mod load;
pub mod metrics;
pub mod naive;
pub mod neural;
pub mod notes;
pub mod number;
pub mod output;
pub mod pca;
pub mod pipeline;
pub mod report;
pub mod request;
pub mod summary;
pub mod synthetic;
pub(crate) mod vector;

pub use coverage::{DEFAULT_COVERAGE_THRESHOLD, SupportIndex, TaskCoverage, coverage};
pub use detector::{Detection, DetectorConfig, DetectorError, detect};
pub use dinov2::{Dinov2Encoder, Dinov2Options};
pub use encoder::Encoder;
pub use error::{FqeError, Setting};
pub use evaluate::{
    FitConfig, TargetPolicy, fit_all, fit_all_with_progress, fit_work, score, score_recorded,
};
pub use ground_truth::{GroundTruth, read_ground_truth, read_ground_truth_fingerprinted};
pub use inputs::{EpisodeSpan, FqeInputs, InputPart, TargetActions};
pub use linear::{
    ActionTerms, LinearFit, LinearFqeConfig, LinearSolver, LinearSystems, fit_linear,
};
pub use load::{
    FrameFeatures, LoadOptions, LoadedDataset, align_target_actions, behaviour_actions,
    check_target_actions, component_rows, load_lerobot, load_lerobot_with_progress,
};
pub use naive::naive_estimate;
pub use neural::{
    CurvePoint, NeuralFit, NeuralFqeConfig, PROGRESS_EVERY, QHead, fit_neural,
    fit_neural_replicate, fit_neural_with_progress,
};
pub use output::{REPORT_FILE, SUMMARY_FILE, write_report};
pub use pipeline::{Provenance, Truth, fit_and_score};
pub use report::{DatasetIdentity, FqeReport, Interval, SCHEMA, fingerprint};
pub use request::{FitObserver, FitRequest, RequestError, fit_request};

/// One estimate `V̂(π, l)` of a task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TaskEstimate {
    /// Task index `l`.
    pub task: usize,
    /// The estimate (`None` when the task has no episodes).
    pub value: Option<f64>,
}
