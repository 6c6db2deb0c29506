//! Scripted experts succeed in at least 95% of seeded episodes on layout level 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rayon::prelude::*;
use roboaudit_testbed::*;

fn success_count(task: TaskKind, n: u64) -> u64 {
    (0..n)
        .into_par_iter()
        .map(|seed| {
            let s = Scene::from_draws(task.family(), "e", Perturbation::Base, 0, 100 + seed, 0, 0)
                .unwrap();
            let c = CompiledScene::new(&s, 128).unwrap();
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
            u64::from(ep.success())
        })
        .sum()
}

fn check(task: TaskKind, n: u64) {
    let k = success_count(task, n);
    assert!(k * 100 >= 95 * n, "{}: {k}/{n}", task.name());
}

#[test]
fn stack_expert() {
    check(TaskKind::Stack, 20);
}

#[test]
fn door_expert() {
    check(TaskKind::Door, 20);
}

#[test]
fn put_back_expert() {
    check(TaskKind::PutBack, 20);
}

#[test]
fn swap_expert() {
    check(TaskKind::Swap, 10);
}

#[test]
fn rearrange_expert() {
    check(TaskKind::Rearrange, 10);
}

#[test]
fn language_suite_experts() {
    for t in TaskKind::language_suite() {
        check(t, 5);
    }
}

#[test]
fn an_idle_policy_fails_every_task() {
    for t in [
        TaskKind::Stack,
        TaskKind::Door,
        TaskKind::PutBack,
        TaskKind::language_suite()[0],
    ] {
        let mut ep = Episode::from_task(t, &EpisodeConfig::default()).unwrap();
        while !ep.done() {
            ep.step(&Action::default()).unwrap();
        }
        assert!(!ep.success(), "{}", t.name());
    }
}
