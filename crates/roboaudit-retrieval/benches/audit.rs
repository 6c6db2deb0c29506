//! Full audit on the benchmark case: K = 50, n = 40, 5 seeds, 5 representations of dimension 32,
//! 10,000 shuffles and 10,000 bootstrap draws per rule, default interventions.

use criterion::{Criterion, criterion_group, criterion_main};
use roboaudit_retrieval::synthetic::{SyntheticSpec, generate};
use roboaudit_retrieval::{AuditConfig, run_audit};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let inputs = generate(&SyntheticSpec::default());
    let Ok(config) = AuditConfig::default().check() else {
        return;
    };
    let mut group = c.benchmark_group("retrieval_audit");
    group.sample_size(10);
    group.bench_function("k50_n40_s5_r5_full", |b| {
        b.iter(|| run_audit(black_box(&inputs), &config).map(|r| r.rules.len()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
