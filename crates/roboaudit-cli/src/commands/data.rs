//! `roboaudit data …`: look at datasets before auditing with them.

use std::path::Path;

use anyhow::Result;
use clap::Subcommand;
use roboaudit_data::lerobot::request::{
    FrameRequest, InspectRequest, LabelsRequest, RequestError, frame_request, inspect_request,
    labels_request,
};
use roboaudit_fqe::detector::request::DetectOptions;

use crate::exit::{InvalidInput, Usage};
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
    Inspect(InspectRequest),
    /// Derive an episode labels file (`episode_index`, `success` as 0/1, CSV) from a reward
    /// column, for datasets whose success flag is missing or never set (pusht's per-frame
    /// coverage reward): `--rule max` labels an episode a success when its largest reward
    /// reaches the threshold ("ever reached"), `--rule last` when its last frame's does.
    Labels(LabelsRequest),
    /// Train a success detector on the terminal frames of the episodes a partial labels file
    /// labels, report its accuracy on held-out labelled episodes, and write a full labels file
    /// (given labels kept, the rest predicted) for `fqe fit --labels`.
    Detect(Box<DetectOptions>),
    /// Export one decoded frame of a camera as an 8-bit RGB PNG: a `video` feature's frame
    /// picked for the frame's timestamp as LeRobot's reader picks it, or an `image` feature's
    /// stored PNG decoded and re-encoded (what to look at first when a number looks wrong).
    /// A missing, truncated or undecodable video, or an unknown episode or frame, exits with
    /// code 3 naming file and episode; nothing is written then.
    Frame(FrameRequest),
}

/// Runs a `data` subcommand.
///
/// # Errors
/// The dataset cannot be opened (exit code 3 via `DataError`), the report cannot be
/// serialized, or `--strict` and the report lists problems.
pub fn run(cmd: DataCommand) -> Result<()> {
    match cmd {
        DataCommand::Inspect(request) => {
            let outcome = inspect_request(&request).map_err(request_error)?;
            out!("{}", outcome.text)?;
            outcome
                .refusal
                .map_or(Ok(()), |m| Err(InvalidInput(m).into()))
        }
        DataCommand::Labels(request) => {
            request.validate().map_err(request_error)?;
            // The labels file is CSV (a name like `fit/fqe.json` would replace another
            // command's result with it), and never inside the dataset, where it would be read
            // as data or metadata.
            check_out(&request.out, "csv", "the labels file", &request.dataset)?;
            crate::output::refuse_foreign_labels("--out", &request.out)?;
            let done = labels_request(&request).map_err(request_error)?;
            outln!(
                "{} of {} episodes succeed ({} {} >= {}); wrote {}",
                done.successes,
                done.episodes,
                request.rule.name(),
                request.reward,
                roboaudit_fqe::number::compact(request.threshold),
                request.out.display()
            )?;
            Ok(())
        }
        DataCommand::Detect(options) => super::detect::run(&options),
        DataCommand::Frame(request) => {
            request.validate().map_err(request_error)?;
            check_out(&request.out, "png", "the frame", &request.dataset)?;
            let image = frame_request(&request).map_err(request_error)?;
            out!("{}", request.summary(&image))?;
            Ok(())
        }
    }
}

/// Output checks before the dataset is read (exit code 2): `out` is a file named `*.ext`, not
/// inside the dataset folder `dataset`.
fn check_out(out: &Path, ext: &str, what: &str, dataset: &Path) -> Result<()> {
    require_extension("--out", out, ext, what)?;
    crate::paths::refuse_folder("--out", out)?;
    Ok(refuse_inside_dataset("--out", out, dataset)?)
}

/// A request's error with its exit code: usage 2; a dataset error keeps its own kind, which
/// sets the code (3); the rest 1.
fn request_error(e: RequestError) -> anyhow::Error {
    match e {
        RequestError::Usage(m) => Usage(m).into(),
        RequestError::Open { path, source } => anyhow::Error::from(*source)
            .context(format!("cannot open LeRobot dataset {}", path.display())),
        RequestError::Data(d) => d.into(),
        RequestError::Png(m) => anyhow::Error::msg(m),
        other => other.into(),
    }
}
