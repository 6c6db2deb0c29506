//! Equivalence for the irrelevant-history control (SPEC.md §2): an effect is equivalent to zero
//! only when its whole pair-bootstrap interval (90% by default) lies inside the registered margin.

use roboaudit_stats::{
    BootstrapConfig, IntervalMethod, ResampleDesign, StatsError, bootstrap, equivalent,
};
use serde::{Deserialize, Serialize};

use crate::{MemoryError, Plan};

/// Result of [`equivalence_test`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Equivalence {
    /// Mean effect over pairs.
    pub estimate: f64,
    /// Percentile pair-bootstrap interval `[lo, hi]`; null when undefined.
    pub ci: Option<[f64; 2]>,
    /// Interval level (`plan.bootstrap.equivalence_level`).
    pub level: f64,
    /// The registered margin.
    pub margin: f64,
    /// True iff `ci` lies inside `[−margin, margin]`; failing to reject is never equivalence,
    /// and an undefined interval is never equivalence.
    pub equivalent: bool,
    /// Pairs (clusters).
    pub n_pairs: usize,
    /// The resampled unit: always `pair`.
    pub cluster: String,
}

/// Tests whether the mean of `effect_by_pair` (one effect per pair, e.g. a nuisance or
/// interaction contrast) is equivalent to zero within `margin`, with a pair-bootstrap
/// percentile interval at `plan.bootstrap.equivalence_level`, using the plan's resamples and
/// seed (SPEC.md §2 irrelevant-history control).
///
/// # Errors
/// [`MemoryError::InvalidPlan`] for a margin that is not finite and positive or an invalid
/// plan; [`MemoryError::Stats`] for an empty or non-finite effect list.
///
/// # Example
/// ```
/// use roboaudit_memory::{Plan, equivalence_test};
/// let plan = Plan { bootstrap: roboaudit_memory::BootstrapPlan { resamples: 500, ..Default::default() }, ..Plan::default() };
/// let small = [0.01, -0.02, 0.0, 0.015, -0.005, 0.01];
/// assert!(equivalence_test(&small, 0.1, &plan)?.equivalent);
/// assert!(!equivalence_test(&[0.3, 0.2, 0.25, 0.4], 0.1, &plan)?.equivalent);
/// # Ok::<(), roboaudit_memory::MemoryError>(())
/// ```
pub fn equivalence_test(
    effect_by_pair: &[f64],
    margin: f64,
    plan: &Plan,
) -> Result<Equivalence, MemoryError> {
    plan.validate()?;
    if !(margin.is_finite() && margin > 0.0) {
        return Err(MemoryError::InvalidPlan {
            message: format!("equivalence margin must be finite and > 0, got {margin}"),
            path: None,
        });
    }
    if effect_by_pair.is_empty() {
        return Err(StatsError::Empty {
            what: "effect_by_pair",
        }
        .into());
    }
    if let Some(index) = effect_by_pair.iter().position(|x| !x.is_finite()) {
        return Err(StatsError::NonFinite {
            what: "effect_by_pair",
            index,
        }
        .into());
    }
    let design = ResampleDesign {
        n_clusters: effect_by_pair.len(),
        strata: None,
    };
    let config = BootstrapConfig {
        resamples: plan.bootstrap.resamples,
        level: plan.bootstrap.equivalence_level,
        method: IntervalMethod::Percentile,
        seed: plan.bootstrap.seed,
    };
    let result = bootstrap(&design, &config, |idx| {
        Some(idx.iter().map(|&i| effect_by_pair[i]).sum::<f64>() / idx.len() as f64)
    })?;
    Ok(Equivalence {
        estimate: result.estimate,
        ci: result.interval.map(|i| [i.lo, i.hi]),
        level: config.level,
        margin,
        equivalent: result.interval.is_some_and(|i| equivalent(&i, margin)),
        n_pairs: effect_by_pair.len(),
        cluster: "pair".to_owned(),
    })
}
