//! Policy+DR demonstrations in the simulator: randomized re-runs change what the camera sees and,
//! without layout jitter, nothing the demonstrator does; with jitter, the demonstrator follows
//! the moved blocks. Draws are seeded (same seed, same scenes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_retrieval_collect::{AuditTask, CollectConfig, LibraryItem, record_library};
use roboaudit_retrieval_learned::DomainRandomization;
use roboaudit_retrieval_learned::config::RENDER_SIDE;
use roboaudit_retrieval_learned::dr::{dr_demonstrations, randomized_scene};
use roboaudit_retrieval_learned::frames::{Camera, demonstration, rerun};
use roboaudit_testbed::CompiledScene;

fn one_stack_item() -> LibraryItem {
    let config = CollectConfig {
        task: AuditTask::Stack,
        library: 1,
        scenes: 3,
        seeds: 1,
        ..CollectConfig::default()
    };
    record_library(&config).unwrap().items.remove(0)
}

#[test]
fn draws_change_the_images_and_without_jitter_not_the_actions() {
    let item = one_stack_item();
    let base = CompiledScene::new(&item.base, RENDER_SIDE).unwrap();
    let own = demonstration(&item, &base, &mut Camera::new()).unwrap();
    let still = DomainRandomization {
        draws: 2,
        layout_jitter: 0.0,
    };
    let s = dr_demonstrations(&item, &base, &still, 11).unwrap();
    assert_eq!(s.failed_draws, 0);
    let n = own.len();
    assert_eq!(s.samples.len(), 3 * n, "the demonstration and two re-runs");
    assert_eq!(&s.samples[..n], own.as_slice());
    let (d1, d2) = (&s.samples[n..2 * n], &s.samples[2 * n..]);
    for (i, d) in [d1, d2].into_iter().enumerate() {
        // Appearance leaves the physics as it is: the same commanded poses and proprioception.
        for (a, b) in d.iter().zip(&own) {
            assert_eq!(a.target, b.target, "draw {i}");
            assert_eq!(a.obs.low, b.obs.low, "draw {i}");
        }
        // The first image differs from the canonical one by far more than rendering noise.
        let diff = d[0]
            .obs
            .image
            .iter()
            .zip(&own[0].obs.image)
            .map(|(a, b)| (a - b).abs())
            .sum::<f32>()
            / own[0].obs.image.len() as f32;
        assert!(diff > 0.02, "draw {i}: mean pixel difference {diff}");
    }
    assert_ne!(d1[0].obs.image, d2[0].obs.image, "two draws look alike");
    // Same seed, same draws; another seed, other draws.
    let again = randomized_scene(&item.base, &still, 11, 1);
    assert_eq!(again, randomized_scene(&item.base, &still, 11, 1));
    assert_ne!(
        again.appearance,
        randomized_scene(&item.base, &still, 12, 1).appearance
    );
    assert_eq!(again.layout, item.base.layout);
}

#[test]
fn jitter_moves_the_blocks_and_the_demonstrator_follows() {
    let item = one_stack_item();
    let dr = DomainRandomization {
        draws: 1,
        layout_jitter: 0.01,
    };
    let scene = randomized_scene(&item.base, &dr, 11, 0);
    let moved = scene
        .layout
        .blocks
        .iter()
        .zip(&item.base.layout.blocks)
        .map(|(a, b)| (a.x - b.x).abs().max((a.y - b.y).abs()))
        .fold(0.0, f64::max);
    assert!(moved > 0.0 && moved <= 0.01, "blocks moved by {moved} m");
    let compiled = CompiledScene::new(&scene, RENDER_SIDE).unwrap();
    let run = rerun(&item, &compiled, &mut Camera::new()).unwrap();
    let base = CompiledScene::new(&item.base, RENDER_SIDE).unwrap();
    let own = demonstration(&item, &base, &mut Camera::new()).unwrap();
    let differs = run
        .samples
        .iter()
        .zip(&own)
        .any(|(a, b)| a.target[..2] != b.target[..2]);
    assert!(differs, "the demonstrator ignored the moved blocks");
}
