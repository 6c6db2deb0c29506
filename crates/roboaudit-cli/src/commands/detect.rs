//! `roboaudit data detect`: a success detector (SPEC §3, seed 003 §3) trained on the episodes a
//! partial labels file labels, from each episode's terminal frame; it reports its accuracy on
//! held-out labelled episodes and writes a full labels file for `fqe fit --labels`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe::detector::{
    DETECTOR_SCHEMA, DetectorConfig, DetectorError, Validation, detect_with_progress,
};
use roboaudit_fqe::number::compact;
use roboaudit_fqe::pca::max_components;
use roboaudit_fqe::{Encoder, FrameFeatures};

use crate::exit::{InvalidInput, Usage};
use crate::output::write_all_atomic;
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

/// The report path: `--report`, else OUT with the extension `.detector.json`.
fn report_path(args: &DetectArgs) -> PathBuf {
    args.report
        .clone()
        .unwrap_or_else(|| args.out.with_extension("detector.json"))
}

/// Option checks that need no file (exit code 2 before anything is read).
fn check_options(args: &DetectArgs) -> Result<Validation> {
    let usage = |m: String| -> anyhow::Error { Usage(m).into() };
    let validation = match args.holdout {
        Some(fraction) => Validation::Holdout { fraction },
        None => Validation::KFold { folds: args.folds },
    };
    // The bounds are the config types' own (a setting out of them is named by its option).
    roboaudit_fqe::detector::check_settings(args.components, args.c, validation).map_err(|e| {
        match e {
            DetectorError::Fqe(f) => super::fqe::classify(f),
            other => classify(other),
        }
    })?;
    // The labels reader picks the format by extension: a full labels file must be CSV to be
    // read back as what it is.
    require_extension("--out", &args.out, "csv", "the labels file")?;
    let report = report_path(args);
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
    refuse_foreign_report(&report)?;
    crate::output::refuse_foreign_labels("--out", &args.out)?;
    Ok(validation)
}

/// Refuses a report path holding a file that is not a detector report (exit code 2, before
/// any work): the rename would silently replace it, and a `.json` name alone does not tell an
/// FQE result's `fqe.json` or an audit's `audit.json` from an earlier detector report. A
/// missing file passes; an existing one passes only with the `schema` the report carries.
fn refuse_foreign_report(report: &Path) -> Result<()> {
    if !report.is_file() {
        return Ok(());
    }
    let text = std::fs::read(report).map_err(|e| {
        Usage(format!(
            "--report {} exists but cannot be read ({e}), so it cannot be checked before it is replaced; give another file name",
            report.display()
        ))
    })?;
    let schema = serde_json::from_slice::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("schema").and_then(|s| s.as_str()).map(str::to_owned));
    match schema {
        Some(s) if s == DETECTOR_SCHEMA => Ok(()),
        Some(s) => Err(Usage(format!(
            "--report {} holds another kind of result (schema \"{s}\"), not a detector report (\"{DETECTOR_SCHEMA}\"); writing it would replace that file: give another file name",
            report.display()
        ))
        .into()),
        None => Err(Usage(format!(
            "--report {} exists and is not a detector report (not JSON or no `schema` field \"{DETECTOR_SCHEMA}\"); writing it would replace that file: give another file name",
            report.display()
        ))
        .into()),
    }
}

/// Warns (stderr) when `--components` asks for more than the terminal frames can give, before
/// the frames are read: `n` episodes' terminal frames span at most `n − 1` directions, and the
/// component fit is capped there (`roboaudit_fqe::pca::max_components`). The feature's width
/// also caps it, as documented, without a warning.
fn warn_component_cap(args: &DetectArgs, ds: &LeRobotDataset, features: &FrameFeatures) {
    let width = match features {
        FrameFeatures::Vector(c) => ds
            .feature(c)
            .map_or(1, roboaudit_data::lerobot::Feature::width),
        _ => Encoder::raw32().dim(),
    };
    let episodes = ds.episodes().len();
    let cap = max_components(episodes, width);
    if args.components > cap && cap < width {
        eprintln!(
            "warning: --components {} capped at {cap}: the terminal frames of the {episodes} episodes (one per episode) span at most {cap} principal directions",
            args.components
        );
    }
}

/// Usage errors exit 2, input errors 3, the rest 1; the message keeps the cause chain.
fn classify(e: DetectorError) -> anyhow::Error {
    if let DetectorError::EmptyHoldout {
        fraction, labelled, ..
    } = &e
    {
        return Usage(format!(
            "--holdout {} of {labelled} labelled episodes holds out none; need at least 1 (raise --holdout, label more episodes, or use --folds)",
            compact(*fraction)
        ))
        .into();
    }
    // Too few labelled episodes for the folds asked for is fixed by a smaller --folds: the
    // option is wrong for these labels (exit 2, like a --holdout that holds out none), not
    // the labels file. Too few of one class stays an input problem: no --folds fixes it.
    if let DetectorError::TooFewExamples {
        file,
        class: "episodes",
        count,
        needed,
        ..
    } = &e
    {
        return Usage(format!(
            "--folds {needed} needs at least {needed} labelled episodes (one per fold), but {} labels {count}: lower --folds (2..={count}), label more episodes, or use --holdout",
            file.display()
        ))
        .into();
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

/// Runs `data detect`.
///
/// # Errors
/// Usage errors (exit 2), unusable labels or dataset (exit 3), write failures (exit 1).
pub fn run(args: &DetectArgs) -> Result<()> {
    let validation = check_options(args)?;
    let ds = LeRobotDataset::open(&args.dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", args.dir.display()))?;
    let features =
        roboaudit_fqe::request::frame_features(&args.features, &ds, Some("observation.state"))
            .map_err(super::fqe::request_error)?;
    if features == FrameFeatures::None {
        return Err(Usage(
            "--features none: the detector needs an image feature or a vector column".into(),
        )
        .into());
    }
    for note in roboaudit_fqe::request::auto_skipped_videos(&args.features, &ds, &features) {
        eprintln!("{note}");
    }
    warn_component_cap(args, &ds, &features);
    let config = DetectorConfig {
        features,
        encoder: Encoder::raw32(),
        components: args.components,
        c: args.c,
        validation,
        seed: args.seed,
        cache_dir: args.cache.clone(),
    };
    let bar = crate::progress::bar(0, "encoding terminal frames");
    let detection = detect_with_progress(&ds, &args.labels, &config, &mut |done, total| {
        if bar.length() != Some(total as u64) {
            bar.set_length(total as u64);
        }
        bar.set_position(done as u64);
    })
    .map_err(classify)?;
    bar.finish_and_clear();
    let report = report_path(args);
    let json = serde_json::to_vec_pretty(&detection.report)
        .context("cannot serialize the detector report")?;
    write_all_atomic(&[
        (&args.out, detection.labels_csv().as_bytes()),
        (&report, &[json.as_slice(), b"\n"].concat()),
    ])?;
    out!("{}", detection.report.summary())?;
    outln!(
        "wrote {} ({} episodes) and {}",
        args.out.display(),
        detection.episodes.len(),
        report.display()
    )?;
    // On stderr, where they are not lost in a redirected summary; the report keeps them too.
    for w in &detection.report.warnings {
        eprintln!("warning: {w}");
    }
    if detection.encoded + detection.cache_hits > 0 {
        eprintln!(
            "note: terminal frames: {} encoded, {} from the feature cache",
            detection.encoded, detection.cache_hits
        );
    }
    Ok(())
}
