//! `roboaudit testbed …`: render scenes, roll out experts, generate scene sets of the built-in MuJoCo
//! testbed (crate `roboaudit-testbed`).

use anyhow::Result;
use roboaudit_testbed::{
    CameraKind, CompiledScene, Episode, EpisodeConfig, Expert, ExpertParams, Perturbation, Scene,
    SceneRenderer, SceneSet, SceneSetSpec, TaskKind,
};
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::exit::Usage;
use crate::output::{ensure_dir, write_atomic};

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
    fn scene(&self, task: TaskKind) -> Result<Scene> {
        Ok(Scene::from_draws(
            task.family(),
            "cli",
            Perturbation::Base,
            self.layout_level,
            self.layout_seed,
            self.appearance_seed,
            self.appearance_draw,
        )?)
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
            let task = TaskKind::parse(&task)?;
            let compiled = CompiledScene::new(&scene.scene(task)?, size)?;
            let mut ep = Episode::new(&compiled, task, &EpisodeConfig::default())?;
            let mut expert = Expert::new(task, ExpertParams::default(), 0);
            for _ in 0..steps {
                let a = expert.act(&ep);
                ep.step(&a)?;
            }
            let mut r = SceneRenderer::new(&ep, size)?;
            let img = r.render(
                &mut ep,
                if wrist {
                    CameraKind::Wrist
                } else {
                    CameraKind::Scene
                },
            )?;
            write_atomic(&out, &img.to_png()?)?;
            outln!("wrote {} ({size}x{size}, {})", out.display(), task.name())?;
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
            // Checked before the scene is compiled or --out created: a bad value must leave
            // nothing behind and say which flag is wrong.
            if policy != "expert" {
                return Err(Usage(format!(
                    "unknown --policy `{policy}` (only `expert` is built in)"
                ))
                .into());
            }
            if video && size % 2 == 1 {
                return Err(Usage(format!(
                    "--video needs an even --size (yuv420p), got {size}"
                ))
                .into());
            }
            if !(0.0..=1.0).contains(&skill) {
                return Err(Usage(format!("--skill must be in [0, 1], got {skill}")).into());
            }
            if !(noise.is_finite() && noise >= 0.0) {
                return Err(
                    Usage(format!("--noise must be finite and ≥ 0 (m), got {noise}")).into(),
                );
            }
            let task = TaskKind::parse(&task)?;
            let compiled = CompiledScene::new(&scene.scene(task)?, size)?;
            // A dataset is never silently replaced by a smaller one.
            if out.join("meta").join("info.json").exists() || out.join("episodes.csv").exists() {
                return Err(crate::exit::Usage(format!(
                    "{} already holds a rollout; choose a new --out or delete it first",
                    out.display()
                ))
                .into());
            }
            ensure_dir(&out)?;
            let mut csv = String::from("episode_index,seed,success,steps\n");
            let mut successes = 0u64;
            let mut records = Vec::new();
            let mut renderer: Option<SceneRenderer> = None;
            for i in 0..episodes {
                // Episode seeds are consecutive; wrapping keeps `--seed u64::MAX` valid.
                let s = seed.wrapping_add(i);
                let cfg = EpisodeConfig {
                    seed: s,
                    ..Default::default()
                };
                let mut ep = Episode::new(&compiled, task, &cfg)?;
                let mut expert = Expert::new(task, ExpertParams { skill, noise }, s);
                if no_record {
                    while !ep.done() {
                        let a = expert.act(&ep);
                        ep.step(&a)?;
                    }
                } else {
                    let r = match renderer.as_mut() {
                        Some(r) => r,
                        None => renderer.insert(SceneRenderer::new(&ep, size)?),
                    };
                    let rec = roboaudit_testbed::record_expert_episode(
                        &mut ep,
                        &mut expert,
                        r,
                        wrist,
                        s,
                    )?;
                    records.push(rec);
                }
                successes += u64::from(ep.success());
                writeln!(csv, "{i},{s},{},{}", u8::from(ep.success()), ep.steps())?;
            }
            if !records.is_empty() {
                let d = roboaudit_testbed::write_lerobot_v3_with(
                    &out,
                    &records,
                    &roboaudit_testbed::WriteOptions { video },
                )?;
                outln!(
                    "recorded {} episodes, {} frames (LeRobot v3.0) in {}",
                    d.episodes,
                    d.frames,
                    out.display()
                )?;
            }
            write_atomic(&out.join("episodes.csv"), csv.as_bytes())?;
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
            outln!(
                "{}: {successes}/{episodes} successes; wrote {}",
                task.name(),
                out.join("episodes.csv").display()
            )?;
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
            let task = TaskKind::parse(&task)?;
            let spec = SceneSetSpec {
                family: task.family(),
                seed,
                n_base,
                n_appearance,
                n_layout,
                n_fresh,
                n_draws,
            };
            let set = SceneSet::generate(&spec)?;
            write_atomic(&out, &roboaudit_testbed::scene::scenes_csv(set.all())?)?;
            if let Some(dir) = &images {
                ensure_dir(dir)?;
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
            }
            let n = set.base.len() + set.queries.len();
            let noun = if n == 1 { "scene" } else { "scenes" };
            outln!("wrote {n} {noun} to {}", out.display())?;
            Ok(())
        }
    }
}
