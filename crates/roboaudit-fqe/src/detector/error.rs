//! Errors of the success detector: what is wrong with the labels or the feature, as typed
//! variants a caller can match; failures of the FQE machinery it runs on pass through.

use std::path::PathBuf;

use crate::FqeError;

/// Errors of [`detect`](super::detect).
#[derive(Debug, thiserror::Error)]
pub enum DetectorError {
    /// The labels file has a header but no rows: there is nothing to train on.
    #[error(
        "no labelled episodes: the detector needs labelled successes and failures to learn from, in {}",
        file.display()
    )]
    NoLabels {
        /// The labels file.
        file: PathBuf,
    },
    /// A labels row names an episode that the dataset's metadata does not describe.
    #[error(
        "row {row}, column \"episode_index\": episode {episode_index} is not in the dataset {} ({episodes} episodes), in {}",
        dataset.display(), file.display()
    )]
    UnknownEpisode {
        /// The labels file.
        file: PathBuf,
        /// 1-based data row.
        row: usize,
        /// The unknown episode.
        episode_index: i64,
        /// The dataset folder.
        dataset: PathBuf,
        /// Episodes the dataset has.
        episodes: usize,
    },
    /// Every labelled episode has the same label: a detector cannot learn to tell the classes
    /// apart (and logistic regression's unpenalized intercept would run to infinity).
    #[error(
        "all {count} labelled episodes are {class}: label at least one success and one failure, in {}",
        file.display()
    )]
    SingleClass {
        /// The labels file.
        file: PathBuf,
        /// `successes` or `failures`: the one class present.
        class: &'static str,
        /// Labelled episodes.
        count: usize,
    },
    /// A class has too few labelled episodes for the validation asked for.
    #[error("{count} labelled {class}, but {reason} needs at least {needed}, in {}", file.display())]
    TooFewExamples {
        /// The labels file.
        file: PathBuf,
        /// `successes` or `failures`.
        class: &'static str,
        /// Labelled episodes of that class.
        count: usize,
        /// The least that works.
        needed: usize,
        /// Why, e.g. `5-fold cross-validation` (every training fold must hold the class).
        reason: String,
    },
    /// A holdout fraction so small that no labelled episode is held out: the accuracy the
    /// detector reports would rest on nothing.
    #[error(
        "holdout fraction {} of {labelled} labelled episodes holds out none; need at least 1, in {}",
        crate::number::compact(*fraction), file.display()
    )]
    EmptyHoldout {
        /// The labels file.
        file: PathBuf,
        /// The fraction asked for.
        fraction: f64,
        /// Labelled episodes.
        labelled: usize,
    },
    /// A terminal frame's feature cannot be learnt from: a value that is not finite, an episode
    /// without a value or an image. The message names the column, episode and frame.
    #[error("unusable detector input: {message}, in {}", file.display())]
    InvalidFeature {
        /// What is wrong and where in the data.
        message: String,
        /// The data file holding the frame (the dataset folder when not known).
        file: PathBuf,
    },
    /// The feature named for the detector is not declared by the dataset.
    #[error("feature \"{feature}\" is not declared; declared features: {declared}, in {}", info.display())]
    MissingFeature {
        /// The feature asked for.
        feature: String,
        /// The declared features, `name (dtype)`, comma-separated.
        declared: String,
        /// The dataset's `meta/info.json`.
        info: PathBuf,
    },
    /// A setting is out of range.
    #[error("invalid detector configuration: {0}")]
    InvalidConfig(String),
    /// Reading the dataset or the labels file failed (naming file, row and column).
    #[error(transparent)]
    Data(#[from] roboaudit_data::DataError),
    /// The encoder, feature cache, component fit or solver failed.
    #[error(transparent)]
    Fqe(FqeError),
}

/// A reader error that surfaced through the FQE machinery is still a reader error: one
/// variant, [`DetectorError::Data`], holds them all, so a caller matches it in one place.
impl From<FqeError> for DetectorError {
    fn from(e: FqeError) -> Self {
        match e {
            FqeError::Data(d) => Self::Data(d),
            other => Self::Fqe(other),
        }
    }
}

impl DetectorError {
    /// Whether the error is a bad setting (a command-line usage error): an undeclared feature,
    /// an out-of-range value, or a holdout fraction that holds out no labelled episode. Everything else but I/O failures is invalid input.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::MissingFeature { .. }
                | Self::InvalidConfig(_)
                | Self::EmptyHoldout { .. }
                | Self::Fqe(FqeError::InvalidConfig(_) | FqeError::Setting { .. })
        )
    }

    /// Whether the error lies in the input files (labels, dataset): exit code 3 in the CLI.
    pub fn is_invalid_input(&self) -> bool {
        match self {
            Self::NoLabels { .. }
            | Self::UnknownEpisode { .. }
            | Self::SingleClass { .. }
            | Self::TooFewExamples { .. }
            | Self::InvalidFeature { .. }
            | Self::Data(_) => true,
            Self::Fqe(e) => matches!(
                e,
                FqeError::Data(_) | FqeError::InvalidInputs(_) | FqeError::BadFile { .. }
            ),
            Self::MissingFeature { .. } | Self::InvalidConfig(_) | Self::EmptyHoldout { .. } => {
                false
            }
        }
    }
}
