//! The headline of an FQE report that the demo's `audit.json` carries (`fqe`): the ground-truth
//! values and each estimator's suite metrics (methods document §3).

use serde::{Deserialize, Serialize};

use crate::FqeReport;

/// Suite-level metrics of one estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimatorHeadline {
    /// `neural`, `linear` or `naive`.
    pub estimator: String,
    /// Spearman ρ of the estimates and `V^π` across policies.
    pub spearman_v: Option<f64>,
    /// Normalized regret@1 against `V^π`, in [0, 1].
    pub regret_at_1_v: Option<f64>,
    /// Median absolute relative error over (policy, task).
    pub median_are: Option<f64>,
    /// MMRV against `V^π`.
    pub mmrv_v: Option<f64>,
}

/// Headline of a scored FQE report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FqeHeadline {
    /// Folder of `fqe.json`, relative to the folder of the file holding the headline.
    pub dir: String,
    /// Dataset episodes.
    pub episodes: usize,
    /// Ground-truth rollouts per policy and task.
    pub rollouts: usize,
    /// Target policies and their suite `V^π` (the mean over tasks with ground truth), best
    /// first.
    pub truth: Vec<(String, f64)>,
    /// Per estimator, in the report's order.
    pub estimators: Vec<EstimatorHeadline>,
    /// The report's reliability warnings ([`crate::notes::reliability_notes`]): a neural fit
    /// too short to converge, estimates outside `[0, 1]`.
    pub notes: Vec<String>,
}

impl FqeHeadline {
    /// The headline of `report`, a fit of `episodes` dataset episodes scored against ground truth
    /// from `rollouts` rollouts per policy and task, stored in `dir`.
    #[must_use]
    pub fn of(report: &FqeReport, dir: &str, episodes: usize, rollouts: usize) -> Self {
        let mut truth: Vec<(String, f64)> = report
            .policies
            .iter()
            .filter_map(|p| {
                let v: Vec<f64> = p
                    .tasks
                    .iter()
                    .filter_map(|c| c.truth.as_ref().map(|t| t.v_pi))
                    .collect();
                (!v.is_empty()).then(|| (p.policy.clone(), v.iter().sum::<f64>() / v.len() as f64))
            })
            .collect();
        truth.sort_by(|a, b| b.1.total_cmp(&a.1));
        Self {
            dir: dir.to_owned(),
            episodes,
            rollouts,
            truth,
            estimators: report
                .metrics
                .iter()
                .map(|m| EstimatorHeadline {
                    estimator: m.estimator.clone(),
                    spearman_v: m.suite.spearman_v,
                    regret_at_1_v: m.suite.regret_at_1_v,
                    median_are: m.suite.median_are,
                    mmrv_v: m.suite.mmrv_v,
                })
                .collect(),
            // Recomputed from the report rather than copied from its notes, so that every
            // headline carries the same warnings for the same estimates.
            notes: crate::notes::reliability_notes(report),
        }
    }
}
