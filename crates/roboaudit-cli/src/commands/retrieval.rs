//! `roboaudit retrieval …`: the retrieval audit (SPEC §1) over files any harness can write.

use crate::exit::InvalidInput;
use crate::{output, progress};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use roboaudit_data::RetrievalPaths;
use roboaudit_retrieval_collect::{
    AuditTask, CollectConfig, CollectError, CollectOutcome, Mechanism, Progress, RunOptions,
};
use std::path::Path;
use std::path::PathBuf;

/// Retrieval-audit subcommands.
#[derive(Debug, Subcommand)]
pub enum RetrievalCommand {
    /// Audit selection rules on a transfer matrix: writes DIR/audit.json and DIR/summary.md.
    Audit(AuditArgs),
    /// Collect a run folder on the built-in testbed: record a library, execute every experience in
    /// every query scene over several seeds (resumable), write what `retrieval audit --run` reads.
    Collect(CollectArgs),
}

/// Settings of `roboaudit retrieval collect`.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// Task: stack or door.
    #[arg(long, default_value = "stack")]
    task: String,
    /// Reuse mechanism: replay (open-loop path retargeted to the first manipulated object).
    #[arg(long, default_value = "replay")]
    mechanism: String,
    /// Pool size K: accepted experiences (nested libraries are its prefixes), 1 to 500.
    #[arg(long, default_value_t = 50)]
    library: usize,
    /// Query scenes (40 % appearance, 40 % layout, rest fresh), 3 to 400.
    #[arg(long, default_value_t = 40)]
    scenes: usize,
    /// Execution seeds per experience × scene cell, 1 to 100.
    #[arg(long, default_value_t = 5)]
    seeds: usize,
    /// Master seed of scenes, demonstrators and execution noise.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Executions per part file of DIR/executions/ (a killed run loses at most one part's work).
    #[arg(long, default_value_t = 500)]
    chunk: usize,
    /// Stop after writing this many parts (a time-boxed run; rerun the same command to resume).
    #[arg(long, value_name = "N")]
    max_chunks: Option<usize>,
    /// Run folder; an unfinished run with the same settings there is resumed.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write only shard I of N (0-based; part files p with p mod N = I) and a shard.json, e.g. a
    /// Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge` joins the shards.
    #[arg(long, value_name = "I/N")]
    shard: Option<roboaudit_retrieval_collect::Shard>,
}

/// Inputs and settings of `roboaudit retrieval audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Folder holding executions.parquet, scenes.csv, experiences.csv, embeddings.parquet
    /// (and optionally selections.csv); individual file options override its files.
    #[arg(long, value_name = "DIR")]
    run: Option<PathBuf>,
    /// Execution log (CSV, Parquet or JSONL): experience_id, scene_id, seed, success.
    #[arg(long, value_name = "FILE")]
    executions: Option<PathBuf>,
    /// Query scenes: scene_id, perturbation, layout_level, appearance_draw.
    #[arg(long, value_name = "FILE")]
    scenes: Option<PathBuf>,
    /// Library experiences in library order: experience_id [, base_scene_id, recorded_at, own_base_success].
    #[arg(long, value_name = "FILE")]
    experiences: Option<PathBuf>,
    /// Embeddings: representation, kind (experience|scene), id, vector.
    #[arg(long, value_name = "FILE")]
    embeddings: Option<PathBuf>,
    /// Optional user selection log: scene_id, experience_id.
    #[arg(long, value_name = "FILE")]
    selections: Option<PathBuf>,
    /// Name of the representation that holds state features (enables the structural rule).
    #[arg(long, value_name = "REP")]
    structural: Option<String>,
    /// Output folder (created if missing); nothing is written there when the audit fails.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Seed of every random draw (shuffles, bootstrap, random rule, track record).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Bootstrap resamples for every interval (100 to 1,000,000; fewer give intervals that mean nothing).
    #[arg(long, default_value_t = 10_000, value_parser = draws_in(100, 1_000_000))]
    resamples: usize,
    /// Permutations of the frequency-matched shuffle (100 to 1,000,000).
    #[arg(long, default_value_t = 10_000, value_parser = draws_in(100, 1_000_000))]
    permutations: usize,
    /// Random K-subsets of the pool for the concentration intervention (1 to 100,000).
    #[arg(long, default_value_t = 200, value_parser = draws_in(1, 100_000))]
    subsets: usize,
    /// Nested library sizes by library order, e.g. `--library-size 3 10 50`.
    #[arg(long = "library-size", value_name = "K", num_args = 1..)]
    library_sizes: Vec<usize>,
    /// Skip re-running each rule without its top pick (the report's `top_pick_deletion` is then
    /// null with a reason).
    #[arg(long)]
    no_top_pick_deletion: bool,
}

/// A parser for a count of random draws within `[lo, hi]`: the upper bound keeps a typo from
/// asking for terabytes of resample indices.
fn draws_in(lo: u64, hi: u64) -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(lo..=hi)
}

/// Runs a retrieval subcommand.
pub fn run(cmd: RetrievalCommand) -> Result<()> {
    match cmd {
        RetrievalCommand::Audit(args) => audit(args),
        RetrievalCommand::Collect(args) => collect(&args),
    }
}

fn resolve_paths(args: &AuditArgs) -> Result<RetrievalPaths> {
    let mut paths = match &args.run {
        Some(dir) => RetrievalPaths::from_run_dir(dir),
        None => {
            let missing: Vec<&str> = [
                ("--executions", args.executions.is_none()),
                ("--scenes", args.scenes.is_none()),
                ("--experiences", args.experiences.is_none()),
                ("--embeddings", args.embeddings.is_none()),
            ]
            .into_iter()
            .filter_map(|(name, absent)| absent.then_some(name))
            .collect();
            if !missing.is_empty() {
                bail!(crate::exit::Usage(format!(
                    "missing {} (or give --run DIR)",
                    missing.join(", ")
                )));
            }
            RetrievalPaths::default()
        }
    };
    if let Some(p) = &args.executions {
        paths.executions = p.clone();
    }
    if let Some(p) = &args.scenes {
        paths.scenes = p.clone();
    }
    if let Some(p) = &args.experiences {
        paths.experiences = p.clone();
    }
    if let Some(p) = &args.embeddings {
        paths.embeddings = p.clone();
    }
    if args.selections.is_some() {
        paths.selections = args.selections.clone();
    }
    Ok(paths)
}

/// With `--run DIR`: a missing folder, or a required file found in none of the readable
/// formats, is named as such (with a file of that name in another format, if there is one)
/// rather than as the standard name the reader would fail to open. Files given by their own
/// flags are the readers' to check.
fn check_run_files(dir: &Path, args: &AuditArgs, paths: &RetrievalPaths) -> Result<()> {
    if !dir.is_dir() {
        bail!(InvalidInput(format!(
            "--run {}: no such folder",
            dir.display()
        )));
    }
    // In the order the files are read, so that the first missing one is the reader's first.
    let required = [
        (
            "experiences",
            args.experiences.is_none(),
            &paths.experiences,
        ),
        ("scenes", args.scenes.is_none(), &paths.scenes),
        ("executions", args.executions.is_none(), &paths.executions),
        ("embeddings", args.embeddings.is_none(), &paths.embeddings),
    ];
    for (stem, from_run, path) in required {
        if !from_run || path.exists() {
            continue;
        }
        let parts = if stem == "executions" {
            ", or an executions/ folder of part-NNNNNN.parquet files"
        } else {
            ""
        };
        let others: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(&format!("{stem}.")))
            .collect();
        let found = match others.as_slice() {
            [] => String::new(),
            names => format!(
                "; found {}, whose extension is none of these",
                names.join(", ")
            ),
        };
        let names: Vec<String> = roboaudit_data::RUN_FILE_EXTENSIONS
            .iter()
            .map(|ext| format!("{stem}.{ext}"))
            .collect();
        let looked_for = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.concat(),
        };
        bail!(InvalidInput(format!(
            "no {stem} file in {}: looked for {looked_for}{parts}{found}",
            dir.display()
        )));
    }
    Ok(())
}

fn audit(args: AuditArgs) -> Result<()> {
    // Both are the user's choice of --out, so they are refused before any input is read.
    output::refuse_out_file(&args.out)?;
    output::refuse_foreign_results(
        &args.out,
        &[
            ("audit.json", &[roboaudit_retrieval::SCHEMA]),
            // An FQE result folder's summary.md would be replaced by ours.
            ("fqe.json", &[]),
        ],
    )?;
    let paths = resolve_paths(&args)?;
    let config = roboaudit_retrieval::AuditConfig {
        seed: args.seed,
        resamples: args.resamples,
        permutations: args.permutations,
        random_subsets: args.subsets,
        library_sizes: args.library_sizes.clone(),
        structural: args.structural.clone(),
        top_pick_deletion: !args.no_top_pick_deletion,
        ..roboaudit_retrieval::AuditConfig::default()
    };
    // Settings are the user's to fix before any input is looked for.
    config
        .clone()
        .check()
        .map_err(|e| crate::exit::Usage(e.to_string()))?;
    if let Some(dir) = &args.run {
        check_run_files(dir, &args, &paths)?;
    }
    let report = match audit_paths(&paths, config) {
        Ok(report) => report,
        Err(err) => {
            return Err(with_unfinished_collect_hint(
                err,
                args.run.as_deref(),
                &paths,
            ));
        }
    };
    let json = serde_json::to_vec_pretty(&report).context("cannot serialize the audit")?;
    let summary = roboaudit_retrieval::render_summary_markdown(&report);
    output::ensure_dir(&args.out)?;
    let audit_path = args.out.join("audit.json");
    output::write_all_atomic(&[
        (&audit_path, &json),
        (&args.out.join("summary.md"), summary.as_bytes()),
    ])?;
    outln!("{}", roboaudit_retrieval::render_compact_table(&report))?;
    // A library size the audit could not run is said here too, not only in the files.
    for skipped in &report.library_interventions {
        if let Some(reason) = &skipped.reason {
            eprintln!("note: --library-size {} skipped: {reason}", skipped.size);
        }
    }
    outln!(
        "wrote {} and {}",
        audit_path.display(),
        args.out.join("summary.md").display()
    )?;
    Ok(())
}

/// `err` with a note on top when `run` holds the progress file of a `retrieval collect` that has
/// not written all its executions: the missing cells are then the collection's unfinished work,
/// not a harness bug, and the note says how to resume it. Only errors about the execution log get
/// it (a complete collection's other problems are not about resuming).
fn with_unfinished_collect_hint(
    err: anyhow::Error,
    run: Option<&Path>,
    paths: &RetrievalPaths,
) -> anyhow::Error {
    let Some(run) = run else { return err };
    let about_executions = err
        .chain()
        .filter_map(|c| c.downcast_ref::<roboaudit_data::DataError>())
        .any(|e| crate::paths::is_within(e.file(), &paths.executions));
    if !about_executions {
        return err;
    }
    let Ok(bytes) = std::fs::read(run.join(roboaudit_retrieval_collect::MANIFEST_FILE)) else {
        return err;
    };
    let Ok(manifest) = serde_json::from_slice::<roboaudit_retrieval_collect::Manifest>(&bytes)
    else {
        return err;
    };
    // Count the part files, not their rows: a part that does not read is not unfinished work,
    // and the error already names it.
    let c = &manifest.config;
    let parts = roboaudit_retrieval_collect::shard::part_files();
    let total = roboaudit_retrieval_collect::shard::part_count(c);
    let written = parts.present(run).map_or(0, |p| p.len());
    if written >= total {
        return err;
    }
    let mechanism = match c.mechanism {
        Mechanism::Replay => "replay",
    };
    err.context(format!(
        "{} holds an unfinished `retrieval collect` ({written} of {total} part files of {} executions written); resume it with `roboaudit retrieval collect --task {} --mechanism {mechanism} --library {} --scenes {} --seeds {} --seed {} --chunk {} --out {}` (without --max-chunks), then audit again",
        run.display(),
        manifest.total_executions,
        c.task.name(),
        c.library,
        c.scenes,
        c.seeds,
        c.seed,
        c.chunk,
        run.display()
    ))
}

/// Loads the inputs named by `paths` and audits them with `config` (a spinner on a terminal).
pub(crate) fn audit_paths(
    paths: &RetrievalPaths,
    config: roboaudit_retrieval::AuditConfig,
) -> Result<roboaudit_retrieval::AuditReport> {
    // Settings are the user's to fix before any input is read.
    let config = config
        .check()
        .map_err(|e| crate::exit::Usage(e.to_string()))?;
    let spinner = progress::spinner("reading inputs");
    let inputs = roboaudit_data::load_retrieval_inputs(paths)?;
    spinner.set_message("auditing rules");
    let report = roboaudit_retrieval::run_audit(&inputs, &config)?;
    spinner.finish_and_clear();
    Ok(report)
}

fn collect(args: &CollectArgs) -> Result<()> {
    output::refuse_out_file(&args.out)?;
    let usage = |e: CollectError| crate::exit::Usage(e.to_string());
    let config = CollectConfig {
        task: AuditTask::parse(&args.task).map_err(usage)?,
        mechanism: Mechanism::parse(&args.mechanism).map_err(usage)?,
        library: args.library,
        scenes: args.scenes,
        seeds: args.seeds,
        seed: args.seed,
        chunk: args.chunk,
    };
    config.check().map_err(usage)?;
    let options = RunOptions {
        max_chunks: args.max_chunks,
        shard: args.shard,
    };
    let out = collect_run(&config, &args.out, &options)?;
    if out.resumed_from > 0 {
        outln!(
            "resumed after {} of {} executions already in {}",
            out.resumed_from,
            out.total,
            out.dir.display()
        )?;
    }
    outln!(
        "library: {} experiences accepted of {} recorded ({} rejected in their own base scene)",
        out.library.pool,
        out.library.attempts,
        out.library.rejected
    )?;
    if let (Some(shard), true) = (args.shard, out.complete) {
        outln!(
            "shard {shard}: wrote its {} executions to {}; when every shard is done: roboaudit merge SHARD_DIR… --out DIR",
            out.total,
            out.dir.display()
        )?;
    } else if out.complete {
        outln!(
            "wrote {} executions to {}; audit with: roboaudit retrieval audit --run {} --structural structural --out {}",
            out.total,
            out.dir.display(),
            out.dir.display(),
            out.dir.join("audit").display()
        )?;
    } else {
        outln!(
            "stopped after {} of {} executions in {}; rerun the same command to resume",
            out.done,
            out.total,
            out.dir.display()
        )?;
    }
    Ok(())
}

/// Runs (or resumes) a collection with a progress bar showing rate and ETA on a terminal.
/// Configuration and resume errors become usage and invalid-input errors.
pub(crate) fn collect_run(
    config: &CollectConfig,
    dir: &Path,
    options: &RunOptions,
) -> Result<CollectOutcome> {
    let bar = progress::bar(0, "");
    let task = config.task.name();
    bar.set_message(format!("{task}: recording the library"));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let report = |p: Progress| match p {
        Progress::Library => bar.set_message(format!("{task}: recording the library")),
        Progress::Embeddings => bar.set_message(format!("{task}: rendering embeddings")),
        Progress::Executions { done, total } => {
            if bar.length() != Some(total as u64) {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.reset_eta();
                bar.set_message(format!("{task}: executing"));
            } else {
                bar.set_position(done as u64);
            }
        }
    };
    let result = roboaudit_retrieval_collect::collect(config, dir, options, &report);
    bar.finish_and_clear();
    result.map_err(|e| match e {
        CollectError::InvalidConfig(m) => anyhow::Error::new(crate::exit::Usage(m)),
        CollectError::Resume { .. } => anyhow::Error::new(crate::exit::InvalidInput(e.to_string())),
        other => anyhow::Error::new(other),
    })
}
