//! Observations and training samples: the scene camera rendered at [`RENDER_SIDE`]² and 2×2
//! average-pooled to a [`IMAGE_SIDE`]² RGB image ([`pool_chw`], the pooling `embed`'s policy
//! encoder applies), proprioception and the episode clock; a
//! demonstration's samples come from re-running its demonstrator in its base scene with the
//! recording seed while rendering every step (the simulation is deterministic, so this gives back
//! the recorded demonstration exactly, which is checked).

use roboaudit_retrieval_collect::door_demo::DoorDemo;
use roboaudit_retrieval_collect::{DemoStyle, LibraryItem};
use roboaudit_testbed::{CameraKind, CompiledScene, Episode, EpisodeConfig, Expert, SceneRenderer};

use roboaudit_encoders::policy::pool_chw;

use crate::config::{IMAGE_SIDE, LOW_DIM, RENDER_SIDE, TARGET_DIM};
use crate::error::{PolicyError, Result};

/// What the policy sees at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// `3 · IMAGE_SIDE²` values in `[0, 1]`, channel-major (`[3, 32, 32]`, rows from the top).
    pub image: Vec<f32>,
    /// Tool-centre point position (m), gripper opening in `[0, 1]` and the clock
    /// `step / max_steps` ([`LOW_DIM`] values).
    pub low: [f32; LOW_DIM],
}

/// One behaviour-cloning sample: an observation and the demonstration's commanded pose after the
/// step (`x, y, z` m, yaw rad, gripper in `[-1, 1]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The observation before the step.
    pub obs: Observation,
    /// The target ([`crate::config::TARGET_DIM`] values).
    pub target: [f32; TARGET_DIM],
}

/// The renderer of demonstrations and executions, made on first use (it owns a GL context).
/// Its images depend on the episode only, never on what it rendered before
/// ([`SceneRenderer`]), so one camera can serve every episode of a thread ([`with_camera`]):
/// making a GL context costs Mesa's software driver a shader compilation each time.
#[derive(Debug, Default)]
pub struct Camera {
    renderer: Option<SceneRenderer>,
}

thread_local! {
    static THREAD_CAMERA: std::cell::RefCell<Camera> = std::cell::RefCell::new(Camera::new());
}

/// Runs `f` with this thread's camera (made on first use, kept until the thread ends); a call
/// nested inside `f` gets a camera of its own.
pub fn with_camera<T>(f: impl FnOnce(&mut Camera) -> T) -> T {
    THREAD_CAMERA.with(|cell| match cell.try_borrow_mut() {
        Ok(mut camera) => f(&mut camera),
        Err(_) => f(&mut Camera::new()),
    })
}

impl Camera {
    /// A camera; the GL context is made on first use.
    pub fn new() -> Camera {
        Camera::default()
    }

    /// The observation of `ep`'s present state.
    ///
    /// # Errors
    /// [`PolicyError::Testbed`] when no GL context can be made or rendering fails.
    pub fn observe(&mut self, ep: &mut Episode) -> Result<Observation> {
        let r = match &mut self.renderer {
            Some(r) => r,
            None => self.renderer.insert(SceneRenderer::new(ep, RENDER_SIDE)?),
        };
        let img = r.render(ep, CameraKind::Scene)?;
        let p = ep.proprio();
        let mut low = [0.0f32; LOW_DIM];
        let values = p.ee.pos.iter().chain([&p.gripper]);
        for (l, v) in low.iter_mut().zip(values) {
            *l = *v as f32;
        }
        low[LOW_DIM - 1] = ep.steps() as f32 / ep.task().max_steps() as f32;
        Ok(Observation {
            image: pool_chw(&img.rgb, img.width, img.height, RENDER_SIDE / IMAGE_SIDE),
            low,
        })
    }
}

/// The commanded pose of `ep` after its last step, as a target.
pub fn commanded(ep: &Episode) -> [f32; TARGET_DIM] {
    let w = ep.world();
    let c = w.commanded_tcp();
    [
        c[0] as f32,
        c[1] as f32,
        c[2] as f32,
        w.commanded_rpy()[2] as f32,
        w.gripper_command() as f32,
    ]
}

/// The demonstrator of a library item.
enum Demonstrator {
    Expert(Box<Expert>),
    Door(DoorDemo),
}

impl Demonstrator {
    fn act(&mut self, ep: &Episode) -> roboaudit_testbed::Action {
        match self {
            Demonstrator::Expert(e) => e.act(ep),
            Demonstrator::Door(d) => d.act(ep).0,
        }
    }
}

/// One run of an item's demonstrator: its samples, the commanded tool-centre point after each
/// step (m, world) and whether the task succeeded.
#[derive(Debug, Clone)]
pub struct Rerun {
    /// One sample per step.
    pub samples: Vec<Sample>,
    /// The commanded tool-centre point after each step.
    pub commanded: Vec<[f64; 3]>,
    /// Whether the episode ended in success.
    pub success: bool,
}

/// Runs `item`'s demonstrator in `scene` (a compiled scene of the item's task) with the
/// recording seed until the episode ends, rendering before every step. The demonstrator plans
/// each macro from the state, so in a jittered layout it follows the blocks where they are.
///
/// # Errors
/// Testbed and rendering errors.
pub fn rerun(item: &LibraryItem, scene: &CompiledScene, camera: &mut Camera) -> Result<Rerun> {
    let exp = &item.experience;
    let cfg = EpisodeConfig {
        seed: exp.seed,
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(scene, exp.task, &cfg)?;
    let mut demo = match item.style {
        DemoStyle::Expert(p) => Demonstrator::Expert(Box::new(Expert::new(exp.task, p, exp.seed))),
        DemoStyle::Door(s) => Demonstrator::Door(DoorDemo::new(s)),
    };
    let mut out = Rerun {
        samples: Vec::with_capacity(exp.waypoints.len()),
        commanded: Vec::with_capacity(exp.waypoints.len()),
        success: false,
    };
    while !ep.done() {
        let obs = camera.observe(&mut ep)?;
        let a = demo.act(&ep);
        ep.step(&a)?;
        out.samples.push(Sample {
            obs,
            target: commanded(&ep),
        });
        out.commanded.push(ep.world().commanded_tcp());
    }
    out.success = ep.success();
    Ok(out)
}

/// The samples of `item`'s demonstration: its demonstrator re-run in `base` (the item's compiled
/// base scene) with the recording seed, rendering before every step ([`rerun`]). Checked against
/// the recorded waypoints: same length, same success, commanded path within 1 µm.
///
/// # Errors
/// [`PolicyError::DemoMismatch`] when the re-run differs from the recording; testbed errors.
pub fn demonstration(
    item: &LibraryItem,
    base: &CompiledScene,
    camera: &mut Camera,
) -> Result<Vec<Sample>> {
    let exp = &item.experience;
    let mismatch = |message: String| PolicyError::DemoMismatch {
        experience_id: item.experience_id.clone(),
        message,
    };
    let run = rerun(item, base, camera)?;
    if run.samples.len() != exp.waypoints.len() || run.success != exp.recorded_success {
        return Err(mismatch(format!(
            "{} steps (success {}), recorded {} (success {})",
            run.samples.len(),
            run.success,
            exp.waypoints.len(),
            exp.recorded_success
        )));
    }
    for (i, (c, w)) in run.commanded.iter().zip(&exp.waypoints).enumerate() {
        let anchor = exp
            .base_anchors
            .iter()
            .find(|(a, _)| *a == w.anchor)
            .map_or([0.0; 3], |(_, p)| *p);
        let off = (0..3)
            .map(|k| (c[k] - anchor[k] - w.offset[k]).abs())
            .fold(0.0, f64::max);
        if off > 1e-6 {
            return Err(mismatch(format!(
                "commanded point of step {} is {off:.2e} m off",
                i + 1
            )));
        }
    }
    Ok(run.samples)
}
