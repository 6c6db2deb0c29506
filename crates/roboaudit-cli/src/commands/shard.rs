//! `roboaudit merge` and `roboaudit status`: the shard folders of a collection run with `--shard I/N`
//! (e.g. as a Slurm job array).

use crate::exit::{InvalidInput, Usage};
use anyhow::Result;
use clap::Args;
use roboaudit_shard::{ShardError, ShardStatus};
use std::path::PathBuf;

/// Inputs and output of `roboaudit merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard folders (one per shard I of N, each written with `--shard I/N`), in any order.
    #[arg(value_name = "SHARD_DIR", required = true, num_args = 1..)]
    shards: Vec<PathBuf>,
    /// Merged run folder (new or empty): what an unsharded run of the same configuration writes.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Inputs of `roboaudit status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Shard folders of one or several sharded collections.
    #[arg(value_name = "SHARD_DIR", required = true, num_args = 1..)]
    shards: Vec<PathBuf>,
}

/// Merges shard folders after checking that they form one complete collection.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let outcome = roboaudit_shard::merge(&args.shards, &args.out).map_err(exit_error)?;
    print_status(&outcome.shards);
    // A memory collection's merged pairs become the records and manifest it would have written.
    if outcome
        .shards
        .first()
        .is_some_and(|s| s.manifest.collection == roboaudit_memory_harness::resume::COLLECTION)
    {
        let records = super::memory::collect::finish_merged(&outcome.out)?;
        println!("assembled {}", records.display());
    }
    println!(
        "merged {} shards ({} job files, {} shared files) into {}",
        outcome.shards.len(),
        outcome.jobs,
        outcome.shared,
        outcome.out.display()
    );
    Ok(())
}

/// Prints jobs done per shard folder; exit code 0 whether or not they are complete.
pub fn status(args: &StatusArgs) -> Result<()> {
    let statuses = roboaudit_shard::status(&args.shards).map_err(exit_error)?;
    print_status(&statuses);
    let done: usize = statuses.iter().map(|s| s.done_units).sum();
    let total: usize = statuses.iter().map(|s| s.owned_units).sum();
    let complete = statuses.iter().filter(|s| s.complete()).count();
    println!(
        "{complete} of {} shard folders complete; {done} of {total} units done in the folders given",
        statuses.len()
    );
    Ok(())
}

fn print_status(statuses: &[ShardStatus]) {
    for s in statuses {
        let m = &s.manifest;
        let mut line = format!(
            "shard {:>7}  {}: {} of {} jobs, {} of {} {}{}",
            m.shard.to_string(),
            s.dir.display(),
            s.done_jobs.len(),
            s.owned_jobs,
            s.done_units,
            s.owned_units,
            m.unit,
            if s.complete() { " (complete)" } else { "" }
        );
        if !s.stray_jobs.is_empty() {
            line.push_str(&format!(
                "; {} job file(s) of other shards",
                s.stray_jobs.len()
            ));
        }
        println!("{line}  [{} {}]", m.collection, short_hash(&m.config_hash));
    }
}

fn short_hash(hash: &str) -> &str {
    hash.get(..19).unwrap_or(hash)
}

pub(crate) fn exit_error(e: ShardError) -> anyhow::Error {
    match e {
        ShardError::OutputExists(_) | ShardError::InvalidSpec { .. } => {
            anyhow::Error::new(Usage(e.to_string()))
        }
        ShardError::Inconsistent(_)
        | ShardError::NotAShard { .. }
        | ShardError::Conflict { .. }
        | ShardError::Json { .. } => anyhow::Error::new(InvalidInput(e.to_string())),
        ShardError::Io { .. } => anyhow::Error::new(e),
    }
}
