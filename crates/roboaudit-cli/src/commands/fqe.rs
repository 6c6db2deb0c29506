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

use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use roboaudit_fqe::request::{EvaluateRequest, FitOptions, evaluate_request, option_name};
use roboaudit_fqe::{
    FitObserver, FitRequest, FqeError, FqeReport, RequestError, fit_request, summary::render_table,
};

use crate::exit::{InvalidInput, Usage};
use crate::paths::{check_cache_folder, refuse_inside_dataset};

/// FQE subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum FqeCommand {
    /// Collect a push-suite dataset on the testbed with ground-truth target-policy values.
    Collect(roboaudit_fqe_collect::request::CollectRequest),
    /// Fit neural FQE, linear FQE and the naive estimate for every target policy; scores them
    /// too when ground truth is known.
    Fit(Box<FitOptions>),
    /// Score the estimates of an existing fit (`OUT/fqe.json`) against ground truth.
    Evaluate(EvaluateRequest),
    /// Query a served policy (openpi's websocket protocol) at every frame of a LeRobot dataset,
    /// episode by episode, and write the policy-actions file `fit` reads (resumable).
    Actions(roboaudit_policy_client::ActionsOptions),
}

/// Runs an FQE subcommand.
pub fn run(cmd: FqeCommand) -> Result<()> {
    match cmd {
        FqeCommand::Collect(args) => super::fqe_collect::run(&args),
        FqeCommand::Fit(args) => fit(&args),
        FqeCommand::Evaluate(request) => evaluate(&request),
        FqeCommand::Actions(args) => super::fqe_actions::run(&args),
    }
}

/// Input errors (a named file missing among them) exit with code 3, out-of-range settings (a usage error, named by their option)
/// with 2. The message keeps the whole cause chain (a Parquet decoder's reason is the useful
/// part).
pub(super) fn classify(e: FqeError) -> anyhow::Error {
    if let FqeError::Setting { setting, message } = &e {
        return Usage(format!("{} {message}", option_name(*setting))).into();
    }
    let text = roboaudit_types::error_chain(&e);
    match e {
        FqeError::InvalidConfig(_) => Usage(text).into(),
        FqeError::Data(_)
        | FqeError::InvalidInputs(_)
        | FqeError::BadFile { .. }
        | FqeError::Weights { .. } => InvalidInput(text).into(),
        // A file the user named that is not there, is a folder or cannot be read (ground
        // truth, weights) is bad input; other I/O failures (a full disk, a cache that vanished
        // mid-run) are not.
        FqeError::Io {
            action: "read",
            ref source,
            ..
        } if matches!(
            source.kind(),
            std::io::ErrorKind::NotFound
                | std::io::ErrorKind::IsADirectory
                | std::io::ErrorKind::PermissionDenied
        ) =>
        {
            InvalidInput(text).into()
        }
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

fn write_outputs(out: &Path, report: &FqeReport) -> Result<()> {
    roboaudit_fqe::write_report(out, report)?;
    out!("{}", render_table(report))?;
    for n in &report.notes {
        outln!("warning: {n}")?;
    }
    Ok(())
}

/// `roboaudit fqe evaluate`: (re)scores `OUT/fqe.json` against ground truth without refitting,
/// after checking that the ground truth belongs to the fitted dataset ([`evaluate_request`]),
/// and rewrites its outputs.
fn evaluate(request: &EvaluateRequest) -> Result<()> {
    let report =
        evaluate_request(request, &mut |line| eprintln!("{line}")).map_err(request_error)?;
    write_outputs(&request.out, &report)
}

/// Refuses output paths that would destroy something (exit code 2, before any file is read):
/// an `--out` file, another command's results, a folder inside the dataset, a `--cache` file.
fn check_out(args: &FitOptions, dataset_dir: &Path) -> Result<()> {
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

fn fit(options: &FitOptions) -> Result<()> {
    let request = options.request().map_err(request_error)?;
    request.validate().map_err(request_error)?;
    check_out(options, &request.dataset)?;
    options
        .check_threads_and_paths(&request.dataset)
        .map_err(request_error)?;
    match options.threads {
        // Every parallel step of the fit (encoding, linear FQE, the neural fits) runs on the
        // current rayon pool, so installing one of N threads bounds the whole fit. Started after
        // the option checks: a usage error costs no threads.
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .context("cannot start the thread pool")?
            .install(|| fit_checked(options, &request)),
        None => fit_checked(options, &request),
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
fn fit_checked(options: &FitOptions, request: &FitRequest) -> Result<()> {
    let progress = Progress {
        encoding: crate::progress::bar(0, "encoding frames"),
        fitting: Mutex::new(None),
    };
    let report = fit_request(request, &progress).map_err(request_error)?;
    write_outputs(&options.out, &report)
}
