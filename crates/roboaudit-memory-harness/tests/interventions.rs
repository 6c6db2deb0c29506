//! Native-rollout interventions with the memory-faithful policy: replacement redirects to the
//! replaced content, restoring the protected anchor recovers what a cleared bank loses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_memory_harness::intervene::{
    CohortSettings, InterventionConfig, replacement_study, restoration_study,
};
use roboaudit_memory_harness::{BuiltinPolicy, PolicyKind, PolicyParams};

fn faithful() -> BuiltinPolicy {
    BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap()
}

fn row<'a>(
    s: &'a roboaudit_memory_harness::intervene::InterventionStudy,
    name: &str,
) -> &'a roboaudit_memory_harness::intervene::ConditionSummary {
    s.summary.iter().find(|c| c.condition == name).unwrap()
}

#[test]
fn replacement_redirects_toward_the_replaced_content() {
    let cfg = InterventionConfig {
        cohort: CohortSettings::with_episodes(6),
        ..InterventionConfig::default()
    };
    let s = replacement_study(&cfg, &mut faithful()).unwrap();
    assert_eq!(s.skipped, 0);
    assert_eq!(s.own_reproduces_native, Some(true));
    let own = row(&s, "own");
    assert_eq!((own.n, own.successes, own.committed_own), (6, 6, 6));
    let same = row(&s, "donor_same");
    assert_eq!((same.successes, same.committed_own), (6, 6));
    let opposite = row(&s, "donor_opposite");
    // The donor's target is another tray: official success is lost and every continuation
    // commits to the donor's target.
    assert_eq!((opposite.successes, opposite.committed_donor), (0, 6));
    let clear = row(&s, "clear");
    assert!(clear.successes < 6, "{clear:?}");
    // Intervals: all-success and all-failure conditions are degenerate at their rate.
    let iv = |name: &str| s.intervals.iter().find(|c| c.condition == name).unwrap();
    assert_eq!(iv("own").success.unwrap().ci, Some([1.0, 1.0]));
    assert_eq!(iv("donor_opposite").success.unwrap().ci, Some([0.0, 0.0]));
    assert_eq!(
        iv("donor_opposite").committed_donor.unwrap().ci,
        Some([1.0, 1.0])
    );
    assert_eq!(iv("donor_same").committed_donor, None);
}

#[test]
fn restoring_the_anchor_recovers_the_success_a_cleared_bank_loses() {
    let cfg = InterventionConfig {
        cohort: CohortSettings::with_episodes(6),
        ..InterventionConfig::default()
    };
    let s = restoration_study(&cfg, &mut faithful()).unwrap();
    let none = row(&s, "none");
    let anchor = row(&s, "anchor");
    let full = row(&s, "full");
    assert_eq!(anchor.successes, 6);
    // The built-in policies read only the anchor, so a full rebuild acts exactly like it.
    assert_eq!(full.successes, anchor.successes);
    assert!(none.successes < anchor.successes, "{none:?}");
    let by_episode = |name: &str| -> Vec<bool> {
        s.continuations
            .iter()
            .filter(|c| c.condition == name)
            .map(|c| c.success)
            .collect()
    };
    assert_eq!(by_episode("anchor"), by_episode("full"));
    let ci = |name: &str| {
        let r = s.intervals.iter().find(|c| c.condition == name).unwrap();
        assert_eq!(r.committed_own, None);
        r.success.unwrap()
    };
    assert_eq!(ci("anchor").ci, Some([1.0, 1.0]));
    let n = ci("none");
    assert_eq!(n.estimate, none.successes as f64 / 6.0);
    let [lo, hi] = n.ci.unwrap();
    assert!(lo <= n.estimate && n.estimate <= hi);
}
