//! Benchmarks: physics steps per second on one core without rendering (target ≥ 10,000), and 128×128
//! frames per second (target ≥ 500). Run: `cargo bench -p roboaudit-testbed`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roboaudit_testbed::world::SUBSTEPS;
use roboaudit_testbed::*;

fn physics(c: &mut Criterion) {
    let mut g = c.benchmark_group("physics");
    // One action = SUBSTEPS physics steps; the throughput is reported in physics steps.
    g.throughput(Throughput::Elements(SUBSTEPS as u64));
    for task in [
        TaskKind::Stack,
        TaskKind::Door,
        TaskKind::language_suite()[0],
    ] {
        let mut ep = Episode::from_task(task, &EpisodeConfig::default()).unwrap();
        let mut ex = Expert::new(task, ExpertParams::default(), 0);
        let start = ep.snapshot();
        let ex0 = ex.clone();
        g.bench_function(format!("expert_action/{}", task.name()), |b| {
            b.iter(|| {
                if ep.done() {
                    ep.restore(&start).unwrap();
                    ex = ex0.clone();
                }
                let a = ex.act(&ep);
                ep.step(&a).unwrap()
            })
        });
    }
    g.finish();
}

fn render(c: &mut Criterion) {
    let mut g = c.benchmark_group("render");
    g.throughput(Throughput::Elements(1));
    let task = TaskKind::Stack;
    let mut ep = Episode::from_task(task, &EpisodeConfig::default()).unwrap();
    let mut r = SceneRenderer::new(&ep, 128).unwrap();
    g.bench_function("frame_128/scene_cam", |b| {
        b.iter(|| r.render(&mut ep, CameraKind::Scene).unwrap())
    });
    g.bench_function("frame_128/wrist_cam", |b| {
        b.iter(|| r.render(&mut ep, CameraKind::Wrist).unwrap())
    });
    g.finish();
}

criterion_group!(benches, physics, render);
criterion_main!(benches);
