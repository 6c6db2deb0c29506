//! Read throughput of the execution log and embeddings in each format.
//!
//! `cargo bench -p roboaudit-data --bench read --profile dev` (the dev profile is optimized).

use criterion::{Criterion, criterion_group, criterion_main};
use roboaudit_data::{read_embeddings, read_executions, write_embeddings, write_executions};
use roboaudit_types::{EmbeddingKind, EmbeddingRecord, ExecutionRecord};

/// 100 experiences × 200 scenes × 10 seeds = 200,000 executions.
fn executions() -> Vec<ExecutionRecord> {
    let mut out = Vec::with_capacity(200_000);
    for e in 0..100 {
        for s in 0..200 {
            for seed in 0..10 {
                out.push(ExecutionRecord {
                    experience_id: format!("exp_{e:03}"),
                    scene_id: format!("scene_{s:03}"),
                    seed,
                    success: (e * 7 + s * 3 + seed) % 5 < 2,
                });
            }
        }
    }
    out
}

/// 2,000 vectors of 768 float32 (a DINOv2-sized representation).
fn embeddings() -> Vec<EmbeddingRecord> {
    (0..2000)
        .map(|k| EmbeddingRecord {
            representation: "dinov2".into(),
            kind: if k < 1000 {
                EmbeddingKind::Experience
            } else {
                EmbeddingKind::Scene
            },
            id: format!("id_{k}"),
            vector: (0..768)
                .map(|d| ((k * 31 + d) % 97) as f32 / 97.0)
                .collect(),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let log = executions();
    let vectors = embeddings();
    let mut group = c.benchmark_group("read");
    group.sample_size(10);
    for ext in ["parquet", "csv", "jsonl"] {
        let path = dir.path().join(format!("executions.{ext}"));
        write_executions(&path, &log).unwrap_or_else(|e| panic!("{e}"));
        group.bench_function(format!("executions_200k_{ext}"), |b| {
            b.iter(|| read_executions(&path).unwrap_or_else(|e| panic!("{e}")));
        });
        let path = dir.path().join(format!("embeddings.{ext}"));
        write_embeddings(&path, &vectors).unwrap_or_else(|e| panic!("{e}"));
        group.bench_function(format!("embeddings_2000x768_{ext}"), |b| {
            b.iter(|| read_embeddings(&path).unwrap_or_else(|e| panic!("{e}")));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
