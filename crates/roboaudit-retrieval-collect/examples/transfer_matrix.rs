//! Prints a transfer matrix of the library on the query scenes (one seed) and the library's
//! rejection rate: `cargo run -p roboaudit-retrieval-collect --example transfer_matrix -- [TASK] [K] [SCENES]`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use rayon::prelude::*;
use roboaudit_retrieval_collect::jobs::{Job, Place};
use roboaudit_retrieval_collect::scenes::query_scenes;
use roboaudit_retrieval_collect::{AuditTask, CollectConfig, record_library};
use roboaudit_testbed::{CompiledScene, EpisodeConfig, execute};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let task = AuditTask::parse(args.get(1).map_or("stack", |s| s.as_str())).unwrap();
    let k: usize = args.get(2).map_or(10, |s| s.parse().unwrap());
    let n: usize = args.get(3).map_or(40, |s| s.parse().unwrap());
    let config = CollectConfig {
        task,
        library: k,
        scenes: n,
        seeds: 1,
        ..CollectConfig::default()
    };
    let t0 = std::time::Instant::now();
    let lib = record_library(&config).unwrap();
    println!(
        "library: {} accepted of {} ({:.2} rejected) in {:.1}s",
        lib.items.len(),
        lib.attempts,
        lib.rejection_rate().unwrap_or(0.0),
        t0.elapsed().as_secs_f64()
    );
    let queries = query_scenes(&config).unwrap();
    let compiled: Vec<CompiledScene> = queries
        .iter()
        .map(|q| CompiledScene::new(q, 64).unwrap())
        .collect();
    let t1 = std::time::Instant::now();
    let rows: Vec<String> = lib
        .items
        .par_iter()
        .map(|it| {
            (0..n)
                .map(|s| {
                    let job = Job {
                        experience: 0,
                        place: Place::Query(s),
                        seed: 0,
                    };
                    let cfg = EpisodeConfig {
                        seed: job.episode_seed(config.seed),
                        ..EpisodeConfig::default()
                    };
                    if execute(
                        &it.experience,
                        &compiled[s],
                        &cfg,
                        config.mechanism.retarget(),
                    )
                    .unwrap()
                    {
                        '#'
                    } else {
                        '.'
                    }
                })
                .collect()
        })
        .collect();
    let secs = t1.elapsed().as_secs_f64();
    for (it, r) in lib.items.iter().zip(&rows) {
        println!("{} {r}  {:?}", it.experience_id, it.style);
    }
    let mut by = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    for r in &rows {
        for (c, q) in r.chars().zip(&queries) {
            let e = by.entry(q.perturbation.name()).or_default();
            e.0 += usize::from(c == '#');
            e.1 += 1;
        }
    }
    for (p, (s, t)) in by {
        println!("{p:11} {s}/{t} = {:.2}", s as f64 / t as f64);
    }
    println!(
        "{} executions in {secs:.1}s = {:.1}/s",
        k * n,
        (k * n) as f64 / secs
    );
}
