//! Plan files, their canonical hash, and the refusal of results whose plan changed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{build, chunk, goes_to};
use roboaudit_memory::{
    MemoryError, Plan, PlanSource, analyze, check_output_plan, check_records_plan, equivalence_test,
};

#[test]
fn defaults_are_those_of_spec_section_2() {
    let plan = Plan::default();
    assert_eq!(plan.delta, 0.05);
    assert_eq!(plan.bootstrap.resamples, 10_000);
    assert_eq!(plan.bootstrap.level, 0.95);
    assert_eq!(plan.bootstrap.equivalence_level, 0.90);
    assert_eq!(plan.eligibility.min_pairs, 1);
    assert_eq!(plan.source, PlanSource::Defaults);
    // An empty file is the defaults, read from a file.
    let empty = Plan::from_toml_str("").unwrap();
    assert_eq!(empty.source, PlanSource::File);
    assert_eq!(empty.hash(), plan.hash());
}

#[test]
fn hash_ignores_layout_but_not_values() {
    let a =
        Plan::from_toml_str("delta = 0.1\nseeds = [0, 1]\n[margins]\nnuisance = 0.2\n").unwrap();
    let b = Plan::from_toml_str(
        "# registered 2026-11-29\n[margins]\nnuisance   = 0.2\n\n[bootstrap]\nresamples = 10000\n",
    )
    .unwrap();
    let b = Plan {
        delta: 0.1,
        seeds: vec![0, 1],
        ..b
    };
    assert_eq!(a.hash(), b.hash());
    assert!(a.hash().starts_with("sha256:") && a.hash().len() == 71);
    let c = Plan::from_toml_str("delta = 0.1000001\nseeds = [0, 1]\n[margins]\nnuisance = 0.2\n")
        .unwrap();
    assert_ne!(a.hash(), c.hash());
    let d =
        Plan::from_toml_str("delta = 0.1\nseeds = [1, 0]\n[margins]\nnuisance = 0.2\n").unwrap();
    assert_ne!(a.hash(), d.hash(), "seed order is part of the registration");
}

#[test]
fn invalid_plans_are_rejected_with_the_key() {
    for (text, needle) in [
        ("delta = -0.1", "delta"),
        ("detla = 0.1", "detla"),
        ("seeds = [1, 1]", "distinct"),
        ("[bootstrap]\nlevel = 1.5", "bootstrap.level"),
        ("[margins]\nnuisance = 0", "margins.nuisance"),
        ("distance = \"cosine\"", "cosine"),
        ("[eligibility]\nmin_pairs = 0", "min_pairs"),
    ] {
        let err = Plan::from_toml_str(text).unwrap_err();
        assert!(
            matches!(err, MemoryError::InvalidPlan { .. }),
            "{text}: {err}"
        );
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
}

#[test]
fn load_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.toml");
    std::fs::write(&path, "delta = \"big\"\n").unwrap();
    let err = Plan::load(&path).unwrap_err();
    assert!(
        err.to_string().ends_with(&format!("in {}", path.display())),
        "{err}"
    );
    assert!(matches!(
        Plan::load(dir.path().join("none.toml")),
        Err(MemoryError::PlanIo { .. })
    ));
}

#[test]
fn changed_plan_is_refused_for_an_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let records = build(3, &[0], |_, m, _| goes_to(m, chunk(m)));
    let original = Plan::from_toml_str("delta = 0.05\n[bootstrap]\nresamples = 100\n").unwrap();
    // Empty folder: fine.
    check_output_plan(dir.path(), &original.hash()).unwrap();
    let audit = analyze(&records, &original).unwrap();
    std::fs::write(
        dir.path().join("audit.json"),
        serde_json::to_vec(&audit).unwrap(),
    )
    .unwrap();
    // Same plan: fine.
    check_output_plan(dir.path(), &original.hash()).unwrap();
    // Changed δ after outcomes exist: refused.
    let changed = Plan::from_toml_str("delta = 0.10\n[bootstrap]\nresamples = 100\n").unwrap();
    let err = check_output_plan(dir.path(), &changed.hash()).unwrap_err();
    assert!(matches!(err, MemoryError::PlanChanged { .. }));
    let message = err.to_string();
    assert!(
        message.contains(&original.hash()) && message.contains(&changed.hash()),
        "{message}"
    );
    // Some other tool's audit.json is not silently overwritten.
    std::fs::write(
        dir.path().join("audit.json"),
        br#"{"schema":"roboaudit.retrieval.v1"}"#,
    )
    .unwrap();
    assert!(matches!(
        check_output_plan(dir.path(), &original.hash()),
        Err(MemoryError::ExistingOutput { .. })
    ));
}

#[test]
fn records_recorded_under_another_plan_are_refused() {
    let plan = Plan::default();
    let mut records = build(2, &[0], |_, m, _| goes_to(m, chunk(m)));
    let path = std::path::Path::new("records.parquet");
    check_records_plan(&records, &plan.hash(), path).unwrap();
    for r in &mut records {
        r.plan_hash = Some(plan.hash());
    }
    check_records_plan(&records, &plan.hash(), path).unwrap();
    let changed = Plan {
        delta: 0.2,
        ..Plan::default()
    };
    let err = check_records_plan(&records, &changed.hash(), path).unwrap_err();
    assert!(err.to_string().contains("the records file"), "{err}");
}

#[test]
fn equivalence_needs_the_whole_interval_inside_the_margin() {
    let plan = common::plan(2_000);
    // Mean 0.02 with spread: the 90% interval sits inside ±0.1.
    let small: Vec<f64> = (0..40)
        .map(|i| 0.02 + 0.05 * f64::from(i % 5 - 2) / 2.0)
        .collect();
    let eq = equivalence_test(&small, 0.1, &plan).unwrap();
    assert!(eq.equivalent, "{eq:?}");
    assert_eq!(eq.level, 0.90);
    // A noisy effect with mean 0 is not shown equivalent: failing to reject is not equivalence.
    let noisy: Vec<f64> = (0..8)
        .map(|i: u32| if i.is_multiple_of(2) { 0.5 } else { -0.5 })
        .collect();
    let eq = equivalence_test(&noisy, 0.1, &plan).unwrap();
    assert_eq!(eq.estimate, 0.0);
    assert!(!eq.equivalent, "{eq:?}");
    assert!(equivalence_test(&[], 0.1, &plan).is_err());
    assert!(equivalence_test(&[0.1], 0.0, &plan).is_err());
}
