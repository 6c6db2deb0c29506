//! Irrelevant-history control (SPEC.md §2; seed 002 §III-C2): every pair collected under two
//! detour routes that must not matter. The semantic effect (F) must pass the positive rule on
//! both routes; the nuisance effect (route on the signed choice) and the route × memory
//! interaction are declared equivalent to zero only when their whole pair-bootstrap interval at
//! the plan's equivalence level (90%) lies inside the registered margin. Failing to reject a
//! difference is never equivalence.

use std::collections::BTreeMap;

use roboaudit_types::{MemoryLabel, MemoryRecord};
use serde::{Deserialize, Serialize};

use crate::{
    Choice, Equivalence, MemoryError, Plan, SubsetSummary, analyze, branch_choice, equivalence_test,
};

/// Schema tag of `control.json` ([`RouteControl`]).
pub const CONTROL_SCHEMA: &str = "roboaudit.memory.control.v1";

/// Margin used when the plan registers none under `nuisance` / `interaction`.
pub const DEFAULT_MARGIN: f64 = 0.1;

/// Result of the control.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteControl {
    /// Always [`CONTROL_SCHEMA`].
    pub schema: String,
    /// The two routes, in name order.
    pub routes: [String; 2],
    /// Semantic effect per route (F, CI, positive rule), from the audit's route breakdown.
    pub semantic: Vec<SubsetSummary>,
    /// Both routes pass the positive rule.
    pub semantic_passed: bool,
    /// Nuisance effect per base pair: the route's main effect on the chosen branch
    /// (`c = +1` toward `b_A`, `−1` toward `b_B`, 0 none), averaged over memories:
    /// `½[(s̄_A,2 − s̄_A,1) − (s̄_B,2 − s̄_B,1)]` in signed-choice terms (`s = c` under memory A,
    /// `−c` under B).
    pub nuisance: Equivalence,
    /// Route × memory interaction per base pair: the change of the pair's faithfulness between
    /// routes, `½[(s̄_A,2 + s̄_B,2) − (s̄_A,1 + s̄_B,1)]`.
    pub interaction: Equivalence,
    /// Whether each margin came from the plan (`plan`) or [`DEFAULT_MARGIN`] (`default`).
    pub margin_source: String,
    /// Semantic passed on both routes and both effects equivalent to zero.
    pub passed: bool,
}

fn signed(choice: Choice, memory: MemoryLabel) -> f64 {
    match (choice, memory) {
        (Choice::None, _) => 0.0,
        (Choice::A, MemoryLabel::A) | (Choice::B, MemoryLabel::B) => 1.0,
        _ => -1.0,
    }
}

/// Runs the control on records of a routed collection (`route` set, pair ids `<base>-<route>`).
/// Base pairs excluded under either route are left out of the effects.
///
/// # Errors
/// [`MemoryError::InvalidRecords`] for a record without a route, records without exactly two
/// routes, or records in which no base pair is eligible under both routes: the records are
/// wrong, not the configuration; errors of the audit.
pub fn route_control(records: &[MemoryRecord], plan: &Plan) -> Result<RouteControl, MemoryError> {
    let audit = analyze(records, plan)?;
    // s̄[base][route][memory]
    let mut sums: BTreeMap<String, BTreeMap<String, [(f64, usize); 2]>> = BTreeMap::new();
    let mut excluded: Vec<String> = Vec::new();
    for r in records {
        let Some(route) = &r.route else {
            return Err(MemoryError::InvalidRecords(format!(
                "pair {} has no route; the control needs records collected with two routes (memory collect --routes left,right)",
                r.pair_id
            )));
        };
        let base = r
            .pair_id
            .strip_suffix(&format!("-{route}"))
            .unwrap_or(&r.pair_id)
            .to_owned();
        if !r.present_equal {
            excluded.push(base);
            continue;
        }
        if r.world != r.memory {
            continue;
        }
        let cell = &mut sums
            .entry(base)
            .or_default()
            .entry(route.clone())
            .or_default()[r.memory.index()];
        cell.0 += signed(branch_choice(r, plan.delta), r.memory);
        cell.1 += 1;
    }
    let routes: Vec<String> = {
        let mut v: Vec<String> = records.iter().filter_map(|r| r.route.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    let [r1, r2] = <[String; 2]>::try_from(routes).map_err(|v| {
        MemoryError::InvalidRecords(format!(
            "the control needs records of exactly two routes, got {v:?} (memory collect --routes left,right)"
        ))
    })?;
    let mean = |c: (f64, usize)| c.0 / c.1.max(1) as f64;
    let (mut nuisance, mut interaction) = (Vec::new(), Vec::new());
    for (base, by_route) in &sums {
        if excluded.contains(base) {
            continue;
        }
        let (Some(a), Some(b)) = (by_route.get(&r1), by_route.get(&r2)) else {
            continue;
        };
        let d = [mean(b[0]) - mean(a[0]), mean(b[1]) - mean(a[1])];
        nuisance.push(0.5 * (d[0] - d[1]));
        interaction.push(0.5 * (d[0] + d[1]));
    }
    if nuisance.is_empty() {
        return Err(MemoryError::InvalidRecords(
            "no base pair is eligible under both routes: every base pair was excluded (present not verified identical) under at least one route".into(),
        ));
    }
    let margin = |name: &str| plan.margins.get(name).copied();
    let from_plan = margin("nuisance").is_some() && margin("interaction").is_some();
    let nuisance = equivalence_test(
        &nuisance,
        margin("nuisance").unwrap_or(DEFAULT_MARGIN),
        plan,
    )?;
    let interaction = equivalence_test(
        &interaction,
        margin("interaction")
            .or(margin("nuisance"))
            .unwrap_or(DEFAULT_MARGIN),
        plan,
    )?;
    let semantic = audit.by_route.clone();
    let semantic_passed = semantic.len() == 2
        && semantic
            .iter()
            .all(|s| s.positive_rule.passed == Some(true));
    Ok(RouteControl {
        schema: CONTROL_SCHEMA.into(),
        passed: semantic_passed && nuisance.equivalent && interaction.equivalent,
        routes: [r1, r2],
        semantic,
        semantic_passed,
        nuisance,
        interaction,
        margin_source: if from_plan { "plan" } else { "default" }.into(),
    })
}
