//! `roboaudit testbed …`: render scenes, roll out experts, generate scene sets of the built-in MuJoCo
//! testbed (crate `roboaudit-testbed`).

use anyhow::Result;
use roboaudit_testbed::SceneSetSpec;
use roboaudit_testbed::request::{
    RenderRequest, RequestError, RolloutRequest, SceneDraws, ScenesRequest, render_request,
    rollout_request, scenes_request,
};
use std::path::PathBuf;

use crate::exit::Usage;

/// Scene selection shared by the subcommands.
#[derive(clap::Args, Debug, Clone)]
pub struct SceneArgs {
    /// Layout level 0–3 (0: nominal jitter; 3: large displacement, articulation changes, two obstacles).
    #[arg(long, default_value_t = 0)]
    pub layout_level: u8,
    /// Seed of the layout draw.
    #[arg(long, default_value_t = 0)]
    pub layout_seed: u64,
    /// Appearance draw (0 = canonical).
    #[arg(long, default_value_t = 0)]
    pub appearance_draw: u32,
    /// Seed of the appearance draws.
    #[arg(long, default_value_t = 0)]
    pub appearance_seed: u64,
}

impl SceneArgs {
    fn draws(&self) -> SceneDraws {
        SceneDraws {
            layout_level: self.layout_level,
            layout_seed: self.layout_seed,
            appearance_draw: self.appearance_draw,
            appearance_seed: self.appearance_seed,
        }
    }
}

/// Testbed subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum TestbedCommand {
    /// Render one RGB frame of a task's scene to a PNG file.
    Render {
        /// Task name: stack, door, put_back, swap, rearrange, pick_place:<block>:<tray>, push:<block>:<dir>.
        #[arg(long)]
        task: String,
        #[command(flatten)]
        scene: SceneArgs,
        /// Image side in pixels (16 to 2048; the offscreen framebuffer of software EGL is bounded).
        #[arg(long, default_value_t = 128, value_parser = image_side())]
        size: usize,
        /// Render from the wrist camera instead of the scene camera.
        #[arg(long)]
        wrist: bool,
        /// Expert steps to run before rendering (0 renders the initial state; at most 10,000, past
        /// every task's step limit).
        #[arg(long, default_value_t = 0, value_parser = count(10_000))]
        steps: usize,
        /// Output PNG path.
        #[arg(long)]
        out: PathBuf,
    },
    /// Roll out a policy for several seeded episodes and record them as a LeRobot v3.0 dataset (images as
    /// PNG in Parquet), plus episodes.csv and summary.json.
    Rollout {
        /// Task name (see `render`).
        #[arg(long)]
        task: String,
        /// Policy: only `expert` (the scripted expert) is built in.
        #[arg(long, default_value = "expert")]
        policy: String,
        /// Number of episodes; episode `i` uses seed `seed + i`.
        #[arg(long, default_value_t = 10)]
        episodes: u64,
        /// First seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[command(flatten)]
        scene: SceneArgs,
        /// Expert skill in [0, 1].
        #[arg(long, default_value_t = 1.0)]
        skill: f64,
        /// Expert action noise (m, finite and ≥ 0).
        #[arg(long, default_value_t = 0.0)]
        noise: f64,
        /// Image side in pixels (16 to 2048; the offscreen framebuffer of software EGL is bounded).
        #[arg(long, default_value_t = 128, value_parser = image_side())]
        size: usize,
        /// Also record the wrist camera.
        #[arg(long)]
        wrist: bool,
        /// Only write episodes.csv and summary.json (no images, no dataset).
        #[arg(long)]
        no_record: bool,
        /// Store the cameras as MP4 video (LeRobot's settings: AV1 when libsvtav1 is linked,
        /// else H.264; needs an even --size) instead of PNG bytes in the data file.
        #[arg(long, conflicts_with = "no_record")]
        video: bool,
        /// Output folder (the LeRobot dataset root).
        #[arg(long)]
        out: PathBuf,
    },
    /// Generate a reproducible scene set (base scenes plus appearance-, layout-perturbed and fresh queries).
    Scenes {
        /// Task name (the set is drawn for its object family).
        #[arg(long)]
        task: String,
        /// Master seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Base (library) scenes (at most 100,000).
        #[arg(long, default_value_t = 10, value_parser = count(MAX_SCENES))]
        n_base: usize,
        /// Appearance-perturbed queries (at most 100,000).
        #[arg(long, default_value_t = 16, value_parser = count(MAX_SCENES))]
        n_appearance: usize,
        /// Layout-perturbed queries (at most 100,000).
        #[arg(long, default_value_t = 16, value_parser = count(MAX_SCENES))]
        n_layout: usize,
        /// Fresh queries (at most 100,000).
        #[arg(long, default_value_t = 8, value_parser = count(MAX_SCENES))]
        n_fresh: usize,
        /// Distinct non-canonical appearance draws.
        #[arg(long, default_value_t = 4)]
        n_draws: u32,
        /// Also render the initial frame of every scene to `<DIR>/<scene_id>.png` (scene camera).
        #[arg(long)]
        images: Option<PathBuf>,
        /// Image side in pixels for `--images` (16 to 2048).
        #[arg(long, default_value_t = 128, value_parser = image_side())]
        size: usize,
        /// Output CSV path (`scenes.csv`).
        #[arg(long)]
        out: PathBuf,
    },
}

/// Image sides the offscreen renderer accepts: MuJoCo aborts with a raw framebuffer error (and
/// leaves MUJOCO_LOG.TXT behind) far beyond this.
fn image_side() -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(16..=2048)
}

/// Most scenes of one kind in a scene set: far beyond any audit (seed 000 uses tens), and small
/// enough that the set fits in memory (a scene spec is about 1 kB).
const MAX_SCENES: u64 = 100_000;

/// A count in `0..=max` (a larger one is refused before any allocation).
fn count(max: u64) -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(0..=max)
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
        TestbedCommand::Render {
            task,
            scene,
            size,
            wrist,
            steps,
            out,
        } => {
            crate::paths::require_extension("--out", &out, "png", "the rendered image")?;
            let request = RenderRequest {
                task,
                scene: scene.draws(),
                size,
                wrist,
                steps,
                out,
            };
            let task = render_request(&request).map_err(request_error)?;
            outln!("{}", request.summary(task))?;
            Ok(())
        }
        TestbedCommand::Rollout {
            task,
            policy,
            episodes,
            seed,
            scene,
            skill,
            noise,
            size,
            wrist,
            no_record,
            video,
            out,
        } => {
            crate::output::refuse_out_file(&out)?;
            let request = RolloutRequest {
                task,
                policy,
                episodes,
                seed,
                scene: scene.draws(),
                skill,
                noise,
                size,
                wrist,
                record: !no_record,
                video,
                out,
            };
            let outcome = rollout_request(&request).map_err(request_error)?;
            out!("{}", request.summary(&outcome))?;
            Ok(())
        }
        TestbedCommand::Scenes {
            task,
            seed,
            n_base,
            n_appearance,
            n_layout,
            n_fresh,
            n_draws,
            images,
            size,
            out,
        } => {
            crate::paths::require_extension("--out", &out, "csv", "the scene set")?;
            let request = ScenesRequest {
                task,
                spec: SceneSetSpec {
                    family: roboaudit_testbed::Family::Stack,
                    seed,
                    n_base,
                    n_appearance,
                    n_layout,
                    n_fresh,
                    n_draws,
                },
                images,
                size,
                out,
            };
            let n = scenes_request(&request).map_err(request_error)?;
            outln!("{}", request.summary(n))?;
            Ok(())
        }
    }
}
