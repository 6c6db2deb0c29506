//! Encode throughput of the DINOv2 encoder with ViT-S/14-sized random weights (depth 12, width
//! 384, 6 heads; written to a temporary file, nothing downloaded) on 128 × 128 frames, at input
//! sides 224 and 112: frames per second in batches of 32 on rayon's pool, and one frame at a time.
//!
//! `cargo run -p roboaudit-fqe --example dinov2_throughput [-- FRAMES]` (default 64 frames per
//! side; set `RAYON_NUM_THREADS` to pin the thread count).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_data::lerobot::Rgb8Image;
use roboaudit_fqe::dinov2::random::{RandomDinov2, write_random_dinov2};
use roboaudit_fqe::{Dinov2Options, Encoder};

/// CPU seconds (user + system) this process has used so far, from `/proc/self/stat` (Linux).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Frames per second of wall time and CPU seconds per frame of `run` over `frames` frames.
fn measure(frames: usize, run: impl FnOnce()) -> (f64, Option<f64>) {
    let (t, c) = (Instant::now(), cpu_seconds());
    run();
    let wall = t.elapsed().as_secs_f64();
    let cpu = c.zip(cpu_seconds()).map(|(a, b)| (b - a) / frames as f64);
    (frames as f64 / wall, cpu)
}

fn main() {
    let frames: usize = std::env::args().nth(1).map_or(64, |s| s.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vits14-random.safetensors");
    let t = Instant::now();
    write_random_dinov2(&path, &RandomDinov2::vit_s14(0)).unwrap();
    let mb = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
    println!(
        "wrote {mb:.0} MB of random ViT-S/14 weights in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let images: Vec<Rgb8Image> = (0..frames)
        .map(|_| Rgb8Image {
            width: 128,
            height: 128,
            pixels: (0..128 * 128 * 3).map(|_| rng.random::<u8>()).collect(),
        })
        .collect();
    println!(
        "threads: {} (rayon), frames per side: {frames}",
        rayon::current_num_threads()
    );
    for side in [224, 112] {
        let t = Instant::now();
        let enc = Encoder::dinov2(&path, &Dinov2Options { side, heads: None }).unwrap();
        let load = t.elapsed().as_secs_f64();
        // Warm-up (allocations, thread pool).
        enc.encode(&images[0]).unwrap();
        let (batched, batched_cpu) = measure(frames, || {
            for chunk in images.chunks(32) {
                enc.encode_batch(chunk).unwrap();
            }
        });
        let (single, single_cpu) = measure(frames, || {
            for img in &images {
                enc.encode(img).unwrap();
            }
        });
        let ms = |c: Option<f64>| c.map_or("?".to_owned(), |c| format!("{:.0}", c * 1e3));
        println!(
            "side {side}: load + hash {load:.2} s; batches of 32: {batched:.2} frames/s, {} CPU ms \
             per frame; one at a time: {single:.2} frames/s, {} CPU ms per frame (id {}, dim {})",
            ms(batched_cpu),
            ms(single_cpu),
            enc.id(),
            enc.dim()
        );
    }
}
