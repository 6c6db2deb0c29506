//! Property tests of the audit on random transfer matrices.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use roboaudit_retrieval::synthetic::from_matrix;
use roboaudit_retrieval::{AuditConfig, run_audit};

fn matrix() -> impl Strategy<Value = Vec<Vec<f64>>> {
    (2usize..6, 2usize..7).prop_flat_map(|(k, n)| {
        proptest::collection::vec(
            proptest::collection::vec((0u8..3).prop_map(|v| f64::from(v) / 2.0), n),
            k,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The oracle rule reaches O, so its advantage is exactly 1 whenever O > R, and its gap is
    /// never negative: Σ_e f(e) q(e) = mean_s q(sel(s)) ≤ mean_s' max_e P[e,s'] = O.
    #[test]
    fn oracle_rule_has_advantage_one_and_nonnegative_gap(p in matrix(), seed in 0u64..1000) {
        let config = AuditConfig {
            seed,
            resamples: 50,
            permutations: 50,
            library_sizes: vec![2],
            random_subsets: 3,
            power_rates: vec![0.5],
            power_replicates: 5,
            ..AuditConfig::default()
        };
        let report = run_audit(&from_matrix(&p, 2, &[], &[]), &config.check().unwrap()).unwrap();
        let oracle = report.rules.iter().find(|r| r.name == "oracle").unwrap();
        prop_assert!((oracle.success - report.reference.oracle).abs() < 1e-12);
        if report.reference.oracle > report.reference.random {
            prop_assert!((oracle.advantage.unwrap() - 1.0).abs() < 1e-12);
        } else {
            prop_assert!(oracle.advantage.is_none());
        }
        prop_assert!(oracle.gap >= -1e-12);
        for rule in &report.rules {
            let total: f64 = rule.selection.values().sum();
            prop_assert!((total - 1.0).abs() < 1e-12, "{} shares sum to {}", rule.name, total);
            prop_assert!(rule.shuffle.envelope[0] <= rule.shuffle.envelope[1]);
            prop_assert!(rule.concentration > 0.0);
        }
        let bf = report.rules.iter().find(|r| r.name == "best_fixed").unwrap();
        prop_assert!((bf.success - report.reference.best_fixed).abs() < 1e-12);
        prop_assert!(bf.gap.abs() < 1e-12);
    }
}
