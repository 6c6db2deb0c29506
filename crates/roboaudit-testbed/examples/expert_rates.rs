//! Expert success rates per task and layout level: `cargo run -p roboaudit-testbed --example expert_rates
//! -- [LEVEL] [EPISODES] [TASK…]` (defaults: level 0, 20 episodes, every task).
#![allow(clippy::unwrap_used, clippy::print_stdout)]
use roboaudit_testbed::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let level: u8 = args.get(1).map_or(0, |s| s.parse().unwrap());
    let n: u64 = args.get(2).map_or(20, |s| s.parse().unwrap());
    let tasks: Vec<TaskKind> = if args.len() > 3 {
        args[3..]
            .iter()
            .map(|s| TaskKind::parse(s).unwrap())
            .collect()
    } else {
        TaskKind::all()
    };
    for task in tasks {
        let t0 = std::time::Instant::now();
        let mut ok = 0;
        let mut steps = 0;
        for seed in 0..n {
            let scene =
                Scene::from_draws(task.family(), "s", Perturbation::Base, level, seed, 0, 0)
                    .unwrap();
            let c = CompiledScene::new(&scene, 128).unwrap();
            let mut ep = Episode::new(
                &c,
                task,
                &EpisodeConfig {
                    seed,
                    ..Default::default()
                },
            )
            .unwrap();
            let mut ex = Expert::new(task, ExpertParams::default(), seed);
            while !ep.done() {
                let a = ex.act(&ep);
                ep.step(&a).unwrap();
            }
            steps += ep.steps();
            if ep.success() {
                ok += 1
            } else {
                let p = ep.privileged();
                println!(
                    "  failed: seed {seed}: blocks {:?} door {:?} lever {:?} latched {:?} prog {:?}",
                    p.blocks.iter().map(|b| b.pos).collect::<Vec<_>>(),
                    p.door_angle,
                    p.lever_angle,
                    p.latched,
                    ep.progress()
                );
            }
        }
        println!(
            "level {level} {:24} {ok}/{n}  mean steps {:.0}  {:?}",
            task.name(),
            steps as f64 / n as f64,
            t0.elapsed()
        );
    }
}
