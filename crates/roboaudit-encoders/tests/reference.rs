//! Each encoder on a seeded random checkpoint against PyTorch (torchvision's ResNet-18,
//! transformers' Dinov2Model and CLIPVisionModel) on the same file and image: the expected
//! features are in `tests/data/encoders_reference.json`, written by
//! `scripts/encoders_reference.py`, which also records the checkpoints' SHA-256 (so the files
//! written here are the ones PyTorch read).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use common::reference::{DINOV2_SIDE, HEADS, RESNET_SIDE, image, write_checkpoints};
use roboaudit_encoders::{
    ClipEncoder, ClipOptions, Dinov2Encoder, Dinov2Options, Resnet18Encoder, ResnetOptions,
};
use sha2::{Digest, Sha256};

/// The largest absolute difference allowed (f32 forward passes of two implementations).
const TOLERANCE: f32 = 1e-4;

fn sha256(path: &std::path::Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn features_match_pytorch_on_the_same_random_checkpoints() {
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("data/encoders_reference.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let [resnet, dinov2, clip] = write_checkpoints(dir.path()).unwrap();
    let img = image();
    let features = [
        (
            "resnet18",
            &resnet,
            Resnet18Encoder::load(&resnet, &ResnetOptions { side: RESNET_SIDE })
                .unwrap()
                .encode(&img)
                .unwrap(),
        ),
        (
            "dinov2",
            &dinov2,
            Dinov2Encoder::load(
                &dinov2,
                &Dinov2Options {
                    side: DINOV2_SIDE,
                    heads: Some(HEADS),
                },
            )
            .unwrap()
            .encode(&img)
            .unwrap(),
        ),
        (
            "clip",
            &clip,
            ClipEncoder::load(
                &clip,
                &ClipOptions {
                    heads: Some(HEADS),
                    side: None,
                },
            )
            .unwrap()
            .encode(&img)
            .unwrap(),
        ),
    ];
    for (name, path, got) in features {
        let want = &reference["encoders"][name];
        assert_eq!(
            sha256(path),
            want["sha256"].as_str().unwrap(),
            "{name}: the checkpoint's bytes differ from those PyTorch read"
        );
        let want: Vec<f32> = want["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(got.len(), want.len(), "{name}");
        let max = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        let scale = want.iter().map(|v| v.abs()).fold(0f32, f32::max);
        eprintln!("{name}: max |rust - pytorch| = {max:.2e} (max |feature| = {scale:.3})");
        // Features of order one, not all equal: a comparison that can fail.
        assert!(scale > 0.1, "{name}: {scale}");
        assert!(max <= TOLERANCE, "{name}: max abs difference {max}");
    }
}
