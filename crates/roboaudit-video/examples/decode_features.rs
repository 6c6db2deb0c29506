//! Decode throughput for `scripts/bench_video.py`: decodes every frame of the MP4 files given,
//! converts each to RGB24 and box-averages it to 32×32×3 features (the raw-pixel encoder's
//! input size), printing `frames seconds checksum` on one line. One file per thread when
//! `--threads N` (N > 1) is given: files are the unit of parallelism, as in a dataset pass.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use roboaudit_video::{RgbImage, VideoReader};

const SIDE: usize = 32;

/// Mean of each of the SIDE×SIDE cells (integer cell bounds), per channel.
fn features(img: &RgbImage) -> Vec<f32> {
    let (w, h) = (img.width as usize, img.height as usize);
    let mut out = vec![0f32; SIDE * SIDE * 3];
    for cy in 0..SIDE {
        let (y0, y1) = (cy * h / SIDE, (cy + 1) * h / SIDE);
        for cx in 0..SIDE {
            let (x0, x1) = (cx * w / SIDE, (cx + 1) * w / SIDE);
            let mut acc = [0u32; 3];
            for y in y0..y1 {
                let row = &img.pixels[(y * w + x0) * 3..(y * w + x1) * 3];
                for px in row.chunks_exact(3) {
                    acc[0] += u32::from(px[0]);
                    acc[1] += u32::from(px[1]);
                    acc[2] += u32::from(px[2]);
                }
            }
            let n = ((y1 - y0) * (x1 - x0)) as f32;
            for c in 0..3 {
                out[(cy * SIDE + cx) * 3 + c] = acc[c] as f32 / n / 255.0;
            }
        }
    }
    out
}

fn run(path: &Path) -> (u64, f64) {
    let mut reader = VideoReader::open(path).unwrap();
    let (mut n, mut sum) = (0u64, 0f64);
    while let Some(d) = reader.next_frame().unwrap() {
        let rgb = reader.to_rgb(&d).unwrap();
        sum += features(&rgb).iter().map(|v| f64::from(*v)).sum::<f64>();
        n += 1;
    }
    (n, sum)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let threads = match args.iter().position(|a| a == "--threads") {
        Some(k) => {
            let t = args[k + 1].parse::<usize>().unwrap();
            args.drain(k..k + 2);
            t
        }
        None => 1,
    };
    let files: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
    let start = Instant::now();
    let results: Vec<(u64, f64)> = if threads > 1 {
        std::thread::scope(|s| {
            let handles: Vec<_> = files.iter().map(|f| s.spawn(move || run(f))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    } else {
        files.iter().map(|f| run(f)).collect()
    };
    let secs = start.elapsed().as_secs_f64();
    let frames: u64 = results.iter().map(|r| r.0).sum();
    let checksum: f64 = results.iter().map(|r| r.1).sum();
    println!("{frames} {secs:.4} {checksum:.3}");
}
