//! From records to pairs: exclusion, structural checks, branch choice and the per-pair
//! contributions every SPEC.md §2 metric averages.

use std::collections::{BTreeMap, BTreeSet};

use roboaudit_types::{MemoryLabel, MemoryRecord};
use serde::{Deserialize, Serialize};

use crate::{MemoryError, Plan};

/// The branch an action chose (SPEC.md §2 `β`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Branch `b_A`.
    #[serde(rename = "A")]
    A,
    /// Branch `b_B`.
    #[serde(rename = "B")]
    B,
    /// Neither branch by more than δ (ambiguous).
    None,
}

impl Choice {
    fn branch(label: MemoryLabel) -> Self {
        match label {
            MemoryLabel::A => Self::A,
            MemoryLabel::B => Self::B,
        }
    }
}

/// `β` from one world's record of an action: the record's world branch if
/// `progress_warranted − progress_other > δ`, the other branch if `< −δ`, otherwise none.
pub fn branch_choice(record: &MemoryRecord, delta: f64) -> Choice {
    let d = record.progress_warranted - record.progress_other;
    if d > delta {
        Choice::branch(record.world)
    } else if d < -delta {
        Choice::branch(record.world.other())
    } else {
        Choice::None
    }
}

/// A pair left out of the analysis, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exclusion {
    /// The pair.
    pub pair_id: String,
    /// `present check failed` or `excluded by plan`.
    pub reason: String,
}

/// One eligible pair's contributions (each a mean over its seeds, or over seeds × memories).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairSummary {
    pub id: String,
    pub route: Option<String>,
    pub stratum: Option<String>,
    /// `mean_k ‖a_A,k − a_B,k‖₂`.
    pub distance: f64,
    pub action_changed: f64,
    pub branch_changed: f64,
    pub correct: f64,
    pub wrong: f64,
    pub ambiguous: f64,
    /// `mean_{m,k} s`.
    pub signed: f64,
    /// `v[m][w] = mean_k v(a_{m,k}, w)`.
    pub value: [[f64; 2]; 2],
    pub regret: f64,
    /// Crossed-world records whose branch disagrees with the matched-world choice.
    pub disagreements: usize,
    /// The counts behind the rates, for exact means over pairs.
    pub tally: Tally,
    /// `choices[k][m]`: β of `a_{m,k}` (seed order of the audit).
    pub choices: Vec<[Choice; 2]>,
}

/// One pair's counts: choices over its `2 · seeds` actions, changes over its `seeds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Tally {
    pub seeds: usize,
    pub correct: usize,
    pub wrong: usize,
    pub ambiguous: usize,
    pub changed: usize,
    pub branch_changed: usize,
}

impl PairSummary {
    /// `β(a_{m,k}) = m` for every seed.
    pub fn reliable_direction(&self, m: MemoryLabel) -> bool {
        self.choices
            .iter()
            .all(|c| c[m.index()] == Choice::branch(m))
    }

    /// Both memories correct at seed position `k`.
    pub fn reliable_seed(&self, k: usize) -> bool {
        self.choices
            .get(k)
            .is_some_and(|c| c[0] == Choice::A && c[1] == Choice::B)
    }
}

/// Eligible pairs (sorted by id), exclusions and the audited seeds.
pub(crate) struct Pairs {
    pub pairs: Vec<PairSummary>,
    pub excluded: Vec<Exclusion>,
    pub seeds: Vec<i64>,
    pub action_dim: Option<usize>,
}

fn invalid(message: String) -> MemoryError {
    MemoryError::InvalidRecords(message)
}

type Grid<'a> = BTreeMap<(i64, MemoryLabel, MemoryLabel), &'a MemoryRecord>;

/// Refuses a plan whose `eligibility.excluded_pairs` names a pair the records do not have: a
/// typo would otherwise leave the pair meant to be excluded in the analysis, silently.
///
/// # Errors
/// [`MemoryError::InvalidPlan`] naming the first unknown id (without the plan's path; see
/// [`MemoryError::in_plan_file`]).
pub fn check_excluded_pairs(records: &[MemoryRecord], plan: &Plan) -> Result<(), MemoryError> {
    let known: BTreeSet<&str> = records.iter().map(|r| r.pair_id.as_str()).collect();
    match plan
        .eligibility
        .excluded_pairs
        .iter()
        .find(|id| !known.contains(id.as_str()))
    {
        Some(id) => Err(MemoryError::InvalidPlan {
            message: format!(
                "eligibility.excluded_pairs names pair \"{id}\", which is not in the records"
            ),
            path: None,
        }),
        None => Ok(()),
    }
}

/// Groups, excludes and checks records, then summarizes every eligible pair.
///
/// # Errors
/// [`MemoryError::InvalidRecords`] for inconsistent pair attributes, duplicate or missing
/// (memory, seed, world) rows, unregistered or missing seeds, bad values or actions.
pub(crate) fn build_pairs(records: &[MemoryRecord], plan: &Plan) -> Result<Pairs, MemoryError> {
    let mut by_pair: BTreeMap<&str, Vec<&MemoryRecord>> = BTreeMap::new();
    for r in records {
        by_pair.entry(&r.pair_id).or_default().push(r);
    }
    let plan_excluded: BTreeSet<&str> = plan
        .eligibility
        .excluded_pairs
        .iter()
        .map(String::as_str)
        .collect();
    check_excluded_pairs(records, plan)?;
    let mut excluded = Vec::new();
    let mut grids: Vec<(&str, Grid<'_>)> = Vec::new();
    for (&id, rows) in &by_pair {
        let first = rows[0];
        if let Some(r) = rows.iter().find(|r| {
            r.present_equal != first.present_equal
                || r.route != first.route
                || r.stratum != first.stratum
        }) {
            return Err(invalid(format!(
                "pair \"{id}\" mixes present_equal, route or stratum values across its rows (memory {}, action_seed {}, world {})",
                r.memory.as_str(),
                r.action_seed,
                r.world.as_str()
            )));
        }
        let reason = if !first.present_equal {
            Some("present check failed")
        } else if plan_excluded.contains(id) {
            Some("excluded by plan")
        } else {
            None
        };
        if let Some(reason) = reason {
            excluded.push(Exclusion {
                pair_id: id.to_owned(),
                reason: reason.to_owned(),
            });
            continue;
        }
        let mut grid = Grid::new();
        for &r in rows {
            if grid.insert((r.action_seed, r.memory, r.world), r).is_some() {
                return Err(invalid(format!(
                    "pair \"{id}\" has two rows for (memory {}, action_seed {}, world {})",
                    r.memory.as_str(),
                    r.action_seed,
                    r.world.as_str()
                )));
            }
        }
        grids.push((id, grid));
    }
    let seeds = registered_seeds(&grids, plan)?;
    let mut action_dim = None;
    let mut pairs = Vec::with_capacity(grids.len());
    for (id, grid) in &grids {
        pairs.push(summarize(id, grid, &seeds, plan, &mut action_dim)?);
    }
    Ok(Pairs {
        pairs,
        excluded,
        seeds,
        action_dim,
    })
}

/// The plan's seeds, or (none registered) the first eligible pair's; every eligible pair must
/// hold exactly these.
fn registered_seeds(grids: &[(&str, Grid<'_>)], plan: &Plan) -> Result<Vec<i64>, MemoryError> {
    let seeds_of = |g: &Grid<'_>| -> BTreeSet<i64> { g.keys().map(|k| k.0).collect() };
    let expected: BTreeSet<i64> = if plan.seeds.is_empty() {
        grids.first().map(|(_, g)| seeds_of(g)).unwrap_or_default()
    } else {
        plan.seeds.iter().copied().collect()
    };
    for (id, grid) in grids {
        let held = seeds_of(grid);
        if let Some(s) = held.difference(&expected).next() {
            return Err(invalid(format!(
                "pair \"{id}\" has action_seed {s}, which is not registered (registered: {expected:?}); unregistered seeds are never analysed or silently dropped"
            )));
        }
        if let Some(s) = expected.difference(&held).next() {
            return Err(invalid(format!(
                "pair \"{id}\" lacks registered action_seed {s}"
            )));
        }
    }
    Ok(expected.into_iter().collect())
}

fn l2(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = f64::from(*x) - f64::from(*y);
            d * d
        })
        .sum::<f64>()
        .sqrt()
}

fn check_record(id: &str, r: &MemoryRecord, dim: &mut Option<usize>) -> Result<(), MemoryError> {
    let at = || {
        format!(
            "pair \"{id}\" (memory {}, action_seed {}, world {})",
            r.memory.as_str(),
            r.action_seed,
            r.world.as_str()
        )
    };
    if !(r.progress_warranted.is_finite() && r.progress_other.is_finite()) {
        return Err(invalid(format!("{}: progress is not finite", at())));
    }
    if !(0.0..=1.0).contains(&r.value) {
        return Err(invalid(format!(
            "{}: value {} is outside [0, 1]",
            at(),
            r.value
        )));
    }
    if r.action.is_empty() || r.action.iter().any(|x| !x.is_finite()) {
        return Err(invalid(format!("{}: action is empty or not finite", at())));
    }
    let d = *dim.get_or_insert(r.action.len());
    if r.action.len() != d {
        return Err(invalid(format!(
            "{}: action has {} elements, others have {d}",
            at(),
            r.action.len()
        )));
    }
    Ok(())
}

// Cast: counts of seeds and memories are small
fn summarize(
    id: &str,
    grid: &Grid<'_>,
    seeds: &[i64],
    plan: &Plan,
    dim: &mut Option<usize>,
) -> Result<PairSummary, MemoryError> {
    let get = |k: i64, m: MemoryLabel, w: MemoryLabel| {
        grid.get(&(k, m, w)).copied().ok_or_else(|| {
            invalid(format!(
                "pair \"{id}\" has no row for (memory {}, action_seed {k}, world {})",
                m.as_str(),
                w.as_str()
            ))
        })
    };
    let first = grid.values().next().copied();
    let mut s = PairSummary {
        id: id.to_owned(),
        route: first.and_then(|r| r.route.clone()),
        stratum: first.and_then(|r| r.stratum.clone()),
        distance: 0.0,
        action_changed: 0.0,
        branch_changed: 0.0,
        correct: 0.0,
        wrong: 0.0,
        ambiguous: 0.0,
        signed: 0.0,
        value: [[0.0; 2]; 2],
        regret: 0.0,
        disagreements: 0,
        tally: Tally::default(),
        choices: Vec::with_capacity(seeds.len()),
    };
    let (mut correct, mut wrong, mut ambiguous) = (0usize, 0usize, 0usize);
    let (mut changed, mut branch_changed) = (0usize, 0usize);
    for &k in seeds {
        let mut choice = [Choice::None; 2];
        let mut actions: [&[f32]; 2] = [&[], &[]];
        for m in MemoryLabel::BOTH {
            let matched = get(k, m, m)?;
            let crossed = get(k, m, m.other())?;
            for r in [matched, crossed] {
                check_record(id, r, dim)?;
            }
            if matched.action != crossed.action {
                return Err(invalid(format!(
                    "pair \"{id}\" (memory {}, action_seed {k}): the two worlds hold different actions; one saved chunk is executed in both",
                    m.as_str()
                )));
            }
            let beta = branch_choice(matched, plan.delta);
            if branch_choice(crossed, plan.delta) != beta {
                s.disagreements += 1;
            }
            match beta {
                c if c == Choice::branch(m) => correct += 1,
                Choice::None => ambiguous += 1,
                _ => wrong += 1,
            }
            choice[m.index()] = beta;
            actions[m.index()] = &matched.action;
            s.value[m.index()][m.index()] += matched.value;
            s.value[m.index()][m.other().index()] += crossed.value;
            s.regret += 1.0 - matched.value;
        }
        let distance = l2(actions[0], actions[1]);
        s.distance += distance;
        changed += usize::from(distance > plan.action_change_tolerance);
        branch_changed += usize::from(choice[0] != choice[1]);
        s.choices.push(choice);
    }
    s.tally = Tally {
        seeds: seeds.len(),
        correct,
        wrong,
        ambiguous,
        changed,
        branch_changed,
    };
    let n = seeds.len() as f64;
    s.distance /= n;
    s.action_changed = changed as f64 / n;
    s.branch_changed = branch_changed as f64 / n;
    s.correct = correct as f64 / (2.0 * n);
    s.wrong = wrong as f64 / (2.0 * n);
    s.ambiguous = ambiguous as f64 / (2.0 * n);
    s.signed = (correct as f64 - wrong as f64) / (2.0 * n);
    s.regret /= 2.0 * n;
    for row in &mut s.value {
        for v in row {
            *v /= n;
        }
    }
    Ok(s)
}
