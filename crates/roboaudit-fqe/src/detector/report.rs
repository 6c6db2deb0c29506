//! The detector's report (`roboaudit.detector.v1`), its warnings, a compact text summary, and
//! the full labels file it writes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roboaudit_data::lerobot::LeRobotDataset;
use serde::Serialize;

use super::validation::HeldOutScores;
use super::{
    DETECTOR_SCHEMA, Detection, DetectorConfig, LogisticModel, MIN_CLASS_EXAMPLES, THRESHOLD,
    TerminalFeatures, Validation,
};

/// Below this many held-out episodes the report warns that the accuracy is imprecise (the
/// Wilson 95% interval of 20 episodes is about ±0.2 wide at 80%).
const FEW_HELDOUT: usize = 20;

/// Episodes per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ClassCounts {
    /// Successes.
    pub successes: usize,
    /// Failures.
    pub failures: usize,
}

impl ClassCounts {
    /// Counts `labels`.
    pub fn of(labels: impl Iterator<Item = bool>) -> Self {
        let mut c = Self::default();
        for l in labels {
            if l {
                c.successes += 1;
            } else {
                c.failures += 1;
            }
        }
        c
    }

    /// Successes plus failures.
    pub fn total(&self) -> usize {
        self.successes + self.failures
    }
}

/// One logistic-regression fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FitSummary {
    /// Episodes it was trained on.
    pub n_train: usize,
    /// Newton iterations.
    pub iterations: usize,
    /// Whether the solver converged.
    pub converged: bool,
}

impl FitSummary {
    pub(super) fn of(model: &LogisticModel, n_train: usize) -> Self {
        Self {
            n_train,
            iterations: model.iterations,
            converged: model.converged,
        }
    }
}

/// One split of the validation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FoldReport {
    /// Training episodes.
    pub n_train: usize,
    /// Held-out episodes.
    pub n_heldout: usize,
    /// The held-out `episode_index`es, ascending (the seeded split, for reproduction).
    pub heldout_episodes: Vec<i64>,
    /// The fit on the training episodes.
    pub fit: FitSummary,
}

/// The accuracy block: how the labelled episodes were split and the held-out scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidationReport {
    /// Holdout or k-fold, with its setting.
    #[serde(flatten)]
    pub method: Validation,
    /// One entry per split (one for a holdout).
    pub folds: Vec<FoldReport>,
    /// Scores of the held-out predictions, pooled over the folds.
    pub scores: HeldOutScores,
}

/// Everything [`detect`](super::detect) did, as written to the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DetectorReport {
    /// [`DETECTOR_SCHEMA`].
    pub schema: &'static str,
    /// Dataset folder.
    pub dataset: PathBuf,
    /// The partial labels file.
    pub labels_file: PathBuf,
    /// Features: `observation.image:raw32-pca32`, `observation.state:std-pca8`.
    pub features: String,
    /// Encoder id and weights hash of an image feature.
    pub encoder: Option<String>,
    /// Components requested.
    pub components_requested: usize,
    /// Components kept.
    pub components: usize,
    /// Logistic regression's `C`.
    pub c: f64,
    /// Decision threshold on `P(success)`.
    pub threshold: f64,
    /// Seed of the split and the component fit.
    pub seed: u64,
    /// Episodes in the dataset.
    pub episodes: usize,
    /// Labelled episodes per class.
    pub labelled: ClassCounts,
    /// Held-out accuracy.
    pub validation: ValidationReport,
    /// The final fit on every labelled episode.
    pub final_fit: FitSummary,
    /// Labels the detector gave the unlabelled episodes.
    pub predicted: ClassCounts,
    /// What a reader must know before trusting the labels.
    pub warnings: Vec<String>,
}

impl DetectorReport {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        ds: &LeRobotDataset,
        labels_file: &Path,
        config: &DetectorConfig,
        feats: &TerminalFeatures,
        labelled: ClassCounts,
        validation: ValidationReport,
        final_fit: FitSummary,
        predicted: ClassCounts,
    ) -> Self {
        let mut report = Self {
            schema: DETECTOR_SCHEMA,
            dataset: ds.root().to_path_buf(),
            labels_file: labels_file.to_path_buf(),
            features: feats.name.clone(),
            encoder: feats.encoder.clone(),
            components_requested: config.components,
            components: feats.width,
            c: config.c,
            threshold: THRESHOLD,
            seed: config.seed,
            episodes: feats.episode_index.len(),
            labelled,
            validation,
            final_fit,
            predicted,
            warnings: Vec::new(),
        };
        report.warnings = warnings(&report);
        report
    }
}

fn warnings(r: &DetectorReport) -> Vec<String> {
    let mut out = Vec::new();
    for (count, class) in [
        (r.labelled.successes, "successes"),
        (r.labelled.failures, "failures"),
    ] {
        if count < MIN_CLASS_EXAMPLES {
            out.push(format!(
                "only {count} labelled {class} (fewer than {MIN_CLASS_EXAMPLES}): the detector has barely seen the class and its held-out scores rest on a handful of episodes; label more {class}"
            ));
        }
    }
    let s = &r.validation.scores;
    if s.n_heldout == 0 {
        out.push(
            "no held-out episodes: accuracy not measured (label more episodes or raise --holdout)"
                .into(),
        );
    } else if s.balanced_accuracy.is_none() {
        out.push(
            "the held-out episodes hold one class only: balanced accuracy, AUROC and precision or recall are undefined".into(),
        );
    }
    if (1..FEW_HELDOUT).contains(&s.n_heldout) {
        let ci = s
            .accuracy_interval
            .map(|i| format!(" (95% interval {:.2}–{:.2})", i.lo, i.hi))
            .unwrap_or_default();
        out.push(format!(
            "only {} held-out episodes: the accuracy is imprecise{ci}",
            s.n_heldout
        ));
    }
    let unconverged = r
        .validation
        .folds
        .iter()
        .filter(|f| !f.fit.converged)
        .count()
        + usize::from(!r.final_fit.converged);
    if unconverged > 0 {
        out.push(format!(
            "{unconverged} logistic-regression fit(s) did not converge: lower --c"
        ));
    }
    if r.predicted.total() == 0 {
        out.push("every episode is labelled: the detector predicted nothing".into());
    }
    out
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.3}"))
}

impl DetectorReport {
    /// A few lines for a terminal: split, held-out scores, predictions, warnings.
    pub fn summary(&self) -> String {
        let v = &self.validation;
        let s = &v.scores;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "success detector: {} episodes, {} labelled ({} successes, {} failures); features {} ({} components), C = {}",
            self.episodes,
            self.labelled.total(),
            self.labelled.successes,
            self.labelled.failures,
            self.features,
            self.components,
            self.c
        );
        let split = match v.method {
            Validation::Holdout { fraction } => format!(
                "holdout {fraction} (seed {}): trained on {}, held out {}",
                self.seed,
                v.folds.first().map_or(0, |f| f.n_train),
                s.n_heldout
            ),
            Validation::KFold { folds } => {
                let lo = v.folds.iter().map(|f| f.n_train).min().unwrap_or(0);
                let hi = v.folds.iter().map(|f| f.n_train).max().unwrap_or(0);
                let range = if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}–{hi}")
                };
                format!(
                    "{folds}-fold (seed {}): trained on {range} per fold, each of {} held out once",
                    self.seed, s.n_heldout
                )
            }
        };
        let _ = writeln!(out, "  {split}");
        let ci = s
            .accuracy_interval
            .map(|i| format!(" [{:.3}, {:.3}]", i.lo, i.hi))
            .unwrap_or_default();
        let c = s.confusion;
        let _ = writeln!(
            out,
            "  held-out accuracy {}{ci}, balanced {}, precision {}, recall {}, AUROC {}",
            opt(s.accuracy),
            opt(s.balanced_accuracy),
            opt(s.precision),
            opt(s.recall),
            opt(s.auroc)
        );
        let _ = writeln!(
            out,
            "  confusion: TP {} FP {} TN {} FN {}",
            c.true_positive, c.false_positive, c.true_negative, c.false_negative
        );
        let _ = writeln!(
            out,
            "  predicted {} unlabelled episodes: {} successes, {} failures",
            self.predicted.total(),
            self.predicted.successes,
            self.predicted.failures
        );
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}

impl Detection {
    /// The full labels file, CSV: `episode_index,success,source,probability`, one row per
    /// episode in episode order; `success` 0/1, `source` `label` or `detector`, `probability`
    /// the final detector's `P(success)` to 6 decimals. `fqe fit --labels` and
    /// [`read_labels_file`](roboaudit_data::lerobot::read_labels_file) read it (extra columns
    /// are ignored).
    pub fn labels_csv(&self) -> String {
        let mut out = String::from("episode_index,success,source,probability\n");
        for e in &self.episodes {
            let _ = writeln!(
                out,
                "{},{},{},{:.6}",
                e.episode_index,
                u8::from(e.success),
                e.source.as_str(),
                e.probability
            );
        }
        out
    }
}
