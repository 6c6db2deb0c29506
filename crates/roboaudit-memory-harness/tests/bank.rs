//! The bank policy: configured recall reliability is what the audit recovers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use roboaudit_memory_harness::{PolicyKind, PolicyParams, Reuse};
use roboaudit_testbed::TaskKind;

#[test]
fn uniform_reliability_is_recovered_within_its_interval() {
    let r = 0.75;
    let cfg = common::small(TaskKind::PutBack, 24, &[0, 1, 2]);
    let params = PolicyParams {
        reliability: vec![r],
        ..PolicyParams::default()
    };
    let audit = common::audit(&common::run(&cfg, PolicyKind::Bank, params, Reuse::Never));
    // Excluded pairs (natural presents too far apart) are counted, never replaced.
    assert_eq!(audit.n_pairs + audit.n_excluded, 24);
    assert!(audit.n_pairs >= 20, "{:?}", audit.excluded);
    // Each query recalls the right tray with probability r and otherwise heads for the other
    // branch, so F = 2r − 1 and the correct-choice rate is r.
    let [lo, hi] = audit.faithfulness.ci.unwrap();
    assert!(
        lo <= 2.0 * r - 1.0 && 2.0 * r - 1.0 <= hi,
        "F CI [{lo}, {hi}]"
    );
    let cc = audit.correct_choice_rate.unwrap();
    assert!((cc - r).abs() < 0.15, "correct-choice {cc}");
    assert_eq!(audit.ambiguity_rate, Some(0.0));
    assert!(audit.reliable_pairs.bidirectional < audit.n_pairs);
}

#[test]
fn target_dependent_failures_land_on_the_weak_target() {
    // Tray 2 is never recalled, trays 0 and 1 always: over the 6 balanced origin combinations
    // (each tray is each memory's target in 2 of 6), correct-choice = 2/3 and only the pairs
    // (0, 1) and (1, 0) are reliable.
    let cfg = common::small(TaskKind::PutBack, 12, &[0, 1]);
    let params = PolicyParams {
        reliability: vec![1.0, 1.0, 0.0],
        ..PolicyParams::default()
    };
    let audit = common::audit(&common::run(&cfg, PolicyKind::Bank, params, Reuse::Never));
    assert_eq!(audit.correct_choice_rate, Some(2.0 / 3.0));
    assert_eq!(audit.faithfulness.value, Some(1.0 / 3.0));
    assert_eq!(audit.reliable_pairs.bidirectional, 4);
}

#[test]
fn perfect_recall_is_the_faithful_answer_and_zero_recall_the_anti_answer() {
    let cfg = common::small(TaskKind::PutBack, 6, &[0]);
    let one = PolicyParams {
        reliability: vec![1.0],
        ..PolicyParams::default()
    };
    let zero = PolicyParams {
        reliability: vec![0.0],
        ..PolicyParams::default()
    };
    let a1 = common::audit(&common::run(&cfg, PolicyKind::Bank, one, Reuse::Never));
    let a0 = common::audit(&common::run(&cfg, PolicyKind::Bank, zero, Reuse::Never));
    assert_eq!(a1.faithfulness.value, Some(1.0));
    assert_eq!(a0.faithfulness.value, Some(-1.0));
}
