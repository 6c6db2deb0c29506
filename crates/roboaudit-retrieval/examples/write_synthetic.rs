//! Writes the deterministic synthetic audit inputs as CSV (executions.csv, scenes.csv,
//! experiences.csv, embeddings.csv with space-separated vectors) so that other
//! implementations can be benchmarked on the very same input.
//!
//! Usage: `write_synthetic <out_dir> [--experiences K] [--scenes N] [--seeds S]
//! [--representations R] [--dim D] [--seed X]` (defaults: the bench case K=50, n=40, 5, 5, 32, 0).
#![allow(clippy::print_stdout, clippy::print_stderr)] // An example binary reports on the terminal.

use roboaudit_retrieval::synthetic::{SyntheticSpec, generate};
use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().ok_or("usage: write_synthetic <out_dir> [--experiences K] [--scenes N] [--seeds S] [--representations R] [--dim D] [--seed X]")?);
    let mut spec = SyntheticSpec::default();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--experiences" => spec.experiences = value.parse()?,
            "--scenes" => spec.scenes = value.parse()?,
            "--seeds" => spec.seeds = value.parse()?,
            "--representations" => spec.representations = value.parse()?,
            "--dim" => spec.dim = value.parse()?,
            "--seed" => spec.seed = value.parse()?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let inputs = generate(&spec);
    std::fs::create_dir_all(&out)?;
    roboaudit_data::write_executions(out.join("executions.csv"), &inputs.executions)?;
    roboaudit_data::write_scenes_csv(out.join("scenes.csv"), &inputs.scenes)?;
    roboaudit_data::write_experiences_csv(out.join("experiences.csv"), &inputs.experiences)?;
    roboaudit_data::write_embeddings(out.join("embeddings.csv"), &inputs.embeddings)?;
    println!("wrote {:?} to {}", spec, out.display());
    Ok(())
}
