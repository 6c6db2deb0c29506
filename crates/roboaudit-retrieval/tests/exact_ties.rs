//! Regression tests for issue 21: equal success rates must tie. The library in
//! `tests/data/exact_ties` (50 experiences × 40 scenes, 5 or 10 executions per cell, many
//! experiences with the same successes in another scene order) and its exact values come from
//! `scripts/reference_exact_ties.py` (Python `fractions`, SciPy `spearmanr` fed the exact values).
//! Floats in `expected.json` are the correctly rounded values of the fractions, so the engine must
//! reproduce them bit for bit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

use roboaudit_data::{RetrievalPaths, load_retrieval_inputs};
use roboaudit_retrieval::{AuditConfig, AuditReport, run_audit};
use serde_json::Value;
use std::path::Path;

fn case() -> (AuditReport, Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/exact_ties");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let inputs = load_retrieval_inputs(&RetrievalPaths {
        executions: dir.join("executions.csv"),
        scenes: dir.join("scenes.csv"),
        experiences: dir.join("experiences.csv"),
        embeddings: dir.join("embeddings.csv"),
        selections: None,
    })
    .unwrap();
    let sizes = expected["library_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let config = AuditConfig {
        seed: 21,
        resamples: 200,
        permutations: 200,
        library_sizes: sizes,
        random_subsets: 4,
        power_replicates: 5,
        ..AuditConfig::default()
    };
    (
        run_audit(&inputs, &config.check().unwrap()).unwrap(),
        expected,
    )
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// Float means in scene order split equal qualities (29 distinct values instead of 14 in this
/// case) and moved ρ from 0.0624 to 0.1460; ranked on the exact values it is SciPy's value.
#[test]
fn own_base_spearman_ties_equal_success_counts_summed_in_another_order() {
    let (report, expected) = case();
    assert_eq!(report.own_base_n, 50);
    let rho = report.own_base_spearman.unwrap();
    let want = f(&expected["own_base_spearman"]);
    assert!((rho - want).abs() < 1e-12, "rho {rho} vs exact {want}");
    let float_sums = f(&expected["own_base_spearman_float_sums"]);
    assert!(
        (rho - float_sums).abs() > 0.05,
        "the case must separate the two"
    );
}

/// Best-fixed is the lowest index among exactly equal maxima of q; every quality, R, O, BF, the
/// headroom and T_O are the nearest floats of the exact fractions.
#[test]
fn best_fixed_pick_and_reference_points_use_exact_qualities() {
    let (report, expected) = case();
    let r = &report.reference;
    assert_eq!(
        r.best_fixed_experience,
        expected["best_fixed_experience"].as_str().unwrap()
    );
    assert_eq!(r.best_fixed, f(&expected["best_fixed"]));
    assert_eq!(r.random, f(&expected["random"]));
    assert_eq!(r.oracle, f(&expected["oracle"]));
    assert_eq!(r.headroom, f(&expected["headroom"]));
    assert_eq!(
        r.oracle_top_pick_share,
        f(&expected["oracle_top_pick_share"])
    );
    let want = expected["quality"].as_object().unwrap();
    for e in &report.experiences {
        assert_eq!(e.quality, f(&want[&e.id]), "quality of {}", e.id);
    }
    let distinct: std::collections::BTreeSet<u64> = report
        .experiences
        .iter()
        .map(|e| e.quality.to_bits())
        .collect();
    assert_eq!(
        distinct.len() as u64,
        expected["distinct_qualities"].as_u64().unwrap()
    );
    let bf = report
        .rules
        .iter()
        .find(|x| x.name == "best_fixed")
        .unwrap();
    assert_eq!(bf.top_pick, r.best_fixed_experience);
    assert_eq!(bf.success, r.best_fixed);
    assert_eq!(bf.gap, 0.0);
    assert_eq!(
        bf.concentration,
        f(&expected["best_fixed_rule_concentration"])
    );
    assert_eq!(bf.top_pick_margin, f(&expected["best_fixed_rule_margin"]));
}

/// The quality-equalized library is the first window of narrowest exact q range in (q, index)
/// order.
#[test]
fn quality_equalized_library_compares_tied_qualities_exactly() {
    let (report, expected) = case();
    for size in &report.library_interventions {
        let lib = size.quality_equalized.as_ref().unwrap();
        let key = size.size.to_string();
        let want: Vec<&str> = expected["quality_equalized"][&key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(lib.experiences, want, "size {key}");
        assert_eq!(
            lib.quality_range,
            f(&expected["quality_equalized_range"][&key]),
            "size {key}"
        );
    }
}
