#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Library and Replay properties: nested libraries, rejection accounting, appearance invariance.

use roboaudit_retrieval_collect::library::base_scenes;
use roboaudit_retrieval_collect::scenes::query_scenes;
use roboaudit_retrieval_collect::{AuditTask, CollectConfig, record_library};
use roboaudit_testbed::{
    Appearance, CompiledScene, Episode, EpisodeConfig, Family, Layout, Perturbation, Retarget,
    Scene,
};

fn final_state(exp: &roboaudit_testbed::Experience, scene: &Scene, seed: u64) -> (bool, Vec<f64>) {
    let compiled = CompiledScene::new(scene, 64).unwrap();
    let cfg = EpisodeConfig {
        seed,
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(&compiled, exp.task, &cfg).unwrap();
    let mut policy = exp.replay_in(&ep, Retarget::FirstAnchor);
    while !ep.done() {
        let a = policy.act(&ep);
        ep.step(&a).unwrap();
    }
    (ep.success(), ep.world().physics_state())
}

#[test]
fn appearance_cannot_change_a_replay() {
    for task in [AuditTask::Stack, AuditTask::Door] {
        let config = CollectConfig {
            task,
            library: 2,
            ..CollectConfig::default()
        };
        let lib = record_library(&config).unwrap();
        // A layout the experiences were not recorded in, so some replays fail and some succeed.
        let scene = Scene::from_draws(task.kind().family(), "x", Perturbation::Layout, 1, 99, 0, 0)
            .unwrap();
        for item in &lib.items {
            for seed in [1, 2] {
                let plain = final_state(&item.experience, &scene, seed);
                for draw in [1, 3] {
                    let painted = Scene {
                        appearance: Appearance::sample(42, draw),
                        ..scene.clone()
                    };
                    assert_ne!(painted.appearance, scene.appearance);
                    // Bit-identical physics, hence the same outcome.
                    assert_eq!(final_state(&item.experience, &painted, seed), plain);
                }
            }
        }
    }
}

#[test]
fn libraries_are_nested_and_count_rejections() {
    let small = CollectConfig {
        library: 3,
        ..CollectConfig::default()
    };
    let large = CollectConfig {
        library: 8,
        ..CollectConfig::default()
    };
    let a = record_library(&small).unwrap();
    let b = record_library(&large).unwrap();
    assert_eq!(a.items[..], b.items[..3]);
    for lib in [&a, &b] {
        assert!(lib.items.iter().all(|i| i.experience.recorded_success));
        assert_eq!(lib.attempts, lib.items.last().unwrap().candidate + 1);
        assert_eq!(lib.rejected, lib.attempts - lib.items.len());
        // Each experience lives in its own base scene, in candidate order.
        for w in lib.items.windows(2) {
            assert!(w[0].candidate < w[1].candidate);
        }
        for it in &lib.items {
            assert_eq!(it.base.scene_id, format!("b{:02}", it.candidate));
            assert_eq!(it.experience.base_scene_id, it.base.scene_id);
        }
    }
    assert_eq!(
        base_scenes(Family::Stack, 0, 12).unwrap()[..10],
        base_scenes(Family::Stack, 0, 10).unwrap()[..]
    );
}

#[test]
fn door_queries_get_approach_obstacles_only_at_high_levels() {
    let config = CollectConfig {
        task: AuditTask::Door,
        ..CollectConfig::default()
    };
    let base = base_scenes(Family::Door, 0, 10).unwrap();
    for q in query_scenes(&config).unwrap() {
        let standard = Layout::sample(Family::Door, q.layout.level, q.layout_seed)
            .unwrap()
            .obstacles
            .len();
        let expected = standard + usize::from(q.layout.level >= 2);
        assert_eq!(q.layout.obstacles.len(), expected, "{}", q.scene_id);
        if q.perturbation == Perturbation::Appearance {
            assert!(base.iter().any(|b| b.layout == q.layout));
        }
    }
}
