//! `roboaudit merge` and `roboaudit status`: the shard folders of a collection run with `--shard I/N`
//! (e.g. as a Slurm job array).

use crate::exit::{InvalidInput, Usage};
use anyhow::{Context, Result};
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
    crate::output::refuse_out_file(&args.out)?;
    let memory = args
        .shards
        .first()
        .and_then(|d| roboaudit_shard::ShardManifest::read(d).ok().flatten())
        .is_some_and(|m| m.collection == roboaudit_memory_harness::resume::COLLECTION);
    let outcome = if memory {
        merge_memory(args)?
    } else {
        roboaudit_shard::merge(&args.shards, &args.out).map_err(exit_error)?
    };
    print_status(&outcome.shards);
    if memory {
        println!(
            "assembled {}",
            args.out
                .join(super::memory::collect::RECORDS_FILE)
                .display()
        );
    }
    println!(
        "merged {} shards ({} job files, {} shared files) into {}",
        outcome.shards.len(),
        outcome.jobs,
        outcome.shared,
        args.out.display()
    );
    Ok(())
}

/// A memory collection's merge: the shards' pairs are merged into a folder beside `--out` and
/// assembled there into the records and manifest an unsharded run writes; only the finished
/// folder is renamed to `--out`, so a failed assembly leaves nothing there.
fn merge_memory(args: &MergeArgs) -> Result<roboaudit_shard::MergeOutcome> {
    let out = &args.out;
    let occupied = std::fs::read_dir(out).is_ok_and(|mut e| e.next().is_some());
    if occupied || out.is_file() {
        return Err(exit_error(ShardError::OutputExists(
            out.display().to_string(),
        )));
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    crate::output::ensure_dir(parent)?;
    let stage = tempfile::Builder::new()
        .prefix(".tmp-assemble-")
        .tempdir_in(parent)
        .with_context(|| format!("cannot create a temporary folder in {}", parent.display()))?;
    let merged = stage.path().join("merged");
    let outcome = roboaudit_shard::merge(&args.shards, &merged).map_err(exit_error)?;
    super::memory::collect::finish_merged(&merged).with_context(|| {
        format!(
            "the merged pairs do not assemble (a file named below is the merged copy of the shard file of the same name under records.partial/); nothing was written to {}",
            out.display()
        )
    })?;
    if out.is_dir() {
        std::fs::remove_dir(out).with_context(|| format!("cannot replace {}", out.display()))?;
    }
    std::fs::rename(&merged, out)
        .with_context(|| format!("cannot move the merged collection to {}", out.display()))?;
    Ok(outcome)
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
