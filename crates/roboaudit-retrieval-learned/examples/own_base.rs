//! Trains the policies of a Stack (or Door) library and prints, per experience, the training
//! time, the final loss and own-base success (the recording seed, then `seeds` other episode
//! seeds), plus closed-loop executions per second.
//!
//! `cargo run -p roboaudit-retrieval-learned --example own_base -- stack 3 3 600`
//! (task, library size K, own-base seeds, training steps, low-dimensional and pixel noise).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Instant;

use roboaudit_retrieval_collect::{AuditTask, CollectConfig, record_library};
use roboaudit_retrieval_learned::{
    Camera, ImagePolicy, Provenance, TrainConfig, demonstration, train,
};
use roboaudit_testbed::{CompiledScene, EpisodeConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let task = AuditTask::parse(args.get(1).map_or("stack", String::as_str)).unwrap();
    let k: usize = args.get(2).map_or(3, |s| s.parse().unwrap());
    let seeds: u64 = args.get(3).map_or(3, |s| s.parse().unwrap());
    let steps: usize = args.get(4).map_or(600, |s| s.parse().unwrap());
    let low_noise: f64 = args.get(5).map_or(0.0, |s| s.parse().unwrap());
    let pixel_noise: f64 = args.get(6).map_or(0.0, |s| s.parse().unwrap());
    let config = CollectConfig {
        task,
        library: k,
        scenes: 3,
        seeds: 1,
        ..CollectConfig::default()
    };
    let library = record_library(&config).unwrap();
    println!(
        "library: {} accepted of {} recordings",
        library.items.len(),
        library.attempts
    );
    let mut camera = Camera::new();
    let (mut ok_rec, mut ok_other, mut runs, mut exec_time) = (0, 0, 0, 0.0);
    for item in &library.items {
        let base = CompiledScene::new(&item.base, 64).unwrap();
        let t0 = Instant::now();
        let samples = demonstration(item, &base, &mut camera).unwrap();
        let t_demo = t0.elapsed().as_secs_f64();
        let cfg = TrainConfig {
            steps,
            seed: item.candidate as u64,
            low_noise,
            pixel_noise,
            ..TrainConfig::default()
        };
        let prov = Provenance {
            task: task.name().into(),
            base_scene_id: item.base.scene_id.clone(),
            recording_seed: item.experience.seed,
        };
        let t1 = Instant::now();
        let trained = train(&samples, &cfg, &prov, &mut |_, _| {}).unwrap();
        let t_train = t1.elapsed().as_secs_f64();
        let policy = ImagePolicy::new(trained);
        if std::env::var("OWN_BASE_DEBUG").is_ok() {
            debug(
                &policy,
                &samples,
                &base,
                task,
                item.experience.seed,
                &mut camera,
            );
        }
        let t2 = Instant::now();
        let rec = policy
            .execute(
                &base,
                task.kind(),
                &EpisodeConfig {
                    seed: item.experience.seed,
                    ..EpisodeConfig::default()
                },
                &mut camera,
            )
            .unwrap();
        let mut other = 0;
        for s in 0..seeds {
            let cfg = EpisodeConfig {
                seed: 1_000_003 * (s + 1) + item.candidate as u64,
                ..EpisodeConfig::default()
            };
            other += usize::from(
                policy
                    .execute(&base, task.kind(), &cfg, &mut camera)
                    .unwrap(),
            );
        }
        let t_exec = t2.elapsed().as_secs_f64();
        exec_time += t_exec;
        runs += 1 + seeds as usize;
        ok_rec += usize::from(rec);
        ok_other += other;
        println!(
            "{} ({} steps): demo {t_demo:.1} s, train {t_train:.1} s, loss {:.2e}, own base at the recording seed {}, at {seeds} other seeds {other}/{seeds}",
            item.experience_id,
            samples.len(),
            policy.trained().config.final_loss,
            if rec { "success" } else { "FAIL" },
        );
    }
    println!(
        "own-base success: recording seed {ok_rec}/{k}, other seeds {ok_other}/{}; {:.2} executions/s closed loop (one thread)",
        k * seeds as usize,
        runs as f64 / exec_time
    );
}

/// Prints, per step at the recording seed, the demonstration's target, the prediction and the
/// low-dimensional observation's distance from the demonstration's.
fn debug(
    policy: &ImagePolicy,
    samples: &[roboaudit_retrieval_learned::Sample],
    base: &CompiledScene,
    task: AuditTask,
    seed: u64,
    camera: &mut Camera,
) {
    use roboaudit_testbed::Episode;
    let seed = std::env::var("OWN_BASE_DEBUG_SEED").map_or(seed, |s| s.parse().unwrap());
    let cfg = EpisodeConfig {
        seed,
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(base, task.kind(), &cfg).unwrap();
    let mut t = 0;
    while !ep.done() {
        let obs = camera.observe(&mut ep).unwrap();
        let p = policy.predict(&obs).unwrap();
        let open = policy
            .predict(&samples[t.min(samples.len() - 1)].obs)
            .unwrap();
        let a = policy.act(&mut ep, camera).unwrap();
        if let Some(s) = samples.get(t) {
            let dlow: f32 = obs
                .low
                .iter()
                .zip(&s.obs.low)
                .take(15)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            let dimg: f32 = obs
                .image
                .iter()
                .zip(&s.obs.image)
                .map(|(a, b)| (a - b).abs())
                .sum::<f32>()
                / obs.image.len() as f32;
            println!(
                "t={t:3} demo {:?} pred {:?} open-loop {:?} |dlow|max {dlow:.4} |dimg| {dimg:.4}",
                s.target.map(|v| (v * 1000.0).round() / 1000.0),
                p.iter()
                    .map(|v| (v * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                open.iter()
                    .map(|v| (v * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
            );
        }
        ep.step(&a).unwrap();
        t += 1;
    }
    println!(
        "debug: success {} after {t} steps; blocks {:?}",
        ep.success(),
        ep.privileged()
            .blocks
            .iter()
            .map(|b| b.pos)
            .collect::<Vec<_>>()
    );
}
