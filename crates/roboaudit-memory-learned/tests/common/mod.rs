//! The tiny training every test of this crate starts from.
#![allow(clippy::expect_used)]

use roboaudit_memory_learned::train::{Trained, train};
use roboaudit_memory_learned::{Family, QualifyConfig, TrainConfig};
use roboaudit_testbed::TaskKind;

/// A recurrent put_back policy from 3 demonstrations and 3 steps (hidden 8), qualified on 2
/// episodes against `threshold`: seconds, not minutes.
#[allow(dead_code)]
pub fn tiny(seed: u64, threshold: f64) -> Trained {
    tiny_of(Family::Recurrent, seed, threshold)
}

/// [`tiny`] of `family` (anchor-window: embedding 8, window 3).
pub fn tiny_of(family: Family, seed: u64, threshold: f64) -> Trained {
    let cfg = TrainConfig {
        demos: 3,
        steps: 3,
        seed,
        hidden: 8,
        window: 3,
        head: 16,
        max_queries: 4,
        ..TrainConfig::default()
    };
    let q = QualifyConfig {
        episodes: 2,
        threshold,
        seed: 0,
    };
    train(
        TaskKind::PutBack,
        family,
        &cfg,
        &q,
        &mut |_, _| {},
        &mut |_, _| {},
    )
    .expect("training")
}
