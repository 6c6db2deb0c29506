//! Success detector (SPEC.md §3: the terminal label `r_i` comes from "ground truth, a labels
//! file, or a success detector"; seed 003 §3 "success detector"): learns `r_i` from the
//! terminal frames of the episodes that a partial labels file labels, says how accurate it is on
//! held-out labelled episodes, and labels every other episode.
//!
//! Pipeline ([`detect`]):
//! 1. the partial labels file (`episode_index`, `success`; any other columns ignored) is read
//!    and checked against the dataset: every row must name an episode it has, and both classes
//!    must occur;
//! 2. [`features::terminal_features`]: the last frame of every episode through the frozen
//!    [`Encoder`] and the feature cache (or a numeric vector column), reduced to principal
//!    components fitted on those terminal frames, then standardized — label-free steps, so they
//!    see every episode;
//! 3. [`validation`]: a seeded stratified k-fold (default 5) or holdout split of the labelled
//!    episodes; L2
//!    logistic regression ([`logistic::fit_logistic`], scikit-learn's objective) is trained on
//!    each training part and scored on its held-out part (accuracy with a Wilson interval,
//!    balanced accuracy, precision, recall, AUROC, confusion counts);
//! 4. the detector is refitted on every labelled episode and predicts the rest: success when
//!    `P(success) ≥ 0.5` ([`THRESHOLD`]). Labelled episodes keep their given label.
//!
//! The output ([`Detection::labels_csv`]) is a full labels file that `fqe fit --labels` reads:
//! `episode_index, success, source (label | detector), probability`. Same inputs and seed give
//! the same bytes.

mod error;
pub mod features;
pub mod logistic;
mod report;
pub mod request;
pub mod synthetic;
pub mod validation;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use roboaudit_data::DataError;
use roboaudit_data::lerobot::{LeRobotDataset, read_labels_file};
use serde::Serialize;

pub use error::DetectorError;
pub use features::{TerminalFeatures, terminal_features};
pub use logistic::{LogisticConfig, LogisticModel, fit_logistic};
pub use report::{ClassCounts, DetectorReport, FitSummary, FoldReport, ValidationReport};
pub use validation::{Confusion, HeldOutScores, Split, Validation, score_predictions};

use crate::encoder::Encoder;
use crate::load::FrameFeatures;

/// Schema tag of the detector report.
pub const DETECTOR_SCHEMA: &str = "roboaudit.detector.v1";
/// An episode is predicted a success when `P(success)` is at least this.
pub const THRESHOLD: f64 = 0.5;
/// Below this many labelled episodes of a class the report warns: the held-out scores rest on
/// a handful of examples and the detector has barely seen the class.
pub const MIN_CLASS_EXAMPLES: usize = 5;
/// Default principal components of the terminal frames' features.
pub const DEFAULT_COMPONENTS: usize = 32;
/// Default inverse regularization strength `C` of the logistic regression.
pub const DEFAULT_C: f64 = 1.0;
/// Default seed of the split and of the component fit.
pub const DEFAULT_SEED: u64 = 0;

/// Settings of [`detect`].
#[derive(Debug, Clone, PartialEq)]
pub struct DetectorConfig {
    /// Source of the terminal-frame features: an `image` feature or a numeric vector column
    /// ([`FrameFeatures::None`] is refused).
    pub features: FrameFeatures,
    /// Frozen encoder of an image feature (unused for a vector column).
    pub encoder: Encoder,
    /// Principal components kept (at most the terminal frames' rank), ≥ 1.
    pub components: usize,
    /// Logistic regression's inverse regularization strength `C > 0`.
    pub c: f64,
    /// How accuracy is measured on the labelled episodes.
    pub validation: Validation,
    /// Seed of the split and of the component fit.
    pub seed: u64,
    /// Feature cache folder (`None`: a temporary cache, deleted afterwards).
    pub cache_dir: Option<PathBuf>,
}

impl DetectorConfig {
    /// Defaults for `features`: raw 32×32 pixels, 32 components, `C = 1`, stratified 5-fold
    /// cross-validation, seed 0, a temporary cache.
    pub fn new(features: FrameFeatures) -> Self {
        Self {
            features,
            encoder: Encoder::raw32(),
            components: DEFAULT_COMPONENTS,
            c: DEFAULT_C,
            validation: Validation::DEFAULT,
            seed: DEFAULT_SEED,
            cache_dir: None,
        }
    }

    /// Checks the settings against their bounds, in the order components, `C`, validation,
    /// then the feature source.
    ///
    /// # Errors
    /// [`DetectorError::Fqe`] holding [`crate::FqeError::Setting`] for components outside
    /// `1..=`[`crate::bounds_settings::MAX_COMPONENTS`], `C` not finite and > 0, a holdout
    /// fraction outside (0, 1) or folds outside `2..=`[`crate::bounds_settings::MAX_FOLDS`];
    /// [`DetectorError::InvalidConfig`] for no feature source.
    pub fn validate(&self) -> Result<(), DetectorError> {
        check_settings(self.components, self.c, self.validation)?;
        if self.features == FrameFeatures::None {
            return Err(DetectorError::InvalidConfig(
                "the detector needs an image feature or a vector column, not none".into(),
            ));
        }
        Ok(())
    }

    fn logistic(&self) -> LogisticConfig {
        LogisticConfig {
            c: self.c,
            ..LogisticConfig::default()
        }
    }
}

/// The bounds of the detector's settings, each checked by its own config type:
/// [`crate::bounds_settings::check_components`], [`LogisticConfig::validate`] (`C`),
/// [`Validation::validate`].
///
/// # Errors
/// The first [`crate::FqeError::Setting`] (in [`DetectorError::Fqe`]).
pub fn check_settings(
    components: usize,
    c: f64,
    validation: Validation,
) -> Result<(), DetectorError> {
    let setting = |e: crate::FqeError| DetectorError::Fqe(e);
    crate::bounds_settings::check_components(components).map_err(setting)?;
    LogisticConfig {
        c,
        ..LogisticConfig::default()
    }
    .validate()
    .map_err(setting)?;
    validation.validate().map_err(setting)
}

/// Where an episode's label in the output comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelOrigin {
    /// Given by the partial labels file (kept as given).
    Label,
    /// Predicted by the detector.
    Detector,
}

impl LabelOrigin {
    /// `label` or `detector`, as the labels file spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Label => "label",
            Self::Detector => "detector",
        }
    }
}

/// One episode's label in the output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EpisodeDetection {
    /// `episode_index`.
    pub episode_index: i64,
    /// The label: the given one, or `probability ≥ THRESHOLD`.
    pub success: bool,
    /// Given or predicted.
    pub source: LabelOrigin,
    /// The final detector's `P(success)` in `[0, 1]` (for a labelled episode an in-sample
    /// value: one far from its label points at a labelling error or an unusual episode).
    pub probability: f64,
}

/// The result of [`detect`]: a label for every episode, and the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// Every episode of the dataset, in episode order.
    pub episodes: Vec<EpisodeDetection>,
    /// Settings, held-out scores, counts and warnings.
    pub report: DetectorReport,
    /// Terminal frames found in the feature cache (kept out of the report, whose bytes depend
    /// only on the inputs and the seed, not on what an earlier run cached).
    pub cache_hits: usize,
    /// Terminal frames encoded in this run.
    pub encoded: usize,
}

/// Trains the detector on the episodes `labels_file` labels and labels every episode of `ds`.
///
/// # Errors
/// [`DetectorError::Fqe`] (a setting out of bounds) and [`DetectorError::InvalidConfig`] from
/// [`DetectorConfig::validate`];
/// [`DetectorError::NoLabels`], [`DetectorError::UnknownEpisode`] (naming the row),
/// [`DetectorError::SingleClass`] and [`DetectorError::TooFewExamples`] for an unusable labels
/// file; [`DetectorError::EmptyHoldout`] for a holdout fraction that holds out no labelled
/// episode (all before any frame is read); [`DetectorError::Data`] when it cannot be read (naming file, row and column);
/// [`DetectorError::MissingFeature`] and the errors of [`terminal_features`].
pub fn detect(
    ds: &LeRobotDataset,
    labels_file: &Path,
    config: &DetectorConfig,
) -> Result<Detection, DetectorError> {
    detect_with_progress(ds, labels_file, config, &mut |_, _| {})
}

/// [`detect`], calling `progress(done, total)` as terminal images are encoded (see
/// [`terminal_features`]); results do not depend on it.
///
/// # Errors
/// As [`detect`].
pub fn detect_with_progress(
    ds: &LeRobotDataset,
    labels_file: &Path,
    config: &DetectorConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Detection, DetectorError> {
    config.validate()?;
    let given = read_partial_labels(ds, labels_file)?;
    let labelled = ClassCounts::of(given.values().copied());
    check_classes(labels_file, labelled, config.validation)?;
    let feats = terminal_features(
        ds,
        &config.features,
        &config.encoder,
        config.components,
        config.cache_dir.as_deref(),
        config.seed,
        progress,
    )?;
    let width = feats.width;
    let row_of: HashMap<i64, usize> = feats
        .episode_index
        .iter()
        .enumerate()
        .map(|(r, e)| (*e, r))
        .collect();
    // Labelled episodes in episode order (so that reordering the labels file changes nothing).
    let rows: Vec<usize> = given
        .keys()
        .filter_map(|e| row_of.get(e).copied())
        .collect();
    let y: Vec<bool> = given.values().copied().collect();
    let x_of = |positions: &[usize]| -> Vec<f64> {
        positions
            .iter()
            .flat_map(|&p| {
                feats.values[rows[p] * width..(rows[p] + 1) * width]
                    .iter()
                    .copied()
            })
            .collect()
    };
    let logistic = config.logistic();
    let splits = validation::stratified_splits(&y, config.validation, config.seed);
    let (mut held_y, mut held_p, mut folds) = (vec![], vec![], vec![]);
    for split in &splits {
        let train_y: Vec<bool> = split.train.iter().map(|&p| y[p]).collect();
        let model = fit_logistic(&x_of(&split.train), &train_y, width, &logistic)?;
        held_p.extend(model.predict_proba(&x_of(&split.heldout)));
        held_y.extend(split.heldout.iter().map(|&p| y[p]));
        folds.push(FoldReport {
            n_train: split.train.len(),
            n_heldout: split.heldout.len(),
            heldout_episodes: split
                .heldout
                .iter()
                .map(|&p| feats.episode_index[rows[p]])
                .collect(),
            fit: FitSummary::of(&model, split.train.len()),
        });
    }
    let scores = score_predictions(&held_y, &held_p, THRESHOLD)?;
    let all: Vec<usize> = (0..y.len()).collect();
    let model = fit_logistic(&x_of(&all), &y, width, &logistic)?;
    let probability = model.predict_proba(&feats.values);
    let episodes: Vec<EpisodeDetection> = feats
        .episode_index
        .iter()
        .zip(&probability)
        .map(|(e, p)| {
            let (success, source) = match given.get(e) {
                Some(label) => (*label, LabelOrigin::Label),
                None => (*p >= THRESHOLD, LabelOrigin::Detector),
            };
            EpisodeDetection {
                episode_index: *e,
                success,
                source,
                probability: *p,
            }
        })
        .collect();
    let predicted = ClassCounts::of(
        episodes
            .iter()
            .filter(|e| e.source == LabelOrigin::Detector)
            .map(|e| e.success),
    );
    let report = DetectorReport::new(
        ds,
        labels_file,
        config,
        &feats,
        labelled,
        ValidationReport {
            method: config.validation,
            folds,
            scores,
        },
        FitSummary::of(&model, y.len()),
        predicted,
    );
    Ok(Detection {
        episodes,
        report,
        cache_hits: feats.cache_hits,
        encoded: feats.encoded,
    })
}

/// The labels file's episodes and labels, sorted by episode; every row must name an episode
/// of `ds`. Columns other than `episode_index` and `success` are ignored, so a full labels file
/// written by [`detect`] can be fed back as a partial one.
fn read_partial_labels(
    ds: &LeRobotDataset,
    file: &Path,
) -> Result<BTreeMap<i64, bool>, DetectorError> {
    let labels = match read_labels_file(file) {
        Ok(l) => l,
        Err(DataError::Empty { .. }) => {
            return Err(DetectorError::NoLabels {
                file: file.to_path_buf(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = BTreeMap::new();
    for (k, label) in labels.iter().enumerate() {
        if ds.episode(label.episode_index).is_none() {
            return Err(DetectorError::UnknownEpisode {
                file: file.to_path_buf(),
                row: k + 1,
                episode_index: label.episode_index,
                dataset: ds.root().to_path_buf(),
                episodes: ds.episodes().len(),
            });
        }
        out.insert(label.episode_index, label.success);
    }
    Ok(out)
}

/// Both classes must be labelled; k-fold cross-validation needs two of each (so that every
/// training fold holds both) and at least as many labelled episodes as folds; a holdout must
/// hold out at least one episode.
fn check_classes(
    file: &Path,
    labelled: ClassCounts,
    validation: Validation,
) -> Result<(), DetectorError> {
    let n = labelled.successes + labelled.failures;
    for (count, class, other) in [
        (labelled.successes, "successes", "failures"),
        (labelled.failures, "failures", "successes"),
    ] {
        if count == 0 {
            return Err(DetectorError::SingleClass {
                file: file.to_path_buf(),
                class: other,
                count: n,
            });
        }
        if let Validation::KFold { folds } = validation
            && count < 2
        {
            return Err(DetectorError::TooFewExamples {
                file: file.to_path_buf(),
                class,
                count,
                needed: 2,
                reason: format!(
                    "{folds}-fold cross-validation (every training fold must hold the class)"
                ),
            });
        }
    }
    if let Validation::Holdout { fraction } = validation
        && validation::holdout_size(fraction, labelled.successes)
            + validation::holdout_size(fraction, labelled.failures)
            == 0
    {
        return Err(DetectorError::EmptyHoldout {
            file: file.to_path_buf(),
            fraction,
            labelled: n,
        });
    }
    if let Validation::KFold { folds } = validation
        && n < folds
    {
        return Err(DetectorError::TooFewExamples {
            file: file.to_path_buf(),
            class: "episodes",
            count: n,
            needed: folds,
            reason: format!("{folds}-fold cross-validation (one per fold)"),
        });
    }
    Ok(())
}
