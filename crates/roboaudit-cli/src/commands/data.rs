//! `roboaudit data …`: look at datasets before auditing with them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use roboaudit_data::lerobot::{
    Feature, FeatureKind, LeRobotDataset, SuccessSource, render_inspect,
};

use crate::exit::{InvalidInput, Usage};
use crate::output::write_atomic;
use crate::paths::{refuse_inside_dataset, require_extension};

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
        /// Reward column: a declared numeric scalar column (a missing column, or one of another
        /// width or kind, is refused as a wrong option, exit code 2, listing the usable ones).
        #[arg(long, default_value = "next.reward")]
        reward: String,
        /// `max` (peak reward over the episode) or `last` (reward of the last frame).
        #[arg(long, default_value = "max", value_parser = ["max", "last"])]
        rule: String,
        /// Smallest reward that counts as success (a finite number).
        #[arg(long)]
        threshold: f64,
        /// Labels file to write (CSV: the name must end in .csv; not inside the dataset folder;
        /// a missing parent folder is created).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Train a success detector on the terminal frames of the episodes a partial labels file
    /// labels, report its accuracy on held-out labelled episodes, and write a full labels file
    /// (given labels kept, the rest predicted) for `fqe fit --labels`.
    Detect(Box<super::detect::DetectArgs>),
    /// Export one decoded frame of a camera as an 8-bit RGB PNG: a `video` feature's frame
    /// picked for the frame's timestamp as LeRobot's reader picks it, or an `image` feature's
    /// stored PNG decoded and re-encoded (what to look at first when a number looks wrong).
    /// A missing, truncated or undecodable video, or an unknown episode or frame, exits with
    /// code 3 naming file and episode; nothing is written then.
    Frame {
        /// Dataset folder (the one holding meta/info.json).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Camera feature key (`video` or `image` dtype).
        #[arg(long)]
        key: String,
        /// Episode index.
        #[arg(long)]
        episode: i64,
        /// Frame index within the episode.
        #[arg(long)]
        frame: i64,
        /// Largest distance between the frame's timestamp and the decoded frame, seconds
        /// (LeRobot's `tolerance_s`).
        #[arg(long, default_value_t = roboaudit_data::lerobot::DEFAULT_TOLERANCE_S)]
        tolerance_s: f64,
        /// PNG file to write (must end in .png; not inside the dataset folder; a missing
        /// parent folder is created).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
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
        DataCommand::Frame {
            dir,
            key,
            episode,
            frame,
            tolerance_s,
            out,
        } => export_frame(&dir, &key, episode, frame, tolerance_s, &out),
    }
}

/// `data frame`: options checked before the dataset is read (exit 2), the frame decoded, then
/// the PNG written atomically, so a failing decode leaves nothing at `out`.
fn export_frame(
    dir: &Path,
    key: &str,
    episode: i64,
    frame: i64,
    tolerance_s: f64,
    out: &Path,
) -> Result<()> {
    if !(tolerance_s.is_finite() && tolerance_s > 0.0) {
        return Err(Usage(format!(
            "--tolerance-s {tolerance_s} must be a positive number"
        ))
        .into());
    }
    require_extension("--out", out, "png", "the frame")?;
    if out.is_dir() {
        return Err(Usage(format!(
            "--out {} is a folder; give a file name",
            out.display()
        ))
        .into());
    }
    refuse_inside_dataset("--out", out, dir)?;
    let dataset = LeRobotDataset::open(dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", dir.display()))?;
    let image = dataset.read_frame(episode, frame, key, tolerance_s)?;
    let png = image.to_png().map_err(anyhow::Error::msg)?;
    write_atomic(out, &png)?;
    write_stdout(&format!(
        "episode {episode}, frame {frame} of \"{key}\": {}x{} → {}\n",
        image.width,
        image.height,
        out.display()
    ))
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
    // Output checks before the dataset is read (exit 2): the labels file is CSV (a name like
    // `fit/fqe.json` would replace another command's result with it), and never inside the
    // dataset, where it would be read as data or metadata.
    require_extension("--out", out, "csv", "the labels file")?;
    if out.is_dir() {
        return Err(Usage(format!(
            "--out {} is a folder; give a file name",
            out.display()
        ))
        .into());
    }
    refuse_inside_dataset("--out", out, dir)?;
    crate::output::refuse_foreign_labels("--out", out)?;
    let dataset = LeRobotDataset::open(dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", dir.display()))?;
    check_reward_column(&dataset, &reward)?;
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
    // A missing parent folder is created by the write, as `fqe fit` and `data detect` create
    // theirs.
    write_atomic(out, csv.as_bytes())?;
    let successes = labels.iter().filter(|l| l.success).count();
    write_stdout(&format!(
        "{successes} of {} episodes succeed ({rule} {reward} >= {}); wrote {}\n",
        labels.len(),
        roboaudit_fqe::number::compact(threshold),
        out.display()
    ))
}

/// Refuses a `--reward` that is not a declared numeric scalar column (exit code 2): the column
/// is the user's choice on a readable dataset, so a missing one and one of the wrong width or
/// kind are the same wrong option (like an undeclared `fqe fit --features` key), not a damaged
/// dataset. The message lists the columns that would do.
fn check_reward_column(dataset: &LeRobotDataset, reward: &str) -> Result<()> {
    let scalar =
        |f: &Feature| f.kind == FeatureKind::Numeric && f.shape.iter().product::<usize>() == 1;
    let problem = match dataset.feature(reward) {
        Some(f) if scalar(f) => return Ok(()),
        Some(f) if f.kind != FeatureKind::Numeric => format!(
            "declares column \"{reward}\" with dtype {}; a reward must be a numeric column",
            f.dtype
        ),
        Some(f) => format!(
            "declares column \"{reward}\" with shape {:?} (width {}); a reward must be a scalar column (shape [1])",
            f.shape,
            f.shape.iter().product::<usize>()
        ),
        None => format!("declares no column \"{reward}\""),
    };
    let usable: Vec<&str> = dataset
        .features()
        .iter()
        .filter(|f| scalar(f))
        .map(|f| f.name.as_str())
        .collect();
    let usable = if usable.is_empty() {
        "none".to_owned()
    } else {
        usable.join(", ")
    };
    Err(Usage(format!(
        "--reward {reward}: {} {problem}; numeric scalar columns usable as a reward: {usable}",
        dataset.root().join("meta/info.json").display()
    ))
    .into())
}

/// Writes `text` to stdout as it is (no newline added).
fn write_stdout(text: &str) -> Result<()> {
    out!("{text}")?;
    Ok(())
}
