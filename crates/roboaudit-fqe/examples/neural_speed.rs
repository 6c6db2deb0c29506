//! Neural FQE per-gradient-step cost at the Meta-World bridge's shape (19,152 frames, a 39-value
//! state, 4-d actions, 2 tasks; target period 10), and what threads buy.
//!
//! `neural_speed STEPS one [SHAPE]`: one fit on a one-thread pool with M = 1 and M = 8
//! target-action samples, ms per step and their ratio (run it pinned: `taskset -c 0`).
//! `neural_speed STEPS two [SHAPE]`: two fits (two policies, M = 8) on a one-thread pool, then on
//! a two-thread pool: throughput ratio, and the process's CPU seconds over wall seconds for each
//! (what `--threads` must bound). Do not pin this one.
//! SHAPE `d3rlpy` (the default): 256 units, 256-row batches, d3rlpy's FQE defaults and the shape
//! of `scripts/d3rlpy_side_by_side.sh`; `defaults`: `roboaudit fqe fit`'s (128 units, 512 rows).
//!
//! Ratios come from one run of this program, so load from other processes on the machine moves
//! both sides. `scripts/bench_fqe_speed.sh` runs both with the dev profile (optimized in this
//! workspace) and records them in BENCHMARKS.md.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use roboaudit_fqe::{
    EpisodeSpan, FqeInputs, InputPart, NeuralFqeConfig, TargetActions, fit_neural,
};

/// User + system CPU seconds of this process (Linux `/proc/self/stat`, clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the stat line (utime, stime); `after` starts at field 3.
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn inputs(rng: &mut ChaCha8Rng) -> (FqeInputs, usize) {
    let (frames, len, state, adim, tasks) = (19_152, 152, 39, 4, 2);
    let mut g =
        |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect() };
    let episodes = (0..frames / len)
        .map(|i| EpisodeSpan {
            episode_index: i as i64,
            start: i * len,
            len,
            task: i % tasks,
            success: i % 3 != 0,
        })
        .collect();
    (
        FqeInputs {
            parts: vec![InputPart {
                name: "state".into(),
                width: state,
                values: g(frames * state),
            }],
            action_dim: adim,
            actions: g(frames * adim),
            episodes,
            tasks: (0..tasks).map(|l| format!("task {l}")).collect(),
            frame_index: (0..frames as i64).collect(),
        },
        adim,
    )
}

fn target(rng: &mut ChaCha8Rng, frames: usize, adim: usize, samples: usize) -> TargetActions {
    TargetActions {
        samples,
        action_dim: adim,
        values: (0..frames * samples * adim)
            .map(|_| rng.random::<f32>() * 2.0 - 1.0)
            .collect(),
    }
}

/// Runs `fits` on a pool of `threads`; returns (wall s, CPU s).
fn timed(
    threads: usize,
    fits: &[(&FqeInputs, &TargetActions)],
    config: &NeuralFqeConfig,
) -> (f64, f64) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let (c0, t0) = (cpu_seconds(), Instant::now());
    pool.install(|| {
        fits.par_iter()
            .map(|(i, t)| fit_neural(i, t, config).unwrap())
            .collect::<Vec<_>>()
    });
    (t0.elapsed().as_secs_f64(), cpu_seconds() - c0)
}

/// Floating-point operations (2 per multiply-add) of one gradient step of the network in
/// `neural/mlp.rs` at this example's shape (one 39-wide input part, 4-d actions, 2 tasks) with
/// `m` target-action samples: the target network's forward pass over `m` samples per row, then
/// the forward and backward passes of one sample per row. Products only; element-wise passes
/// are a few percent of the time (perf).
fn step_flop(c: &NeuralFqeConfig, m: usize) -> f64 {
    let (b, dx, da) = (c.batch_size as f64, 39.0, 4.0);
    let (pe, ae, te, h) = (
        c.part_embedding as f64,
        c.action_embedding as f64,
        c.task_embedding as f64,
        c.hidden as f64,
    );
    let m = m as f64;
    // Per row: part embedding, the first layer's input and task blocks.
    let row = dx * pe + pe * h + te * h;
    // Per sample: action embedding, the first layer's action block, the second layer, the head.
    let sample = da * ae + ae * h + h * h + h;
    let forward = |m: f64| b * (row + m * sample);
    // Backward: a weight gradient for every product, an input gradient for all but the first.
    let backward = 2.0 * forward(1.0) - b * dx * pe - b * da * ae;
    2.0 * (forward(m) + forward(1.0) + backward)
}

/// GFLOP/s of CPU time of `n × n × n` f32 products by the `gemm` crate on this thread (`reps`
/// of them: CPU time, so that other processes on the machine do not lower it).
fn gemm_gflops(n: usize, reps: usize) -> f64 {
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.1).collect();
    let mut c = vec![0.0f32; n * n];
    let c0 = cpu_seconds();
    for _ in 0..reps {
        // SAFETY: three n × n row-major buffers, `c` distinct from `a`.
        #[allow(unsafe_code)]
        unsafe {
            gemm::gemm(
                n,
                n,
                n,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                n as isize,
                a.as_ptr(),
                1,
                n as isize,
                1.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    }
    2.0 * (n * n * n * reps) as f64 / (cpu_seconds() - c0) / 1e9
}

/// The usage line on standard error, then exit code 2.
fn usage(why: &str) -> ! {
    eprintln!(
        "neural_speed: {why}\nusage: neural_speed [STEPS (1..=10000000)] [one|two] [d3rlpy|defaults]"
    );
    std::process::exit(2)
}

fn main() {
    let steps: usize = match std::env::args().nth(1) {
        None => 1000,
        Some(s) => match s.parse() {
            Ok(n) if (1..=10_000_000).contains(&n) => n,
            _ => usage(&format!(
                "STEPS {s:?} is not a number of steps in 1..=10000000"
            )),
        },
    };
    let mode = std::env::args().nth(2).unwrap_or_else(|| "one".into());
    if mode != "one" && mode != "two" {
        usage(&format!("mode {mode:?}: one or two"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let (inp, adim) = inputs(&mut rng);
    let n = inp.n_frames();
    let t1 = target(&mut rng, n, adim, 1);
    let t8 = target(&mut rng, n, adim, 8);
    let mut config = NeuralFqeConfig {
        steps,
        target_update_every: 10,
        curve_every: steps,
        ..NeuralFqeConfig::default()
    };
    match std::env::args().nth(3).as_deref().unwrap_or("d3rlpy") {
        "d3rlpy" => (config.batch_size, config.hidden) = (256, 256),
        "defaults" => {}
        other => usage(&format!("shape {other:?}: d3rlpy or defaults")),
    }
    let ms = |wall: f64, fits: usize| wall * 1e3 / (steps * fits) as f64;
    if mode == "one" {
        // CPU milliseconds too: on a loaded machine the wall time also counts waiting for the core.
        let (w1, c1) = timed(1, &[(&inp, &t1)], &config);
        let (w8, c8) = timed(1, &[(&inp, &t8)], &config);
        println!(
            "one thread, {steps} steps: M=1 {:.2} ms/step ({:.2} CPU ms), M=8 {:.2} ms/step \
             ({:.2} CPU ms), ratio {:.2} (CPU {:.2})",
            ms(w1, 1),
            ms(c1, 1),
            ms(w8, 1),
            ms(c8, 1),
            w8 / w1,
            c8 / c1
        );
        let (flop1, flop8) = (step_flop(&config, 1), step_flop(&config, 8));
        let peak = gemm_gflops(1024, 20);
        println!(
            "work per step: M=1 {:.0} MFLOP, M=8 {:.0} MFLOP (ratio {:.2}); gemm's f32 kernel on \
             this core, 1024^3 product: {peak:.1} GFLOP/s, so a step cannot take less than \
             {:.2} ms (M=1) / {:.2} ms (M=8); achieved {:.1} / {:.1} GFLOP/s of CPU time",
            flop1 / 1e6,
            flop8 / 1e6,
            flop8 / flop1,
            flop1 / peak / 1e6,
            flop8 / peak / 1e6,
            flop1 / (ms(c1, 1) * 1e6),
            flop8 / (ms(c8, 1) * 1e6),
        );
        return;
    }
    let two = [(&inp, &t8), (&inp, &t8)];
    let (wa, ca) = timed(1, &two, &config);
    let (wb, cb) = timed(2, &two, &config);
    println!(
        "two fits (M=8): 1 thread {:.2} ms/step (CPU/wall {:.2}), 2 threads {:.2} ms/step \
         (CPU/wall {:.2}); throughput ratio {:.2}",
        ms(wa, 2),
        ca / wa,
        ms(wb, 2),
        cb / wb,
        wa / wb
    );
}
