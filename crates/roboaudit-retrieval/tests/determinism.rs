//! The report is byte-identical for the same inputs and seed whatever the rayon thread count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_retrieval::synthetic::{SyntheticSpec, generate};
use roboaudit_retrieval::{AuditConfig, run_audit};
use roboaudit_types::SelectionRecord;

fn report_bytes(threads: usize, seed: u64) -> String {
    let mut inputs = generate(&SyntheticSpec {
        experiences: 12,
        scenes: 10,
        seeds: 3,
        representations: 3,
        dim: 8,
        seed: 5,
    });
    inputs.selections = Some(
        inputs
            .scenes
            .iter()
            .enumerate()
            .map(|(i, s)| SelectionRecord {
                scene_id: s.scene_id.clone(),
                experience_id: inputs.experiences[i % 4].experience_id.clone(),
            })
            .collect(),
    );
    let config = AuditConfig {
        seed,
        resamples: 400,
        permutations: 400,
        library_sizes: vec![3, 5, 12],
        random_subsets: 16,
        structural: Some("dinov2".into()),
        power_replicates: 40,
        ..AuditConfig::default()
    }
    .check()
    .unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let report = pool.install(|| run_audit(&inputs, &config)).unwrap();
    serde_json::to_string(&report).unwrap()
}

#[test]
fn thread_count_determinism() {
    let one = report_bytes(1, 3);
    let two = report_bytes(2, 3);
    assert_eq!(one, two);
    assert!(one.contains("\"structural/dinov2\"") && one.contains("\"user_selection\""));
    assert!(!one.contains("nn/dinov2/cosine"));
    assert_ne!(
        one,
        report_bytes(2, 4),
        "a different seed must change the random draws"
    );
}

/// BCa intervals (SPEC.md §0 option) run on every rule, including rules whose gap is 0 in every
/// resample: bounds are finite and ordered, or null with a reason.
#[test]
fn bca_intervals_are_ordered() {
    let inputs = generate(&SyntheticSpec {
        experiences: 10,
        scenes: 16,
        seeds: 3,
        representations: 2,
        dim: 6,
        seed: 9,
    });
    let config = AuditConfig {
        resamples: 1_000,
        permutations: 200,
        ci_method: roboaudit_retrieval::CiMethod::Bca,
        library_sizes: vec![],
        ..AuditConfig::default()
    };
    let report = run_audit(&inputs, &config.check().unwrap()).unwrap();
    for rule in &report.rules {
        match rule.gap_ci {
            Some([lo, hi]) => assert!(
                lo.is_finite() && hi.is_finite() && lo <= hi,
                "{}: [{lo}, {hi}]",
                rule.name
            ),
            None => assert!(rule.gap_ci_reason.is_some(), "{}", rule.name),
        }
    }
    let bf = report
        .rules
        .iter()
        .find(|r| r.name == "best_fixed")
        .unwrap();
    assert!(
        bf.gap_ci.is_none_or(|ci| ci == [0.0, 0.0]),
        "{:?}",
        bf.gap_ci
    );
}
