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
/// [`LinearFqeConfig`] and [`FitConfig`] (methods document §3). Each field's doc is its
/// `--help` text (derived with the `clap` feature); what the help leaves out:
///
/// - `policy_actions` specs are split at the first `=`;
/// - `ground_truth`: `None` reads `RUN/ground_truth.json` when it exists;
/// - `out` is also the feature cache's default parent;
/// - `gamma` in `(0, 1]` (said in its help); `None`: the ground truth's, else [`DEFAULT_GAMMA`];
/// - `max_steps` caps [`Steps::Auto`] (`None`: [`NeuralFqeConfig::default`]'s steps); with
///   [`Steps::Fixed`] it is refused rather than ignored;
/// - `threads` in `1..=`[`crate::bounds_settings::MAX_THREADS`]; `None`: rayon's default;
/// - `target_update` is a period in steps (`None`: [`crate::neural::target_period`] of the
///   steps and the dataset's median episode, once the dataset is read); `target_tau` in `[0, 1]`;
/// - `learning_rate` in `(0, 1]`; `batch_size` counts rows; `hidden` in
///   `1..=`[`crate::bounds_settings::MAX_HIDDEN`];
/// - `ridge` and `coverage_threshold` finite and > 0;
/// - `features` as [`super::frame_features`] reads it; `encoder` as [`super::EncoderSpec::parse`]
///   reads it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct FitOptions {
    /// A folder written by `roboaudit fqe collect` (dataset/, policies/, ground_truth.json).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub run: Option<PathBuf>,
    /// A LeRobot dataset (instead of, or overriding, RUN/dataset).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub dataset: Option<PathBuf>,
    /// A target policy as NAME=FILE (policy-actions file: `index`, `sample`, `action`);
    /// repeatable. Without any (and no run folder), the target is the behaviour policy: the
    /// dataset's own actions (on-policy evaluation).
    #[cfg_attr(
        feature = "clap",
        arg(long = "policy-actions", value_name = "NAME=FILE")
    )]
    pub policy_actions: Vec<String>,
    /// Also evaluate the behaviour policy (the dataset's own actions, on-policy) beside the
    /// --policy-actions files; always on without them.
    #[cfg_attr(feature = "clap", arg(long))]
    pub behaviour: bool,
    /// Labels file (`episode_index`, `success`; `roboaudit data labels` derives one from a dense
    /// reward); default: the dataset's `next.success` column, else the last `next.reward`
    /// (success when ≥ 0.5).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub labels: Option<PathBuf>,
    /// Ground-truth file (`roboaudit.fqe.ground_truth.v1`); default RUN/ground_truth.json.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub ground_truth: Option<PathBuf>,
    /// Output folder (not inside the dataset folder).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Discount γ, in (0, 1]; default: the ground truth's, else 0.99. With ground truth it must
    /// be the ground truth's (exit code 2 otherwise): values at two discounts are not comparable.
    #[cfg_attr(feature = "clap", arg(long))]
    pub gamma: Option<f64>,
    /// Neural training seeds, comma-separated, each once.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', default_value = "0,1,2")
    )]
    pub seeds: Vec<u64>,
    /// Neural gradient steps per fit: `auto` (stop each fit once its estimate has settled, after
    /// enough Bellman backups for the median episode; at most --max-steps) or a fixed count N.
    #[cfg_attr(feature = "clap", arg(long, default_value = "auto"))]
    pub steps: Steps,
    /// The cap of `--steps auto` (the learning rate decays over it); default 20000. Only with
    /// `--steps auto`: a fixed --steps N is the count itself.
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_steps: Option<usize>,
    /// Episode-bootstrap refits per policy (0: none): each trains neural FQE on the episodes of
    /// one resample (per task, drawn with replacement) and the 2.5–97.5% quantiles of their
    /// estimates are reported per policy and task. Costs B more neural fits per policy.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub bootstrap: usize,
    /// Threads for the whole fit (neural fits run one per thread); default: RAYON_NUM_THREADS,
    /// else one per core.
    #[cfg_attr(feature = "clap", arg(long))]
    pub threads: Option<usize>,
    /// Target network copy period N; default: the steps (the cap of --steps auto) over 3.2
    /// times the median episode's frames, at least 10 (100 for 62-frame episodes and 20,000
    /// steps), so that a terminal label has time to reach the first frame and settle. Refused
    /// beside --target-tau, which replaces the copy.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "target_tau"))]
    pub target_update: Option<usize>,
    /// Polyak rate τ of the target network (> 0 replaces the copy every N steps by
    /// θ̄ ← (1 − τ) θ̄ + τ θ each step).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = NeuralFqeConfig::default().target_tau))]
    pub target_tau: f64,
    /// Neural AdamW learning rate at step 0 (decayed linearly to 5% of it).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = NeuralFqeConfig::default().learning_rate)
    )]
    pub learning_rate: f64,
    /// Neural mini-batch size.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = NeuralFqeConfig::default().batch_size))]
    pub batch_size: usize,
    /// Width of the neural Q network's two hidden layers.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = NeuralFqeConfig::default().hidden))]
    pub hidden: usize,
    /// Output head of the neural Q network: `sigmoid` (values in (0, 1), where every true value
    /// of a terminal success lies) or `linear` (unbounded).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "sigmoid", value_parser = ["sigmoid", "linear"])
    )]
    pub head: String,
    /// Skip neural FQE (linear and naive only). The neural options (--seeds, --steps,
    /// --max-steps, --bootstrap, --target-update, --target-tau, --learning-rate, --batch-size,
    /// --hidden, --head) are refused beside it rather than ignored.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            conflicts_with_all = [
                "seeds", "steps", "max_steps", "bootstrap", "target_update", "target_tau",
                "learning_rate", "batch_size", "hidden", "head",
            ]
        )
    )]
    pub no_neural: bool,
    /// Linear FQE ridge λ (per transition).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = LinearFqeConfig::default().ridge))]
    pub ridge: f64,
    /// Linear FQE solver: `lstd` (closed-form projected fixed point) or `iterated` (fitted Q
    /// iteration, may diverge).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "lstd", value_parser = ["lstd", "iterated"])
    )]
    pub linear_solver: String,
    /// Linear FQE action terms: `linear` ([1, z(a)]) or `quadratic` ([1, z(a), z(a)²]).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "quadratic", value_parser = ["linear", "quadratic"])
    )]
    pub action_terms: String,
    /// Frame features: `image:KEY` (a camera, `image` or `video` feature, encoded and reduced to
    /// components), `state:COLUMN` (a numeric vector column, standardized and reduced to
    /// components), a bare KEY (by its declared kind), `none`, or `auto`: the first `image`
    /// feature by name, else the first `video` feature whose MP4 files are all present and
    /// open, else `state:` the --state-feature column.
    #[cfg_attr(
        feature = "clap",
        arg(long, alias = "image-feature", default_value = "auto")
    )]
    pub features: String,
    /// Proprioception feature, added raw beside the frame features unless they are this same
    /// column; "none" for none.
    #[cfg_attr(feature = "clap", arg(long, default_value = "observation.state"))]
    pub state_feature: String,
    /// Leave out the time input (each frame's position in its episode, an input part named
    /// `t`; the estimate reads Q at t = 0). Without it, an episode cut at the collection's
    /// horizon teaches that the states where it was cut are terminal at any time, which biases
    /// the estimates of policies that pass such states early low.
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_time_input: bool,
    /// Action feature.
    #[cfg_attr(feature = "clap", arg(long, default_value = "action"))]
    pub action_feature: String,
    /// Principal components kept of the frame features (the encoder's output — 3,072 raw
    /// pixels, or the DINOv2 width, 384 for ViT-S/14 — or the standardized vector column; at
    /// most its width), 1..=1024. N frames (at most 20,000, evenly spaced, are fitted) span at
    /// most N − 1 directions: more are capped at that before any work, with a warning.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 64))]
    pub components: usize,
    /// Frozen image encoder for `image` features: `raw32` (raw pixels 32×32, area-resampled) or
    /// `dinov2:PATH[,side=N][,heads=N]`: a DINOv2 ViT/14 checkpoint from a local safetensors
    /// file in the torch-hub layout (e.g. dinov2_vits14 converted; PATH without commas), whose
    /// final-norm class token is the feature; side = input pixels, a multiple of 14 in 14..=518
    /// (default 224); heads = attention heads (default width / 64). Features are cached under
    /// --cache, keyed by encoder, weights hash and frame.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "raw32", value_name = "ENCODER")
    )]
    pub encoder: String,
    /// Feature cache folder (default OUT/feature-cache); must be a folder, not inside the
    /// dataset folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub cache: Option<PathBuf>,
    /// Coverage threshold on the standardized action distance.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = crate::DEFAULT_COVERAGE_THRESHOLD)
    )]
    pub coverage_threshold: f64,
}

impl FitOptions {
    /// The dataset folder: `--dataset`, else `RUN/dataset`.
    ///
    /// # Errors
    /// [`RequestError::Usage`] when neither is given, or when `--run` names a LeRobot dataset
    /// itself (a `meta/info.json` and no `dataset/` folder) or a fit's results folder (an
    /// `fqe.json` and no `dataset/`) rather than a run folder.
    pub fn dataset_dir(&self) -> Result<PathBuf, RequestError> {
        if let Some(dataset) = &self.dataset {
            return Ok(dataset.clone());
        }
        let run = self
            .run
            .as_ref()
            .ok_or_else(|| RequestError::Usage("pass --run DIR or --dataset DIR".into()))?;
        let dataset = run.join("dataset");
        if !dataset.exists() && run.join(crate::REPORT_FILE).is_file() {
            return Err(RequestError::Usage(format!(
                "--run {}: this folder holds an FQE fit's results ({}), not a run folder written \
                 by `fqe collect` (dataset/, policies/, ground_truth.json): pass the run the fit \
                 was made on",
                run.display(),
                crate::REPORT_FILE
            )));
        }
        if !dataset.exists() && run.join("meta").join("info.json").is_file() {
            return Err(RequestError::Usage(format!(
                "--run {}: this is a LeRobot dataset, not a run folder written by `fqe collect` \
                 (dataset/, policies/, ground_truth.json): pass --dataset {}",
                run.display(),
                run.display()
            )));
        }
        Ok(dataset)
    }

    /// The typed request these options name. Settings are not checked here
    /// ([`FitRequest::validate`] does).
    ///
    /// # Errors
    /// [`RequestError::Usage`] for a missing dataset ([`Self::dataset_dir`]), a policy spec
    /// that is not `NAME=FILE`, `--max-steps` beside a fixed `--steps N`, or an unknown head,
    /// solver or action-terms name.
    pub fn request(&self) -> Result<FitRequest, RequestError> {
        let dataset = self.dataset_dir()?;
        let policy_actions = self
            .policy_actions
            .iter()
            .map(|spec| parse_policy_actions(spec))
            .collect::<Result<Vec<_>, _>>()?;
        let (steps, auto_steps) = match (self.steps, self.max_steps) {
            (Steps::Auto, cap) => (cap.unwrap_or(NeuralFqeConfig::default().steps), true),
            (Steps::Fixed(n), None) => (n, false),
            (Steps::Fixed(n), Some(cap)) => {
                return Err(RequestError::Usage(format!(
                    "--max-steps {cap} caps --steps auto and has no effect with --steps {n}: \
                     pass one of them"
                )));
            }
        };
        // The discounts are the resolved γ's once the ground truth is read.
        let gamma = self.gamma.unwrap_or(DEFAULT_GAMMA);
        let neural = NeuralFqeConfig {
            gamma,
            steps,
            auto_steps,
            target_update_every: self
                .target_update
                .unwrap_or(NeuralFqeConfig::default().target_update_every),
            target_tau: self.target_tau,
            learning_rate: self.learning_rate,
            batch_size: self.batch_size,
            hidden: self.hidden,
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
            time_input: !self.no_time_input,
            action_feature: self.action_feature.clone(),
            components: self.components,
            encoder: self.encoder.clone(),
            cache_dir: self
                .cache
                .clone()
                .unwrap_or_else(|| self.out.join("feature-cache")),
            target_period_from_episodes: self.target_update.is_none() && self.target_tau == 0.0,
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
        Setting::Hidden => "--hidden",
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
            max_steps: None,
            bootstrap: 0,
            threads: None,
            target_update: Some(100),
            target_tau: 0.0,
            learning_rate: 1e-3,
            batch_size: 256,
            hidden: 256,
            head: "sigmoid".into(),
            no_neural: false,
            ridge: 1e-3,
            linear_solver: "lstd".into(),
            action_terms: "quadratic".into(),
            features: "auto".into(),
            state_feature: "none".into(),
            no_time_input: false,
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
        assert!(r.time_input);
        let untimed = FitOptions {
            no_time_input: true,
            ..options()
        };
        assert!(!untimed.request().unwrap().time_input);
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
        let capped = FitOptions {
            max_steps: Some(500),
            ..options()
        };
        let n = capped.request().unwrap().config.neural.unwrap();
        assert_eq!((n.steps, n.auto_steps), (500, true));
    }

    /// A cap beside a fixed count would be silently ignored; it is refused instead.
    #[test]
    fn max_steps_with_fixed_steps_is_refused() {
        let both = FitOptions {
            steps: Steps::Fixed(300),
            max_steps: Some(500),
            ..options()
        };
        assert_eq!(
            usage(both.request()),
            "--max-steps 500 caps --steps auto and has no effect with --steps 300: pass one of them"
        );
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

    /// `--hidden` reaches the network's config, and its bounds name the option; rows × units is
    /// bounded too (each in range, 4096 × 65,536 makes 1 GB activation buffers).
    #[test]
    fn hidden_width_is_passed_and_bounded() {
        let hidden_range = Some(("--hidden", "1..=4096"));
        let too_wide = Some(("--batch-size", "× 4096 hidden units"));
        for (hidden, batch_size, refused) in [
            (1, 256, None),
            (128, 256, None),
            (4096, 256, None),
            (0, 256, hidden_range),
            (4097, 256, hidden_range),
            (4096, 4096, None),
            (4096, 4097, too_wide),
            (4096, 65_536, too_wide),
        ] {
            let o = FitOptions {
                hidden,
                batch_size,
                ..options()
            };
            let r = o.request().unwrap();
            assert_eq!(r.config.neural.as_ref().unwrap().hidden, hidden);
            let case = format!("{hidden} × {batch_size}");
            match (r.validate(), refused) {
                (Ok(()), None) => {}
                (
                    Err(RequestError::Fqe(crate::FqeError::Setting { setting, message })),
                    Some((option, text)),
                ) => {
                    assert_eq!(option_name(setting), option, "{case}");
                    assert!(message.contains(text), "{case}: {message}");
                }
                (got, want) => panic!("{case}: {got:?}, expected {want:?}"),
            }
        }
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
