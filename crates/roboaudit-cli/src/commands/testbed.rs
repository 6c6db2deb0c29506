//! `roboaudit testbed …`: render scenes, roll out experts, generate scene sets of the built-in MuJoCo
//! testbed (crate `roboaudit-testbed`).

use anyhow::Result;
use roboaudit_data::outpath::first_line;
use roboaudit_testbed::request::{
    RenderRequest, RequestError, RolloutRequest, ScenesRequest, render_request, rollout_request,
    scenes_request,
};
use roboaudit_testbed::scene::SCENE_CSV_COLUMNS;

use crate::exit::Usage;

/// Testbed subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum TestbedCommand {
    /// Render one RGB frame of a task's scene to a PNG file.
    Render(RenderRequest),
    /// Roll out a policy for several seeded episodes and record them as a LeRobot v3.0 dataset (images as
    /// PNG in Parquet), plus episodes.csv and summary.json.
    Rollout(RolloutRequest),
    /// Generate a reproducible scene set (base scenes plus appearance-, layout-perturbed and fresh queries).
    Scenes(ScenesRequest),
}

/// A request's error with its exit code: usage 2 (a testbed error keeps its own kind, which
/// sets the code).
fn request_error(e: RequestError) -> anyhow::Error {
    match e {
        RequestError::Usage(m) => Usage(m).into(),
        RequestError::Testbed(t) => t.into(),
        other => other.into(),
    }
}

/// Runs a testbed subcommand.
pub fn run(cmd: TestbedCommand) -> Result<()> {
    match cmd {
        TestbedCommand::Render(request) => {
            crate::paths::require_extension("--out", &request.out, "png", "the rendered image")?;
            crate::paths::refuse_folder("--out", &request.out)?;
            crate::paths::refuse_inside_any_dataset("--out", &request.out)?;
            let task = render_request(&request).map_err(request_error)?;
            outln!("{}", request.summary(task))?;
            Ok(())
        }
        TestbedCommand::Rollout(request) => {
            crate::output::refuse_out_file(&request.out)?;
            let outcome = rollout_request(&request).map_err(request_error)?;
            out!("{}", request.summary(&outcome))?;
            Ok(())
        }
        TestbedCommand::Scenes(request) => {
            crate::paths::require_extension("--out", &request.out, "csv", "the scene set")?;
            crate::paths::refuse_folder("--out", &request.out)?;
            crate::paths::refuse_inside_any_dataset("--out", &request.out)?;
            if let Some(images) = &request.images {
                crate::paths::refuse_file("--images", images)?;
                crate::paths::refuse_inside_any_dataset("--images", images)?;
            }
            let header = SCENE_CSV_COLUMNS.join(",");
            crate::output::refuse_replacing("--out", &request.out, "a scene set", &|p| {
                std::fs::File::open(p)
                    .ok()
                    .and_then(first_line)
                    .is_some_and(|l| l == header)
            })?;
            let n = scenes_request(&request).map_err(request_error)?;
            outln!("{}", request.summary(n))?;
            Ok(())
        }
    }
}
