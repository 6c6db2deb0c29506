//! Demonstrations of a Policy+DR policy (seed 000 §II "Policy+DR"): the experience's own
//! demonstration (checked against the recording, [`demonstration`]) followed by its
//! demonstrator re-run with the recording seed in its base layout under
//! [`DomainRandomization::draws`] randomized appearances, each block moved by up to
//! [`DomainRandomization::layout_jitter`] in `x` and `y`. Every draw is seeded from the policy's
//! own seed (itself `mix(master seed, "policy-dr", candidate)`), so the samples do not depend on
//! the thread that records them.

use roboaudit_retrieval_collect::LibraryItem;
use roboaudit_retrieval_collect::seeding::{mix, rng, uniform};
use roboaudit_testbed::CompiledScene;
use roboaudit_testbed::scene::{Appearance, Scene};

use crate::config::{DomainRandomization, RENDER_SIDE};
use crate::error::Result;
use crate::frames::{Sample, demonstration, rerun, with_camera};

/// Randomized copy `draw` (0-based) of `base` for a policy seeded `seed`: appearance draw 1 of
/// the stream `mix(seed, "dr-draw", draw)` ([`Appearance::sample`]: camera pose, light, palette,
/// table and background), every block's `x` and `y` moved by a uniform draw in
/// `±dr.layout_jitter` m (yaw and every other placement as in `base`).
pub fn randomized_scene(base: &Scene, dr: &DomainRandomization, seed: u64, draw: usize) -> Scene {
    let draw_seed = mix(seed, "dr-draw", draw as u64);
    let mut scene = Scene {
        appearance: Appearance::sample(draw_seed, 1),
        ..base.clone()
    };
    if dr.layout_jitter > 0.0 {
        let mut r = rng(draw_seed, "dr-layout", 0);
        for b in &mut scene.layout.blocks {
            b.x += uniform(&mut r, -dr.layout_jitter, dr.layout_jitter);
            b.y += uniform(&mut r, -dr.layout_jitter, dr.layout_jitter);
        }
    }
    scene
}

/// The Policy+DR training samples of `item` and how many randomized re-runs they hold.
#[derive(Debug, Clone)]
pub struct DrSamples {
    /// The canonical demonstration's samples, then those of each randomized re-run that
    /// succeeded, in draw order.
    pub samples: Vec<Sample>,
    /// Randomized re-runs whose demonstrator failed (left out: cloning a failure teaches it).
    pub failed_draws: usize,
}

/// The samples of `item`'s demonstration ([`demonstration`] in `base`, its compiled base scene)
/// and of its `dr.draws` randomized re-runs ([`randomized_scene`] of `item.base` for `seed`),
/// each rendered through a camera of its own.
///
/// # Errors
/// As [`demonstration`]; testbed errors of compiling a randomized scene.
pub fn dr_demonstrations(
    item: &LibraryItem,
    base: &CompiledScene,
    dr: &DomainRandomization,
    seed: u64,
) -> Result<DrSamples> {
    let mut samples = with_camera(|camera| demonstration(item, base, camera))?;
    let mut failed_draws = 0;
    for d in 0..dr.draws {
        let scene = CompiledScene::new(&randomized_scene(&item.base, dr, seed, d), RENDER_SIDE)?;
        let run = with_camera(|camera| rerun(item, &scene, camera))?;
        if run.success {
            samples.extend(run.samples);
        } else {
            failed_draws += 1;
        }
    }
    Ok(DrSamples {
        samples,
        failed_draws,
    })
}
