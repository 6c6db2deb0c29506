//! `roboaudit data …`: look at datasets before auditing with them.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use roboaudit_data::lerobot::{LeRobotDataset, SuccessSource, render_inspect};

use crate::exit::{InvalidInput, Usage};
use crate::output::write_atomic;

/// Dataset subcommands.
#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Summarize a LeRobot dataset (v3.0 or v2.1): version, robot, episodes, frames, fps,
    /// features, labels, and every inconsistency found between metadata, data and video files.
    /// Exits with code 3 when a problem would stop `fqe fit` or `data detect` (a data file
    /// missing or unreadable, an episode without rows, a missing, malformed, NaN or infinite
    /// value in `action` or `observation.state`, an undecodable first or last frame of an
    /// `image` feature); other problems are listed with exit code 0 unless --strict.
    Inspect {
        /// Dataset folder (the one holding meta/info.json).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Print the report as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Exit with code 3 when any problem is found.
        #[arg(long)]
        strict: bool,
    },
    /// Derive an episode labels file (`episode_index`, `success` as 0/1, CSV) from a reward
    /// column, for datasets whose success flag is missing or never set (pusht's per-frame
    /// coverage reward): `--rule max` labels an episode a success when its largest reward
    /// reaches the threshold ("ever reached"), `--rule last` when its last frame's does.
    Labels {
        /// Dataset folder (the one holding meta/info.json).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Reward column: a scalar column (a declared column of another width is refused as a
        /// wrong option, exit code 2).
        #[arg(long, default_value = "next.reward")]
        reward: String,
        /// `max` (peak reward over the episode) or `last` (reward of the last frame).
        #[arg(long, default_value = "max", value_parser = ["max", "last"])]
        rule: String,
        /// Smallest reward that counts as success (a finite number).
        #[arg(long)]
        threshold: f64,
        /// Labels file to write (CSV).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Train a success detector on the terminal frames of the episodes a partial labels file
    /// labels, report its accuracy on held-out labelled episodes, and write a full labels file
    /// (given labels kept, the rest predicted) for `fqe fit --labels`.
    Detect(Box<super::detect::DetectArgs>),
}

/// Runs a `data` subcommand.
///
/// # Errors
/// The dataset cannot be opened (exit code 3 via `DataError`), the report cannot be
/// serialized, or `--strict` and the report lists problems.
pub fn run(cmd: DataCommand) -> Result<()> {
    match cmd {
        DataCommand::Inspect { dir, json, strict } => {
            let dataset = LeRobotDataset::open(&dir)
                .with_context(|| format!("cannot open LeRobot dataset {}", dir.display()))?;
            let report = dataset.inspect()?;
            let text = if json {
                serde_json::to_string_pretty(&report)? + "\n"
            } else {
                render_inspect(&report)
            };
            write_stdout(&text)?;
            // A problem that stops `fqe fit` is not a warning: the dataset is unusable as is.
            if report.blocking_problems > 0 {
                return Err(InvalidInput(format!(
                    "{} problem(s) make the dataset unusable to `fqe fit` and `data detect` (see the problems above), in {}",
                    report.blocking_problems,
                    dir.display()
                ))
                .into());
            }
            if strict && !report.problems.is_empty() {
                return Err(InvalidInput(format!(
                    "{} problem(s) found in {} (--strict)",
                    report.problems.len(),
                    dir.display()
                ))
                .into());
            }
            Ok(())
        }
        DataCommand::Labels {
            dir,
            reward,
            rule,
            threshold,
            out,
        } => labels(&dir, reward, &rule, threshold, &out),
        DataCommand::Detect(args) => super::detect::run(&args),
    }
}

/// `data labels`: one row per episode of the metadata, in episode order.
fn labels(dir: &Path, reward: String, rule: &str, threshold: f64, out: &Path) -> Result<()> {
    if !threshold.is_finite() {
        return Err(Usage(format!(
            "--threshold {} must be a finite number",
            roboaudit_fqe::number::compact(threshold)
        ))
        .into());
    }
    let dataset = LeRobotDataset::open(dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", dir.display()))?;
    // The column is named by an option: a declared but non-scalar column is a wrong option
    // (exit 2, like an undeclared `fqe fit --features` key), not a damaged dataset.
    if let Some(f) = dataset.feature(&reward) {
        let width: usize = f.shape.iter().product();
        if width != 1 {
            return Err(Usage(format!(
                "--reward {reward}: {} declares column \"{reward}\" with shape {:?} (width {width}); a reward must be a scalar column (shape [1])",
                dataset.root().join("meta/info.json").display(),
                f.shape
            ))
            .into());
        }
    }
    let source = if rule == "last" {
        SuccessSource::LastReward {
            column: reward.clone(),
            threshold,
        }
    } else {
        SuccessSource::MaxReward {
            column: reward.clone(),
            threshold,
        }
    };
    let labels = dataset.success_labels(&source)?;
    let mut csv = String::from("episode_index,success\n");
    for l in &labels {
        let _ = writeln!(csv, "{},{}", l.episode_index, u8::from(l.success));
    }
    write_atomic(out, csv.as_bytes())?;
    let successes = labels.iter().filter(|l| l.success).count();
    write_stdout(&format!(
        "{successes} of {} episodes succeed ({rule} {reward} >= {}); wrote {}\n",
        labels.len(),
        roboaudit_fqe::number::compact(threshold),
        out.display()
    ))
}

/// Writes to stdout; a closed pipe (`… | head`) ends the output quietly instead of panicking.
fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}
