//! Known-answer calibration (SPEC.md §2; seed 002 §IV-D-1): calibrator policies whose audit
//! answer is known must be recovered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Act, action_records, build, chunk, goes_to, plan, stays};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_memory::{Choice, MemoryError, MemoryLabel, analyze};

const SEEDS: [i64; 3] = [0, 1, 2];

#[test]
fn memory_faithful_policy_scores_one_everywhere() {
    let records = build(12, &SEEDS, |_, m, _| goes_to(m, chunk(m)));
    let a = analyze(&records, &plan(2_000)).unwrap();
    assert_eq!((a.n_pairs, a.n_excluded), (12, 0));
    assert_eq!(a.faithfulness.value, Some(1.0));
    assert_eq!(a.faithfulness.ci, Some([1.0, 1.0]));
    assert_eq!(a.u1.value, Some(1.0));
    assert_eq!(a.sensitivity, Some(5.0)); // ‖(0,0) − (3,4)‖₂
    assert_eq!(a.action_change_rate, Some(1.0));
    assert_eq!(a.branch_change_rate, Some(1.0));
    assert_eq!(a.correct_choice_rate, Some(1.0));
    assert_eq!(a.ambiguity_rate, Some(0.0));
    assert_eq!(a.regret, Some(0.0));
    assert_eq!(a.matched_world_value.AA, Some(1.0));
    assert_eq!(a.matched_world_value.AB, Some(0.0));
    assert_eq!(a.reliable_pairs.bidirectional, 12);
    assert_eq!(a.reliable_pairs.by_seed.len(), 3);
    assert!(a.reliable_pairs.by_seed.iter().all(|s| s.pairs == 12));
    assert_eq!(a.positive_rule.passed, Some(true));
    assert_eq!(a.crossed_world.disagreements, 0);
    assert_eq!(a.crossed_world.n_actions, 72);
}

#[test]
fn anti_faithful_policy_scores_minus_one() {
    let records = build(10, &SEEDS, |_, m, _| goes_to(m.other(), chunk(m)));
    let a = analyze(&records, &plan(1_000)).unwrap();
    assert_eq!(a.faithfulness.value, Some(-1.0));
    assert_eq!(a.u1.value, Some(-1.0));
    assert_eq!(a.regret, Some(1.0));
    assert_eq!(a.correct_choice_rate, Some(0.0));
    assert_eq!(a.wrong_choice_rate, Some(1.0));
    assert_eq!(a.reliable_pairs.bidirectional, 0);
    assert_eq!(a.positive_rule.passed, Some(false));
}

#[test]
fn memory_blind_policy_that_commits_to_nothing_scores_zero() {
    let records = build(10, &SEEDS, |_, m, _| stays(chunk(m)));
    let a = analyze(&records, &plan(1_000)).unwrap();
    assert_eq!(a.faithfulness.value, Some(0.0));
    assert_eq!(a.u1.value, Some(0.0));
    assert_eq!(a.ambiguity_rate, Some(1.0));
    assert_eq!(a.branch_change_rate, Some(0.0));
    // Memory changed every action without changing the branch (seed 002 §IV-B, later Swap).
    assert_eq!(a.action_change_rate, Some(1.0));
    assert_eq!(a.positive_rule.passed, Some(false));
    assert!((a.regret.unwrap() - 0.8).abs() < 1e-12);
}

#[test]
fn one_action_reused_across_pseudo_memory_labels_gives_f_and_u1_zero() {
    // Balanced: half the pairs reuse a chunk that goes to A, half one that goes to B.
    let records = build(10, &SEEDS, |p, _, _| {
        let branch = if p.is_multiple_of(2) {
            MemoryLabel::A
        } else {
            MemoryLabel::B
        };
        goes_to(branch, vec![1.5, -2.0])
    });
    let a = analyze(&records, &plan(1_000)).unwrap();
    assert_eq!(a.faithfulness.value, Some(0.0));
    assert_eq!(a.u1.value, Some(0.0));
    assert_eq!(a.sensitivity, Some(0.0));
    assert_eq!(a.action_change_rate, Some(0.0));
    assert_eq!(a.correct_choice_rate, Some(0.5));
    assert_eq!(a.reliable_pairs.bidirectional, 0);
    assert_eq!(a.reliable_pairs.by_direction.A, 5);
    assert_eq!(a.reliable_pairs.by_direction.B, 5);
}

#[test]
fn bank_policy_recovers_two_r_minus_one_within_its_interval() {
    for (r, seed) in [(0.7, 11u64), (0.9, 12), (0.4, 13)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let records = build(150, &SEEDS, |_, m, _| {
            let recalled = rng.random::<f64>() < r;
            goes_to(if recalled { m } else { m.other() }, chunk(m))
        });
        let a = analyze(&records, &plan(2_000)).unwrap();
        let [lo, hi] = a.faithfulness.ci.unwrap();
        let truth = 2.0 * r - 1.0;
        assert!(
            lo <= truth && truth <= hi,
            "r = {r}: [{lo}, {hi}] misses {truth}"
        );
        assert!(hi - lo < 0.25, "interval too wide: [{lo}, {hi}]");
        // With all-or-nothing values, U1 equals F here.
        assert!((a.u1.value.unwrap() - a.faithfulness.value.unwrap()).abs() < 1e-12);
    }
}

/// Two pairs, two seeds, every quantity worked out by hand.
#[test]
fn hand_computed_mixed_example() {
    let mut records = Vec::new();
    let act = |ta: f64, tb: f64, va: f64, vb: f64, action: Vec<f32>| Act {
        toward_a: ta,
        toward_b: tb,
        value_a: va,
        value_b: vb,
        action,
    };
    // pair q0: seed 0 both correct; seed 1 memory A ambiguous (diff 0.04 <= δ), memory B correct.
    records.extend(action_records(
        "q0",
        MemoryLabel::A,
        0,
        &act(0.9, 0.1, 0.9, 0.1, vec![0.0, 0.0]),
    ));
    records.extend(action_records(
        "q0",
        MemoryLabel::B,
        0,
        &act(0.2, 0.8, 0.2, 0.8, vec![1.0, 0.0]),
    ));
    records.extend(action_records(
        "q0",
        MemoryLabel::A,
        1,
        &act(0.52, 0.48, 0.5, 0.5, vec![0.0, 0.0]),
    ));
    records.extend(action_records(
        "q0",
        MemoryLabel::B,
        1,
        &act(0.0, 1.0, 0.0, 1.0, vec![0.0, 2.0]),
    ));
    // pair q1: memory B wrong at both seeds (goes to A); memory A correct.
    records.extend(action_records(
        "q1",
        MemoryLabel::A,
        0,
        &act(1.0, 0.0, 1.0, 0.0, vec![1.0, 1.0]),
    ));
    records.extend(action_records(
        "q1",
        MemoryLabel::B,
        0,
        &act(0.7, 0.3, 0.6, 0.4, vec![1.0, 1.0]),
    ));
    records.extend(action_records(
        "q1",
        MemoryLabel::A,
        1,
        &act(1.0, 0.0, 1.0, 0.0, vec![1.0, 1.0]),
    ));
    records.extend(action_records(
        "q1",
        MemoryLabel::B,
        1,
        &act(0.7, 0.3, 0.6, 0.4, vec![4.0, 5.0]),
    ));
    let a = analyze(&records, &plan(500)).unwrap();
    // s: q0 = (+1 +1 0 +1)/4 = 0.75; q1 = (+1 −1 +1 −1)/4 = 0; F = 0.375.
    assert_eq!(a.faithfulness.value, Some(0.375));
    assert_eq!(a.correct_choice_rate, Some(0.625));
    assert_eq!(a.ambiguity_rate, Some(0.125));
    assert_eq!(a.wrong_choice_rate, Some(0.25));
    // Distances: q0 seed0 1, seed1 2; q1 seed0 0, seed1 5 → S = (1.5 + 2.5)/2 = 2.
    assert_eq!(a.sensitivity, Some(2.0));
    assert_eq!(a.action_change_rate, Some(0.75));
    // Branch changes: q0 seed0 A≠B, seed1 none≠B; q1 A=A twice → 2/4.
    assert_eq!(a.branch_change_rate, Some(0.5));
    // V(A,A) = mean(q0: (0.9+0.5)/2, q1: 1) = 0.85; V(A,B) = mean(0.3, 0) = 0.15;
    // V(B,A) = mean(0.1, 0.6) = 0.35; V(B,B) = mean(0.9, 0.4) = 0.65.
    let v = &a.matched_world_value;
    for (got, want) in [(v.AA, 0.85), (v.AB, 0.15), (v.BA, 0.35), (v.BB, 0.65)] {
        assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
    }
    assert!((a.u1.value.unwrap() - 0.5).abs() < 1e-12);
    // Regret = mean(1 − v(a, m)) over 8 actions = 1 − (0.9+0.8+0.5+1+1+0.4+1+0.4)/8 = 0.25.
    assert!((a.regret.unwrap() - 0.25).abs() < 1e-12);
    assert_eq!(a.reliable_pairs.bidirectional, 0);
    assert_eq!(a.reliable_pairs.by_direction.A, 1); // q1
    assert_eq!(a.reliable_pairs.by_direction.B, 1); // q0
    assert_eq!(a.reliable_pairs.by_seed[0].pairs, 1); // q0 at seed 0
    assert_eq!(a.reliable_pairs.by_seed[1].pairs, 0);
    assert_eq!(a.pairs[0].choices[1], [Choice::None, Choice::B]);
}

#[test]
fn crossed_world_disagreement_is_counted_and_matched_world_decides() {
    let mut records = build(2, &[0], |_, m, _| goes_to(m, chunk(m)));
    // Pair p000, memory A, world B record: claim progress toward b_B (the other branch).
    let r = records
        .iter_mut()
        .find(|r| r.pair_id == "p000" && r.memory == MemoryLabel::A && r.world == MemoryLabel::B)
        .unwrap();
    r.progress_warranted = 1.0;
    r.progress_other = 0.0;
    let a = analyze(&records, &plan(200)).unwrap();
    assert_eq!(a.crossed_world.disagreements, 1);
    assert_eq!(a.crossed_world.n_actions, 4);
    assert_eq!(a.faithfulness.value, Some(1.0));
}

#[test]
fn excluded_pairs_are_counted_and_never_analysed() {
    let mut records = build(6, &SEEDS, |p, m, _| {
        goes_to(if p == 5 { m.other() } else { m }, chunk(m))
    });
    let reference = analyze(&records[..records.len() / 6 * 5], &plan(500)).unwrap();
    for r in records.iter_mut().filter(|r| r.pair_id == "p005") {
        r.present_equal = false;
    }
    let a = analyze(&records, &plan(500)).unwrap();
    assert_eq!((a.n_pairs, a.n_excluded), (5, 1));
    assert_eq!(a.excluded[0].reason, "present check failed");
    assert_eq!(a.faithfulness, reference.faithfulness);
    assert_eq!(a.u1, reference.u1);
    let mut by_plan = plan(500);
    by_plan.eligibility.excluded_pairs = vec!["p000".into()];
    let b = analyze(&records, &by_plan).unwrap();
    assert_eq!((b.n_pairs, b.n_excluded), (4, 2));
}

#[test]
fn no_eligible_pair_gives_nulls_with_a_reason() {
    let mut records = build(2, &[0], |_, m, _| goes_to(m, chunk(m)));
    for r in &mut records {
        r.present_equal = false;
    }
    let a = analyze(&records, &plan(100)).unwrap();
    assert_eq!(a.n_excluded, 2);
    assert_eq!(a.faithfulness.value, None);
    assert!(
        a.faithfulness
            .reason
            .as_deref()
            .unwrap()
            .contains("no eligible pair")
    );
    assert_eq!(a.positive_rule.passed, None);
    let json = serde_json::to_value(&a).unwrap();
    assert!(json["sensitivity"].is_null());
    assert!(json["undefined_reason"].is_string());
}

#[test]
fn seeds_must_match_the_registration() {
    let records = build(3, &[0, 1], |_, m, _| goes_to(m, chunk(m)));
    let mut registered = plan(100);
    registered.seeds = vec![0, 1, 2];
    let err = analyze(&records, &registered).unwrap_err();
    assert!(
        matches!(err, MemoryError::InvalidRecords(ref m) if m.contains("lacks registered action_seed 2")),
        "{err}"
    );
    registered.seeds = vec![0];
    let err = analyze(&records, &registered).unwrap_err();
    assert!(
        err.to_string()
            .contains("action_seed 1, which is not registered"),
        "{err}"
    );
    // A pair missing one (memory, world) row.
    let mut broken = records.clone();
    broken.remove(3);
    assert!(analyze(&broken, &plan(100)).is_err());
}

#[test]
fn stratified_and_route_breakdowns() {
    let mut records = build(8, &SEEDS, |p, m, _| {
        goes_to(if p < 6 { m } else { m.other() }, chunk(m))
    });
    for r in &mut records {
        let p: usize = r.pair_id[1..].parse().unwrap();
        r.stratum = Some(if p.is_multiple_of(2) { "even" } else { "odd" }.to_owned());
        r.route = Some(if p < 4 { "left" } else { "right" }.to_owned());
    }
    let a = analyze(&records, &plan(1_000)).unwrap();
    let s = a.stratified.as_ref().unwrap();
    assert_eq!(s.strata.len(), 2);
    assert_eq!(s.faithfulness.value, a.faithfulness.value);
    assert_eq!(a.by_route.len(), 2);
    assert_eq!(a.by_route[0].name, "left");
    assert_eq!(a.by_route[0].faithfulness.value, Some(1.0));
    assert_eq!(a.by_route[0].positive_rule.passed, Some(true));
    assert_eq!(a.by_route[1].faithfulness.value, Some(0.0)); // 2 faithful, 2 anti
    assert_eq!(a.by_route[1].positive_rule.passed, Some(false));
}

#[test]
fn stratified_bootstrap_keeps_stratum_sizes() {
    // Stratum "x" all faithful, "y" all anti-faithful: resampling within strata cannot move F.
    let mut records = build(10, &SEEDS, |p, m, _| {
        goes_to(if p < 6 { m } else { m.other() }, chunk(m))
    });
    for r in &mut records {
        let p: usize = r.pair_id[1..].parse().unwrap();
        r.stratum = Some(if p < 6 { "x" } else { "y" }.to_owned());
    }
    let a = analyze(&records, &plan(2_000)).unwrap();
    let s = a.stratified.unwrap();
    assert!((s.faithfulness.value.unwrap() - 0.2).abs() < 1e-12);
    let [lo, hi] = s.faithfulness.ci.unwrap();
    assert!((hi - lo).abs() < 1e-12, "[{lo}, {hi}]");
    let [lo, hi] = a.faithfulness.ci.unwrap();
    assert!(hi - lo > 0.3, "unstratified [{lo}, {hi}]");
}
