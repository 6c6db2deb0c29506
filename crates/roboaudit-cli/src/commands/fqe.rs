//! `roboaudit fqe …`: fitted Q evaluation (SPEC §3).
//!
//! `fit` loads the dataset and the target policies' actions, fits neural FQE (one model per
//! policy and seed), linear FQE and the naive average, and writes `OUT/fqe.json`, `summary.md`
//! and a table on stdout; when ground truth is known (a `--run` folder from `fqe collect`, or
//! `--ground-truth`) it also scores the estimates. `evaluate` (re)scores an existing `fqe.json`
//! against ground truth without refitting.
//!
//! Frame features come from a camera when the dataset has one (`--features auto`: an `image`
//! feature, else a `video` feature whose MP4 files are all present and open, decoded with
//! LeRobot's frame-for-timestamp rule), else from a numeric vector column such as
//! `observation.state` (standardized, then the same principal-component step). Without
//! `--policy-actions` or a run folder the target is the behaviour policy itself (the dataset's
//! actions, on-policy evaluation).
//!
//! `--encoder` picks the frozen image encoder: `raw32` (raw pixels 32×32) or
//! `dinov2:PATH[,side=N][,heads=N]`, a DINOv2 ViT/14 checkpoint read from a local safetensors
//! file (nothing is downloaded). A malformed value is a usage error (exit 2) found before any
//! file is read; a missing or invalid weights file is invalid input (exit 3) naming the file,
//! found before the dataset is read.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use roboaudit_fqe::request::{FitOptions, Steps, option_name};
use roboaudit_fqe::{
    DEFAULT_COVERAGE_THRESHOLD, FitObserver, FitRequest, FqeError, FqeReport, RequestError,
    fit_request,
    summary::{render_markdown, render_table},
};

use crate::exit::{InvalidInput, Usage};
use crate::output::{ensure_dir, write_all_atomic};
use crate::paths::{check_cache_folder, refuse_inside_dataset};

/// FQE subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum FqeCommand {
    /// Collect a push-suite dataset on the testbed with ground-truth target-policy values.
    Collect(super::fqe_collect::CollectArgs),
    /// Fit neural FQE, linear FQE and the naive estimate for every target policy; scores them
    /// too when ground truth is known.
    Fit(Box<FitArgs>),
    /// Score the estimates of an existing fit (`OUT/fqe.json`) against ground truth.
    Evaluate(super::fqe_evaluate::EvaluateArgs),
    /// Query a served policy (openpi's websocket protocol) at every frame of a LeRobot dataset,
    /// episode by episode, and write the policy-actions file `fit` reads (resumable).
    Actions(super::fqe_actions::ActionsArgs),
}

/// Arguments of `roboaudit fqe fit`.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// A folder written by `roboaudit fqe collect` (dataset/, policies/, ground_truth.json).
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// A LeRobot dataset (instead of, or overriding, RUN/dataset).
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// A target policy as NAME=FILE (policy-actions file: `index`, `sample`, `action`);
    /// repeatable. Without any (and no run folder), the target is the behaviour policy: the
    /// dataset's own actions (on-policy evaluation).
    #[arg(long = "policy-actions", value_name = "NAME=FILE")]
    pub policy_actions: Vec<String>,
    /// Also evaluate the behaviour policy (the dataset's own actions, on-policy) beside the
    /// --policy-actions files; always on without them.
    #[arg(long)]
    pub behaviour: bool,
    /// Labels file (`episode_index`, `success`; `roboaudit data labels` derives one from a dense
    /// reward); default: the dataset's `next.success` column, else the last `next.reward`
    /// (success when ≥ 0.5).
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Ground-truth file (`roboaudit.fqe.ground_truth.v1`); default RUN/ground_truth.json.
    #[arg(long, value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Output folder (not inside the dataset folder).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Discount γ; default: the ground truth's, else 0.99. With ground truth it must be the
    /// ground truth's (exit code 2 otherwise): values at two discounts are not comparable.
    #[arg(long)]
    pub gamma: Option<f64>,
    /// Neural training seeds, comma-separated, each once.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
    pub seeds: Vec<u64>,
    /// Neural gradient steps per fit: `auto` (stop each fit once its estimate has settled, after
    /// enough Bellman backups for the median episode; at most --max-steps) or a fixed count N.
    #[arg(long, default_value = "auto")]
    pub steps: Steps,
    /// The cap of `--steps auto` (the learning rate decays over it).
    #[arg(long, default_value_t = 20_000)]
    pub max_steps: usize,
    /// Episode-bootstrap refits per policy (0: none): each trains neural FQE on the episodes of
    /// one resample (per task, drawn with replacement) and the 2.5–97.5% quantiles of their
    /// estimates are reported per policy and task. Costs B more neural fits per policy.
    #[arg(long, default_value_t = 0)]
    pub bootstrap: usize,
    /// Threads for the whole fit (neural fits run one per thread); default: RAYON_NUM_THREADS,
    /// else one per core.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Target network copy period N.
    #[arg(long, default_value_t = 100)]
    pub target_update: usize,
    /// Polyak rate τ of the target network (> 0 replaces the copy every N steps by
    /// θ̄ ← (1 − τ) θ̄ + τ θ each step).
    #[arg(long, default_value_t = 0.0)]
    pub target_tau: f64,
    /// Neural AdamW learning rate at step 0 (decayed linearly to 5% of it).
    #[arg(long, default_value_t = 1e-3)]
    pub learning_rate: f64,
    /// Neural mini-batch size.
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Output head of the neural Q network: `sigmoid` (values in (0, 1), where every true value
    /// of a terminal success lies) or `linear` (unbounded).
    #[arg(long, default_value = "sigmoid", value_parser = ["sigmoid", "linear"])]
    pub head: String,
    /// Skip neural FQE (linear and naive only).
    #[arg(long)]
    pub no_neural: bool,
    /// Linear FQE ridge λ (per transition).
    #[arg(long, default_value_t = 1e-3)]
    pub ridge: f64,
    /// Linear FQE solver: `lstd` (closed-form projected fixed point) or `iterated` (fitted Q
    /// iteration, may diverge).
    #[arg(long, default_value = "lstd", value_parser = ["lstd", "iterated"])]
    pub linear_solver: String,
    /// Linear FQE action terms: `linear` ([1, z(a)]) or `quadratic` ([1, z(a), z(a)²]).
    #[arg(long, default_value = "quadratic", value_parser = ["linear", "quadratic"])]
    pub action_terms: String,
    /// Frame features: `image:KEY` (a camera, `image` or `video` feature, encoded and reduced to
    /// components), `state:COLUMN` (a numeric vector column, standardized and reduced to
    /// components), a bare KEY (by its declared kind), `none`, or `auto`: the first `image`
    /// feature by name, else the first `video` feature whose MP4 files are all present and
    /// open, else `state:` the --state-feature column.
    #[arg(long, alias = "image-feature", default_value = "auto")]
    pub features: String,
    /// Proprioception feature, added raw beside the frame features unless they are this same
    /// column; "none" for none.
    #[arg(long, default_value = "observation.state")]
    pub state_feature: String,
    /// Action feature.
    #[arg(long, default_value = "action")]
    pub action_feature: String,
    /// Principal components kept of the frame features (the encoder's output — 3,072 raw
    /// pixels, or the DINOv2 width, 384 for ViT-S/14 — or the standardized vector column; at
    /// most its width), 1..=1024. N frames (at most 20,000, evenly spaced, are fitted) span at
    /// most N − 1 directions: more are capped at that before any work, with a warning.
    #[arg(long, default_value_t = 64)]
    pub components: usize,
    /// Frozen image encoder for `image` features: `raw32` (raw pixels 32×32, area-resampled) or
    /// `dinov2:PATH[,side=N][,heads=N]`: a DINOv2 ViT/14 checkpoint from a local safetensors
    /// file in the torch-hub layout (e.g. dinov2_vits14 converted; PATH without commas), whose
    /// final-norm class token is the feature; side = input pixels, a multiple of 14 in 14..=518
    /// (default 224); heads = attention heads (default width / 64). Features are cached under
    /// --cache, keyed by encoder, weights hash and frame.
    #[arg(long, default_value = "raw32", value_name = "ENCODER")]
    pub encoder: String,
    /// Feature cache folder (default OUT/feature-cache); must be a folder, not inside the
    /// dataset folder.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Coverage threshold on the standardized action distance.
    #[arg(long, default_value_t = DEFAULT_COVERAGE_THRESHOLD)]
    pub coverage_threshold: f64,
}

/// Runs an FQE subcommand.
pub fn run(cmd: FqeCommand) -> Result<()> {
    match cmd {
        FqeCommand::Collect(args) => super::fqe_collect::run(&args),
        FqeCommand::Fit(args) => fit(&args),
        FqeCommand::Evaluate(args) => super::fqe_evaluate::evaluate(&args),
        FqeCommand::Actions(args) => super::fqe_actions::run(&args),
    }
}

/// `e`'s message followed by each source's that it does not already contain (a Parquet
/// decoder's reason is often the useful part).
pub(super) fn cause_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

/// Input errors (a named file missing among them) exit with code 3, out-of-range settings (a usage error, named by their option)
/// with 2. The message keeps the whole cause chain (a Parquet decoder's reason is the useful
/// part).
pub(super) fn classify(e: FqeError) -> anyhow::Error {
    if let FqeError::Setting { setting, message } = &e {
        return Usage(format!("{} {message}", option_name(*setting))).into();
    }
    let text = cause_chain(&e);
    match e {
        FqeError::InvalidConfig(_) => Usage(text).into(),
        FqeError::Data(_)
        | FqeError::InvalidInputs(_)
        | FqeError::BadFile { .. }
        | FqeError::Weights { .. } => InvalidInput(text).into(),
        // A file the user named that is not there (ground truth, weights) is bad input; other
        // I/O failures (a full disk, a cache that vanished mid-run) are not.
        FqeError::Io {
            action: "read",
            ref source,
            ..
        } if source.kind() == std::io::ErrorKind::NotFound => InvalidInput(text).into(),
        other => other.into(),
    }
}

/// A fit request's error with its exit code: usage 2, input 3.
pub(crate) fn request_error(e: RequestError) -> anyhow::Error {
    match e {
        RequestError::Usage(m) => Usage(m).into(),
        RequestError::Input(m) => InvalidInput(m).into(),
        RequestError::Data(d) => d.into(),
        RequestError::Fqe(f) => classify(f),
        // The data error stays a cause of its own: its kind sets the exit code.
        RequestError::Open { path, source } => anyhow::Error::from(*source)
            .context(format!("cannot open LeRobot dataset {}", path.display())),
    }
}

pub(super) fn write_outputs(out: &Path, report: &FqeReport) -> Result<()> {
    ensure_dir(out)?;
    let json = serde_json::to_vec_pretty(report).context("cannot serialize the report")?;
    write_all_atomic(&[
        (&out.join("fqe.json"), &json),
        (&out.join("summary.md"), render_markdown(report).as_bytes()),
    ])?;
    out!("{}", render_table(report))?;
    for n in &report.notes {
        outln!("warning: {n}")?;
    }
    Ok(())
}

impl FitArgs {
    /// The options as the library takes them.
    fn options(&self) -> FitOptions {
        FitOptions {
            run: self.run.clone(),
            dataset: self.dataset.clone(),
            policy_actions: self.policy_actions.clone(),
            behaviour: self.behaviour,
            labels: self.labels.clone(),
            ground_truth: self.ground_truth.clone(),
            out: self.out.clone(),
            gamma: self.gamma,
            seeds: self.seeds.clone(),
            steps: self.steps,
            max_steps: self.max_steps,
            bootstrap: self.bootstrap,
            threads: self.threads,
            target_update: self.target_update,
            target_tau: self.target_tau,
            learning_rate: self.learning_rate,
            batch_size: self.batch_size,
            head: self.head.clone(),
            no_neural: self.no_neural,
            ridge: self.ridge,
            linear_solver: self.linear_solver.clone(),
            action_terms: self.action_terms.clone(),
            features: self.features.clone(),
            state_feature: self.state_feature.clone(),
            action_feature: self.action_feature.clone(),
            components: self.components,
            encoder: self.encoder.clone(),
            cache: self.cache.clone(),
            coverage_threshold: self.coverage_threshold,
        }
    }
}

/// Refuses output paths that would destroy something (exit code 2, before any file is read):
/// an `--out` file, another command's results, a folder inside the dataset, a `--cache` file.
fn check_out(args: &FitArgs, dataset_dir: &Path) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    crate::output::refuse_foreign_results(
        &args.out,
        &[
            ("fqe.json", &[roboaudit_fqe::SCHEMA]),
            // An audit folder's summary.md would be replaced by ours.
            ("audit.json", &[]),
        ],
    )?;
    refuse_inside_dataset("--out", &args.out, dataset_dir)?;
    if let Some(cache) = &args.cache {
        check_cache_folder(cache)?;
        refuse_inside_dataset("--cache", cache, dataset_dir)?;
    }
    Ok(())
}

fn fit(args: &FitArgs) -> Result<()> {
    let options = args.options();
    let request = options.request().map_err(request_error)?;
    request.validate().map_err(request_error)?;
    check_out(args, &request.dataset)?;
    options
        .check_threads_and_paths(&request.dataset)
        .map_err(request_error)?;
    match args.threads {
        // Every parallel step of the fit (encoding, linear FQE, the neural fits) runs on the
        // current rayon pool, so installing one of N threads bounds the whole fit. Started after
        // the option checks: a usage error costs no threads.
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .context("cannot start the thread pool")?
            .install(|| fit_checked(args, &request)),
        None => fit_checked(args, &request),
    }
}

/// Progress bars on stderr, and the neural batch's wall time (printed, not reported: fqe.json
/// keeps the same bytes on every machine).
struct Progress {
    encoding: ProgressBar,
    fitting: Mutex<Option<ProgressBar>>,
}

impl FitObserver for Progress {
    fn note(&self, line: &str) {
        eprintln!("{line}");
    }

    fn encoding(&self, done: usize, total: usize) {
        if self.encoding.length() != Some(total as u64) {
            self.encoding.set_length(total as u64);
        }
        self.encoding.set_position(done as u64);
    }

    fn encoded(&self) {
        self.encoding.finish_and_clear();
    }

    fn fitting(&self, work: u64, _neural_fits: usize) {
        *lock(&self.fitting) = Some(crate::progress::bar(work, "fitting"));
    }

    fn stage(&self, _policy: &str, _what: &str) {}

    fn advance(&self, k: u64) {
        if let Some(bar) = lock(&self.fitting).as_ref() {
            bar.inc(k);
        }
    }

    fn fitted(&self) {
        if let Some(bar) = lock(&self.fitting).take() {
            bar.finish_and_clear();
        }
    }

    fn timing(&self, line: &str) {
        eprintln!("{line}");
    }
}

/// The lock's value, also after a panic elsewhere (progress state only).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// [`fit`] once its options are checked.
fn fit_checked(args: &FitArgs, request: &FitRequest) -> Result<()> {
    let progress = Progress {
        encoding: crate::progress::bar(0, "encoding frames"),
        fitting: Mutex::new(None),
    };
    let report = fit_request(request, &progress).map_err(request_error)?;
    write_outputs(&args.out, &report)
}
