//! The pipelines of the `testbed` commands: a rendered frame ([`render_request`]), expert
//! rollouts recorded as a LeRobot v3.0 dataset ([`rollout_request`]) and a scene set with its
//! images ([`scenes_request`]). Each request holds the settings as typed values (the task by
//! name, as typed); option bounds are checked before a scene is compiled or a file written, and
//! every file is written atomically (`roboaudit_data::atomic`). Nothing is printed here.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roboaudit_data::atomic::{WriteError, create_dir, write_atomic};

use crate::error::TestbedError;
use crate::record::{DatasetSummary, WriteOptions, record_expert_episode, write_lerobot_v3_with};
use crate::render::{CameraKind, SceneRenderer};
use crate::scene::{Perturbation, Scene, SceneSet, SceneSetSpec, scenes_csv};
use crate::{CompiledScene, Episode, EpisodeConfig, Expert, ExpertParams, TaskKind};

/// Errors of a testbed request.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting out of range (a wrong option: the message names it).
    #[error("{0}")]
    Usage(String),
    /// The testbed failed (unknown task, invalid parameter, model, rendering, recording).
    #[error(transparent)]
    Testbed(#[from] TestbedError),
    /// An output file could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The rollout summary could not be serialized.
    #[error(transparent)]
    Serialize(#[from] serde_json::Error),
}

/// The layout and appearance draws of a single scene (`scene_id` `cli`, perturbation `base`);
/// each field's documentation is its command-line help.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SceneDraws {
    /// Layout level 0–3 (0: nominal jitter; 3: large displacement, articulation changes, two obstacles).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub layout_level: u8,
    /// Seed of the layout draw.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub layout_seed: u64,
    /// Appearance draw (0 = canonical).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub appearance_draw: u32,
    /// Seed of the appearance draws.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub appearance_seed: u64,
}

/// Image sides the offscreen renderer accepts: MuJoCo aborts with a raw framebuffer error (and
/// leaves MUJOCO_LOG.TXT behind) far beyond this.
#[cfg(feature = "clap")]
pub(crate) fn image_side() -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(16..=2048)
}

/// Most scenes of one kind in a scene set on the command line: far beyond any audit (seed 000
/// uses tens), and small enough that the set fits in memory (a scene spec is about 1 kB).
#[cfg(feature = "clap")]
pub(crate) const MAX_SCENES: u64 = 100_000;

/// A count in `0..=max` (a larger one is refused before any allocation).
#[cfg(feature = "clap")]
pub(crate) fn count(max: u64) -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(0..=max)
}

impl SceneDraws {
    /// The scene of `task`'s object family with these draws ([`Scene::from_draws`]).
    ///
    /// # Errors
    /// [`TestbedError::InvalidParameter`] for a layout level outside 0–3.
    pub fn scene(&self, task: TaskKind) -> Result<Scene, TestbedError> {
        Scene::from_draws(
            task.family(),
            "cli",
            Perturbation::Base,
            self.layout_level,
            self.layout_seed,
            self.appearance_seed,
            self.appearance_draw,
        )
    }
}

/// One RGB frame of a task's scene, after some expert steps (of the default expert, seed 0);
/// the task is parsed by [`TaskKind::parse`]. Each field's documentation is its command-line
/// help.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RenderRequest {
    /// Task name: stack, door, put_back, swap, rearrange, pick_place:<block>:<tray>, push:<block>:<dir>.
    #[cfg_attr(feature = "clap", arg(long))]
    pub task: String,
    #[cfg_attr(feature = "clap", command(flatten))]
    /// The scene's draws.
    pub scene: SceneDraws,
    /// Image side in pixels (16 to 2048; the offscreen framebuffer of software EGL is bounded).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 128, value_parser = image_side()))]
    pub size: usize,
    /// Render from the wrist camera instead of the scene camera.
    #[cfg_attr(feature = "clap", arg(long))]
    pub wrist: bool,
    /// Expert steps to run before rendering (0 renders the initial state; at most 10,000, past
    /// every task's step limit).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0, value_parser = count(10_000)))]
    pub steps: usize,
    /// Output PNG path.
    #[cfg_attr(feature = "clap", arg(long))]
    pub out: PathBuf,
}

/// Renders the frame a request names and writes it to `out` as PNG.
///
/// # Errors
/// [`RequestError::Testbed`] for an unknown task or a failed scene, step or render;
/// [`RequestError::Write`].
pub fn render_request(req: &RenderRequest) -> Result<TaskKind, RequestError> {
    let task = TaskKind::parse(&req.task).map_err(TestbedError::from)?;
    let compiled = CompiledScene::new(&req.scene.scene(task)?, req.size)?;
    let mut ep = Episode::new(&compiled, task, &EpisodeConfig::default())?;
    let mut expert = Expert::new(task, ExpertParams::default(), 0);
    for _ in 0..req.steps {
        let a = expert.act(&ep);
        ep.step(&a)?;
    }
    let mut r = SceneRenderer::new(&ep, req.size)?;
    let camera = if req.wrist {
        CameraKind::Wrist
    } else {
        CameraKind::Scene
    };
    let img = r.render(&mut ep, camera)?;
    write_atomic(&req.out, &img.to_png()?)?;
    Ok(task)
}

/// Seeded expert rollouts of a task, recorded as a LeRobot v3.0 dataset; the task is parsed by
/// [`TaskKind::parse`], episode seeds wrap past `u64::MAX`, and `size` must be even with
/// `video`. Each field's documentation is its command-line help; the expert's defaults are
/// [`ExpertParams::default`]'s.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RolloutRequest {
    /// Task name (see `render`).
    #[cfg_attr(feature = "clap", arg(long))]
    pub task: String,
    /// Policy: only `expert` (the scripted expert) is built in.
    #[cfg_attr(feature = "clap", arg(long, default_value = "expert"))]
    pub policy: String,
    /// Number of episodes; episode `i` uses seed `seed + i`.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10))]
    pub episodes: u64,
    /// First seed.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub seed: u64,
    #[cfg_attr(feature = "clap", command(flatten))]
    /// The scene's draws.
    pub scene: SceneDraws,
    /// Expert skill in [0, 1].
    #[cfg_attr(feature = "clap", arg(long, default_value_t = ExpertParams::default().skill))]
    pub skill: f64,
    /// Expert action noise (m, finite and ≥ 0).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = ExpertParams::default().noise))]
    pub noise: f64,
    /// Image side in pixels (16 to 2048; the offscreen framebuffer of software EGL is bounded).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 128, value_parser = image_side()))]
    pub size: usize,
    /// Also record the wrist camera.
    #[cfg_attr(feature = "clap", arg(long))]
    pub wrist: bool,
    /// Only write episodes.csv and summary.json (no images, no dataset).
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_record: bool,
    /// Store the cameras as MP4 video (LeRobot's settings: AV1 when libsvtav1 is linked,
    /// else H.264; needs an even --size) instead of PNG bytes in the data file.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "no_record"))]
    pub video: bool,
    /// Output folder (the LeRobot dataset root).
    #[cfg_attr(feature = "clap", arg(long))]
    pub out: PathBuf,
}

/// What [`rollout_request`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutOutcome {
    /// The task.
    pub task: TaskKind,
    /// The dataset written (`None` without recording, or with no episode).
    pub dataset: Option<DatasetSummary>,
    /// Successful episodes.
    pub successes: u64,
    /// `OUT/episodes.csv`.
    pub episodes_csv: PathBuf,
}

impl RolloutRequest {
    /// Checks the settings before a scene is compiled or `out` created: a bad value must leave
    /// nothing behind and say which option is wrong.
    ///
    /// # Errors
    /// [`RequestError::Usage`] for no episodes, another policy than `expert`, an odd size with
    /// video, or expert settings out of [`ExpertParams::validate`]'s bounds (a skill outside
    /// `[0, 1]`, a noise not finite and ≥ 0).
    pub fn validate(&self) -> Result<(), RequestError> {
        let usage = |m: String| Err(RequestError::Usage(m));
        if self.episodes == 0 {
            return usage("--episodes must be at least 1".into());
        }
        if self.policy != "expert" {
            return usage(format!(
                "unknown --policy `{}` (only `expert` is built in)",
                self.policy
            ));
        }
        if self.video && self.size % 2 == 1 {
            return usage(format!(
                "--video needs an even --size (yuv420p), got {}",
                self.size
            ));
        }
        // The expert's bounds are its own, named here by their options.
        self.expert()
            .validate()
            .map_err(|e| RequestError::Usage(format!("--{} {}", e.field, e.message)))
    }

    /// The expert's settings.
    #[must_use]
    pub fn expert(&self) -> ExpertParams {
        ExpertParams {
            skill: self.skill,
            noise: self.noise,
        }
    }
}

/// Rolls out the expert for every episode and writes `out`: the LeRobot v3.0 dataset (when
/// recording), `episodes.csv` (`episode_index,seed,success,steps`) and `summary.json` (task,
/// instruction, episodes, successes, success rate or null). A folder that already holds a
/// rollout is refused, never replaced by a smaller one.
///
/// # Errors
/// [`RequestError::Usage`] from [`RolloutRequest::validate`] or for an `out` that holds a
/// rollout or any other file; [`RequestError::Testbed`] for an unknown task or a failed episode, render or
/// recording; [`RequestError::Write`] and [`RequestError::Serialize`] for the files.
pub fn rollout_request(req: &RolloutRequest) -> Result<RolloutOutcome, RequestError> {
    req.validate()?;
    let task = TaskKind::parse(&req.task).map_err(TestbedError::from)?;
    let out = &req.out;
    if out.join("meta").join("info.json").exists() || out.join("episodes.csv").exists() {
        return Err(RequestError::Usage(format!(
            "{} already holds a rollout; choose a new --out or delete it first",
            out.display()
        )));
    }
    // The dataset's meta/, data/ and videos/ would land among files of something else.
    if std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(RequestError::Usage(format!(
            "{} is a folder that is not empty; a rollout is written into a new or empty folder",
            out.display()
        )));
    }
    let compiled = CompiledScene::new(&req.scene.scene(task)?, req.size)?;
    create_dir(out)?;
    let mut csv = String::from("episode_index,seed,success,steps\n");
    let mut successes = 0u64;
    let mut records = Vec::new();
    let mut renderer: Option<SceneRenderer> = None;
    let params = req.expert();
    for i in 0..req.episodes {
        // Episode seeds are consecutive; wrapping keeps a seed of u64::MAX valid.
        let s = req.seed.wrapping_add(i);
        let cfg = EpisodeConfig {
            seed: s,
            ..Default::default()
        };
        let mut ep = Episode::new(&compiled, task, &cfg)?;
        let mut expert = Expert::new(task, params, s);
        if !req.no_record {
            let r = match renderer.as_mut() {
                Some(r) => r,
                None => renderer.insert(SceneRenderer::new(&ep, req.size)?),
            };
            records.push(record_expert_episode(
                &mut ep,
                &mut expert,
                r,
                req.wrist,
                s,
            )?);
        } else {
            while !ep.done() {
                let a = expert.act(&ep);
                ep.step(&a)?;
            }
        }
        successes += u64::from(ep.success());
        let _ = writeln!(csv, "{i},{s},{},{}", u8::from(ep.success()), ep.steps());
    }
    let dataset = if records.is_empty() {
        None
    } else {
        Some(write_lerobot_v3_with(
            out,
            &records,
            &WriteOptions { video: req.video },
        )?)
    };
    let episodes_csv = out.join("episodes.csv");
    write_atomic(&episodes_csv, csv.as_bytes())?;
    let episodes = req.episodes;
    let summary = serde_json::json!({
        "task": task.name(),
        "instruction": task.instruction(),
        "episodes": episodes,
        "successes": successes,
        "success_rate": if episodes > 0 { Some(successes as f64 / episodes as f64) } else { None },
    });
    write_atomic(
        &out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?.as_bytes(),
    )?;
    Ok(RolloutOutcome {
        task,
        dataset,
        successes,
        episodes_csv,
    })
}

/// A reproducible scene set ([`SceneSet::generate`]) and optionally its initial frames: the
/// spec's `family` is replaced by the task's, and `images` (if any) is the folder for
/// `<scene_id>.png` of every scene's initial frame (scene camera). Each field's documentation is
/// its command-line help.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ScenesRequest {
    /// Task name (the set is drawn for its object family).
    #[cfg_attr(feature = "clap", arg(long))]
    pub task: String,
    #[cfg_attr(feature = "clap", command(flatten))]
    /// The set's sizes and seed.
    pub spec: SceneSetSpec,
    /// Also render the initial frame of every scene to `<DIR>/<scene_id>.png` (scene camera).
    #[cfg_attr(feature = "clap", arg(long))]
    pub images: Option<PathBuf>,
    /// Image side in pixels for `--images` (16 to 2048).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 128, value_parser = image_side()))]
    pub size: usize,
    /// Output CSV path (`scenes.csv`). An existing file is replaced only when it is a scene set
    /// and not in a run folder.
    #[cfg_attr(feature = "clap", arg(long))]
    pub out: PathBuf,
}

/// Generates the scene set a request names, writes it to `out` as CSV ([`scenes_csv`]) and,
/// with `images`, each scene's initial frame. Returns the number of scenes.
///
/// # Errors
/// [`RequestError::Usage`] when every scene count is 0; [`RequestError::Testbed`] for an
/// unknown task, an invalid set or a failed render; [`RequestError::Write`].
pub fn scenes_request(req: &ScenesRequest) -> Result<usize, RequestError> {
    let s = &req.spec;
    if s.n_base + s.n_appearance + s.n_layout + s.n_fresh == 0 {
        return Err(RequestError::Usage(
            "--n-base, --n-appearance, --n-layout and --n-fresh are all 0: the scene set would be empty"
                .into(),
        ));
    }
    let task = TaskKind::parse(&req.task).map_err(TestbedError::from)?;
    let spec = SceneSetSpec {
        family: task.family(),
        ..req.spec
    };
    let set = SceneSet::generate(&spec)?;
    write_atomic(&req.out, &scenes_csv(set.all())?)?;
    if let Some(dir) = &req.images {
        write_images(&set, task, req.size, dir)?;
    }
    Ok(set.base.len() + set.queries.len())
}

fn write_images(
    set: &SceneSet,
    task: TaskKind,
    size: usize,
    dir: &Path,
) -> Result<(), RequestError> {
    create_dir(dir)?;
    let mut renderer: Option<SceneRenderer> = None;
    for sc in set.all() {
        let compiled = CompiledScene::new(sc, size)?;
        let mut ep = Episode::new(&compiled, task, &EpisodeConfig::default())?;
        let r = match renderer.as_mut() {
            Some(r) => r,
            None => renderer.insert(SceneRenderer::new(&ep, size)?),
        };
        let img = r.render(&mut ep, CameraKind::Scene)?;
        write_atomic(&dir.join(format!("{}.png", sc.scene_id)), &img.to_png()?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> RolloutRequest {
        RolloutRequest {
            task: "stack".into(),
            policy: "expert".into(),
            episodes: 1,
            seed: 0,
            scene: SceneDraws::default(),
            skill: 1.0,
            noise: 0.0,
            size: 64,
            wrist: false,
            no_record: false,
            video: false,
            out: PathBuf::from("out"),
        }
    }

    /// Each bound is a usage error naming its option, found before anything is compiled.
    #[test]
    fn rollout_settings_are_checked_by_their_bounds() {
        request().validate().unwrap();
        let cases = [
            (
                RolloutRequest {
                    policy: "x".into(),
                    ..request()
                },
                "--policy",
            ),
            (
                RolloutRequest {
                    video: true,
                    size: 65,
                    ..request()
                },
                "--video",
            ),
            (
                RolloutRequest {
                    skill: 1.5,
                    ..request()
                },
                "--skill",
            ),
            (
                RolloutRequest {
                    noise: f64::NAN,
                    ..request()
                },
                "--noise",
            ),
        ];
        for (req, flag) in cases {
            match req.validate() {
                Err(RequestError::Usage(m)) => assert!(m.contains(flag), "{m}"),
                other => panic!("{flag}: {other:?}"),
            }
        }
    }
}
