//! Runs the full retrieval audit on an input folder of CSV files and reports the wall time.
//!
//! Usage: `bench_audit <input_dir> <out_json> [--resamples N] [--permutations N] [--seed S]
//! [--repeats N] [--no-interventions] [--no-power]` (the last two drop the library interventions
//! — the size interventions and each rule's top-pick deletion — and the shuffle-test power
//! analysis, to time the core audit alone: the work the NumPy reference does). With
//! `--repeats N` the audit runs N times in this process and the best (smallest) wall time is
//! reported, which is what a shared, noisy machine needs.
//! Reads `executions.csv`, `scenes.csv`, `experiences.csv`, `embeddings.csv` (vectors as
//! space-separated text), writes the audit report to `<out_json>` and prints
//! `{"seconds": <audit wall time>, "load_seconds": <CSV loading and input checks>}` on stdout.
//! The audit is timed from [`PreparedInputs`] (transfer matrix and vectors in library order, as
//! the NumPy reference's `Inputs` hold them when its audit is timed).
#![allow(clippy::print_stdout, clippy::print_stderr)] // An example binary reports on the terminal.

use roboaudit_data::{RetrievalPaths, load_retrieval_inputs};
use roboaudit_retrieval::{AuditConfig, PreparedInputs, run_prepared};
use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

/// The allocator of the `roboaudit` binary, so that the engine is timed as the CLI runs it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn Error>> {
    let usage = "usage: bench_audit <input_dir> <out_json> [--resamples N] [--permutations N] [--seed S] [--repeats N] [--no-interventions] [--no-power]";
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let out = PathBuf::from(args.next().ok_or(usage)?);
    let mut config = AuditConfig::default();
    let mut repeats = 1usize;
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--no-interventions" => {
                config.library_sizes.clear();
                config.top_pick_deletion = false;
                continue;
            }
            "--no-power" => {
                config.power_rates.clear();
                continue;
            }
            _ => {}
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--resamples" => config.resamples = value.parse()?,
            "--permutations" => config.permutations = value.parse()?,
            "--seed" => config.seed = value.parse()?,
            "--repeats" => repeats = value.parse::<usize>()?.max(1),
            other => return Err(format!("unknown flag {other}; {usage}").into()),
        }
    }
    let config = config.check()?;
    let start = Instant::now();
    let paths = RetrievalPaths {
        executions: dir.join("executions.csv"),
        scenes: dir.join("scenes.csv"),
        experiences: dir.join("experiences.csv"),
        embeddings: dir.join("embeddings.csv"),
        selections: Some(dir.join("selections.csv")).filter(|p| p.is_file()),
    };
    let inputs = load_retrieval_inputs(&paths)?;
    // Checking and indexing the inputs (the transfer matrix, the vectors in library order) is
    // the reference's loading too (its `Inputs`), so it is timed with the loading.
    let prepared = PreparedInputs::new(&inputs)?;
    let load_seconds = start.elapsed().as_secs_f64();
    let mut seconds = f64::INFINITY;
    let mut report = None;
    for _ in 0..repeats {
        let start = Instant::now();
        let r = run_prepared(&prepared, &config)?;
        seconds = seconds.min(start.elapsed().as_secs_f64());
        report = Some(r);
    }
    let report = report.ok_or("no audit ran")?;
    std::fs::write(&out, serde_json::to_string_pretty(&report)?)?;
    println!(
        "{}",
        serde_json::json!({ "seconds": seconds, "load_seconds": load_seconds, "repeats": repeats })
    );
    Ok(())
}
