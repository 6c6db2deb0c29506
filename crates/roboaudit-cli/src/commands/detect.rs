//! `roboaudit data detect`: a success detector (SPEC §3, seed 003 §3) trained on the episodes a
//! partial labels file labels, from each episode's terminal frame; it reports its accuracy on
//! held-out labelled episodes and writes a full labels file for `fqe fit --labels`.

use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::Result;
use roboaudit_fqe::FqeError;
use roboaudit_fqe::detector::request::{
    DetectObserver, DetectRequest, RequestError, check_report_file, detect_request, option_message,
};
use roboaudit_fqe::detector::{DetectorError, Validation};

use crate::exit::{InvalidInput, Usage};
use crate::paths::{check_cache_folder, refuse_inside_dataset, require_extension, same_file};

/// Arguments of `roboaudit data detect`.
#[derive(clap::Args, Debug)]
pub struct DetectArgs {
    /// Dataset folder (the one holding meta/info.json).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Partial labels file (`episode_index`, `success` as 0/1 or true/false; CSV, Parquet or
    /// JSONL): the episodes the detector learns from. Other columns are ignored.
    #[arg(long, value_name = "FILE")]
    pub labels: PathBuf,
    /// Full labels file to write (CSV: `episode_index,success,source,probability`; `source` is
    /// `label` for a given label, kept as given, or `detector` for a predicted one); not inside
    /// the dataset folder.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// JSON report (`roboaudit.detector.v1`: settings, held-out accuracy, counts, warnings);
    /// default: OUT with the extension `.detector.json`. Must end in .json; an existing file
    /// there is replaced only if it is a detector report (anything else: exit code 2).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Terminal-frame features: `image:KEY` (a camera, `image` or `video` feature, through the
    /// raw 32×32 pixel encoder; a video is decoded at the terminal frames only), `state:COLUMN`
    /// (a numeric vector column, standardized), a bare KEY (by its declared kind), or `auto`:
    /// the first `image` feature by name, else the first decodable `video` feature, else
    /// `observation.state`.
    #[arg(long, alias = "image-feature", default_value = "auto")]
    pub features: String,
    /// Measure accuracy on one seeded stratified holdout instead: this share of each class of
    /// the labelled episodes, in (0, 1), is held out (e.g. 0.25); one that holds out no
    /// labelled episode is refused (exit code 2).
    #[arg(long, conflicts_with = "folds")]
    pub holdout: Option<f64>,
    /// Folds of the seeded stratified cross-validation that measures accuracy (every labelled
    /// episode held out once), 2..=100; the default unless --holdout is given.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Seed of the split and of the component fit.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Inverse L2 regularization strength C of the logistic regression (scikit-learn's C), > 0.
    #[arg(long, default_value_t = 1.0)]
    pub c: f64,
    /// Principal components of the terminal frames' features, 1..=1024. The terminal frames of
    /// N episodes span at most N − 1 directions: more are capped at that before any work, with
    /// a warning on stderr (and at the feature's width, silently).
    #[arg(long, default_value_t = 32)]
    pub components: usize,
    /// Feature cache folder (default: a temporary one, deleted afterwards); the same cache as
    /// `fqe fit --cache` can be shared. Must be a folder, not inside the dataset folder.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

impl DetectArgs {
    /// The typed request these options name.
    fn request(&self) -> DetectRequest {
        DetectRequest {
            dataset: self.dir.clone(),
            labels: self.labels.clone(),
            out: self.out.clone(),
            report: self.report.clone(),
            features: self.features.clone(),
            validation: match self.holdout {
                Some(fraction) => Validation::Holdout { fraction },
                None => Validation::KFold { folds: self.folds },
            },
            seed: self.seed,
            c: self.c,
            components: self.components,
            cache: self.cache.clone(),
        }
    }
}

/// Option checks that need no file (exit code 2 before anything is read): the settings'
/// bounds ([`DetectRequest::validate`]), then the output paths.
fn check_options(args: &DetectArgs, request: &DetectRequest) -> Result<()> {
    let usage = |m: String| -> anyhow::Error { Usage(m).into() };
    request.validate().map_err(classify)?;
    // The labels reader picks the format by extension: a full labels file must be CSV to be
    // read back as what it is.
    require_extension("--out", &args.out, "csv", "the labels file")?;
    let report = request.report_path();
    for (flag, path) in [("--out", &args.out), ("--report", &report)] {
        if path.is_dir() {
            return Err(usage(format!(
                "{flag} {} is a folder; give a file name",
                path.display()
            )));
        }
    }
    if same_file(&report, &args.out) {
        return Err(usage("--report and --out name the same file".into()));
    }
    if same_file(&args.out, &args.labels) || same_file(&report, &args.labels) {
        return Err(usage(
            "--out / --report name the --labels file: it would be overwritten".into(),
        ));
    }
    // After the same-file checks, whose message says more about a --report naming an input.
    require_extension("--report", &report, "json", "the detector report")?;
    let cache = args.cache.as_ref().map(|c| ("--cache", c));
    for (flag, path) in [("--out", &args.out), ("--report", &report)]
        .into_iter()
        .chain(cache)
    {
        refuse_inside_dataset(flag, path, &args.dir)?;
    }
    if let Some(cache) = &args.cache {
        check_cache_folder(cache)?;
    }
    check_report_file(&report).map_err(request_error)?;
    crate::output::refuse_foreign_labels("--out", &args.out)?;
    Ok(())
}

/// Usage errors exit 2, input errors 3, the rest 1; the message keeps the cause chain.
fn classify(e: DetectorError) -> anyhow::Error {
    // A setting out of bounds is named by its option.
    if let DetectorError::Fqe(f @ FqeError::Setting { .. }) = e {
        return super::fqe::classify(f);
    }
    // A wrong --holdout or --folds for these labels is the option's fault (exit 2); too few
    // of one class stays an input problem: no option fixes it.
    if let Some(message) = option_message(&e) {
        return Usage(message).into();
    }
    let text = super::fqe::cause_chain(&e);
    if e.is_usage() {
        Usage(text).into()
    } else if e.is_invalid_input() {
        InvalidInput(text).into()
    } else {
        e.into()
    }
}

/// A request's error with its exit code (see [`classify`]).
fn request_error(e: RequestError) -> anyhow::Error {
    match e {
        RequestError::Usage(m) => Usage(m).into(),
        // The data error stays a cause of its own: its kind sets the exit code.
        RequestError::Open { path, source } => anyhow::Error::from(*source)
            .context(format!("cannot open LeRobot dataset {}", path.display())),
        RequestError::Features(e) => super::fqe::request_error(*e),
        RequestError::Detector(e) => classify(*e),
        other => other.into(),
    }
}

/// Notes on stderr and a bar over the terminal frames being encoded (started with the
/// encoding).
struct Progress(OnceLock<indicatif::ProgressBar>);

impl DetectObserver for Progress {
    fn note(&self, line: &str) {
        match self.0.get() {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    fn encoding(&self, done: usize, total: usize) {
        let bar = self
            .0
            .get_or_init(|| crate::progress::bar(0, "encoding terminal frames"));
        if bar.length() != Some(total as u64) {
            bar.set_length(total as u64);
        }
        bar.set_position(done as u64);
    }
}

/// Runs `data detect`.
///
/// # Errors
/// Usage errors (exit 2), unusable labels or dataset (exit 3), write failures (exit 1).
pub fn run(args: &DetectArgs) -> Result<()> {
    let request = args.request();
    check_options(args, &request)?;
    let progress = Progress(OnceLock::new());
    let outcome = detect_request(&request, &progress).map_err(request_error)?;
    if let Some(bar) = progress.0.get() {
        bar.finish_and_clear();
    }
    out!("{}", outcome.summary(&args.out))?;
    eprint!("{}", outcome.notes());
    Ok(())
}
