//! Door layouts: yaw grows with the layout level and turns the free edge away from the robot, and the
//! scripted expert (pushing along the yawed panel's normal) opens the damped door at every level.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rayon::prelude::*;
use roboaudit_testbed::scene::{HingeSide, door_yaw_range};
use roboaudit_testbed::*;

fn door_scene(level: u8, seed: u64) -> Scene {
    let p = if level == 0 {
        Perturbation::Base
    } else {
        Perturbation::Layout
    };
    Scene::from_draws(Family::Door, "d", p, level, 300 + seed, 0, 0).unwrap()
}

#[test]
fn yaw_turns_the_free_edge_away_within_the_level_range() {
    for level in 0..=3u8 {
        for seed in 0..30 {
            let d = door_scene(level, seed).layout.door.unwrap();
            let turn = match d.hinge {
                HingeSide::Left => 1.0,
                HingeSide::Right => -1.0,
            };
            let r = door_yaw_range(level);
            assert!(
                turn * d.yaw >= 0.5 * r && turn * d.yaw <= r,
                "level {level} seed {seed}: yaw {}",
                d.yaw
            );
        }
    }
    assert!(door_yaw_range(1) < door_yaw_range(2) && door_yaw_range(2) < door_yaw_range(3));
}

#[test]
fn expert_opens_the_door_at_every_level() {
    for level in 0..=3u8 {
        let opened: u64 = (0..10u64)
            .into_par_iter()
            .map(|seed| {
                let s = door_scene(level, seed);
                let c = CompiledScene::new(&s, 64).unwrap();
                let cfg = EpisodeConfig {
                    seed,
                    ..Default::default()
                };
                let mut ep = Episode::new(&c, TaskKind::Door, &cfg).unwrap();
                let mut ex = Expert::new(TaskKind::Door, ExpertParams::default(), seed);
                while !ep.done() {
                    let a = ex.act(&ep);
                    ep.step(&a).unwrap();
                }
                u64::from(ep.success())
            })
            .sum();
        assert_eq!(opened, 10, "level {level}");
    }
}
