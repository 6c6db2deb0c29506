//! The `data inspect`, `data labels` and `data frame` pipelines: open a dataset, check the
//! request against it, compute, and write the result file atomically
//! ([`crate::atomic::write_atomic`]). Output-path checks that are the same for every command
//! (extension, a path inside the dataset) stay with the caller, which makes them before any
//! file is read; nothing is printed here.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Feature, FeatureKind, LeRobotDataset, Rgb8Image, SuccessSource, render_inspect};
use crate::DataError;
use crate::atomic::WriteError;

/// Errors of a `data` request, each with a whole message.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting out of range, or a column the dataset does not offer for it (a wrong option,
    /// exit code 2; the message names the option).
    #[error("{0}")]
    Usage(String),
    /// The dataset folder cannot be opened as a LeRobot dataset.
    #[error("cannot open LeRobot dataset {}", path.display())]
    Open {
        /// The dataset folder.
        path: PathBuf,
        /// Why (names the file).
        #[source]
        source: Box<DataError>,
    },
    /// Reading the dataset's files failed (names the file).
    #[error(transparent)]
    Data(#[from] DataError),
    /// The decoded frame cannot be encoded as PNG.
    #[error("{0}")]
    Png(String),
    /// The inspection report cannot be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The result file cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Opens `dir`, naming it in the error.
fn open(dir: &Path) -> Result<LeRobotDataset, RequestError> {
    LeRobotDataset::open(dir).map_err(|source| RequestError::Open {
        path: dir.to_path_buf(),
        source: Box::new(source),
    })
}

/// A `data inspect` request: the dataset folder (the one holding `meta/info.json`) and how the
/// report is shown and judged.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct InspectRequest {
    /// Dataset folder (the one holding meta/info.json).
    #[cfg_attr(feature = "clap", arg(value_name = "DIR"))]
    pub dataset: PathBuf,
    /// Print the report as JSON instead of text.
    #[cfg_attr(feature = "clap", arg(long))]
    pub json: bool,
    /// Exit with code 3 when any problem is found.
    #[cfg_attr(feature = "clap", arg(long))]
    pub strict: bool,
}

/// What `data inspect` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectOutcome {
    /// The report as text ([`render_inspect`]) or as pretty JSON with a final newline.
    pub text: String,
    /// Why the dataset fails the check (exit code 3), after the report is shown: problems that
    /// stop `fqe fit` and `data detect`, or (with `strict`) any problem; `None` when it passes.
    pub refusal: Option<String>,
}

/// `data inspect`: the inspection report of the dataset `req.dataset`
/// ([`LeRobotDataset::inspect`]), as JSON when `req.json`, and whether it passes: blocking
/// problems always fail it, other problems only when `req.strict`.
///
/// # Errors
/// [`RequestError::Open`], [`RequestError::Data`] when the dataset cannot be read at all;
/// [`RequestError::Json`] when the report cannot be serialized.
pub fn inspect_request(req: &InspectRequest) -> Result<InspectOutcome, RequestError> {
    let dir = &req.dataset;
    let report = open(dir)?.inspect()?;
    let text = if req.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        render_inspect(&report)
    };
    // A problem that stops `fqe fit` is not a warning: the dataset is unusable as is.
    let refusal = if report.blocking_problems > 0 {
        Some(format!(
            "{} problem(s) make the dataset unusable to `fqe fit` and `data detect` (see the problems above), in {}",
            report.blocking_problems,
            dir.display()
        ))
    } else if req.strict && !report.problems.is_empty() {
        Some(format!(
            "{} problem(s) found in {} (--strict)",
            report.problems.len(),
            dir.display()
        ))
    } else {
        None
    };
    Ok(InspectOutcome { text, refusal })
}

/// How `data labels` turns an episode's rewards into its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelRule {
    /// Success when the episode's largest reward reaches the threshold ("ever reached").
    Max,
    /// Success when the reward of the episode's last frame reaches the threshold.
    Last,
}

impl LabelRule {
    /// The rule's name on the command line and in `data labels`' summary: `max` or `last`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Max => "max",
            Self::Last => "last",
        }
    }

    /// Parses `--rule`: one of the names of [`Self::name`], listed in the help.
    #[cfg(feature = "clap")]
    fn parser() -> impl clap::builder::TypedValueParser<Value = Self> {
        use clap::builder::TypedValueParser as _;
        clap::builder::PossibleValuesParser::new([Self::Max.name(), Self::Last.name()]).map(
            |name| {
                if name == Self::Last.name() {
                    Self::Last
                } else {
                    Self::Max
                }
            },
        )
    }
}

/// A `data labels` request: the dataset folder (the one holding `meta/info.json`), its reward
/// column (a declared numeric scalar column), which reward of each episode is compared with the
/// threshold (finite), and the labels file to write (CSV `episode_index,success`, success as
/// 0/1).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct LabelsRequest {
    /// Dataset folder (the one holding meta/info.json).
    #[cfg_attr(feature = "clap", arg(value_name = "DIR"))]
    pub dataset: PathBuf,
    /// Reward column: a declared numeric scalar column (a missing column, or one of another
    /// width or kind, is refused as a wrong option, exit code 2, listing the usable ones).
    #[cfg_attr(feature = "clap", arg(long, default_value = "next.reward"))]
    pub reward: String,
    /// `max` (peak reward over the episode) or `last` (reward of the last frame).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "max", value_parser = LabelRule::parser())
    )]
    pub rule: LabelRule,
    /// Smallest reward that counts as success (a finite number).
    #[cfg_attr(feature = "clap", arg(long))]
    pub threshold: f64,
    /// Labels file to write (CSV: the name must end in .csv; not inside the dataset folder;
    /// a missing parent folder is created).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub out: PathBuf,
}

/// What `data labels` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelsOutcome {
    /// Episodes labelled (every episode of the metadata).
    pub episodes: usize,
    /// Of them, the ones labelled a success.
    pub successes: usize,
}

impl LabelsRequest {
    /// Checks the settings that need no file: the threshold is finite.
    ///
    /// # Errors
    /// [`RequestError::Usage`] naming `--threshold`.
    pub fn validate(&self) -> Result<(), RequestError> {
        if self.threshold.is_finite() {
            Ok(())
        } else {
            Err(RequestError::Usage(format!(
                "--threshold {} must be a finite number",
                self.threshold
            )))
        }
    }
}

/// `data labels`: one row per episode of the metadata, in episode order, written to
/// `req.out` (a missing parent folder is created, as `fqe fit` and `data detect` create theirs).
///
/// # Errors
/// [`RequestError::Usage`] for a non-finite threshold or a reward column that is not a declared
/// numeric scalar column; [`RequestError::Open`], [`RequestError::Data`] when the dataset cannot
/// be read; [`RequestError::Write`].
pub fn labels_request(req: &LabelsRequest) -> Result<LabelsOutcome, RequestError> {
    req.validate()?;
    let dataset = open(&req.dataset)?;
    check_reward_column(&dataset, &req.reward)?;
    let (column, threshold) = (req.reward.clone(), req.threshold);
    let source = match req.rule {
        LabelRule::Last => SuccessSource::LastReward { column, threshold },
        LabelRule::Max => SuccessSource::MaxReward { column, threshold },
    };
    let labels = dataset.success_labels(&source)?;
    let mut csv = String::from("episode_index,success\n");
    for l in &labels {
        let _ = writeln!(csv, "{},{}", l.episode_index, u8::from(l.success));
    }
    crate::atomic::write_atomic(&req.out, csv.as_bytes())?;
    Ok(LabelsOutcome {
        episodes: labels.len(),
        successes: labels.iter().filter(|l| l.success).count(),
    })
}

/// Refuses a `--reward` that is not a declared numeric scalar column: the column is the user's
/// choice on a readable dataset, so a missing one and one of the wrong width or kind are the
/// same wrong option (like an undeclared `fqe fit --features` key), not a damaged dataset. The
/// message lists the columns that would do.
fn check_reward_column(dataset: &LeRobotDataset, reward: &str) -> Result<(), RequestError> {
    let scalar =
        |f: &Feature| f.kind == FeatureKind::Numeric && f.shape.iter().product::<usize>() == 1;
    let problem = match dataset.feature(reward) {
        Some(f) if scalar(f) => return Ok(()),
        Some(f) if f.kind != FeatureKind::Numeric => format!(
            "declares column \"{reward}\" with dtype {}; a reward must be a numeric column",
            f.dtype
        ),
        Some(f) => format!(
            "declares column \"{reward}\" with shape {:?} (width {}); a reward must be a scalar column (shape [1])",
            f.shape,
            f.shape.iter().product::<usize>()
        ),
        None => format!("declares no column \"{reward}\""),
    };
    let usable = feature_names(dataset, scalar);
    Err(RequestError::Usage(format!(
        "--reward {reward}: {} {problem}; numeric scalar columns usable as a reward: {usable}",
        dataset.root().join("meta/info.json").display()
    )))
}

/// The names of the dataset's features that pass `keep`, comma-separated, or `none`: what a
/// refusal of a feature option offers instead.
fn feature_names(dataset: &LeRobotDataset, keep: impl Fn(&Feature) -> bool) -> String {
    let names: Vec<&str> = dataset
        .features()
        .iter()
        .filter(|f| keep(f))
        .map(|f| f.name.as_str())
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// Refuses a `--key` that is not a declared image or video feature: like `--reward` (and
/// `fqe fit --features`), the feature is the user's choice on a readable dataset, so a wrong one
/// is a wrong option (exit code 2 at the CLI), and the message lists the camera features. An
/// episode or frame the data lacks stays an input error, found when the data is read.
fn check_frame_key(dataset: &LeRobotDataset, key: &str) -> Result<(), RequestError> {
    if dataset.feature(key).is_some_and(Feature::is_camera) {
        return Ok(());
    }
    let cameras = feature_names(dataset, Feature::is_camera);
    Err(RequestError::Usage(format!(
        "--key {key}: {} declares no image or video feature of that name; camera features: {cameras}",
        dataset.root().join("meta/info.json").display()
    )))
}

/// A `data frame` request: the dataset folder (the one holding `meta/info.json`), the camera,
/// episode and frame, the timestamp tolerance in seconds (> 0; default
/// [`super::DEFAULT_TOLERANCE_S`]), and the PNG file to write.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct FrameRequest {
    /// Dataset folder (the one holding meta/info.json).
    #[cfg_attr(feature = "clap", arg(value_name = "DIR"))]
    pub dataset: PathBuf,
    /// Camera feature key (`video` or `image` dtype).
    #[cfg_attr(feature = "clap", arg(long))]
    pub key: String,
    /// Episode index.
    #[cfg_attr(feature = "clap", arg(long))]
    pub episode: i64,
    /// Frame index within the episode.
    #[cfg_attr(feature = "clap", arg(long))]
    pub frame: i64,
    /// Largest distance between the frame's timestamp and the decoded frame, seconds
    /// (LeRobot's `tolerance_s`).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = super::DEFAULT_TOLERANCE_S)
    )]
    pub tolerance_s: f64,
    /// PNG file to write (must end in .png; not inside the dataset folder; a missing
    /// parent folder is created).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub out: PathBuf,
}

impl FrameRequest {
    /// Checks the settings that need no file: the tolerance is a positive number.
    ///
    /// # Errors
    /// [`RequestError::Usage`] naming `--tolerance-s`.
    pub fn validate(&self) -> Result<(), RequestError> {
        if self.tolerance_s.is_finite() && self.tolerance_s > 0.0 {
            Ok(())
        } else {
            Err(RequestError::Usage(format!(
                "--tolerance-s {} must be a positive number",
                self.tolerance_s
            )))
        }
    }

    /// The line saying what [`frame_request`] wrote: episode, frame, key, size and file.
    #[must_use]
    pub fn summary(&self, image: &Rgb8Image) -> String {
        format!(
            "episode {}, frame {} of \"{}\": {}x{} → {}\n",
            self.episode,
            self.frame,
            self.key,
            image.width,
            image.height,
            self.out.display()
        )
    }
}

/// `data frame`: the frame decoded ([`LeRobotDataset::read_frame`]), then written as an 8-bit
/// RGB PNG to `req.out`, so a failing decode leaves nothing there. Returns the decoded frame.
///
/// # Errors
/// [`RequestError::Usage`] for a tolerance that is not positive or a `key` that is no declared
/// image or video feature; [`RequestError::Open`], [`RequestError::Data`] for a dataset,
/// episode, frame or video that cannot be read; [`RequestError::Png`], [`RequestError::Write`].
pub fn frame_request(req: &FrameRequest) -> Result<Rgb8Image, RequestError> {
    req.validate()?;
    let dataset = open(&req.dataset)?;
    check_frame_key(&dataset, &req.key)?;
    let image = dataset.read_frame(req.episode, req.frame, &req.key, req.tolerance_s)?;
    let png = image.to_png().map_err(RequestError::Png)?;
    crate::atomic::write_atomic(&req.out, &png)?;
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_name_their_option() {
        let labels = LabelsRequest {
            dataset: "ds".into(),
            reward: "next.reward".into(),
            rule: LabelRule::Max,
            threshold: f64::NAN,
            out: "labels.csv".into(),
        };
        let err = labels.validate().unwrap_err().to_string();
        assert_eq!(err, "--threshold NaN must be a finite number");
        assert!(
            LabelsRequest {
                threshold: 0.9,
                ..labels
            }
            .validate()
            .is_ok()
        );
        let frame = FrameRequest {
            dataset: "ds".into(),
            key: "observation.image".into(),
            episode: 0,
            frame: 3,
            tolerance_s: 0.0,
            out: "f.png".into(),
        };
        let err = frame.validate().unwrap_err().to_string();
        assert_eq!(err, "--tolerance-s 0 must be a positive number");
        assert!(
            FrameRequest {
                tolerance_s: 1e-4,
                ..frame
            }
            .validate()
            .is_ok()
        );
    }

    #[test]
    fn a_missing_dataset_is_named_with_its_cause_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let err = inspect_request(&InspectRequest {
            dataset: dir.path().join("none"),
            json: false,
            strict: false,
        })
        .unwrap_err();
        let RequestError::Open { path, source } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(path, &dir.path().join("none"));
        assert!(!err.to_string().contains(&source.to_string()));
    }
}
