//! Known-answer calibration through the whole pipeline (SPEC.md §2): every calibrator's answer
//! is recovered exactly on put_back, swap and rearrange.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use roboaudit_memory_harness::{Calibrator, PolicyParams, calibrate};
use roboaudit_testbed::TaskKind;

fn check_task(task: TaskKind, pairs: usize) {
    let cfg = common::small(task, pairs, &[0, 1]);
    let cal = calibrate(
        &cfg,
        &PolicyParams::default(),
        &common::plan(),
        &mut |_, _, _| {},
    )
    .unwrap();
    assert_eq!(cal.results.len(), Calibrator::ALL.len());
    for r in &cal.results {
        assert_eq!(r.n_excluded, 0, "{:?}", r.calibrator);
        for c in &r.checks {
            assert!(
                c.passed,
                "{} {}: expected {}, got {:?}",
                r.calibrator.name(),
                c.metric,
                c.expected,
                c.got
            );
        }
    }
    assert!(cal.passed);
    let faithful = &cal.results[0];
    let reliable = faithful
        .checks
        .iter()
        .find(|c| c.metric == "reliable_pairs")
        .unwrap();
    assert_eq!(reliable.got, Some(pairs as f64));
}

#[test]
fn calibrators_are_recovered_on_put_back() {
    check_task(TaskKind::PutBack, 6);
}

#[test]
fn calibrators_are_recovered_on_swap() {
    check_task(TaskKind::Swap, 4);
}

#[test]
fn calibrators_are_recovered_on_rearrange() {
    check_task(TaskKind::Rearrange, 4);
}
