//! Replay executions per second: `cargo bench -p roboaudit-retrieval-collect --bench executions`.
//! Criterion times one execution per task; then a 10 × 40 block (one seed) runs on the rayon pool
//! and its executions per second are printed, the number that sizes a paper-scale run.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use criterion::{Criterion, criterion_group};
use rayon::prelude::*;
use roboaudit_retrieval_collect::jobs::{Job, Place};
use roboaudit_retrieval_collect::scenes::query_scenes;
use roboaudit_retrieval_collect::{AuditTask, CollectConfig, record_library};
use roboaudit_testbed::{CompiledScene, EpisodeConfig, execute};
use std::hint::black_box;

fn setup(
    task: AuditTask,
    k: usize,
) -> (
    CollectConfig,
    Vec<roboaudit_testbed::Experience>,
    Vec<CompiledScene>,
) {
    let config = CollectConfig {
        task,
        library: k,
        ..CollectConfig::default()
    };
    let lib = record_library(&config).unwrap();
    let queries = query_scenes(&config)
        .unwrap()
        .iter()
        .map(|q| CompiledScene::new(q, 64).unwrap())
        .collect();
    (
        config,
        lib.items.into_iter().map(|i| i.experience).collect(),
        queries,
    )
}

fn run(
    config: &CollectConfig,
    exp: &roboaudit_testbed::Experience,
    q: &[CompiledScene],
    s: usize,
) -> bool {
    let job = Job {
        experience: 0,
        place: Place::Query(s),
        seed: 0,
    };
    let cfg = EpisodeConfig {
        seed: job.episode_seed(config.seed),
        ..EpisodeConfig::default()
    };
    execute(exp, &q[s], &cfg, config.mechanism.retarget()).unwrap()
}

fn single(c: &mut Criterion) {
    for task in [AuditTask::Stack, AuditTask::Door] {
        let (config, exps, queries) = setup(task, 1);
        let mut s = 0;
        c.bench_function(&format!("replay_execution/{}", task.name()), |b| {
            b.iter(|| {
                s = (s + 1) % queries.len();
                black_box(run(&config, &exps[0], &queries, s))
            });
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = single
}

fn main() {
    benches();
    for task in [AuditTask::Stack, AuditTask::Door] {
        let (config, exps, queries) = setup(task, 10);
        let t = std::time::Instant::now();
        let n: usize = exps
            .par_iter()
            .map(|e| {
                (0..queries.len())
                    .filter(|&s| run(&config, e, &queries, s))
                    .count()
            })
            .sum();
        let secs = t.elapsed().as_secs_f64();
        let total = exps.len() * queries.len();
        println!(
            "{}: {total} executions ({n} successes) in {secs:.2} s on {} threads = {:.1} executions/s",
            task.name(),
            rayon::current_num_threads(),
            total as f64 / secs
        );
    }
    Criterion::default().configure_from_args().final_summary();
}
