//! Properties of issue 21 (equal success rates tie, SPEC.md §0): on libraries full of exact
//! ties, reordering the execution rows or the scenes file changes nothing tie-dependent,
//! reordering the experiences file changes picks only by the lowest-index rule, and the same
//! rates from twice the executions change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

use proptest::prelude::*;
use roboaudit_retrieval::synthetic::from_matrix;
use roboaudit_retrieval::{AuditConfig, AuditReport, run_audit};
use roboaudit_types::{ExecutionRecord, RetrievalInputs};
use serde_json::Value;

/// Success counts out of 5 from a small set, with own-base values: a base scene among the query
/// scenes for even experiences, a recorded decimal for every third one.
fn library() -> impl Strategy<Value = RetrievalInputs> {
    (2usize..8, 2usize..9).prop_flat_map(|(k, n)| {
        (
            proptest::collection::vec(proptest::collection::vec(1u8..4, n), k),
            proptest::collection::vec(0u8..5, k),
        )
            .prop_map(move |(p, own)| {
                let p: Vec<Vec<f64>> = p
                    .iter()
                    .map(|row| row.iter().map(|&v| f64::from(v) / 5.0).collect())
                    .collect();
                let mut inputs = from_matrix(&p, 5, &[], &[]);
                for (e, x) in inputs.experiences.iter_mut().enumerate() {
                    if e % 3 == 0 {
                        x.own_base_success = Some(f64::from(own[e]) / 5.0);
                    } else if e % 2 == 0 {
                        x.base_scene_id = Some(format!("s{}", usize::from(own[e]) % n));
                    }
                }
                inputs
            })
    })
}

fn audit(inputs: &RetrievalInputs) -> AuditReport {
    let config = AuditConfig {
        seed: 3,
        resamples: 40,
        permutations: 40,
        library_sizes: vec![1, 2],
        random_subsets: 3,
        power_rates: vec![0.5],
        power_replicates: 3,
        ..AuditConfig::default()
    };
    run_audit(inputs, &config.check().unwrap()).unwrap()
}

/// The report as JSON without what legitimately depends on the log's size (`n_executions`) or
/// draws one logged execution per scene (the Thompson-sampling rule).
fn tie_dependent(report: &AuditReport) -> Value {
    let mut v = serde_json::to_value(report).unwrap();
    v.as_object_mut().unwrap().remove("n_executions");
    v["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["name"] != "track_record");
    v
}

fn quality_of(report: &AuditReport, id: &str) -> f64 {
    report
        .experiences
        .iter()
        .find(|e| e.id == id)
        .unwrap()
        .quality
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Row order of the execution log: the whole report, byte for byte.
    #[test]
    fn execution_row_order_changes_nothing(inputs in library(), rotate in 0usize..1000) {
        let base = audit(&inputs);
        let mut shuffled = inputs.clone();
        let len = shuffled.executions.len();
        shuffled.executions.rotate_left(rotate % len);
        shuffled.executions.reverse();
        prop_assert_eq!(
            serde_json::to_string(&base).unwrap(),
            serde_json::to_string(&audit(&shuffled)).unwrap()
        );
    }

    /// The same rates from 10 executions per cell instead of 5: nothing tie-dependent moves.
    #[test]
    fn doubling_every_cells_seeds_changes_nothing(inputs in library()) {
        let base = audit(&inputs);
        let mut doubled = inputs.clone();
        let extra: Vec<ExecutionRecord> = inputs
            .executions
            .iter()
            .map(|x| ExecutionRecord { seed: x.seed + 1_000, ..x.clone() })
            .collect();
        doubled.executions.extend(extra);
        prop_assert_eq!(tie_dependent(&base), tie_dependent(&audit(&doubled)));
    }

    /// Scenes file order: every exact value, every pick (scene-indexed choices aside) and the
    /// own-base ρ are the same.
    #[test]
    fn scene_order_changes_no_tie_dependent_output(inputs in library(), rotate in 1usize..9) {
        let base = audit(&inputs);
        let mut moved = inputs.clone();
        let n = moved.scenes.len();
        moved.scenes.rotate_left(rotate % n);
        let other = audit(&moved);
        prop_assert_eq!(
            serde_json::to_value(&base.reference).unwrap(),
            serde_json::to_value(&other.reference).unwrap()
        );
        prop_assert_eq!(base.own_base_spearman, other.own_base_spearman);
        for e in &base.experiences {
            prop_assert_eq!(e.quality, quality_of(&other, &e.id));
        }
        for name in ["oracle", "best_fixed"] {
            let (a, b) = (
                base.rules.iter().find(|r| r.name == name).unwrap(),
                other.rules.iter().find(|r| r.name == name).unwrap(),
            );
            prop_assert_eq!(a.success, b.success);
            prop_assert_eq!(a.gap, b.gap);
            prop_assert_eq!(&a.selection, &b.selection);
            prop_assert_eq!(&a.top_pick, &b.top_pick);
            prop_assert_eq!(a.concentration, b.concentration);
            prop_assert_eq!(a.top_pick_margin, b.top_pick_margin);
        }
        for (a, b) in base.library_interventions.iter().zip(&other.library_interventions) {
            let (a, b) = (a.quality_equalized.as_ref(), b.quality_equalized.as_ref());
            prop_assert_eq!(a.map(|l| &l.experiences), b.map(|l| &l.experiences));
        }
    }

    /// Experiences file order: values are the same per experience id; the best-fixed pick is the
    /// first experience, in the new order, whose quality equals the maximum.
    #[test]
    fn experience_order_moves_picks_only_by_the_lowest_index_rule(
        inputs in library(), rotate in 1usize..8,
    ) {
        let base = audit(&inputs);
        let mut moved = inputs.clone();
        let k = moved.experiences.len();
        moved.experiences.rotate_left(rotate % k);
        let other = audit(&moved);
        for e in &base.experiences {
            prop_assert_eq!(e.quality, quality_of(&other, &e.id));
        }
        let (a, b) = (&base.reference, &other.reference);
        prop_assert_eq!(a.random, b.random);
        prop_assert_eq!(a.oracle, b.oracle);
        prop_assert_eq!(a.best_fixed, b.best_fixed);
        prop_assert_eq!(a.oracle_top_pick_share, b.oracle_top_pick_share);
        let first_best = moved
            .experiences
            .iter()
            .find(|x| quality_of(&base, &x.experience_id) == a.best_fixed)
            .unwrap();
        prop_assert_eq!(&b.best_fixed_experience, &first_best.experience_id);
        match (base.own_base_spearman, other.own_base_spearman) {
            (Some(x), Some(y)) => prop_assert!((x - y).abs() < 1e-12, "{} vs {}", x, y),
            (x, y) => prop_assert_eq!(x, y),
        }
    }
}
