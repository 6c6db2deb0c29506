//! Success rates of the target policies and behaviour kinds without rendering:
//! `cargo run -p roboaudit-fqe-collect --example rates -- [EPISODES]`.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]
use roboaudit_fqe_collect::behaviour::{BehaviourKind, BehaviourPolicy};
use roboaudit_fqe_collect::targets::standard_targets;
use roboaudit_fqe_collect::*;
use roboaudit_testbed::*;

/// Runs one episode of a task from a seed.
type Runner = Box<dyn Fn(TaskKind, u64) -> Episode>;

fn episode(task: TaskKind, seed: u64) -> Episode {
    let scene = Scene::from_draws(
        Family::Language,
        "s",
        Perturbation::Layout,
        1,
        seed + 100,
        0,
        0,
    )
    .unwrap();
    let c = CompiledScene::new(&scene, 64).unwrap();
    Episode::new(
        &c,
        task,
        &EpisodeConfig {
            seed,
            ..Default::default()
        },
    )
    .unwrap()
}

fn main() {
    let n: u64 = std::env::args().nth(1).map_or(10, |s| s.parse().unwrap());
    let tasks: Vec<TaskKind> = TaskKind::language_suite()
        .into_iter()
        .filter(|t| matches!(t, TaskKind::Push { .. }))
        .collect();
    let mut rows: Vec<(String, Runner)> = Vec::new();
    for t in standard_targets() {
        rows.push((
            t.name.clone(),
            Box::new(move |task, seed| {
                let mut ep = episode(task, seed);
                while !ep.done() {
                    let o = Observation::of_episode(&ep);
                    let key = NoiseKey {
                        stream: seed,
                        frame: ep.steps() as u64,
                        sample: 0,
                    };
                    ep.step(&t.act(task, &o, 7, key)).unwrap();
                }
                ep
            }),
        ));
    }
    for (k, _) in BehaviourKind::MIXTURE {
        rows.push((
            format!("b:{}", k.name()),
            Box::new(move |task, seed| {
                let mut ep = episode(task, seed);
                let mut p = BehaviourPolicy::new(k, task, seed);
                while !ep.done() {
                    let a = p.act(&ep);
                    ep.step(&a).unwrap();
                }
                ep
            }),
        ));
    }
    for (name, run) in rows {
        let mut line = format!("{name:22}");
        for &task in &tasks {
            let (mut ok, mut steps, mut v) = (0, 0, 0.0);
            for seed in 0..n {
                let ep = run(task, seed);
                steps += ep.steps();
                if ep.success() {
                    ok += 1;
                    v += 0.99f64.powi(ep.steps() as i32 - 1);
                }
            }
            line += &format!(
                " {}/{n} T{:3.0} V{:.2} |",
                ok,
                steps as f64 / n as f64,
                v / n as f64
            );
        }
        println!("{line}");
    }
}
