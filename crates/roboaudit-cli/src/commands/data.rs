//! `roboaudit data …`: look at datasets before auditing with them.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Subcommand;
use roboaudit_data::lerobot::{LeRobotDataset, render_inspect};

use crate::exit::InvalidInput;

/// Dataset subcommands.
#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Summarize a LeRobot dataset (v3.0 or v2.1): version, robot, episodes, frames, fps,
    /// features, labels, and every inconsistency found between metadata, data and video files.
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
    }
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
