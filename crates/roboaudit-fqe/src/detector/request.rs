//! The whole `data detect` pipeline: a request names the dataset, the partial labels file, the
//! outputs and the detector's settings; [`DetectRequest::validate`] checks the settings against
//! their bounds (the config types' own checks, [`super::check_settings`]) before any file is
//! read, and [`detect_request`] opens the dataset, resolves the terminal-frame features, trains
//! and scores the detector ([`super::detect_with_progress`]) and writes the full labels file
//! (CSV) and the detector report (JSON) together, atomically. Progress and notes go to a
//! [`DetectObserver`]; nothing is printed here.

use std::path::{Path, PathBuf};

use roboaudit_data::DataError;
use roboaudit_data::atomic::{WriteError, write_all_atomic};
use roboaudit_data::lerobot::{Feature, LeRobotDataset};

use super::{DETECTOR_SCHEMA, Detection, DetectorReport};
use super::{DetectorConfig, DetectorError, Validation, check_settings, detect_with_progress};
use crate::encoder::Encoder;
use crate::load::FrameFeatures;
use crate::pca::max_components;
use crate::request::{auto_skipped_videos, frame_features};

/// Everything `data detect` needs, as typed values.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectRequest {
    /// The LeRobot dataset folder (the one holding `meta/info.json`).
    pub dataset: PathBuf,
    /// Partial labels file (`episode_index`, `success`; CSV, Parquet or JSONL).
    pub labels: PathBuf,
    /// Full labels file to write (CSV: `episode_index,success,source,probability`).
    pub out: PathBuf,
    /// The detector report (`roboaudit.detector.v1`); `None`: [`Self::report_path`]'s default.
    pub report: Option<PathBuf>,
    /// Terminal-frame features as text (see [`crate::request::frame_features`]); `auto`
    /// falls back to `observation.state`.
    pub features: String,
    /// How accuracy is measured on the labelled episodes.
    pub validation: Validation,
    /// Seed of the split and of the component fit.
    pub seed: u64,
    /// Logistic regression's inverse regularization strength `C`, finite and > 0.
    pub c: f64,
    /// Principal components of the terminal frames' features,
    /// `1..=`[`crate::bounds_settings::MAX_COMPONENTS`].
    pub components: usize,
    /// Feature cache folder (`None`: a temporary one, deleted afterwards).
    pub cache: Option<PathBuf>,
}

/// The options of `data detect` as a user gives them; [`Self::request`] makes the typed
/// [`DetectRequest`]. Bounds, checked by [`DetectRequest::validate`]: `holdout` in (0, 1),
/// `folds` in `2..=`[`crate::bounds_settings::MAX_FOLDS`], `c` finite and > 0, `components`
/// in `1..=`[`crate::bounds_settings::MAX_COMPONENTS`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct DetectOptions {
    /// Dataset folder (the one holding meta/info.json).
    #[cfg_attr(feature = "clap", arg(value_name = "DIR"))]
    pub dataset: PathBuf,
    /// Partial labels file (`episode_index`, `success` as 0/1 or true/false; CSV, Parquet or
    /// JSONL): the episodes the detector learns from. Other columns are ignored.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub labels: PathBuf,
    /// Full labels file to write (CSV: `episode_index,success,source,probability`; `source` is
    /// `label` for a given label, kept as given, or `detector` for a predicted one); not inside
    /// the dataset folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub out: PathBuf,
    /// JSON report (`roboaudit.detector.v1`: settings, held-out accuracy, counts, warnings);
    /// default: OUT with the extension `.detector.json`. Must end in .json; an existing file
    /// there is replaced only if it is a detector report (anything else: exit code 2).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub report: Option<PathBuf>,
    /// Terminal-frame features: `image:KEY` (a camera, `image` or `video` feature, through the
    /// raw 32×32 pixel encoder; a video is decoded at the terminal frames only), `state:COLUMN`
    /// (a numeric vector column, standardized), a bare KEY (by its declared kind), or `auto`:
    /// the first `image` feature by name, else the first decodable `video` feature, else
    /// `observation.state`.
    #[cfg_attr(
        feature = "clap",
        arg(long, alias = "image-feature", default_value = "auto")
    )]
    pub features: String,
    /// Measure accuracy on one seeded stratified holdout instead: this share of each class of
    /// the labelled episodes, in (0, 1), is held out (e.g. 0.25); one that holds out no
    /// labelled episode is refused (exit code 2).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "folds"))]
    pub holdout: Option<f64>,
    /// Folds of the seeded stratified cross-validation that measures accuracy (every labelled
    /// episode held out once), 2..=100; the default unless --holdout is given.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = Validation::DEFAULT_FOLDS))]
    pub folds: usize,
    /// Seed of the split and of the component fit.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = super::DEFAULT_SEED))]
    pub seed: u64,
    /// Inverse L2 regularization strength C of the logistic regression (scikit-learn's C), > 0.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = super::DEFAULT_C))]
    pub c: f64,
    /// Principal components of the terminal frames' features, 1..=1024. The terminal frames of
    /// N episodes span at most N − 1 directions: more are capped at that before any work, with
    /// a warning on stderr (and at the feature's width, silently).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = super::DEFAULT_COMPONENTS))]
    pub components: usize,
    /// Feature cache folder (default: a temporary one, deleted afterwards); the same cache as
    /// `fqe fit --cache` can be shared. Must be a folder, not inside the dataset folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub cache: Option<PathBuf>,
}

impl DetectOptions {
    /// The typed request these options name: a `holdout` fraction, when given, replaces the
    /// k-fold cross-validation over `folds`.
    #[must_use]
    pub fn request(&self) -> DetectRequest {
        DetectRequest {
            dataset: self.dataset.clone(),
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

/// Errors of a detect request.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting the detector cannot use (a wrong option, not wrong data).
    #[error("{0}")]
    Usage(String),
    /// The dataset folder could not be opened.
    #[error("cannot open LeRobot dataset {}", path.display())]
    Open {
        /// The dataset folder.
        path: PathBuf,
        /// Why (boxed: it would double the size of every result).
        #[source]
        source: Box<DataError>,
    },
    /// The feature text names nothing usable in the dataset (boxed: it is large, and rare).
    #[error(transparent)]
    Features(Box<crate::request::RequestError>),
    /// The settings, the labels or the features are unusable, or the fit failed (boxed: it
    /// is large).
    #[error(transparent)]
    Detector(Box<DetectorError>),
    /// The report could not be serialized.
    #[error("cannot serialize the detector report")]
    Serialize(#[source] serde_json::Error),
    /// An output file could not be written (neither is then touched).
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl From<crate::request::RequestError> for RequestError {
    fn from(e: crate::request::RequestError) -> Self {
        Self::Features(Box::new(e))
    }
}

impl From<DetectorError> for RequestError {
    fn from(e: DetectorError) -> Self {
        Self::Detector(Box::new(e))
    }
}

/// Receives what a detection reports while it runs.
pub trait DetectObserver {
    /// A line for the user, with its `note: ` or `warning: ` prefix.
    fn note(&self, line: &str);
    /// `done` of `total` terminal frames encoded.
    fn encoding(&self, done: usize, total: usize);
}

/// What [`detect_request`] wrote.
#[derive(Debug, Clone)]
pub struct DetectOutcome {
    /// The detection (labels, report, cache counts).
    pub detection: Detection,
    /// Where the report was written.
    pub report_path: PathBuf,
}

impl DetectRequest {
    /// The report path: [`Self::report`], else `out` with the extension `.detector.json`.
    #[must_use]
    pub fn report_path(&self) -> PathBuf {
        self.report
            .clone()
            .unwrap_or_else(|| self.out.with_extension("detector.json"))
    }

    /// Checks the settings against their bounds (components, `C`, validation), before any
    /// file is read.
    ///
    /// # Errors
    /// [`DetectorError::Fqe`] holding the [`crate::FqeError::Setting`] out of bounds.
    pub fn validate(&self) -> Result<(), DetectorError> {
        check_settings(self.components, self.c, self.validation)
    }
}

impl DetectOutcome {
    /// What `data detect` prints on stdout: the report's summary
    /// ([`DetectorReport::summary`]), then the files written (`out`, the labels file, with its
    /// episodes, and the report), ending in a newline.
    #[must_use]
    pub fn summary(&self, out: &Path) -> String {
        format!(
            "{}wrote {} ({} episodes) and {}\n",
            self.detection.report.summary(),
            out.display(),
            self.detection.episodes.len(),
            self.report_path.display()
        )
    }

    /// What `data detect` prints on stderr, where it is not lost in a redirected summary (the
    /// report keeps the warnings too): each warning, then how many terminal frames were encoded
    /// and read from the feature cache (when any were); each line ends in a newline.
    #[must_use]
    pub fn notes(&self) -> String {
        let d = &self.detection;
        let mut out: String = d
            .report
            .warnings
            .iter()
            .map(|w| format!("warning: {w}\n"))
            .collect();
        if d.encoded + d.cache_hits > 0 {
            out.push_str(&format!(
                "note: terminal frames: {} encoded, {} from the feature cache\n",
                d.encoded, d.cache_hits
            ));
        }
        out
    }
}

/// The message naming the option to change for an error that a different `--holdout` or
/// `--folds` fixes (a command-line usage error, not a problem of the labels file): a holdout
/// that holds out no labelled episode, or fewer labelled episodes than folds. `None` for any
/// other error, including too few episodes of one class, which no option fixes.
#[must_use]
pub fn option_message(e: &DetectorError) -> Option<String> {
    match e {
        DetectorError::EmptyHoldout {
            fraction, labelled, ..
        } => Some(format!(
            "--holdout {} of {labelled} labelled episodes holds out none; need at least 1 (raise --holdout, label more episodes, or use --folds)",
            crate::number::compact(*fraction)
        )),
        DetectorError::TooFewExamples {
            file,
            class: "episodes",
            count,
            needed,
            ..
        } => Some(format!(
            "--folds {needed} needs at least {needed} labelled episodes (one per fold), but {} labels {count}: lower --folds (2..={count}), label more episodes, or use --holdout",
            file.display()
        )),
        _ => None,
    }
}

/// The `schema` field of a JSON result file, whatever else it holds.
#[derive(serde::Deserialize)]
struct SchemaTag {
    schema: Option<String>,
}

/// Refuses a report path holding a file that is not a detector report, before any work: the
/// rename would silently replace it, and a `.json` name alone does not tell an FQE result's
/// `fqe.json` or an audit's `audit.json` from an earlier detector report. A missing file
/// passes; an existing one passes only with the `schema` [`super::DETECTOR_SCHEMA`].
///
/// # Errors
/// [`RequestError::Usage`] naming `--report` and what the file holds (or that it cannot be read).
pub fn check_report_file(report: &Path) -> Result<(), RequestError> {
    if !report.is_file() {
        return Ok(());
    }
    let text = std::fs::read(report).map_err(|e| {
        RequestError::Usage(format!(
            "--report {} exists but cannot be read ({e}), so it cannot be checked before it is replaced; give another file name",
            report.display()
        ))
    })?;
    let schema = serde_json::from_slice::<SchemaTag>(&text)
        .ok()
        .and_then(|t| t.schema);
    match schema {
        Some(s) if s == DETECTOR_SCHEMA => Ok(()),
        Some(s) => Err(RequestError::Usage(format!(
            "--report {} holds another kind of result (schema \"{s}\"), not a detector report (\"{DETECTOR_SCHEMA}\"); writing it would replace that file: give another file name",
            report.display()
        ))),
        None => Err(RequestError::Usage(format!(
            "--report {} exists and is not a detector report (not JSON or no `schema` field \"{DETECTOR_SCHEMA}\"); writing it would replace that file: give another file name",
            report.display()
        ))),
    }
}

/// The warning when `components` asks for more than the terminal frames can give: `n`
/// episodes' terminal frames span at most `n − 1` directions, and the component fit is capped
/// there ([`max_components`]). The feature's width also caps it, without a warning.
fn component_cap_warning(
    components: usize,
    ds: &LeRobotDataset,
    features: &FrameFeatures,
) -> Option<String> {
    let width = match features {
        FrameFeatures::Vector(c) => ds.feature(c).map_or(1, Feature::width),
        _ => Encoder::raw32().dim(),
    };
    let episodes = ds.episodes().len();
    let cap = max_components(episodes, width);
    (components > cap && cap < width).then(|| {
        format!(
            "warning: --components {components} capped at {cap}: the terminal frames of the {episodes} episodes (one per episode) span at most {cap} principal directions"
        )
    })
}

/// Runs the detection a request names: opens the dataset, resolves the features (`auto`: the
/// first image, else the first decodable video, else `observation.state`; `none` is refused),
/// trains the detector on the labelled episodes' terminal frames (raw 32×32 pixels through the
/// feature cache, or a vector column), measures its held-out accuracy, labels every episode,
/// and writes the full labels file (`out`) and the report ([`DetectRequest::report_path`],
/// pretty JSON and a newline) as one atomic set. Settings are checked again first.
///
/// # Errors
/// See [`RequestError`]; nothing is written on error.
pub fn detect_request(
    req: &DetectRequest,
    obs: &dyn DetectObserver,
) -> Result<DetectOutcome, RequestError> {
    req.validate()?;
    let ds = LeRobotDataset::open(&req.dataset).map_err(|source| RequestError::Open {
        path: req.dataset.clone(),
        source: Box::new(source),
    })?;
    let features = frame_features(&req.features, &ds, Some("observation.state"))?;
    if features == FrameFeatures::None {
        return Err(RequestError::Usage(
            "--features none: the detector needs an image feature or a vector column".into(),
        ));
    }
    for note in auto_skipped_videos(&req.features, &ds, &features) {
        obs.note(&note);
    }
    // Noted once the detector is trained: a run that fails on its labels should say why, not
    // first warn about a cap that never applied.
    let cap_warning = component_cap_warning(req.components, &ds, &features);
    let config = DetectorConfig {
        features,
        encoder: Encoder::raw32(),
        components: req.components,
        c: req.c,
        validation: req.validation,
        seed: req.seed,
        cache_dir: req.cache.clone(),
    };
    let detection = detect_with_progress(&ds, &req.labels, &config, &mut |done, total| {
        obs.encoding(done, total);
    })?;
    if let Some(w) = cap_warning {
        obs.note(&w);
    }
    let report_path = req.report_path();
    let json = report_json(&detection.report)?;
    write_all_atomic(&[
        (&req.out, detection.labels_csv().as_bytes()),
        (&report_path, &json),
    ])?;
    Ok(DetectOutcome {
        detection,
        report_path,
    })
}

/// The report as written: pretty JSON and a newline.
fn report_json(report: &DetectorReport) -> Result<Vec<u8>, RequestError> {
    let json = serde_json::to_vec_pretty(report).map_err(RequestError::Serialize)?;
    Ok([json.as_slice(), b"\n"].concat())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{FqeError, Setting};

    fn request() -> DetectRequest {
        DetectRequest {
            dataset: PathBuf::from("data"),
            labels: PathBuf::from("partial.csv"),
            out: PathBuf::from("res/labels.csv"),
            report: None,
            features: "auto".into(),
            validation: Validation::DEFAULT,
            seed: 0,
            c: 1.0,
            components: 32,
            cache: None,
        }
    }

    #[test]
    fn only_errors_an_option_fixes_name_the_option() {
        let holdout = DetectorError::EmptyHoldout {
            file: PathBuf::from("partial.csv"),
            fraction: 0.05,
            labelled: 8,
        };
        assert_eq!(
            option_message(&holdout).unwrap(),
            "--holdout 0.05 of 8 labelled episodes holds out none; need at least 1 (raise --holdout, label more episodes, or use --folds)"
        );
        let few = |class| DetectorError::TooFewExamples {
            file: PathBuf::from("partial.csv"),
            class,
            count: 3,
            needed: 5,
            reason: "5-fold cross-validation".into(),
        };
        assert_eq!(
            option_message(&few("episodes")).unwrap(),
            "--folds 5 needs at least 5 labelled episodes (one per fold), but partial.csv labels 3: lower --folds (2..=3), label more episodes, or use --holdout"
        );
        assert_eq!(option_message(&few("successes")), None);
    }

    #[test]
    fn the_report_defaults_beside_the_labels() {
        assert_eq!(
            request().report_path(),
            PathBuf::from("res/labels.detector.json")
        );
    }

    /// Each bound is its config type's, named by its setting.
    #[test]
    fn settings_out_of_bounds_name_their_setting() {
        request().validate().unwrap();
        let cases = [
            (
                DetectRequest {
                    components: 0,
                    ..request()
                },
                Setting::Components,
            ),
            (
                DetectRequest {
                    c: 0.0,
                    ..request()
                },
                Setting::C,
            ),
            (
                DetectRequest {
                    validation: Validation::Holdout { fraction: 1.5 },
                    ..request()
                },
                Setting::Holdout,
            ),
            (
                DetectRequest {
                    validation: Validation::KFold { folds: 101 },
                    ..request()
                },
                Setting::Folds,
            ),
        ];
        for (req, setting) in cases {
            match req.validate() {
                Err(DetectorError::Fqe(FqeError::Setting { setting: s, .. })) => {
                    assert_eq!(s, setting);
                }
                other => panic!("{setting:?}: {other:?}"),
            }
        }
    }
}
