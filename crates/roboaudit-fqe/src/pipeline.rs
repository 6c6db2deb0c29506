//! The fit that `roboaudit fqe fit` and the demo's FQE stage both run, so that every `fqe.json`
//! records the same things: the estimates, the dataset they were fitted on and, when ground truth
//! is known, the metrics and the fingerprint of the ground-truth file (`fqe evaluate` checks both
//! before rescoring).

use crate::FqeError;
use crate::evaluate::{FitConfig, TargetPolicy, fit_all_with_progress, score_recorded};
use crate::ground_truth::GroundTruth;
use crate::inputs::FqeInputs;
use crate::report::{DatasetIdentity, FqeReport};

/// Ground truth to score a fit against: the parsed file and the fingerprint of its bytes (as
/// [`crate::read_ground_truth_fingerprinted`] returns them).
#[derive(Debug, Clone, Copy)]
pub struct Truth<'a> {
    /// The ground-truth values.
    pub values: &'a GroundTruth,
    /// [`crate::fingerprint`] of the file's bytes, recorded as [`FqeReport::ground_truth`].
    pub fingerprint: &'a str,
}

/// What a report records beside its estimates.
#[derive(Debug, Clone)]
pub struct Provenance<'a> {
    /// The inputs' description ([`FqeReport`]'s `inputs`): load summary, parts, target, labels.
    pub describe: serde_json::Value,
    /// The dataset the inputs were loaded from ([`FqeReport::dataset`]).
    pub dataset: DatasetIdentity,
    /// Ground truth to score against, if known.
    pub truth: Option<Truth<'a>>,
}

/// Fits every estimator on `inputs` for `targets` ([`fit_all_with_progress`], methods document
/// §3), records the provenance's dataset as [`FqeReport::dataset`] and, with ground truth,
/// scores the estimates and records the ground truth ([`score_recorded`]).
///
/// `progress(policy, what)` names the running fit; `work(k)` counts `k` units of
/// [`crate::fit_work`].
///
/// # Errors
/// Those of [`fit_all_with_progress`]; [`FqeError::InvalidInputs`] from [`score_recorded`] when
/// the ground truth's discount differs from the fit's.
pub fn fit_and_score(
    inputs: &FqeInputs,
    targets: &[TargetPolicy],
    config: &FitConfig,
    provenance: Provenance<'_>,
    progress: &mut dyn FnMut(&str, &str),
    work: &(dyn Fn(u64) + Sync),
) -> Result<FqeReport, FqeError> {
    let Provenance {
        describe,
        dataset,
        truth,
    } = provenance;
    let mut report = fit_all_with_progress(inputs, targets, config, describe, progress, work)?;
    report.dataset = Some(dataset);
    if let Some(t) = truth {
        score_recorded(&mut report, t.values, t.fingerprint)?;
    }
    Ok(report)
}
