//! The natural-occurrence analysis (docs/methods.md §2.10) on hand-made episode records: exact
//! contrasts, the decision fraction, undefined groups, refused records, and properties of the
//! layout-stratified episode bootstrap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use roboaudit_memory::natural::{BootstrapSettings, NaturalEpisode, Verdict, analyze_natural};

/// A decision episode of stratum `level`: warranted tray 1, first direction `first`.
fn ep(i: usize, level: u8, first: usize, steps: usize, success: bool) -> NaturalEpisode {
    NaturalEpisode {
        id: format!("n{i:03}"),
        stratum: format!("level{level}"),
        reached_present: true,
        warranted: 1,
        candidates: vec![0, 1, 2],
        contains_decision: true,
        present_step: Some(100),
        first_direction: Some(first),
        committed: Some(first),
        success: Some(success),
        remaining_steps: Some(steps),
    }
}

fn settings(resamples: usize) -> BootstrapSettings {
    BootstrapSettings {
        resamples,
        level: 0.95,
        seed: 3,
    }
}

#[test]
fn contrasts_are_exact_differences_of_group_means() {
    let mut eps = vec![
        ep(0, 0, 1, 10, true),
        ep(1, 0, 1, 20, true),
        ep(2, 1, 1, 30, false),
        ep(3, 0, 0, 50, false),
        ep(4, 1, 2, 70, true),
    ];
    // Neither of these enters the contrasts; both count in the fraction's denominator.
    let mut visible = ep(5, 0, 0, 5, true);
    visible.contains_decision = false;
    visible.candidates = vec![1];
    eps.push(visible);
    eps.push(NaturalEpisode {
        reached_present: false,
        contains_decision: false,
        candidates: vec![],
        present_step: None,
        first_direction: None,
        committed: None,
        success: None,
        remaining_steps: None,
        ..ep(6, 1, 0, 0, false)
    });
    let a = analyze_natural(&eps, &settings(2_000)).unwrap();
    assert_eq!((a.decision.count, a.decision.n), (5, 7));
    assert_eq!((a.reached_present.count, a.reached_present.n), (6, 7));
    let r = &a.remaining_steps;
    assert_eq!((r.warranted.n, r.warranted.total), (3, 60));
    assert_eq!((r.other.n, r.other.total), (2, 120));
    // 60/3 − 120/2 = 20 − 60.
    assert_eq!(r.estimate, Some(-40.0));
    let s = &a.success_association;
    assert_eq!((s.warranted.total, s.other.total), (2, 1));
    // 2/3 − 1/2 = 1/6, one exact fraction rounded once.
    assert_eq!(s.estimate, Some(1.0 / 6.0));
    assert!(
        s.interpretation.contains("non-causal"),
        "{}",
        s.interpretation
    );
    for c in [r, s] {
        let [lo, hi] = c.ci.unwrap();
        assert!(
            lo <= c.estimate.unwrap() && c.estimate.unwrap() <= hi,
            "{c:?}"
        );
        assert_eq!(c.level, 0.95);
    }
    // Same records and seed: the same analysis, to the bit.
    assert_eq!(a, analyze_natural(&eps, &settings(2_000)).unwrap());
}

#[test]
fn a_separated_contrast_lies_below_zero_and_a_constant_one_is_unresolved_at_exactly_zero() {
    let eps: Vec<NaturalEpisode> = (0..24)
        .map(|i| {
            let warranted = i % 3 != 0;
            ep(
                i,
                (i % 2) as u8,
                if warranted { 1 } else { 2 },
                if warranted { 40 } else { 130 },
                true,
            )
        })
        .collect();
    let a = analyze_natural(&eps, &settings(1_000)).unwrap();
    assert_eq!(a.remaining_steps.estimate, Some(-90.0));
    assert_eq!(a.remaining_steps.ci, Some([-90.0, -90.0]));
    assert_eq!(a.remaining_steps.verdict, Some(Verdict::BelowZero));
    // Every episode succeeded: the association is 0 in every resample, not a rounding residue.
    assert_eq!(a.success_association.estimate, Some(0.0));
    assert_eq!(a.success_association.ci, Some([0.0, 0.0]));
    assert_eq!(a.success_association.verdict, Some(Verdict::Unresolved));
}

#[test]
fn an_empty_group_gives_null_contrasts_with_a_reason() {
    let eps: Vec<NaturalEpisode> = (0..6).map(|i| ep(i, 0, 1, 30 + i, true)).collect();
    let a = analyze_natural(&eps, &settings(500)).unwrap();
    for c in [&a.remaining_steps, &a.success_association] {
        assert_eq!((c.estimate, c.ci, c.verdict), (None, None, None));
        assert!(
            c.undefined_reason
                .as_ref()
                .unwrap()
                .contains("another tray"),
            "{c:?}"
        );
        assert_eq!(c.warranted.n, 6);
    }
    let none = analyze_natural(&[], &settings(500)).unwrap();
    assert_eq!((none.decision.count, none.decision.n), (0, 0));
    assert!(
        none.remaining_steps
            .undefined_reason
            .unwrap()
            .contains("no episode contains")
    );
}

#[test]
fn decision_episodes_without_a_first_direction_are_counted_and_left_out() {
    let mut eps = vec![ep(0, 0, 1, 10, true), ep(1, 0, 0, 30, false)];
    let mut stuck = ep(2, 0, 0, 500, false);
    stuck.first_direction = None;
    eps.push(stuck);
    let a = analyze_natural(&eps, &settings(500)).unwrap();
    assert_eq!(a.no_direction, 1);
    assert_eq!(a.decision.count, 3);
    assert_eq!(a.remaining_steps.estimate, Some(-20.0));
}

#[test]
fn malformed_records_and_settings_are_refused_naming_the_episode() {
    let mut eps = vec![ep(0, 0, 1, 10, true), ep(0, 0, 0, 30, false)];
    let e = analyze_natural(&eps, &settings(500))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`n000` appears twice"), "{e}");
    eps[1].id = "n001".into();
    eps[1].remaining_steps = None;
    let e = analyze_natural(&eps, &settings(500))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`n001`") && e.contains("remaining_steps"), "{e}");
    eps[1].remaining_steps = Some(3);
    let bad = BootstrapSettings {
        level: 1.0,
        ..settings(500)
    };
    assert!(analyze_natural(&eps, &bad).is_err());
    assert!(analyze_natural(&eps, &settings(0)).is_err());
}

#[test]
fn resampling_within_strata_keeps_both_groups_when_each_stratum_is_one_group() {
    // Level 0 holds only warranted-first episodes, level 1 only other-first ones: a resample
    // within strata always holds both groups (an unstratified one of 4 episodes would miss a
    // group in about 12 % of resamples).
    let eps: Vec<NaturalEpisode> = (0..4)
        .map(|i| {
            let w = i < 2;
            ep(
                i,
                if w { 0 } else { 1 },
                if w { 1 } else { 0 },
                10 * (i + 1),
                w,
            )
        })
        .collect();
    let a = analyze_natural(&eps, &settings(2_000)).unwrap();
    assert_eq!(a.remaining_steps.undefined_resamples, 0);
    assert_eq!(a.success_association.ci, Some([1.0, 1.0]));
    assert_eq!(a.success_association.verdict, Some(Verdict::AboveZero));
    // 15 − 35; resamples range over {10, 15, 20} − {30, 35, 40}.
    assert_eq!(a.remaining_steps.estimate, Some(-20.0));
    let [lo, hi] = a.remaining_steps.ci.unwrap();
    assert!((-30.0..=-10.0).contains(&lo) && (-30.0..=-10.0).contains(&hi) && lo < hi);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Intervals are ordered, lie within what any resample could give, and the verdict reads
    /// the interval.
    #[test]
    fn intervals_are_ordered_and_bounded(
        rows in prop::collection::vec((0u8..3, any::<bool>(), 0usize..400, any::<bool>()), 2..30),
    ) {
        let eps: Vec<NaturalEpisode> = rows
            .iter()
            .enumerate()
            .map(|(i, &(level, w, steps, success))| ep(i, level, if w { 1 } else { 2 }, steps, success))
            .collect();
        let a = analyze_natural(&eps, &settings(200)).unwrap();
        let span = rows.iter().map(|r| r.2).max().unwrap() as f64
            - rows.iter().map(|r| r.2).min().unwrap() as f64;
        for (c, bound) in [(&a.remaining_steps, span), (&a.success_association, 1.0)] {
            match (c.estimate, c.ci) {
                (Some(est), Some([lo, hi])) => {
                    prop_assert!(lo <= hi);
                    prop_assert!(est.abs() <= bound && lo >= -bound && hi <= bound);
                    let expected = if lo > 0.0 {
                        Verdict::AboveZero
                    } else if hi < 0.0 {
                        Verdict::BelowZero
                    } else {
                        Verdict::Unresolved
                    };
                    prop_assert_eq!(c.verdict, Some(expected));
                }
                (Some(_), None) => prop_assert!(c.undefined_reason.is_some()),
                (None, ci) => {
                    prop_assert!(ci.is_none() && c.undefined_reason.is_some());
                    prop_assert!(c.warranted.n == 0 || c.other.n == 0);
                }
            }
        }
    }
}
