//! Irrelevant-history control: two detour routes; the semantic effect passes on both, and the
//! nuisance and interaction effects are equivalent to zero only inside the margin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use roboaudit_memory_harness::{
    BuiltinPolicy, PolicyKind, PolicyParams, Route, collect, route_control,
};
use roboaudit_testbed::TaskKind;

#[test]
fn detours_do_not_matter_to_an_anchor_reading_policy() {
    let mut cfg = common::small(TaskKind::PutBack, 6, &[0, 1]);
    cfg.routes = vec![Route::Left, Route::Right];
    let mut p = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    let run = collect(&cfg, &mut p, &mut |_, _| {}).unwrap();
    assert_eq!(run.manifest.n_pairs, 12);
    assert!(
        run.records
            .iter()
            .any(|r| r.pair_id == "p000-left" && r.route.as_deref() == Some("left"))
    );
    let c = route_control(&run.records, &common::plan()).unwrap();
    assert_eq!(c.routes, ["left".to_owned(), "right".to_owned()]);
    assert!(c.semantic_passed, "{:?}", c.semantic);
    // The faithful policy reads only the anchor (taken before the detour): no route effect at all.
    assert_eq!(c.nuisance.estimate, 0.0);
    assert_eq!(c.interaction.estimate, 0.0);
    assert!(c.nuisance.equivalent && c.interaction.equivalent);
    assert!(c.passed);
    assert_eq!(c.margin_source, "default");
}

#[test]
fn a_route_that_changes_choices_is_not_declared_equivalent() {
    // Relabel one route's records with an anti-faithful run: a large route effect.
    let mut cfg = common::small(TaskKind::PutBack, 4, &[0]);
    cfg.routes = vec![Route::Left, Route::Right];
    let mut f = BuiltinPolicy::new(PolicyKind::Faithful, PolicyParams::default()).unwrap();
    let mut a = BuiltinPolicy::new(PolicyKind::Anti, PolicyParams::default()).unwrap();
    let good = collect(&cfg, &mut f, &mut |_, _| {}).unwrap().records;
    let bad = collect(&cfg, &mut a, &mut |_, _| {}).unwrap().records;
    let mixed: Vec<_> = good
        .into_iter()
        .filter(|r| r.route.as_deref() == Some("left"))
        .chain(
            bad.into_iter()
                .filter(|r| r.route.as_deref() == Some("right")),
        )
        .collect();
    let c = route_control(&mixed, &common::plan()).unwrap();
    // Both memories flip from their own branch to the other: no route main effect on the chosen
    // branch, but the faithfulness drops by 2 between routes.
    assert_eq!(c.nuisance.estimate, 0.0);
    assert_eq!(c.interaction.estimate, -2.0);
    assert!(c.nuisance.equivalent);
    assert!(!c.interaction.equivalent);
    assert!(!c.semantic_passed);
    assert!(!c.passed);
}
