//! `fqe fit`'s options as a user types them ([`FitOptions`]), and the typed [`FitRequest`] they
//! name: the dataset resolved from the run folder, `NAME=FILE` specs split, the step budget,
//! the solver and head names, the cache folder's default. The checks that need no file (the
//! settings' bounds live in the config types' `validate`; the threads and the paths here) come
//! before any dataset pass.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::bounds_settings::check_threads;
use crate::{
    ActionTerms, FitConfig, LinearFqeConfig, LinearSolver, NeuralFqeConfig, QHead, Setting,
};

use super::{DEFAULT_GAMMA, FitRequest, RequestError};

/// Neural gradient steps per fit (`--steps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steps {
    /// Stop each fit once its estimate has settled, at most [`FitOptions::max_steps`].
    Auto,
    /// Exactly this many steps.
    Fixed(usize),
}

/// A `--steps` value that is neither `auto` nor a number of steps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected `auto` or a number of steps, got `{0}`")]
pub struct ParseStepsError(pub String);

impl FromStr for Steps {
    type Err = ParseStepsError;

    /// `auto`, or a count that fits `usize` (bounds are [`NeuralFqeConfig::validate`]'s).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "auto" {
            return Ok(Steps::Auto);
        }
        s.parse()
            .map(Steps::Fixed)
            .map_err(|_| ParseStepsError(s.to_owned()))
    }
}

/// Every option of `fqe fit`, as typed; [`FitOptions::request`] turns them into a
/// [`FitRequest`]. The settings' meanings and bounds are those of [`NeuralFqeConfig`],
/// [`LinearFqeConfig`] and [`FitConfig`] (methods document §3).
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    /// A folder written by `fqe collect` (`dataset/`, `policies/`, `ground_truth.json`).
    pub run: Option<PathBuf>,
    /// A LeRobot dataset (instead of, or overriding, `RUN/dataset`).
    pub dataset: Option<PathBuf>,
    /// Target policies as `NAME=FILE` (split at the first `=`).
    pub policy_actions: Vec<String>,
    /// Also evaluate the behaviour policy beside `policy_actions`.
    pub behaviour: bool,
    /// Labels file; `None`: `next.success`, else the last `next.reward` ≥ 0.5.
    pub labels: Option<PathBuf>,
    /// Ground-truth file; `None`: `RUN/ground_truth.json` when it exists.
    pub ground_truth: Option<PathBuf>,
    /// Output folder (the feature cache's default parent).
    pub out: PathBuf,
    /// Discount γ in `[0, 1]`; `None`: the ground truth's, else [`DEFAULT_GAMMA`].
    pub gamma: Option<f64>,
    /// Neural training seeds, each once.
    pub seeds: Vec<u64>,
    /// Neural gradient steps per fit.
    pub steps: Steps,
    /// The cap of [`Steps::Auto`].
    pub max_steps: usize,
    /// Episode-bootstrap refits per policy (0: none).
    pub bootstrap: usize,
    /// Threads of the fit's pool, `1..=`[`crate::bounds_settings::MAX_THREADS`]; `None`: rayon's
    /// default.
    pub threads: Option<usize>,
    /// Target network copy period (steps).
    pub target_update: usize,
    /// Polyak rate τ of the target network in `[0, 1]` (0: copy every `target_update` steps).
    pub target_tau: f64,
    /// Neural AdamW learning rate at step 0, in `(0, 1]`.
    pub learning_rate: f64,
    /// Neural mini-batch rows.
    pub batch_size: usize,
    /// Output head of the neural Q network: `sigmoid` or `linear`.
    pub head: String,
    /// Skip neural FQE (linear and naive only).
    pub no_neural: bool,
    /// Linear FQE ridge λ (per transition), finite and > 0.
    pub ridge: f64,
    /// Linear FQE solver: `lstd` or `iterated`.
    pub linear_solver: String,
    /// Linear FQE action terms: `linear` or `quadratic`.
    pub action_terms: String,
    /// Frame features as text (see [`super::frame_features`]).
    pub features: String,
    /// Proprioception column added raw beside the frame features; `none` for none.
    pub state_feature: String,
    /// Action column.
    pub action_feature: String,
    /// Principal components kept of the frame features.
    pub components: usize,
    /// Image encoder as text (see [`super::EncoderSpec::parse`]).
    pub encoder: String,
    /// Feature cache folder; `None`: `OUT/feature-cache`.
    pub cache: Option<PathBuf>,
    /// Coverage threshold on the standardized action distance, finite and > 0.
    pub coverage_threshold: f64,
}

impl FitOptions {
    /// The dataset folder: `--dataset`, else `RUN/dataset`.
    ///
    /// # Errors
    /// [`RequestError::Usage`] when neither is given.
    pub fn dataset_dir(&self) -> Result<PathBuf, RequestError> {
        self.dataset
            .clone()
            .or_else(|| self.run.as_ref().map(|r| r.join("dataset")))
            .ok_or_else(|| RequestError::Usage("pass --run DIR or --dataset DIR".into()))
    }

    /// The typed request these options name. Settings are not checked here
    /// ([`FitRequest::validate`] does).
    ///
    /// # Errors
    /// [`RequestError::Usage`] for a missing dataset ([`Self::dataset_dir`]), a policy spec
    /// that is not `NAME=FILE`, or an unknown head, solver or action-terms name.
    pub fn request(&self) -> Result<FitRequest, RequestError> {
        let dataset = self.dataset_dir()?;
        let policy_actions = self
            .policy_actions
            .iter()
            .map(|spec| parse_policy_actions(spec))
            .collect::<Result<Vec<_>, _>>()?;
        let (steps, auto_steps) = match self.steps {
            Steps::Auto => (self.max_steps, true),
            Steps::Fixed(n) => (n, false),
        };
        // The discounts are the resolved γ's once the ground truth is read.
        let gamma = self.gamma.unwrap_or(DEFAULT_GAMMA);
        let neural = NeuralFqeConfig {
            gamma,
            steps,
            auto_steps,
            target_update_every: self.target_update,
            target_tau: self.target_tau,
            learning_rate: self.learning_rate,
            batch_size: self.batch_size,
            head: parse_head(&self.head)?,
            ..NeuralFqeConfig::default()
        };
        let config = FitConfig {
            neural: (!self.no_neural).then_some(neural),
            linear: LinearFqeConfig {
                gamma,
                ridge: self.ridge,
                action_terms: parse_action_terms(&self.action_terms)?,
                solver: parse_solver(&self.linear_solver)?,
                ..LinearFqeConfig::default()
            },
            seeds: self.seeds.clone(),
            bootstrap: self.bootstrap,
            coverage_threshold: self.coverage_threshold,
        };
        Ok(FitRequest {
            run: self.run.clone(),
            dataset,
            policy_actions,
            behaviour: self.behaviour,
            labels: self.labels.clone(),
            ground_truth: self.ground_truth.clone(),
            gamma: self.gamma,
            features: self.features.clone(),
            state_feature: (self.state_feature != "none").then(|| self.state_feature.clone()),
            action_feature: self.action_feature.clone(),
            components: self.components,
            encoder: self.encoder.clone(),
            cache_dir: self
                .cache
                .clone()
                .unwrap_or_else(|| self.out.join("feature-cache")),
            config,
        })
    }

    /// Checks the thread count and that every path is UTF-8 (`dataset` is the resolved dataset
    /// folder): fqe.json records the dataset and file paths as JSON text, which cannot hold a
    /// name that is not UTF-8, so such a name is refused before any dataset pass or feature
    /// cache.
    ///
    /// # Errors
    /// [`FqeError::Setting`](crate::FqeError::Setting) naming [`Setting::Threads`] (in
    /// [`RequestError::Fqe`]); [`RequestError::Usage`] naming the first path that is not UTF-8.
    pub fn check_threads_and_paths(&self, dataset: &Path) -> Result<(), RequestError> {
        if let Some(n) = self.threads {
            check_threads(n)?;
        }
        let paths = [
            ("--run", self.run.as_deref()),
            ("--dataset", self.dataset.as_deref()),
            ("--labels", self.labels.as_deref()),
            ("--ground-truth", self.ground_truth.as_deref()),
            ("--out", Some(self.out.as_path())),
            ("--cache", self.cache.as_deref()),
            ("the dataset", Some(dataset)),
        ];
        for (flag, path) in paths {
            if let Some(p) = path
                && p.to_str().is_none()
            {
                return Err(RequestError::Usage(format!(
                    "{flag} {} is not a UTF-8 path (fqe.json records paths as text); rename it",
                    p.display()
                )));
            }
        }
        Ok(())
    }
}

/// Splits a `--policy-actions` spec `NAME=FILE` at the first `=`.
fn parse_policy_actions(spec: &str) -> Result<(String, PathBuf), RequestError> {
    let usage = || RequestError::Usage(format!("--policy-actions wants NAME=FILE, got \"{spec}\""));
    let (name, file) = spec.split_once('=').ok_or_else(usage)?;
    // An empty name would label the policy's rows and notes with nothing.
    if name.trim().is_empty() || file.is_empty() {
        return Err(usage());
    }
    Ok((name.to_owned(), PathBuf::from(file)))
}

fn parse_head(s: &str) -> Result<QHead, RequestError> {
    match s {
        "sigmoid" => Ok(QHead::Sigmoid),
        "linear" => Ok(QHead::Linear),
        other => Err(unknown("--head", other, "sigmoid, linear")),
    }
}

fn parse_solver(s: &str) -> Result<LinearSolver, RequestError> {
    match s {
        "lstd" => Ok(LinearSolver::Lstd),
        "iterated" => Ok(LinearSolver::Iterated),
        other => Err(unknown("--linear-solver", other, "lstd, iterated")),
    }
}

fn parse_action_terms(s: &str) -> Result<ActionTerms, RequestError> {
    match s {
        "linear" => Ok(ActionTerms::Linear),
        "quadratic" => Ok(ActionTerms::Quadratic),
        other => Err(unknown("--action-terms", other, "linear, quadratic")),
    }
}

fn unknown(flag: &str, value: &str, known: &str) -> RequestError {
    RequestError::Usage(format!("{flag} {value:?} is not one of {known}"))
}

/// The command-line option that sets `setting` (`--max-steps` is the cap of `--steps auto`;
/// `--c`, `--holdout` and `--folds` are `data detect`'s).
#[must_use]
pub fn option_name(setting: Setting) -> &'static str {
    match setting {
        Setting::Components => "--components",
        Setting::Gamma => "--gamma",
        Setting::Seeds => "--seeds",
        Setting::Steps => "--steps",
        Setting::MaxSteps => "--max-steps",
        Setting::Bootstrap => "--bootstrap",
        Setting::BatchSize => "--batch-size",
        Setting::TargetUpdate => "--target-update",
        Setting::TargetTau => "--target-tau",
        Setting::LearningRate => "--learning-rate",
        Setting::Ridge => "--ridge",
        Setting::CoverageThreshold => "--coverage-threshold",
        Setting::C => "--c",
        Setting::Holdout => "--holdout",
        Setting::Folds => "--folds",
        Setting::Threads => "--threads",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> FitOptions {
        FitOptions {
            run: Some(PathBuf::from("runs/gt")),
            dataset: None,
            policy_actions: vec!["pi=a=b.parquet".into()],
            behaviour: false,
            labels: None,
            ground_truth: None,
            out: PathBuf::from("fit"),
            gamma: None,
            seeds: vec![0, 1, 2],
            steps: Steps::Auto,
            max_steps: 20_000,
            bootstrap: 0,
            threads: None,
            target_update: 100,
            target_tau: 0.0,
            learning_rate: 1e-3,
            batch_size: 256,
            head: "sigmoid".into(),
            no_neural: false,
            ridge: 1e-3,
            linear_solver: "lstd".into(),
            action_terms: "quadratic".into(),
            features: "auto".into(),
            state_feature: "none".into(),
            action_feature: "action".into(),
            components: 64,
            encoder: "raw32".into(),
            cache: None,
            coverage_threshold: 1.0,
        }
    }

    fn usage(r: Result<FitRequest, RequestError>) -> String {
        match r {
            Err(RequestError::Usage(m)) => m,
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn steps_are_auto_or_a_count() {
        assert_eq!("auto".parse(), Ok(Steps::Auto));
        assert_eq!("250".parse(), Ok(Steps::Fixed(250)));
        assert_eq!(
            "-1".parse::<Steps>().unwrap_err().to_string(),
            "expected `auto` or a number of steps, got `-1`"
        );
    }

    /// The run folder's dataset, the first `=` of a spec, the auto-step cap, the defaults that
    /// depend on other options.
    #[test]
    fn options_resolve_into_a_request() {
        let r = options().request().unwrap();
        assert_eq!(r.dataset, PathBuf::from("runs/gt/dataset"));
        assert_eq!(
            r.policy_actions,
            vec![("pi".to_owned(), PathBuf::from("a=b.parquet"))]
        );
        assert_eq!(r.cache_dir, PathBuf::from("fit/feature-cache"));
        assert_eq!(r.state_feature, None);
        let n = r.config.neural.unwrap();
        assert_eq!(
            (n.steps, n.auto_steps, n.head),
            (20_000, true, QHead::Sigmoid)
        );
        assert_eq!(r.config.linear.gamma, DEFAULT_GAMMA);
        let fixed = FitOptions {
            steps: Steps::Fixed(7),
            no_neural: true,
            gamma: Some(0.5),
            ..options()
        };
        let r = fixed.request().unwrap();
        assert!(r.config.neural.is_none());
        assert_eq!((r.gamma, r.config.linear.gamma), (Some(0.5), 0.5));
        let n = FitOptions {
            steps: Steps::Fixed(7),
            ..options()
        };
        let n = n.request().unwrap().config.neural.unwrap();
        assert_eq!((n.steps, n.auto_steps), (7, false));
    }

    #[test]
    fn malformed_options_are_usage_errors() {
        let no_data = FitOptions {
            run: None,
            ..options()
        };
        assert_eq!(usage(no_data.request()), "pass --run DIR or --dataset DIR");
        let spec = FitOptions {
            policy_actions: vec!["pi".into()],
            ..options()
        };
        assert_eq!(
            usage(spec.request()),
            "--policy-actions wants NAME=FILE, got \"pi\""
        );
        for empty in ["=a.parquet", " =a.parquet", "pi="] {
            let spec = FitOptions {
                policy_actions: vec![empty.into()],
                ..options()
            };
            assert!(usage(spec.request()).contains(empty), "{empty}");
        }
        let head = FitOptions {
            head: "tanh".into(),
            ..options()
        };
        assert!(usage(head.request()).contains("--head"));
    }

    #[test]
    fn threads_and_non_utf8_paths_are_refused() {
        use std::os::unix::ffi::OsStrExt;
        let o = FitOptions {
            threads: Some(0),
            ..options()
        };
        assert!(matches!(
            o.check_threads_and_paths(Path::new("d")),
            Err(RequestError::Fqe(crate::FqeError::Setting {
                setting: Setting::Threads,
                ..
            }))
        ));
        let bad = PathBuf::from(std::ffi::OsStr::from_bytes(b"l\xffabels.csv"));
        let o = FitOptions {
            labels: Some(bad),
            ..options()
        };
        let Err(RequestError::Usage(m)) = o.check_threads_and_paths(Path::new("d")) else {
            panic!("not refused");
        };
        assert!(m.starts_with("--labels "), "{m}");
        assert!(options().check_threads_and_paths(Path::new("d")).is_ok());
    }
}
