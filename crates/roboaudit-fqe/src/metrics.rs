//! Metrics of an estimator against ground truth (SPEC.md §3): ARE per (policy, task) — undefined
//! and counted when `V = 0` —, Pearson and Spearman across policies against both `V^π` and SR,
//! normalized regret@1 and MMRV against both. Computed from `roboaudit-stats`, except that
//! regret@1 with several policies tied at the top estimate is the expected regret under uniformly
//! random tie-breaking (the mean over the tied policies), not the lower-index pick: a constant
//! estimator such as the naive average would otherwise score whatever policy is listed first.

use roboaudit_stats::{
    Rate, absolute_relative_error, mean_rate, mmrv, normalized_regret_at_k, pearson, spearman,
};
use serde::{Deserialize, Serialize};

use crate::FqeError;

/// One policy's estimate and ground truth (for one task, or averaged over a suite's tasks).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scored {
    /// `V̂`.
    pub estimate: f64,
    /// `V^π = E[γ^{T−1} success]`.
    pub v_pi: f64,
    /// Success rate `E[success]`.
    pub success_rate: f64,
}

/// Metrics over a set of policies. Every field is `None` where undefined (fewer than two policies,
/// constant inputs, `max V = 0`, or no defined ARE).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Policies compared.
    pub policies: usize,
    /// Median ARE over the defined (policy, task) pairs.
    pub median_are: Option<f64>,
    /// Mean ARE over the defined pairs.
    pub mean_are: Option<f64>,
    /// Pairs whose ARE is undefined because `V = 0` (flagged, not counted in the ARE statistics).
    pub are_undefined: usize,
    /// Pearson r of `V̂` and `V^π` across policies.
    pub pearson_v: Option<f64>,
    /// Spearman ρ of `V̂` and `V^π`.
    pub spearman_v: Option<f64>,
    /// Pearson r of `V̂` and SR.
    pub pearson_sr: Option<f64>,
    /// Spearman ρ of `V̂` and SR.
    pub spearman_sr: Option<f64>,
    /// Normalized regret@1 against `V^π`, in [0, 1]: `(max V − V_chosen) / max V`, averaged over
    /// the policies tied at the top estimate (expected regret under uniform tie-breaking).
    pub regret_at_1_v: Option<f64>,
    /// Normalized regret@1 against SR.
    pub regret_at_1_sr: Option<f64>,
    /// Policies tied at the top estimate (1 when the pick is unique; 0 with no policies or when the
    /// field is missing).
    #[serde(default)]
    pub top_ties: usize,
    /// MMRV against `V^π` (units of V).
    pub mmrv_v: Option<f64>,
    /// MMRV against SR.
    pub mmrv_sr: Option<f64>,
}

type Correlation = fn(&[f64], &[f64]) -> Result<Option<f64>, roboaudit_stats::StatsError>;

/// Normalized regret@1 with ties at the top estimate broken uniformly at random, in expectation:
/// `mean over i ∈ argmax V̂ of (max V − V_i) / max V`. `None` when `max V ≤ 0` or no policies.
///
/// # Errors
/// [`FqeError::Stats`] for mismatched lengths or non-finite values.
pub fn expected_regret_at_1(estimates: &[f64], truths: &[f64]) -> Result<Option<f64>, FqeError> {
    if estimates.is_empty() {
        return Ok(None);
    }
    // Validation and the undefined case (max V ≤ 0) come from the stats crate.
    if normalized_regret_at_k(estimates, truths, 1)?.is_none() {
        return Ok(None);
    }
    let max_truth = truths.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tied = top_tied(estimates);
    let n = tied.len() as f64;
    Ok(Some(
        tied.iter()
            .map(|&i| (max_truth - truths[i]) / max_truth)
            .sum::<f64>()
            / n,
    ))
}

/// Indices whose estimate equals the largest estimate (exact equality: ties come from estimators
/// that give several policies the same number, such as the naive average).
fn top_tied(estimates: &[f64]) -> Vec<usize> {
    let top = estimates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (0..estimates.len())
        .filter(|&i| estimates[i] == top)
        .collect()
}

/// A policy's suite ground truth from its per-task values: `(mean V^π, mean SR)` over tasks,
/// so that two policies whose truths are equal come out equal and tie in regret@1, MMRV and
/// the rank correlations (SPEC.md §0), whatever order their tasks were summed in. SR, when every
/// task gives its rollout count and the rate is `k / n_episodes` for a whole `k`, is the exact
/// mean of those fractions rounded once; otherwise, and for `V^π` (a discounted mean, not a
/// rate from counts), the values are summed in ascending order, which depends only on the
/// multiset of values. Empty input gives `(0, 0)`.
pub(crate) fn suite_truth(cells: &[(f64, f64, Option<u64>)]) -> (f64, f64) {
    let t = cells.len().max(1) as f64;
    let sorted_mean = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.iter().sum::<f64>() / t
    };
    let v_pi = sorted_mean(cells.iter().map(|c| c.0).collect());
    let rates: Option<Vec<Rate>> = cells.iter().map(|&(_, sr, n)| rate_of(sr, n)).collect();
    let sr = rates.as_deref().and_then(mean_rate).map_or_else(
        || sorted_mean(cells.iter().map(|c| c.1).collect()),
        Rate::to_f64,
    );
    (v_pi, sr)
}

/// A success rate read from a file as the fraction `k / n` of its `n` rollouts, when the value
/// is exactly that fraction's nearest float (`None` otherwise, or without a rollout count).
fn rate_of(sr: f64, n: Option<u64>) -> Option<Rate> {
    let n = n.filter(|&n| n > 0)?;
    let k = (sr * n as f64).round();
    if !(0.0..=n as f64).contains(&k) {
        return None;
    }
    let rate = Rate::new(k as u64, n).ok()?;
    (rate.to_f64() == sr).then_some(rate)
}

fn median(mut x: Vec<f64>) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    x.sort_by(f64::total_cmp);
    let n = x.len();
    Some(if n % 2 == 1 {
        x[n / 2]
    } else {
        (x[n / 2 - 1] + x[n / 2]) / 2.0
    })
}

/// Metrics of `policies` (ranking metrics across them) with ARE over `pairs` (every
/// (policy, task) pair that enters this summary).
///
/// # Errors
/// [`FqeError::Stats`] for non-finite values.
pub fn metrics(policies: &[Scored], pairs: &[Scored]) -> Result<Metrics, FqeError> {
    let mut ares = Vec::new();
    let mut undefined = 0;
    for p in pairs {
        match absolute_relative_error(p.estimate, p.v_pi)? {
            Some(a) => ares.push(a),
            None => undefined += 1,
        }
    }
    let mean_are = (!ares.is_empty()).then(|| ares.iter().sum::<f64>() / ares.len() as f64);
    let est: Vec<f64> = policies.iter().map(|p| p.estimate).collect();
    let v: Vec<f64> = policies.iter().map(|p| p.v_pi).collect();
    let sr: Vec<f64> = policies.iter().map(|p| p.success_rate).collect();
    let enough = policies.len() >= 2;
    let corr = |f: Correlation, y: &[f64]| -> Result<Option<f64>, FqeError> {
        if enough { Ok(f(&est, y)?) } else { Ok(None) }
    };
    Ok(Metrics {
        policies: policies.len(),
        median_are: median(ares),
        mean_are,
        are_undefined: undefined,
        pearson_v: corr(pearson, &v)?,
        spearman_v: corr(spearman, &v)?,
        pearson_sr: corr(pearson, &sr)?,
        spearman_sr: corr(spearman, &sr)?,
        regret_at_1_v: expected_regret_at_1(&est, &v)?,
        regret_at_1_sr: expected_regret_at_1(&est, &sr)?,
        top_ties: top_tied(&est).len(),
        mmrv_v: if enough { Some(mmrv(&est, &v)?) } else { None },
        mmrv_sr: if enough { Some(mmrv(&est, &sr)?) } else { None },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn s(estimate: f64, v_pi: f64, success_rate: f64) -> Scored {
        Scored {
            estimate,
            v_pi,
            success_rate,
        }
    }

    #[test]
    fn are_is_flagged_when_the_truth_is_zero_and_ranks_are_checked() {
        let ps = [s(0.5, 0.4, 0.8), s(0.1, 0.0, 0.0), s(0.3, 0.45, 0.6)];
        let m = metrics(&ps, &ps).unwrap();
        assert_eq!(m.are_undefined, 1);
        // AREs 0.25 and 1/3.
        assert!((m.median_are.unwrap() - (0.25 + 1.0 / 3.0) / 2.0).abs() < 1e-12);
        // V̂ picks policy 0 (V 0.4) over the best (0.45): regret (0.45 − 0.4)/0.45.
        assert!((m.regret_at_1_v.unwrap() - 0.05 / 0.45).abs() < 1e-12);
        // SR order agrees with V̂: no regret, Spearman 1.
        assert_eq!(m.regret_at_1_sr, Some(0.0));
        assert!((m.spearman_sr.unwrap() - 1.0).abs() < 1e-12);
        // V order: 0 vs 2 is inverted, |0.4 − 0.45| = 0.05 for both; policy 1 is fine.
        assert!((m.mmrv_v.unwrap() - 0.1 / 3.0).abs() < 1e-12);
        assert_eq!(m.top_ties, 1);
        let one = metrics(&ps[..1], &ps[..1]).unwrap();
        assert_eq!(one.spearman_v, None);
    }

    /// Issue 21: equal suite truths summed in another task order must tie. Float sums give
    /// 0.1 + 0.2 + 0.3 = 0.6000000000000001 but 0.3 + 0.2 + 0.1 = 0.6, so MMRV saw a rank
    /// violation between two policies whose ground truth is equal.
    #[test]
    fn suite_truths_of_reordered_tasks_tie_in_mmrv() {
        let a = [
            (0.1, 0.1, Some(10)),
            (0.2, 0.2, Some(10)),
            (0.3, 0.3, Some(10)),
        ];
        let b = [
            (0.3, 0.3, Some(10)),
            (0.2, 0.2, Some(10)),
            (0.1, 0.1, Some(10)),
        ];
        let (ta, tb) = (suite_truth(&a), suite_truth(&b));
        assert_eq!(ta, tb);
        assert_eq!(ta.1, 0.2); // exact 6/30, rounded once
        // Equal rates from different counts: 1/5 + 3/5 and 2/5 + 2/5 (out of 5 and 10).
        let c = suite_truth(&[(0.0, 0.2, Some(5)), (0.0, 0.6, Some(10))]);
        let d = suite_truth(&[(0.0, 0.4, Some(5)), (0.0, 0.4, Some(10))]);
        assert_eq!(c.1, d.1);
        assert_eq!(c.1, 0.4);
        // Without rollout counts the sum is order-independent (ascending order).
        assert_eq!(
            suite_truth(&[(0.1, 0.1, None), (0.3, 0.3, None), (0.2, 0.2, None)]),
            suite_truth(&[(0.3, 0.3, None), (0.2, 0.2, None), (0.1, 0.1, None)])
        );
        // The estimates rank a above b; equal truths: no violation.
        let ps = [s(0.6, ta.0, ta.1), s(0.5, tb.0, tb.1)];
        let m = metrics(&ps, &ps).unwrap();
        assert_eq!(m.mmrv_v, Some(0.0));
        assert_eq!(m.mmrv_sr, Some(0.0));
        assert_eq!(m.regret_at_1_sr, Some(0.0));
    }

    #[test]
    fn regret_at_1_with_tied_estimates_is_the_mean_over_the_tied_policies() {
        // Every estimate equal: the pick is uniform over all three. V = 0.8, 0.4, 0.2: regrets
        // 0, 0.5, 0.75; mean 5/12. The lower-index pick would report 0.
        let ps = [s(0.3, 0.8, 1.0), s(0.3, 0.4, 0.5), s(0.3, 0.2, 0.25)];
        let m = metrics(&ps, &ps).unwrap();
        assert_eq!(m.top_ties, 3);
        assert!((m.regret_at_1_v.unwrap() - 5.0 / 12.0).abs() < 1e-12);
        assert!((m.regret_at_1_sr.unwrap() - 5.0 / 12.0).abs() < 1e-12);
        // Ties only among the top two (policies 1 and 2): regrets 0.5 and 0.75, mean 0.625.
        let ps = [s(0.1, 0.8, 1.0), s(0.3, 0.4, 0.5), s(0.3, 0.2, 0.25)];
        let m = metrics(&ps, &ps).unwrap();
        assert_eq!(m.top_ties, 2);
        assert!((m.regret_at_1_v.unwrap() - 0.625).abs() < 1e-12);
        assert_eq!(expected_regret_at_1(&[], &[]).unwrap(), None);
        assert_eq!(
            expected_regret_at_1(&[1.0, 1.0], &[0.0, 0.0]).unwrap(),
            None
        );
    }
}
