//! Determinism, snapshot round trips and appearance-never-touches-physics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rayon::prelude::*;
use roboaudit_testbed::*;

fn scene(task: TaskKind, level: u8, layout_seed: u64, draw: u32) -> CompiledScene {
    let s = Scene::from_draws(
        task.family(),
        "t",
        Perturbation::Base,
        level,
        layout_seed,
        5,
        draw,
    )
    .unwrap();
    CompiledScene::new(&s, 128).unwrap()
}

/// Runs the expert for `n` steps and returns the physics state after every step plus the actions.
fn run(c: &CompiledScene, task: TaskKind, seed: u64, n: usize) -> (Vec<Vec<f64>>, Vec<Action>) {
    let mut ep = Episode::new(
        c,
        task,
        &EpisodeConfig {
            seed,
            ..Default::default()
        },
    )
    .unwrap();
    let mut ex = Expert::new(
        task,
        ExpertParams {
            skill: 0.8,
            noise: 0.002,
        },
        seed,
    );
    let mut states = Vec::new();
    let mut actions = Vec::new();
    for _ in 0..n {
        let a = ex.act(&ep);
        ep.step(&a).unwrap();
        states.push(ep.world().physics_state());
        actions.push(a);
    }
    (states, actions)
}

fn bits(v: &[Vec<f64>]) -> Vec<Vec<u64>> {
    v.iter()
        .map(|s| s.iter().map(|x| x.to_bits()).collect())
        .collect()
}

#[test]
fn same_seed_same_bits_whatever_the_thread_count() {
    let c = scene(TaskKind::Stack, 1, 3, 0);
    let reference: Vec<_> = (0..4)
        .map(|seed| bits(&run(&c, TaskKind::Stack, seed, 60).0))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let parallel: Vec<_> = pool.install(|| {
        (0..4u64)
            .into_par_iter()
            .map(|seed| bits(&run(&c, TaskKind::Stack, seed, 60).0))
            .collect()
    });
    assert_eq!(reference, parallel);
    // Seeds differ through actuation noise and friction jitter.
    assert_ne!(reference[0], reference[1]);
}

#[test]
fn replaying_recorded_actions_reproduces_states() {
    let c = scene(TaskKind::Door, 2, 9, 0);
    let (states, actions) = run(&c, TaskKind::Door, 4, 50);
    let mut ep = Episode::new(
        &c,
        TaskKind::Door,
        &EpisodeConfig {
            seed: 4,
            ..Default::default()
        },
    )
    .unwrap();
    for (a, s) in actions.iter().zip(&states) {
        ep.step(a).unwrap();
        assert_eq!(
            bits(&[ep.world().physics_state()]),
            bits(std::slice::from_ref(s))
        );
    }
}

#[test]
fn snapshot_restore_continues_bit_identically() {
    for task in [TaskKind::PutBack, TaskKind::Door] {
        let c = scene(task, 1, 2, 0);
        let cfg = EpisodeConfig {
            seed: 11,
            actuation_noise: 0.002,
            ..Default::default()
        };
        let mut ep = Episode::new(&c, task, &cfg).unwrap();
        let mut ex = Expert::new(task, ExpertParams::default(), 11);
        for _ in 0..35 {
            let a = ex.act(&ep);
            ep.step(&a).unwrap();
        }
        let snap = ep.snapshot();
        let ex_at_snap = ex.clone();
        let mut straight = Vec::new();
        for _ in 0..40 {
            let a = ex.act(&ep);
            let o = ep.step(&a).unwrap();
            straight.push((ep.world().physics_state(), ep.proprio().to_vec(), o));
        }
        // Restore into a fresh episode (different seed: everything must come from the snapshot).
        let mut other = Episode::new(
            &c,
            task,
            &EpisodeConfig {
                seed: 999,
                ..cfg.clone()
            },
        )
        .unwrap();
        other.restore(&snap).unwrap();
        let mut ex2 = ex_at_snap;
        for (s, p, o) in &straight {
            let a = ex2.act(&other);
            let o2 = other.step(&a).unwrap();
            assert_eq!(
                bits(&[other.world().physics_state()]),
                bits(std::slice::from_ref(s)),
                "{task:?}"
            );
            assert_eq!(
                bits(&[other.proprio().to_vec()]),
                bits(std::slice::from_ref(p))
            );
            assert_eq!(&o2, o);
        }
    }
}

#[test]
fn snapshot_of_another_scene_is_rejected() {
    let a = Episode::from_task(TaskKind::Stack, &EpisodeConfig::default()).unwrap();
    let mut b = Episode::from_task(TaskKind::Door, &EpisodeConfig::default()).unwrap();
    assert!(b.restore(&a.snapshot()).is_err());
}

#[test]
fn appearance_never_touches_physics() {
    for task in [
        TaskKind::Stack,
        TaskKind::Door,
        TaskKind::parse("push:red:right").unwrap(),
    ] {
        let reference = bits(&run(&scene(task, 2, 7, 0), task, 3, 40).0);
        for draw in 1..=4 {
            let c = scene(task, 2, 7, draw);
            assert_eq!(
                bits(&run(&c, task, 3, 40).0),
                reference,
                "{task:?} draw {draw}"
            );
        }
        // A different layout does change physics.
        assert_ne!(bits(&run(&scene(task, 2, 8, 0), task, 3, 40).0), reference);
    }
}

#[test]
fn memory_targets_can_be_swapped_at_an_identical_present() {
    let c = scene(TaskKind::PutBack, 0, 1, 0);
    let cfg = EpisodeConfig {
        seed: 2,
        memory_targets: Some(vec![0]),
        ..Default::default()
    };
    let mut ep = Episode::new(&c, TaskKind::PutBack, &cfg).unwrap();
    let mut ex = Expert::new(TaskKind::PutBack, ExpertParams::default(), 2);
    while !ep.at_return_phase() && !ep.done() {
        let a = ex.act(&ep);
        ep.step(&a).unwrap();
    }
    assert!(ep.at_return_phase());
    let snap = ep.snapshot();
    let mut crossed = Episode::new(&c, TaskKind::PutBack, &cfg).unwrap();
    crossed.restore(&snap).unwrap();
    crossed.set_memory_targets(&[2]).unwrap();
    assert_eq!(
        bits(&[crossed.world().physics_state()]),
        bits(&[ep.world().physics_state()])
    );
    assert_eq!(crossed.progress().origins, vec![2]);
    assert!(crossed.set_memory_targets(&[3]).is_err());
}
