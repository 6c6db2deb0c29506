//! Images per second of each encoder at the real model sizes (random weights cost what trained
//! ones do): ResNet-18 at 224, DINOv2 ViT-S/14 at 224, CLIP ViT-B/32 at 224, on `N` 64 × 64
//! images (default 32) with rayon's pool (`RAYON_NUM_THREADS`):
//! `cargo run -p roboaudit-encoders --example encoder_throughput -- [N]`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

use rayon::prelude::*;

use roboaudit_data::lerobot::Rgb8Image;
use roboaudit_encoders::clip::{RandomClip, write_random_clip};
use roboaudit_encoders::dinov2::random::{RandomDinov2, write_random_dinov2};
use roboaudit_encoders::resnet::write_random_resnet18;
use roboaudit_encoders::{ImageEncoder, RepresentationSpec};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(32);
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f);
    write_random_resnet18(&p("resnet18.safetensors"), 1).unwrap();
    write_random_dinov2(&p("dinov2_vits14.safetensors"), &RandomDinov2::vit_s14(2)).unwrap();
    let clip = RandomClip {
        depth: 12,
        width: 768,
        patch: 32,
        image_size: 224,
        seed: 3,
    };
    write_random_clip(&p("clip_vitb32.safetensors"), &clip).unwrap();
    let images: Vec<Rgb8Image> = (0..n)
        .map(|k| Rgb8Image {
            width: 64,
            height: 64,
            pixels: (0..64 * 64 * 3)
                .map(|i| ((i * 7 + k * 13) % 256) as u8)
                .collect(),
        })
        .collect();
    let specs = [
        "pixels32".to_owned(),
        format!("resnet18:{}", p("resnet18.safetensors").display()),
        format!("dinov2:{}", p("dinov2_vits14.safetensors").display()),
        format!("clip:{}", p("clip_vitb32.safetensors").display()),
    ];
    println!("threads: {}", rayon::current_num_threads());
    for spec in specs {
        let enc: ImageEncoder = RepresentationSpec::parse(&spec).unwrap().load().unwrap();
        // One warm-up image, then the timed batch.
        enc.encode(&images[0]).unwrap();
        let start = Instant::now();
        let _: Vec<Vec<f32>> = images.par_iter().map(|i| enc.encode(i).unwrap()).collect();
        let s = start.elapsed().as_secs_f64();
        println!(
            "{:<24} dim {:>4}: {:>8.1} images/s",
            enc.id(),
            enc.dim(),
            n as f64 / s
        );
    }
}
