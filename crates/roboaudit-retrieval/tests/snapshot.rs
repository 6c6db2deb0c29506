//! Snapshot of summary.md and the compact table for a small fixed case.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_retrieval::synthetic::from_matrix;
use roboaudit_retrieval::{AuditConfig, render_compact_table, render_summary_markdown, run_audit};
use roboaudit_types::Perturbation;

fn report() -> roboaudit_retrieval::AuditReport {
    let p = vec![
        vec![1.0, 1.0, 0.5, 0.5, 1.0, 0.0],
        vec![0.0, 0.5, 1.0, 0.0, 0.5, 1.0],
        vec![0.5, 0.0, 0.0, 1.0, 0.0, 0.5],
        vec![0.0, 0.0, 0.5, 0.0, 0.0, 0.0],
    ];
    let exps = vec![
        vec![1.0, 0.0, 0.1],
        vec![0.0, 1.0, 0.2],
        vec![0.3, 0.3, 1.0],
        vec![-1.0, 0.2, 0.0],
    ];
    let scenes = vec![
        vec![0.9, 0.1, 0.0],
        vec![0.8, 0.4, 0.1],
        vec![0.9, 0.2, 0.1],
        vec![0.2, 0.1, 0.9],
        vec![0.7, 0.7, 0.0],
        vec![-0.9, 0.3, 0.0],
    ];
    let inputs = from_matrix(
        &p,
        2,
        &[
            Perturbation::Appearance,
            Perturbation::Layout,
            Perturbation::Fresh,
        ],
        &[("pixels".to_string(), exps, scenes)],
    );
    let config = AuditConfig {
        seed: 2,
        resamples: 1_000,
        permutations: 1_000,
        library_sizes: vec![2, 3],
        random_subsets: 10,
        power_replicates: 100,
        ..AuditConfig::default()
    };
    run_audit(&inputs, &config.check().unwrap()).unwrap()
}

#[test]
fn summary_markdown_snapshot() {
    let report = report();
    insta::assert_snapshot!("summary_md", render_summary_markdown(&report));
    insta::assert_snapshot!("compact_table", render_compact_table(&report));
}
