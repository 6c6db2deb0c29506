//! Layout-stratified bootstrap intervals of the intervention studies' rates (SPEC.md §0 cluster
//! bootstrap; seed 002 §IV-C reports intervention outcomes with intervals).
//!
//! The cluster is the recipient episode (every condition continues the same recipients, so a
//! resample keeps a recipient's conditions together) and the stratum is its layout level: each
//! resample draws, within every level, as many recipients as that level holds, so the layout mix
//! of the study is fixed. A rate is a mean of 0/1 outcomes over the resampled recipients'
//! continuations of one condition; the interval is the percentile interval of
//! [`roboaudit_stats::bootstrap`], seeded, so the same study and settings give the same bounds.

use std::collections::BTreeMap;

use roboaudit_stats::{BootstrapConfig, IntervalMethod, ResampleDesign, bootstrap};

use crate::error::HarnessError;
use roboaudit_memory::interventions::Continuation;
pub use roboaudit_memory::interventions::{BootstrapSettings, ConditionIntervals, RateInterval};

/// Which 0/1 outcome a rate averages.
type Outcome = fn(&Continuation) -> bool;

/// Intervals for the conditions `names` of a study's `continuations`: official success for every
/// condition, and when `committed` is true (replacement) the committed-own rate, plus the
/// committed-donor rate for conditions whose donor target differs from the recipient's own.
/// A condition without continuations gets `None` rates.
///
/// # Errors
/// [`HarnessError::InvalidConfig`] for zero resamples or a level outside (0, 1);
/// [`HarnessError::Stats`] if the bootstrap fails.
pub fn study_intervals(
    continuations: &[Continuation],
    names: &[&str],
    committed: bool,
    settings: &BootstrapSettings,
) -> Result<Vec<ConditionIntervals>, HarnessError> {
    let resamples_ok = (1..=roboaudit_memory::MAX_RESAMPLES).contains(&settings.resamples);
    let level_ok = settings.level > 0.0 && settings.level < 1.0;
    if !(resamples_ok && level_ok) {
        return Err(HarnessError::InvalidConfig(
            "bootstrap resamples must be in 1..=1,000,000 and the level in (0, 1)".into(),
        ));
    }
    // Recipients in first-seen order; strata numbered in sorted order so the design does not
    // depend on which level comes first.
    let mut episodes: Vec<&str> = Vec::new();
    let mut stratum_of: Vec<&str> = Vec::new();
    for c in continuations {
        if !episodes.contains(&c.episode_id.as_str()) {
            episodes.push(&c.episode_id);
            stratum_of.push(&c.stratum);
        }
    }
    let levels: BTreeMap<&str, usize> = {
        let mut sorted: Vec<&str> = stratum_of.clone();
        sorted.sort_unstable();
        sorted.dedup();
        sorted
            .into_iter()
            .enumerate()
            .map(|(i, s)| (s, i))
            .collect()
    };
    let strata: Vec<usize> = stratum_of
        .iter()
        .map(|s| levels.get(s).copied().unwrap_or(0))
        .collect();
    let design = ResampleDesign {
        n_clusters: episodes.len(),
        strata: Some(strata),
    };
    let config = BootstrapConfig {
        resamples: settings.resamples,
        level: settings.level,
        method: IntervalMethod::Percentile,
        seed: settings.seed,
    };
    let mut out = Vec::with_capacity(names.len());
    for &name in names {
        // per_episode[e] = the condition's continuations of recipient e.
        let mut per_episode: Vec<Vec<&Continuation>> = vec![Vec::new(); episodes.len()];
        for c in continuations.iter().filter(|c| c.condition == name) {
            if let Some(e) = episodes.iter().position(|&id| id == c.episode_id) {
                per_episode[e].push(c);
            }
        }
        let rate = |f: Outcome| rate_interval(&per_episode, &design, &config, f);
        let has_other_donor = per_episode
            .iter()
            .flatten()
            .any(|c| c.donor_target.is_some_and(|d| d != c.own_target));
        out.push(ConditionIntervals {
            condition: name.to_owned(),
            success: rate(|c| c.success)?,
            committed_own: if committed {
                rate(|c| c.committed == Some(c.own_target))?
            } else {
                None
            },
            committed_donor: if committed && has_other_donor {
                rate(|c| {
                    c.donor_target.is_some_and(|d| d != c.own_target)
                        && c.committed == c.donor_target
                })?
            } else {
                None
            },
        });
    }
    Ok(out)
}

fn rate_interval(
    per_episode: &[Vec<&Continuation>],
    design: &ResampleDesign,
    config: &BootstrapConfig,
    outcome: Outcome,
) -> Result<Option<RateInterval>, HarnessError> {
    if per_episode.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    // (hits, n) per recipient: a resample's rate is Σ hits / Σ n over its drawn recipients.
    let counts: Vec<(usize, usize)> = per_episode
        .iter()
        .map(|cs| (cs.iter().filter(|c| outcome(c)).count(), cs.len()))
        .collect();
    let r = bootstrap(design, config, |rows: &[usize]| {
        let (mut hits, mut n) = (0usize, 0usize);
        for &e in rows {
            let (h, m) = counts.get(e).copied().unwrap_or((0, 0));
            hits += h;
            n += m;
        }
        (n > 0).then(|| hits as f64 / n as f64)
    })?;
    Ok(Some(RateInterval {
        estimate: r.estimate,
        ci: r.interval.map(|i| [i.lo, i.hi]),
        level: config.level,
    }))
}
