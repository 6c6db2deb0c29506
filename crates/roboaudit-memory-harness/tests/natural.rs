//! Natural-occurrence episodes (docs/methods.md §2.10) with known answers: the memory-faithful
//! calibrator heads for the warranted tray in every decision episode, the memory-blind one
//! only where the warranted tray is the one it always picks; same seed, same bytes; a stream of
//! scenes of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_memory_harness::natural::{
    CohortSettings, NaturalConfig, episode_seeds, natural_study,
};
use roboaudit_memory_harness::{BuiltinPolicy, PolicyKind, PolicyParams};
use roboaudit_testbed::TaskKind;
use roboaudit_types::seed::splitmix64;

fn policy(kind: PolicyKind) -> BuiltinPolicy {
    BuiltinPolicy::new(kind, PolicyParams::default()).unwrap()
}

fn cfg(episodes: usize) -> NaturalConfig {
    let mut c = NaturalConfig {
        cohort: CohortSettings::with_episodes(episodes),
        ..NaturalConfig::default()
    };
    c.bootstrap.resamples = 500;
    c
}

#[test]
fn the_faithful_calibrator_heads_for_the_warranted_tray_in_every_decision_episode() {
    let s = natural_study(&cfg(6), &mut policy(PolicyKind::Faithful), &mut |_, _| {}).unwrap();
    let a = &s.analysis;
    // put_back: the held block has left its tray, so all three trays are empty at the lift.
    assert_eq!((a.decision.count, a.decision.n), (6, 6));
    for e in &s.episodes {
        assert_eq!(e.candidates, vec![0, 1, 2], "{e:?}");
        assert_eq!(e.first_direction, Some(e.warranted), "{e:?}");
        assert_eq!(
            (e.success, e.committed),
            (Some(true), Some(e.warranted)),
            "{e:?}"
        );
        assert!(e.remaining_steps.unwrap() > 0);
    }
    // Warranted targets cycle 0, 0, 1, 1, 2, 2 (the first history of the crossed origins).
    let targets: Vec<usize> = s.episodes.iter().map(|e| e.warranted).collect();
    assert_eq!(targets, vec![0, 0, 1, 1, 2, 2]);
    let r = &a.remaining_steps;
    assert_eq!((r.warranted.n, r.other.n), (6, 0));
    assert_eq!(r.estimate, None);
    assert!(
        r.undefined_reason
            .as_ref()
            .unwrap()
            .contains("another tray")
    );
}

#[test]
fn the_blind_calibrator_heads_for_the_first_tray_whatever_memory_warrants() {
    let s = natural_study(&cfg(6), &mut policy(PolicyKind::Blind), &mut |_, _| {}).unwrap();
    for e in &s.episodes {
        assert!(e.contains_decision, "{e:?}");
        assert_eq!(e.first_direction, Some(0), "{e:?}");
        assert_eq!(e.success, Some(e.warranted == 0), "{e:?}");
    }
    let a = &s.analysis;
    assert_eq!(
        (a.remaining_steps.warranted.n, a.remaining_steps.other.n),
        (2, 4)
    );
    // The wrong tray never succeeds: the episode runs to the step limit, later than any success.
    assert_eq!(a.success_association.estimate, Some(1.0));
    assert!(a.remaining_steps.estimate.unwrap() < 0.0, "{a:?}");
    let limit = TaskKind::PutBack.max_steps();
    for e in s.episodes.iter().filter(|e| e.warranted != 0) {
        assert_eq!(e.present_step.unwrap() + e.remaining_steps.unwrap(), limit);
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_scenes() {
    let run = |seed: u64| {
        let mut c = cfg(2);
        c.cohort.seed = seed;
        let s = natural_study(&c, &mut policy(PolicyKind::Bank), &mut |_, _| {}).unwrap();
        serde_json::to_vec(&s).unwrap()
    };
    assert_eq!(run(4), run(4));
    assert_ne!(run(4), run(5));
}

#[test]
fn natural_scenes_come_from_a_stream_of_their_own() {
    // The layout seeds of `memory collect` (i + 1) and `memory intervene` (i + 7) at the same
    // master seed: no natural episode draws any of them.
    let others: Vec<u64> = (0..200u64)
        .flat_map(|i| [splitmix64(splitmix64(i + 1)), splitmix64(splitmix64(i + 7))])
        .collect();
    let mine: Vec<u64> = (0..200).flat_map(|i| episode_seeds(0, i)).collect();
    assert!(mine.iter().all(|s| !others.contains(s)));
    let mut dedup = mine.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), mine.len());
}

/// The three-tray swap, judged by the harness's own predicate: at the present blue sits in red's
/// origin (tray 0) and both outer trays are empty; the faithful calibrator carries red to the
/// tray blue started in and succeeds, the blind one takes the first candidate whatever happened.
#[test]
fn swap_succeeds_only_for_the_policy_that_remembers_where_blue_started() {
    let mut c = cfg(4);
    c.cohort.task = TaskKind::Swap;
    let s = natural_study(&c, &mut policy(PolicyKind::Faithful), &mut |_, _| {}).unwrap();
    let targets: Vec<usize> = s.episodes.iter().map(|e| e.warranted).collect();
    assert_eq!(targets, vec![1, 2, 1, 2]);
    for e in &s.episodes {
        assert_eq!(e.candidates, vec![1, 2], "{e:?}");
        assert_eq!(e.first_direction, Some(e.warranted), "{e:?}");
        assert_eq!(
            (e.success, e.committed),
            (Some(true), Some(e.warranted)),
            "{e:?}"
        );
    }
    // The blind calibrator carries red to the first candidate, tray 1, whatever blue's origin:
    // it succeeds exactly in the episodes that warrant tray 1.
    let s = natural_study(&c, &mut policy(PolicyKind::Blind), &mut |_, _| {}).unwrap();
    for e in &s.episodes {
        assert!(e.contains_decision, "{e:?}");
        assert_eq!(e.committed, Some(1), "{e:?}");
        assert_eq!(e.success, Some(e.warranted == 1), "{e:?}");
    }
}
