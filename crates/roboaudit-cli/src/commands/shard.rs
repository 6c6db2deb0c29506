//! `roboaudit merge` and `roboaudit status`: the shard folders of a collection run with `--shard I/N`
//! (e.g. as a Slurm job array).

use crate::exit::{InvalidInput, Usage};
use anyhow::Result;
use roboaudit_shard::request::{MergeOptions, StatusOptions};
use roboaudit_shard::{FinishError, ShardError};
use std::path::Path;

/// Merges shard folders after checking that they form one complete collection whose job files
/// its library reads; the collection's library finishes the merged folder (see [`finisher`]).
pub fn merge(args: &MergeOptions) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    let outcome = roboaudit_shard::merge_checked(&args.shards, &args.out, &part, &finish)
        .map_err(exit_error)?;
    let assembled = outcome
        .shards
        .first()
        .and_then(|s| finisher(&s.manifest.collection))
        .map(|f| f.file);
    out!("{}", outcome.summary(assembled))?;
    Ok(())
}

/// How the library that writes a collection finishes its merge.
struct Finisher {
    /// Why a job file in a shard folder is not one of its parts ([`roboaudit_shard::PartCheck`]).
    part: fn(usize, &Path) -> Option<String>,
    /// Assembles the merged folder.
    finish: fn(&Path) -> Result<(), FinishError>,
    /// The result file it assembles (for the report line).
    file: &'static str,
}

/// For each collection kind whose merged job files are not yet its run folder: the library's
/// part check and finishing step.
fn finisher(collection: &str) -> Option<Finisher> {
    use roboaudit_fqe_collect::shard as fqe_shard;
    use roboaudit_memory_harness::{intervene_shard, natural_shard, output, resume};
    match collection {
        resume::COLLECTION => Some(Finisher {
            part: resume::part_problem,
            finish: |dir| Ok(resume::finish_merged(dir)?),
            file: output::RECORDS_FILE,
        }),
        intervene_shard::COLLECTION => Some(Finisher {
            part: intervene_shard::part_problem,
            finish: |dir| Ok(intervene_shard::finish_merged(dir)?),
            file: intervene_shard::STUDY_FILE,
        }),
        natural_shard::COLLECTION => Some(Finisher {
            part: natural_shard::part_problem,
            finish: |dir| Ok(natural_shard::finish_merged(dir)?),
            file: natural_shard::STUDY_FILE,
        }),
        fqe_shard::COLLECTION => Some(Finisher {
            part: fqe_shard::part_problem,
            finish: |dir| Ok(fqe_shard::finish_merged(dir)?),
            file: "ground_truth.json",
        }),
        _ => None,
    }
}

/// The part check of the collection `m` describes; job files of a collection without one need
/// only be intact.
fn part(m: &roboaudit_shard::ShardManifest, job: usize, path: &Path) -> Option<String> {
    finisher(&m.collection).and_then(|f| (f.part)(job, path))
}

fn finish(m: &roboaudit_shard::ShardManifest, dir: &Path) -> Result<(), FinishError> {
    finisher(&m.collection).map_or(Ok(()), |f| (f.finish)(dir))
}

/// Prints jobs done per shard folder, then whether `roboaudit merge` would accept the folders
/// together and, if not, its refusal; exit code 0 either way.
pub fn status(args: &StatusOptions) -> Result<()> {
    let check = roboaudit_shard::check_parts(&args.shards, &part).map_err(exit_error)?;
    out!("{}", check.summary())?;
    Ok(())
}

/// What a shard run did, in the words every sharded collection prints
/// ([`roboaudit_shard::shard_done_line`], timed from `started`).
pub(crate) fn print_shard_done(
    shard: roboaudit_shard::Shard,
    counts: (usize, usize, &str),
    out: &Path,
    resumed: usize,
    started: std::time::Instant,
    merge_note: Option<&str>,
) -> Result<(), crate::stdout::StdoutError> {
    let seconds = started.elapsed().as_secs_f64();
    outln!(
        "{}",
        roboaudit_shard::shard_done_line(shard, counts, out, resumed, seconds, merge_note)
    )
}

/// A shard error with its exit code: usage 2 (the folders or the shard asked for are the wrong
/// ones), input 3 (the folders' contents), I/O 1.
pub(crate) fn exit_error(e: ShardError) -> anyhow::Error {
    match e {
        ShardError::OutputExists(_)
        | ShardError::OutputInsideShard { .. }
        | ShardError::InvalidSpec { .. } => {
            anyhow::Error::new(Usage(roboaudit_types::error_chain(&e)))
        }
        ShardError::Inconsistent(_)
        | ShardError::NotAShard { .. }
        | ShardError::Conflict { .. }
        | ShardError::Finish { .. }
        | ShardError::Json { .. } => {
            anyhow::Error::new(InvalidInput(roboaudit_types::error_chain(&e)))
        }
        ShardError::Io { .. } => anyhow::Error::new(e),
    }
}
