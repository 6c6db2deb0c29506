//! The experience library: expert demonstrations recorded in their own base scenes, failed recordings
//! rejected (seed 000 §II, "each experience is an expert demonstration recorded in its base scene";
//! §V: acceptance on the collection scene). Library order is acceptance order, so nested libraries
//! K = 3 ⊂ 10 ⊂ 50 are prefixes.

use crate::config::{AuditTask, CollectConfig};
use crate::door_demo::{DoorDemo, DoorStyle};
use crate::error::{CollectError, Result};
use crate::reuse::{ReplayReuse, Reuse};
use crate::seeding::{rng, uniform};
use rayon::prelude::*;
use roboaudit_testbed::{
    CompiledScene, EpisodeConfig, Experience, ExpertParams, Family, Scene, SceneSet, SceneSetSpec,
};
use serde::{Deserialize, Serialize};

/// How the demonstrator of one candidate behaves.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DemoStyle {
    /// The testbed's scripted expert with per-demonstration skill (grasp and place errors) and noise.
    Expert(ExpertParams),
    /// The styled door demonstrator.
    Door(DoorStyle),
}

/// An accepted library item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryItem {
    /// Identifier in files: `e00`, `e01`, … in library order.
    pub experience_id: String,
    /// Candidate index it was recorded as (its base scene is `b{candidate:02}`).
    pub candidate: usize,
    /// Demonstrator style.
    pub style: DemoStyle,
    /// The recorded demonstration.
    pub experience: Experience,
    /// Its base scene.
    pub base: Scene,
}

/// A recorded library and its acceptance statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Library {
    /// Accepted items in library order.
    pub items: Vec<LibraryItem>,
    /// Recordings tried up to and including the last accepted one.
    pub attempts: usize,
    /// Recordings rejected (`attempts − items.len()`): failed in their own base scene, or
    /// refused by the reuse mechanism there ([`crate::reuse::Reuse::accept`]).
    pub rejected: usize,
    /// Of `rejected`, the successful recordings the reuse mechanism refused (e.g. a policy that
    /// does not reproduce its demonstration in its base scene; 0 for Replay).
    #[serde(default)]
    pub reuse_rejected: usize,
}

impl Library {
    /// Fraction of recordings rejected, in `[0, 1)`; `None` before any attempt.
    pub fn rejection_rate(&self) -> Option<f64> {
        (self.attempts > 0).then(|| self.rejected as f64 / self.attempts as f64)
    }
}

/// Most candidates tried per accepted experience before giving up.
const MAX_ATTEMPTS_PER_ITEM: usize = 4;

/// The style of candidate `c`: Stack experts have skill in `[0.55, 1]` and translation noise in
/// `[0, 2]` mm; door demonstrators draw a [`DoorStyle`].
pub fn style_of(task: AuditTask, seed: u64, c: usize) -> DemoStyle {
    let mut r = rng(seed, "style", c as u64);
    match task {
        AuditTask::Stack => DemoStyle::Expert(ExpertParams {
            skill: uniform(&mut r, 0.55, 1.0),
            noise: uniform(&mut r, 0.0, 0.002),
        }),
        AuditTask::Door => DemoStyle::Door(DoorStyle {
            lateral: uniform(&mut r, -0.12, 0.08),
            depth: uniform(&mut r, 0.01, 0.12),
            height: uniform(&mut r, 0.03, 0.12),
        }),
    }
}

/// Episode seed of the recording of candidate `c`.
pub fn recording_seed(seed: u64, c: usize) -> u64 {
    crate::seeding::mix(seed, "record", c as u64)
}

/// Base scene of candidate `c` (level-0 layout, canonical appearance; `b{c:02}`). Base scenes do not
/// depend on how many candidates exist, so the first ten are those of the query scene set.
///
/// # Errors
/// Testbed errors of scene generation.
pub fn base_scenes(family: Family, seed: u64, n: usize) -> Result<Vec<Scene>> {
    let spec = SceneSetSpec {
        n_base: n,
        n_appearance: 0,
        n_layout: 0,
        n_fresh: 0,
        ..SceneSetSpec::standard(family, seed)
    };
    Ok(SceneSet::generate(&spec)?.base)
}

/// A recorded candidate and whether the reuse mechanism accepted it (`None`: the recording failed).
struct Candidate {
    item: LibraryItem,
    accepted: Option<bool>,
}

fn record_candidate(
    task: AuditTask,
    seed: u64,
    c: usize,
    base: &Scene,
    reuse: &dyn Reuse,
) -> Result<Candidate> {
    let compiled = CompiledScene::new(base, 64)?;
    let cfg = EpisodeConfig {
        seed: recording_seed(seed, c),
        ..EpisodeConfig::default()
    };
    let style = style_of(task, seed, c);
    let experience = match style {
        DemoStyle::Expert(params) => Experience::record(&compiled, task.kind(), &cfg, params)?,
        DemoStyle::Door(s) => {
            let mut demo = DoorDemo::new(s);
            Experience::record_with(&compiled, task.kind(), &cfg, |ep| demo.act(ep))?
        }
    };
    let item = LibraryItem {
        experience_id: String::new(),
        candidate: c,
        style,
        experience,
        base: base.clone(),
    };
    let accepted = if item.experience.recorded_success {
        Some(reuse.accept(&item, &compiled)?)
    } else {
        None
    };
    Ok(Candidate { item, accepted })
}

/// Records candidates in order (in parallel batches) until `config.library` succeed in their base
/// scenes. The result does not depend on the batch size or thread count.
///
/// # Errors
/// [`CollectError::TooManyRejections`] when fewer than `library` of `4 · library` candidates succeed;
/// testbed errors.
pub fn record_library(config: &CollectConfig) -> Result<Library> {
    record_library_with(config, &ReplayReuse(config.mechanism.retarget()))
}

/// [`record_library`] where a successful recording enters the library only when `reuse` accepts
/// it ([`Reuse::accept`], called in parallel over a batch of candidates).
///
/// # Errors
/// As [`record_library`], and the errors of [`Reuse::accept`].
pub fn record_library_with(config: &CollectConfig, reuse: &dyn Reuse) -> Result<Library> {
    config.check()?;
    let pool = config.library;
    let max_attempts = pool * MAX_ATTEMPTS_PER_ITEM;
    let family = config.task.kind().family();
    let bases = base_scenes(family, config.seed, max_attempts)?;
    let mut items: Vec<LibraryItem> = Vec::with_capacity(pool);
    let mut next = 0;
    let mut attempts = 0;
    let mut reuse_rejected = 0;
    while items.len() < pool && next < max_attempts {
        let want = pool - items.len();
        // A little over what is missing, as some recordings fail.
        let end = (next + want + want.div_ceil(4) + 1).min(max_attempts);
        let batch = (next..end)
            .into_par_iter()
            .map(|c| record_candidate(config.task, config.seed, c, &bases[c], reuse))
            .collect::<Result<Vec<_>>>()?;
        for Candidate { item, accepted } in batch {
            if items.len() == pool {
                break;
            }
            attempts = item.candidate + 1;
            match accepted {
                Some(true) => items.push(item),
                Some(false) => reuse_rejected += 1,
                None => {}
            }
        }
        next = end;
    }
    if items.len() < pool {
        return Err(CollectError::TooManyRejections {
            accepted: items.len(),
            attempts: max_attempts,
            pool,
        });
    }
    for (i, item) in items.iter_mut().enumerate() {
        item.experience_id = format!("e{i:02}");
    }
    Ok(Library {
        rejected: attempts - items.len(),
        items,
        attempts,
        reuse_rejected,
    })
}
