//! `roboaudit retrieval …`: the retrieval audit (SPEC §1) over files any harness can write.

use crate::{output, progress};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use roboaudit_data::RetrievalPaths;
use std::path::PathBuf;

/// Retrieval-audit subcommands.
#[derive(Debug, Subcommand)]
pub enum RetrievalCommand {
    /// Audit selection rules on a transfer matrix: writes DIR/audit.json and DIR/summary.md.
    Audit(AuditArgs),
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

fn audit(args: AuditArgs) -> Result<()> {
    let paths = resolve_paths(&args)?;
    let spinner = progress::spinner("reading inputs");
    let inputs = roboaudit_data::load_retrieval_inputs(&paths)?;
    spinner.set_message("auditing rules");
    let config = roboaudit_retrieval::AuditConfig {
        seed: args.seed,
        resamples: args.resamples,
        permutations: args.permutations,
        random_subsets: args.subsets,
        library_sizes: args.library_sizes.clone(),
        structural: args.structural.clone(),
        ..roboaudit_retrieval::AuditConfig::default()
    };
    let config = config
        .check()
        .map_err(|e| crate::exit::Usage(e.to_string()))?;
    let report = roboaudit_retrieval::run_audit(&inputs, &config)?;
    spinner.finish_and_clear();

    let json = serde_json::to_vec_pretty(&report).context("cannot serialize the audit")?;
    let summary = roboaudit_retrieval::render_summary_markdown(&report);
    output::ensure_dir(&args.out)?;
    let audit_path = args.out.join("audit.json");
    output::write_atomic(&audit_path, &json)?;
    output::write_atomic(&args.out.join("summary.md"), summary.as_bytes())?;
    println!("{}", roboaudit_retrieval::render_compact_table(&report));
    println!(
        "wrote {} and {}",
        audit_path.display(),
        args.out.join("summary.md").display()
    );
    Ok(())
}
