//! `analyze`: every SPEC.md §2 metric from the per-pair contributions, with pair-cluster
//! bootstrap intervals.

use std::collections::BTreeMap;

use roboaudit_stats::{
    IntervalMethod, ResampleDesign, ResampleMatrix, bootstrap_with_matrix, exact_signed_ratio,
};
use roboaudit_types::{MemoryLabel, MemoryRecord};

use crate::pairs::{PairSummary, Tally, build_pairs};
use crate::report::{
    CrossedWorld, DirectionCounts, Estimate, MatchedWorldValue, MemoryAudit, PairReport,
    PositiveRule, Reliability, SCHEMA, SeedCount, Stratified, SubsetSummary,
};
use crate::{MemoryError, Plan, PlanSource};

/// Mean of `f` over the pairs listed in `idx` (a bootstrap row or `0..n`), in `idx` order.
fn mean_over(pairs: &[PairSummary], idx: &[usize], f: impl Fn(&PairSummary) -> f64) -> f64 {
    idx.iter().map(|&i| f(&pairs[i])).sum::<f64>() / idx.len() as f64
}

/// Mean over the pairs in `idx` of a rate from counts, `count(p) / per_pair(p)`, as one exact
/// fraction rounded once (every pair holds the same seeds, so the mean of the pairs' rates is
/// the pooled count over the pooled actions): equal counts give equal rates in any pair order,
/// and an F whose wins and losses cancel is exactly 0, never ±1e-17 (SPEC.md §0).
fn count_mean(
    pairs: &[PairSummary],
    idx: &[usize],
    per_pair: impl Fn(&Tally) -> usize,
    count: impl Fn(&Tally) -> i64,
) -> f64 {
    let (mut num, mut den) = (0i128, 0u128);
    for &i in idx {
        num += i128::from(count(&pairs[i].tally));
        den += per_pair(&pairs[i].tally) as u128;
    }
    exact_signed_ratio(num, den)
}

/// Choices are counted over both memories at every seed.
fn actions(t: &Tally) -> usize {
    2 * t.seeds
}

/// `s = +1` for a correct choice, `−1` for a wrong one: `F`'s numerator.
fn signed(t: &Tally) -> i64 {
    t.correct as i64 - t.wrong as i64
}

/// `[V(A,A), V(A,B), V(B,A), V(B,B)]` over the pairs in `idx`.
fn values(pairs: &[PairSummary], idx: &[usize]) -> [f64; 4] {
    let v = |m: usize, w: usize| mean_over(pairs, idx, |p| p.value[m][w]);
    [v(0, 0), v(0, 1), v(1, 0), v(1, 1)]
}

/// `U1 = ½[(V(A,A) + V(B,B)) − (V(A,B) + V(B,A))]`.
fn u1_from(v: [f64; 4]) -> f64 {
    0.5 * ((v[0] + v[3]) - (v[1] + v[2]))
}

fn positive_rule(level: f64, ci: Option<[f64; 2]>) -> PositiveRule {
    PositiveRule {
        rule: format!("the {}% pair-bootstrap CI of F lies above 0", level * 100.0),
        passed: ci.map(|[lo, _]| lo > 0.0),
        reason: ci
            .is_none()
            .then(|| "the interval of F is undefined".to_owned()),
    }
}

fn undefined_estimate(plan: &Plan, reason: &str) -> Estimate {
    Estimate {
        value: None,
        ci: None,
        level: plan.bootstrap.level,
        cluster: "pair".to_owned(),
        resamples: plan.bootstrap.resamples,
        reason: Some(reason.to_owned()),
    }
}

fn matrix(design: &ResampleDesign, plan: &Plan) -> Result<ResampleMatrix, MemoryError> {
    Ok(ResampleMatrix::generate(
        design,
        plan.bootstrap.resamples,
        plan.bootstrap.seed,
    )?)
}

/// Pair-cluster bootstrap of `stat`, which receives pair indices; row entries of `matrix`
/// index into `members`.
fn estimate(
    matrix: &ResampleMatrix,
    members: &[usize],
    plan: &Plan,
    stat: impl Fn(&[usize]) -> f64 + Sync,
) -> Result<Estimate, MemoryError> {
    let result = bootstrap_with_matrix(
        matrix,
        plan.bootstrap.level,
        IntervalMethod::Percentile,
        |rows| {
            let idx: Vec<usize> = rows.iter().map(|&r| members[r]).collect();
            Some(stat(&idx))
        },
    )?;
    let ci = result.interval.map(|i| [i.lo, i.hi]);
    Ok(Estimate {
        value: Some(result.estimate),
        ci,
        level: plan.bootstrap.level,
        cluster: "pair".to_owned(),
        resamples: result.resamples,
        reason: ci
            .is_none()
            .then(|| "fewer than 2 defined bootstrap resamples".to_owned()),
    })
}

/// F, U1 and the positive rule on the subsets of pairs sharing a key (route or stratum).
fn subsets(
    pairs: &[PairSummary],
    plan: &Plan,
    key: impl Fn(&PairSummary) -> Option<&String>,
) -> Result<Vec<SubsetSummary>, MemoryError> {
    let mut groups: BTreeMap<&String, Vec<usize>> = BTreeMap::new();
    for (i, p) in pairs.iter().enumerate() {
        if let Some(k) = key(p) {
            groups.entry(k).or_default().push(i);
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (name, members) in groups {
        let design = ResampleDesign {
            n_clusters: members.len(),
            strata: None,
        };
        let faithfulness = estimate(&matrix(&design, plan)?, &members, plan, |idx| {
            count_mean(pairs, idx, actions, signed)
        })?;
        out.push(SubsetSummary {
            name: name.clone(),
            n_pairs: members.len(),
            correct_choice_rate: count_mean(pairs, &members, actions, |t| t.correct as i64),
            u1: u1_from(values(pairs, &members)),
            positive_rule: positive_rule(plan.bootstrap.level, faithfulness.ci),
            faithfulness,
        });
    }
    Ok(out)
}

fn reliability(pairs: &[PairSummary], seeds: &[i64]) -> Reliability {
    let n = pairs.len();
    let bidirectional = pairs
        .iter()
        .filter(|p| p.reliable_direction(MemoryLabel::A) && p.reliable_direction(MemoryLabel::B))
        .count();
    let fraction = (n > 0).then(|| bidirectional as f64 / n as f64);
    Reliability {
        bidirectional,
        n_pairs: n,
        fraction,
        by_direction: DirectionCounts {
            A: pairs
                .iter()
                .filter(|p| p.reliable_direction(MemoryLabel::A))
                .count(),
            B: pairs
                .iter()
                .filter(|p| p.reliable_direction(MemoryLabel::B))
                .count(),
        },
        by_seed: seeds
            .iter()
            .enumerate()
            .map(|(k, &seed)| SeedCount {
                seed,
                pairs: pairs.iter().filter(|p| p.reliable_seed(k)).count(),
            })
            .collect(),
    }
}

/// Runs the counterfactual memory audit (SPEC.md §2) on `records` under `plan`.
///
/// Pairs with `present_equal = false` or listed in the plan's `eligibility.excluded_pairs`
/// are counted in `n_excluded` and never analysed. `β` comes from each action's matched-world
/// record; its crossed-world record is checked for agreement and disagreements are counted.
/// Every metric is a mean over (pair, seed[, memory]); since every pair holds the same seeds,
/// it is the mean of per-pair means, and the pair is the bootstrap cluster (percentile
/// intervals, `plan.bootstrap` resamples, level and seed; one resample matrix shared by F
/// and U1). Pairs are processed in `pair_id` order, so the output does not depend on row
/// order or thread count. With fewer than `eligibility.min_pairs` eligible pairs every
/// metric is null and `undefined_reason` says why.
///
/// The plan hash of records (`plan_hash` column) is not checked here: call
/// [`check_records_plan`](crate::check_records_plan) and
/// [`check_output_plan`](crate::check_output_plan) before writing results.
///
/// # Errors
/// [`MemoryError::InvalidPlan`] for an invalid plan; [`MemoryError::InvalidRecords`] for
/// inconsistent records (see the record contract); [`MemoryError::Stats`] if the bootstrap fails.
pub fn analyze(records: &[MemoryRecord], plan: &Plan) -> Result<MemoryAudit, MemoryError> {
    plan.validate()?;
    let built = build_pairs(records, plan)?;
    let pairs = &built.pairs;
    let n = pairs.len();
    let mut notes = Vec::new();
    if plan.source == PlanSource::Defaults {
        // The values actually used, not the nominal defaults: a CLI may override one (the
        // bootstrap seed of `memory audit --seed`), and the note must not contradict the header.
        let b = &plan.bootstrap;
        notes.push(format!(
            "no plan file given: the defaults of docs/methods.md §2 apply (delta {}, the records' action seeds, L2 distance, {} pair-bootstrap resamples at {}%, seed {})",
            plan.delta,
            b.resamples,
            b.level * 100.0,
            b.seed
        ));
    }
    let undefined_reason = if n == 0 {
        Some(format!(
            "no eligible pair ({} excluded)",
            built.excluded.len()
        ))
    } else if n < plan.eligibility.min_pairs {
        Some(format!(
            "only {n} eligible pairs; the plan requires at least {}",
            plan.eligibility.min_pairs
        ))
    } else {
        None
    };
    let pair_reports = pairs
        .iter()
        .map(|p| PairReport {
            pair_id: p.id.clone(),
            choices: p.choices.clone(),
            reliable: p.reliable_direction(MemoryLabel::A) && p.reliable_direction(MemoryLabel::B),
            faithfulness: p.signed,
            u1: u1_from([p.value[0][0], p.value[0][1], p.value[1][0], p.value[1][1]]),
            crossed_disagreements: p.disagreements,
        })
        .collect();
    let n_actions = 2 * n * built.seeds.len();
    let disagreements = pairs.iter().map(|p| p.disagreements).sum();
    let crossed_world = CrossedWorld {
        n_actions,
        disagreements,
        disagreement_rate: (n_actions > 0).then(|| disagreements as f64 / n_actions as f64),
    };
    let mut audit = MemoryAudit {
        schema: SCHEMA.to_owned(),
        plan_hash: plan.hash(),
        plan_source: plan.source,
        plan: plan.clone(),
        notes,
        n_records: records.len(),
        n_pairs: n,
        n_excluded: built.excluded.len(),
        excluded: built.excluded.clone(),
        seeds: built.seeds.clone(),
        action_dim: built.action_dim,
        undefined_reason: undefined_reason.clone(),
        sensitivity: None,
        action_change_rate: None,
        branch_change_rate: None,
        correct_choice_rate: None,
        wrong_choice_rate: None,
        ambiguity_rate: None,
        crossed_world,
        faithfulness: undefined_estimate(plan, undefined_reason.as_deref().unwrap_or("")),
        matched_world_value: MatchedWorldValue {
            AA: None,
            AB: None,
            BA: None,
            BB: None,
        },
        u1: undefined_estimate(plan, undefined_reason.as_deref().unwrap_or("")),
        regret: None,
        reliable_pairs: reliability(pairs, &built.seeds),
        positive_rule: positive_rule(plan.bootstrap.level, None),
        stratified: None,
        by_route: Vec::new(),
        pairs: pair_reports,
    };
    if let Some(reason) = undefined_reason {
        audit.positive_rule.reason = Some(reason);
        return Ok(audit);
    }
    let all: Vec<usize> = (0..n).collect();
    let mean = |f: fn(&PairSummary) -> f64| Some(mean_over(pairs, &all, f));
    audit.sensitivity = mean(|p| p.distance);
    let seeds = |t: &Tally| t.seeds;
    audit.action_change_rate = Some(count_mean(pairs, &all, seeds, |t| t.changed as i64));
    audit.branch_change_rate = Some(count_mean(pairs, &all, seeds, |t| t.branch_changed as i64));
    audit.correct_choice_rate = Some(count_mean(pairs, &all, actions, |t| t.correct as i64));
    audit.wrong_choice_rate = Some(count_mean(pairs, &all, actions, |t| t.wrong as i64));
    audit.ambiguity_rate = Some(count_mean(pairs, &all, actions, |t| t.ambiguous as i64));
    audit.regret = mean(|p| p.regret);
    let v = values(pairs, &all);
    audit.matched_world_value = MatchedWorldValue {
        AA: Some(v[0]),
        AB: Some(v[1]),
        BA: Some(v[2]),
        BB: Some(v[3]),
    };
    let design = ResampleDesign {
        n_clusters: n,
        strata: None,
    };
    let f_stat = |idx: &[usize]| count_mean(pairs, idx, actions, signed);
    let u1_stat = |idx: &[usize]| u1_from(values(pairs, idx));
    // One resample matrix for F and U1, so their intervals come from the same resamples.
    let shared = matrix(&design, plan)?;
    audit.faithfulness = estimate(&shared, &all, plan, f_stat)?;
    audit.u1 = estimate(&shared, &all, plan, u1_stat)?;
    drop(shared);
    audit.positive_rule = positive_rule(plan.bootstrap.level, audit.faithfulness.ci);
    if pairs.iter().all(|p| p.stratum.is_some()) {
        let names: Vec<&String> = pairs.iter().filter_map(|p| p.stratum.as_ref()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        let strata = names
            .iter()
            .map(|s| sorted.binary_search(s).unwrap_or(0))
            .collect();
        let design = ResampleDesign {
            n_clusters: n,
            strata: Some(strata),
        };
        let shared = matrix(&design, plan)?;
        audit.stratified = Some(Stratified {
            faithfulness: estimate(&shared, &all, plan, f_stat)?,
            u1: estimate(&shared, &all, plan, u1_stat)?,
            strata: subsets(pairs, plan, |p| p.stratum.as_ref())?,
        });
    } else if pairs.iter().any(|p| p.stratum.is_some()) {
        return Err(MemoryError::InvalidRecords(
            "some eligible pairs have a stratum and others do not".to_owned(),
        ));
    }
    audit.by_route = subsets(pairs, plan, |p| p.route.as_ref())?;
    Ok(audit)
}
