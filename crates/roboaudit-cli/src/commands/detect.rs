//! `roboaudit data detect`: a success detector (SPEC §3, seed 003 §3) trained on the episodes a
//! partial labels file labels, from each episode's terminal frame; it reports its accuracy on
//! held-out labelled episodes and writes a full labels file for `fqe fit --labels`.

use std::sync::OnceLock;

use anyhow::Result;
use roboaudit_fqe::FqeError;
use roboaudit_fqe::detector::DetectorError;
use roboaudit_fqe::detector::request::{
    DetectObserver, DetectOptions, DetectRequest, RequestError, check_report_file, detect_request,
    option_message,
};

use crate::exit::{InvalidInput, Usage};
use crate::paths::{check_cache_folder, refuse_inside_dataset, require_extension, same_file};

/// Option checks that need no file (exit code 2 before anything is read): the settings'
/// bounds ([`DetectRequest::validate`]), then the output paths.
fn check_options(request: &DetectRequest) -> Result<()> {
    let usage = |m: String| -> anyhow::Error { Usage(m).into() };
    request.validate().map_err(classify)?;
    // The labels reader picks the format by extension: a full labels file must be CSV to be
    // read back as what it is.
    require_extension("--out", &request.out, "csv", "the labels file")?;
    let report = request.report_path();
    for (flag, path) in [("--out", &request.out), ("--report", &report)] {
        crate::paths::refuse_folder(flag, path)?;
    }
    if same_file(&report, &request.out) {
        return Err(usage("--report and --out name the same file".into()));
    }
    if same_file(&request.out, &request.labels) || same_file(&report, &request.labels) {
        return Err(usage(
            "--out / --report name the --labels file: it would be overwritten".into(),
        ));
    }
    // After the same-file checks, whose message says more about a --report naming an input.
    require_extension("--report", &report, "json", "the detector report")?;
    let cache = request.cache.as_ref().map(|c| ("--cache", c));
    for (flag, path) in [("--out", &request.out), ("--report", &report)]
        .into_iter()
        .chain(cache)
    {
        refuse_inside_dataset(flag, path, &request.dataset)?;
    }
    if let Some(cache) = &request.cache {
        check_cache_folder(cache)?;
    }
    check_report_file(&report).map_err(request_error)?;
    crate::output::refuse_foreign_labels("--out", &request.out)?;
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
    let text = roboaudit_types::error_chain(&e);
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
pub fn run(options: &DetectOptions) -> Result<()> {
    let request = options.request();
    check_options(&request)?;
    let progress = Progress(OnceLock::new());
    let outcome = detect_request(&request, &progress).map_err(request_error)?;
    if let Some(bar) = progress.0.get() {
        bar.finish_and_clear();
    }
    out!("{}", outcome.summary(&request.out))?;
    eprint!("{}", outcome.notes());
    Ok(())
}
