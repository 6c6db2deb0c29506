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
use crate::number::compact;

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
    if let Some(warning) = degenerate(s) {
        out.push(warning);
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

/// The warning for a detector no better than chance on held-out episodes of both classes:
/// one that predicts a single class for all of them (balanced accuracy exactly 0.5, whatever
/// the plain accuracy — which is then just the class balance), or any other balanced accuracy
/// of at most 0.5.
fn degenerate(s: &HeldOutScores) -> Option<String> {
    let balanced = s.balanced_accuracy?;
    let c = s.confusion;
    let predicted_successes = c.true_positive + c.false_positive;
    let predicted_failures = c.true_negative + c.false_negative;
    let single = match (predicted_successes, predicted_failures) {
        (0, _) => Some("failure"),
        (_, 0) => Some("success"),
        _ => None,
    };
    if let Some(class) = single {
        return Some(format!(
            "degenerate detector: it predicts {class} for every one of the {} held-out episodes (balanced accuracy {balanced:.2}): it tells the classes apart no better than a constant, so its accuracy is only the class balance and its predicted labels carry no information; check --features, raise --c, or label more episodes",
            s.n_heldout
        ));
    }
    (balanced <= 0.5).then(|| {
        format!(
            "balanced accuracy {balanced:.3} on the held-out episodes is no better than chance (0.5): the predicted labels carry no information; check --features, raise --c, or label more episodes"
        )
    })
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.3}"))
}

impl DetectorReport {
    /// A few lines for a terminal: split, held-out scores, predictions. The warnings are left
    /// to the caller ([`warnings`](Self::warnings)): the CLI prints them on stderr.
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
            compact(self.c)
        );
        let split = match v.method {
            Validation::Holdout { fraction } => format!(
                "holdout {} (seed {}): trained on {}, held out {}",
                compact(fraction),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::detector::score_predictions;

    #[test]
    fn a_detector_predicting_one_class_is_called_degenerate() {
        // Three successes, five failures, all predicted failures: accuracy 0.625, balanced 0.5.
        let y = [true, true, true, false, false, false, false, false];
        let constant = score_predictions(&y, &[0.3; 8], THRESHOLD).unwrap();
        assert_eq!(constant.accuracy, Some(0.625));
        let w = degenerate(&constant).unwrap();
        assert!(w.contains("predicts failure for every one of the 8"), "{w}");
        // Wrong way round on every episode: both classes predicted, balanced accuracy 0.
        let inverted: Vec<f64> = y.iter().map(|s| if *s { 0.1 } else { 0.9 }).collect();
        let w = degenerate(&score_predictions(&y, &inverted, THRESHOLD).unwrap()).unwrap();
        assert!(w.contains("no better than chance"), "{w}");
        // One mistake among eight: no warning.
        let mut good: Vec<f64> = y.iter().map(|s| if *s { 0.9 } else { 0.1 }).collect();
        good[3] = 0.8;
        assert!(degenerate(&score_predictions(&y, &good, THRESHOLD).unwrap()).is_none());
        // Held-out episodes of one class: balanced accuracy is undefined, nothing to judge.
        let one = score_predictions(&[false; 4], &[0.2; 4], THRESHOLD).unwrap();
        assert!(degenerate(&one).is_none());
    }
}
