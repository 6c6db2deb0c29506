//! The fixed checkpoints and image of the PyTorch reference check, shared by
//! `tests/reference.rs` and `examples/write_reference_checkpoints.rs` (which
//! `scripts/encoders_reference.py` runs to get the same files).

use std::path::{Path, PathBuf};

use roboaudit_data::lerobot::Rgb8Image;
use roboaudit_encoders::EncoderError;
use roboaudit_encoders::clip::{RandomClip, write_random_clip};
use roboaudit_encoders::dinov2::random::{RandomDinov2, write_random_dinov2};
use roboaudit_encoders::resnet::write_random_resnet18;

/// Seeds of the three random checkpoints.
pub const RESNET_SEED: u64 = 11;
/// DINOv2's seed.
pub const DINOV2_SEED: u64 = 12;
/// CLIP's seed.
pub const CLIP_SEED: u64 = 13;
/// ResNet input side of the check.
pub const RESNET_SIDE: usize = 64;
/// DINOv2 input side of the check: the position embeddings' native 518 (37 × 37 patches), where
/// neither implementation resamples them (candle: nearest, PyTorch: bicubic elsewhere).
pub const DINOV2_SIDE: usize = 518;
/// Heads of the tiny DINOv2 (width 32) and CLIP (width 64) models.
pub const HEADS: usize = 2;

/// The test image: 40 × 24 (not square, so the resampling stretches it), every byte a fixed
/// function of `(x, y, channel)` that `scripts/encoders_reference.py` computes too.
pub fn image() -> Rgb8Image {
    let (w, h) = (40i64, 24i64);
    let mut pixels = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            for v in [
                x * 37 + y * 91 + x * y * 7,
                x * x * 3 + y * 17 + 50,
                x * y * 11 + 200 - y * 5,
            ] {
                pixels.push(u8::try_from(v.rem_euclid(256)).unwrap_or(0));
            }
        }
    }
    Rgb8Image {
        width: 40,
        height: 24,
        pixels,
    }
}

/// Writes `resnet18.safetensors`, `dinov2.safetensors` and `clip.safetensors` into `dir` and
/// returns their paths in that order.
pub fn write_checkpoints(dir: &Path) -> Result<[PathBuf; 3], EncoderError> {
    let paths = [
        dir.join("resnet18.safetensors"),
        dir.join("dinov2.safetensors"),
        dir.join("clip.safetensors"),
    ];
    write_random_resnet18(&paths[0], RESNET_SEED)?;
    write_random_dinov2(&paths[1], &RandomDinov2::tiny(DINOV2_SEED))?;
    write_random_clip(&paths[2], &RandomClip::tiny(CLIP_SEED))?;
    Ok(paths)
}
