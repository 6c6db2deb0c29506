//! The `roboaudit.fqe.v1` report: per task and policy the estimate of each estimator (neural with
//! its spread over training seeds), ground truth when given, coverage flags, and metrics.

use std::fmt::Write as _;
use std::path::PathBuf;

use roboaudit_data::lerobot::LeRobotDataset;
use serde::{Deserialize, Serialize};

use crate::FqeError;
use crate::coverage::TaskCoverage;
use crate::linear::LinearFqeConfig;
use crate::metrics::Metrics;
use crate::neural::{CurvePoint, NeuralFqeConfig};

/// Schema tag of `fqe.json`.
pub const SCHEMA: &str = "roboaudit.fqe.v1";

/// Estimator names, in report order.
pub const ESTIMATORS: [&str; 3] = ["neural", "linear", "naive"];

/// Spread of an estimate over training seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedSpread {
    /// Mean over seeds (the reported estimate).
    pub mean: f64,
    /// Sample standard deviation over seeds (`None` with one seed).
    pub std: Option<f64>,
    /// Smallest and largest seed value.
    pub min: f64,
    /// Largest seed value.
    pub max: f64,
    /// One value per seed, in seed order.
    pub seeds: Vec<f64>,
    /// Episode-bootstrap interval of the estimate when bootstrap refits ran
    /// ([`crate::FitConfig::bootstrap`]); absent from the file otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
}

/// A percentile interval over episode-bootstrap refits (SPEC §3): the 2.5% and 97.5% quantiles
/// (linear interpolation between order statistics) of the refits' estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end (2.5% quantile).
    pub lo: f64,
    /// Upper end (97.5% quantile).
    pub hi: f64,
    /// Nominal coverage, 0.95.
    pub level: f64,
    /// Refits the quantiles come from.
    pub replicates: usize,
}

impl Interval {
    /// The 95% percentile interval of `values` (`None` with fewer than 2 finite values).
    pub fn percentile(values: &[f64]) -> Option<Self> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.len() < 2 {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = p * (v.len() - 1) as f64;
            let k = h.floor() as usize;
            let next = v[(k + 1).min(v.len() - 1)];
            v[k] + (h - h.floor()) * (next - v[k])
        };
        Some(Self {
            lo: q(0.025),
            hi: q(0.975),
            level: 0.95,
            replicates: v.len(),
        })
    }
}

impl SeedSpread {
    /// Spread of `values` (`None` when empty).
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = (values.len() > 1)
            .then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
        Some(Self {
            mean,
            std,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            seeds: values.to_vec(),
            interval: None,
        })
    }
}

/// Ground truth of one (policy, task) from rollouts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthCell {
    /// `V^π = E[γ^{T−1} success]`.
    pub v_pi: f64,
    /// Success rate.
    pub success_rate: f64,
    /// Rollout episodes behind the numbers.
    pub n_episodes: Option<u64>,
}

/// ARE of each estimator for one cell; `None` when `V^π = 0` (undefined, flagged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellErrors {
    /// Neural FQE (seed mean).
    pub neural: Option<f64>,
    /// Linear FQE.
    pub linear: Option<f64>,
    /// Naive average.
    pub naive: Option<f64>,
    /// `V^π = 0`: ARE undefined.
    pub undefined: bool,
}

/// One (policy, task) cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Task index.
    pub task_index: usize,
    /// Task text.
    pub task: String,
    /// Episodes of this task in the dataset.
    pub dataset_episodes: usize,
    /// Neural FQE over seeds (`None` when not run or no episodes).
    pub neural: Option<SeedSpread>,
    /// Linear FQE.
    pub linear: Option<f64>,
    /// Naive dataset-return average.
    pub naive: Option<f64>,
    /// Coverage of the target policy's actions on this task.
    pub coverage: TaskCoverage,
    /// Ground truth when given.
    pub truth: Option<TruthCell>,
    /// ARE per estimator when ground truth is given.
    pub are: Option<CellErrors>,
}

/// One target policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyReport {
    /// Policy name.
    pub policy: String,
    /// Target-action samples per frame `M`.
    pub samples: usize,
    /// Per task.
    pub tasks: Vec<Cell>,
    /// Neural learning curve per seed.
    pub curves: Vec<Vec<CurvePoint>>,
    /// Gradient steps each seed's fit made when `--steps auto` let it stop before the cap
    /// ([`crate::NeuralFqeConfig::auto_steps`]); empty (and absent from the file) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neural_steps: Vec<usize>,
    /// Episode-bootstrap interval of the task-averaged neural estimate (each refit's mean over
    /// the tasks it estimates); absent without bootstrap refits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neural_interval: Option<Interval>,
    /// Whether linear FQE reached its tolerance.
    pub linear_converged: bool,
    /// Fixed-point iterations linear FQE used.
    pub linear_iterations: usize,
    /// 64-bit FNV-1a ([`fingerprint`], hex) of the policy-actions file the target actions were
    /// read from (set by `fqe fit`): `fqe evaluate` refuses ground truth whose actions file for
    /// this policy holds other bytes. `None` for the behaviour policy, a fit made through the
    /// library, or a report without the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions_fingerprint: Option<String>,
}

/// Metrics of one estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimatorMetrics {
    /// Estimator name.
    pub estimator: String,
    /// Suite level: each policy's estimate and truth averaged over tasks (equal weight), for the
    /// policies with an estimate on every task that has ground truth; ARE over all cells.
    pub suite: Metrics,
    /// Per task, across policies.
    pub tasks: Vec<Metrics>,
    /// Suite metrics per training seed (neural only).
    pub suite_per_seed: Vec<Metrics>,
    /// Suite metrics over the policies inside the data's support: those with no task flagged
    /// by the coverage diagnostics (seed 003 App. A.4: FQE cannot evaluate a policy whose actions
    /// the data never took, so a ranking that includes one mixes two questions). `None` when no
    /// policy is flagged (it would equal `suite`) or when every policy is, or the field is missing.
    #[serde(default)]
    pub suite_in_support: Option<InSupport>,
}

/// [`EstimatorMetrics::suite_in_support`]: the policies kept and their metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InSupport {
    /// Policies left out (a task flagged out of support), in report order.
    pub excluded: Vec<String>,
    /// Suite metrics over the other policies (ARE over their cells).
    pub metrics: Metrics,
}

/// Which dataset a fit was made on ([`FqeReport::dataset`]): scoring its estimates against the
/// ground truth of another run would compare the values of other policies, or of the same names
/// on other data, without any sign that it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetIdentity {
    /// The dataset folder, as given to the fit.
    pub path: PathBuf,
    /// Episodes in its metadata.
    pub episodes: usize,
    /// 64-bit FNV-1a (hex) of `meta/info.json`'s bytes followed by every episode's index,
    /// length and tasks from the episodes metadata: a copy of the dataset has the same one, and
    /// two collections that differ in any episode's length almost surely do not.
    pub fingerprint: String,
}

impl DatasetIdentity {
    /// The identity of `ds` (reads `meta/info.json` again; no data file).
    ///
    /// # Errors
    /// [`FqeError::Io`] when `meta/info.json` cannot be read.
    pub fn of(ds: &LeRobotDataset) -> Result<Self, FqeError> {
        let info = ds.root().join("meta/info.json");
        let mut bytes = std::fs::read(&info).map_err(|e| FqeError::io("read", &info, e))?;
        let mut episodes = String::new();
        for e in ds.episodes() {
            let length = e.length.map_or_else(|| "?".to_owned(), |l| l.to_string());
            let _ = writeln!(
                episodes,
                "{}\t{length}\t{}",
                e.index,
                e.tasks.join("\u{1f}")
            );
        }
        bytes.extend_from_slice(episodes.as_bytes());
        Ok(Self {
            path: ds.root().to_path_buf(),
            episodes: ds.episodes().len(),
            fingerprint: fingerprint(&bytes),
        })
    }

    /// Whether `other` is the same dataset (same fingerprint and episode count; the folder may
    /// have moved).
    pub fn same_dataset(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint && self.episodes == other.episodes
    }

    /// `PATH (N episodes, fingerprint F)`, for messages.
    pub fn describe(&self) -> String {
        format!(
            "{} ({} episodes, fingerprint {})",
            self.path.display(),
            self.episodes,
            self.fingerprint
        )
    }
}

/// The whole report (`fqe.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FqeReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Discount `γ`.
    pub gamma: f64,
    /// Training seeds of neural FQE.
    pub seeds: Vec<u64>,
    /// Task texts.
    pub tasks: Vec<String>,
    /// Registered coverage threshold.
    pub coverage_threshold: f64,
    /// Neural settings (`None` when neural FQE was skipped).
    pub neural_config: Option<NeuralFqeConfig>,
    /// Linear settings.
    pub linear_config: LinearFqeConfig,
    /// Free-form description of the inputs (dataset, encoder, components).
    pub inputs: serde_json::Value,
    /// Per policy.
    pub policies: Vec<PolicyReport>,
    /// Metrics per estimator, present when ground truth was given.
    pub metrics: Vec<EstimatorMetrics>,
    /// `(policy, task)` cells flagged out of support.
    pub coverage_flags: Vec<(String, String)>,
    /// Warnings a reader must see beside the numbers (e.g. a neural fit too short to converge, estimates
    /// outside `[0, 1]`); empty when the field is missing.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Length in frames of the dataset's median episode (the upper middle one for an even count),
    /// which bounds how many Bellman backups carry a terminal label to an episode's initial inputs
    /// ([`crate::notes::reliability_notes`]). `None` when the field is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_episode_frames: Option<usize>,
    /// The dataset the estimates were fitted on (set by the caller that opened it; `fqe
    /// evaluate` refuses ground truth of another run's dataset). `None` when the field is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<DatasetIdentity>,
    /// 64-bit FNV-1a (hex, [`fingerprint`]) of the ground-truth file the estimates
    /// were last scored against (by the fit or `fqe evaluate`): `evaluate` accepts that very
    /// file again whatever
    /// dataset lies beside it (a fit on another dataset than the run's, `fit --run RUN
    /// --dataset OTHER`). Absent when the fit had no ground truth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<String>,
}

impl FqeReport {
    /// The camera feature the fit's frame features were encoded from: `KEY` of the
    /// `image:KEY` that a LeRobot fit records in `inputs.load.features`; `None` when the
    /// features came from a vector column, from nothing, or from inputs described otherwise
    /// (a synthetic fit). The one reader of that description, so that other crates need not
    /// know its keys.
    #[must_use]
    pub fn image_feature(&self) -> Option<&str> {
        self.inputs
            .pointer("/load/features")
            .and_then(serde_json::Value::as_str)
            .and_then(|f| f.strip_prefix("image:"))
    }
}

/// The fingerprint [`FqeReport::ground_truth`] and [`DatasetIdentity::fingerprint`] record.
pub use roboaudit_types::seed::fingerprint;

#[cfg(test)]
mod tests {
    use super::Interval;

    #[test]
    fn percentile_interval_interpolates_like_numpy() {
        // numpy.percentile([0, 1, 2, 3], [2.5, 97.5]) = [0.075, 2.925]; NaN is left out.
        let i = Interval::percentile(&[3.0, f64::NAN, 0.0, 2.0, 1.0]).unwrap();
        assert!(
            (i.lo - 0.075).abs() < 1e-12 && (i.hi - 2.925).abs() < 1e-12,
            "{i:?}"
        );
        assert_eq!(i.replicates, 4);
        // numpy.percentile(range(1, 42), [2.5, 97.5]) = [2, 40].
        let v: Vec<f64> = (1..=41).map(f64::from).collect();
        let i = Interval::percentile(&v).unwrap();
        assert_eq!((i.lo, i.hi), (2.0, 40.0));
        assert!(Interval::percentile(&[1.0]).is_none());
    }
}
