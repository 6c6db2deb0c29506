//! Timings of the estimators at the scale: neural FQE on 150,000 synthetic transitions
//! for 20,000 steps, linear FQE on the same inputs, and the peak resident memory.
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p roboaudit-fqe --example bench [-- STEPS]`
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_fqe::{
    EpisodeSpan, FqeInputs, InputPart, LinearFqeConfig, NeuralFqeConfig, TargetActions, fit_linear,
    fit_neural,
};

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let steps: usize = std::env::args()
        .nth(1)
        .map_or(20_000, |s| s.parse().unwrap());
    let (frames, len, feat, proprio, adim, samples, tasks) = (150_000, 100, 64, 8, 4, 4, 3);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut g =
        |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect() };
    let episodes: Vec<EpisodeSpan> = (0..frames / len)
        .map(|i| EpisodeSpan {
            episode_index: i as i64,
            start: i * len,
            len,
            task: i % tasks,
            success: i % 3 != 0,
        })
        .collect();
    let inputs = FqeInputs {
        parts: vec![
            InputPart {
                name: "image".into(),
                width: feat,
                values: g(frames * feat),
            },
            InputPart {
                name: "state".into(),
                width: proprio,
                values: g(frames * proprio),
            },
        ],
        action_dim: adim,
        actions: g(frames * adim),
        episodes,
        tasks: (0..tasks).map(|l| format!("task {l}")).collect(),
        frame_index: (0..frames as i64).collect(),
    };
    let target = TargetActions {
        samples,
        action_dim: adim,
        values: g(frames * samples * adim),
    };
    println!("inputs: {frames} transitions, x = {feat} + {proprio}, a = {adim}, M = {samples}");

    let t = Instant::now();
    let lin = fit_linear(&inputs, &target, &LinearFqeConfig::default()).unwrap();
    println!(
        "linear FQE: {:.1} s ({} iterations, converged {})",
        t.elapsed().as_secs_f64(),
        lin.iterations,
        lin.converged
    );

    let t = Instant::now();
    let config = NeuralFqeConfig {
        steps,
        ..NeuralFqeConfig::default()
    };
    let fit = fit_neural(&inputs, &target, &config).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "neural FQE: {steps} steps in {secs:.1} s ({:.0} steps/s), final loss {:.4}",
        steps as f64 / secs,
        fit.curve.last().unwrap().loss
    );
    if let Some(mib) = peak_rss_mib() {
        println!("peak RSS: {mib:.0} MiB");
    }
}
