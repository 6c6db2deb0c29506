//! The `policy` and `policy-dr` mechanisms of `retrieval collect` (seed 000 §II "Policy",
//! "Policy+DR", §VII): each candidate whose recording succeeded gets a policy trained on its own
//! demonstration (for `policy-dr`, with its domain-randomized re-runs, [`crate::dr`]), saved under
//! `RUN/policies/cNNN/` (candidate index); the policy is run once in its own base scene with the
//! recording seed, and a policy that does not reproduce its demonstration there is rejected like
//! a failed recording. Accepted experiences are executed closed loop, rendering every step.
//! `collect.json` records, under `reuse`, every trained policy's folder, the SHA-256 of its
//! weights and config, its final training loss and own-base check, and which mechanism trained
//! them.
//!
//! A resumed run finds the checkpoints already written: one whose config is what this run would
//! train is loaded instead of trained again (training is deterministic, so the bytes are the
//! same either way). A checkpoint whose files no longer hash to what `collect.json` recorded
//! for it is refused: the executions on file were made with the recorded weights.
//!
//! Demonstrations and executions render through their thread's camera
//! ([`crate::frames::with_camera`]): the testbed's renderer draws each episode as a fresh one
//! would (tested), and a GL context per execution cost about a third of the CPU time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use roboaudit_retrieval_collect::seeding::mix;
use roboaudit_retrieval_collect::{CollectError, Library, LibraryItem, Representation, Reuse};
use roboaudit_testbed::{CompiledScene, EpisodeConfig};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{file_sha256, load, save};
use crate::config::{CONFIG_FILE, TrainConfig, WEIGHTS_FILE};
use crate::dr::dr_demonstrations;
use crate::error::PolicyError;
use crate::frames::{demonstration, with_camera};
use crate::policy::ImagePolicy;
use crate::train::{Provenance, Trained, train};

/// Folder of a run holding the policy checkpoints.
pub const POLICIES_DIR: &str = "policies";
/// Name in `embeddings.parquet` of the policy-encoder representation of a `policy-dr` run: the
/// visual feature of the first library experience's (`e00`) Policy+DR network on each scene's
/// first image (README: why this one); `roboaudit embed -r policy_encoder:RUN/policies/cNNN`
/// computes the same vectors from images.
pub use roboaudit_encoders::policy::POLICY_ENCODER;

fn collect_err(e: PolicyError) -> CollectError {
    match e {
        PolicyError::Testbed(t) => CollectError::Testbed(t),
        other => CollectError::Reuse(Box::new(other)),
    }
}

/// One trained policy as `collect.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyRecord {
    /// Candidate index (base scene `b{candidate:02}`).
    pub candidate: usize,
    /// Library id (`e00`, …) when accepted, `None` when rejected or beyond the pool.
    pub experience_id: Option<String>,
    /// Checkpoint folder relative to the run folder (`policies/c003`).
    pub dir: String,
    /// SHA-256 of `model.safetensors`.
    pub weights_sha256: String,
    /// SHA-256 of `config.json`.
    pub config_sha256: String,
    /// Training samples (demonstration steps).
    pub samples: usize,
    /// Final mean squared error of the normalized targets.
    pub final_loss: f64,
    /// Whether the policy reproduced its demonstration's success in its own base scene with the
    /// recording seed (false: rejected).
    pub own_base_success: bool,
}

/// What `collect.json` records under `reuse` for the policy mechanism.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyManifest {
    /// The mechanism that trained the policies: `policy`, or `policy-dr` (the domain
    /// randomization is in `train.dr`).
    pub mechanism: String,
    /// Network sizes and training settings shared by every policy (each policy's seed is
    /// derived from the master seed and its candidate index).
    pub train: TrainConfig,
    /// Every trained policy in candidate order, accepted or rejected.
    pub policies: Vec<PolicyRecord>,
    /// Successful recordings whose policy failed in its own base scene.
    pub rejected: usize,
}

#[derive(Debug, Clone)]
struct Entry {
    policy: ImagePolicy,
    own_base_success: bool,
}

/// The `policy` (or, with [`TrainConfig::dr`], `policy-dr`) reuse mechanism of one run folder.
#[derive(Debug)]
pub struct PolicyReuse {
    run: PathBuf,
    train: TrainConfig,
    master_seed: u64,
    entries: Mutex<BTreeMap<usize, Entry>>,
    /// Per candidate, the (weights, config) SHA-256 an earlier run of this folder recorded.
    recorded: BTreeMap<usize, (String, String)>,
}

impl PolicyReuse {
    /// The mechanism for run folder `run` with master seed `master_seed` (the collection's
    /// `seed`) and training settings `train` (its `seed` is replaced per candidate by
    /// `mix(master_seed, mechanism, candidate)`, the mechanism being [`PolicyReuse::mechanism`]).
    ///
    /// # Errors
    /// [`PolicyError::InvalidConfig`] for training settings out of range.
    pub fn new(
        run: &Path,
        master_seed: u64,
        train: TrainConfig,
    ) -> Result<PolicyReuse, PolicyError> {
        train.validate()?;
        Ok(PolicyReuse {
            run: run.to_path_buf(),
            train: TrainConfig { seed: 0, ..train },
            master_seed,
            entries: Mutex::new(BTreeMap::new()),
            recorded: recorded_hashes(run),
        })
    }

    /// `policy-dr` when the training settings randomize the demonstrations, else `policy`.
    pub fn mechanism(&self) -> &'static str {
        if self.train.dr.is_some() {
            "policy-dr"
        } else {
            "policy"
        }
    }

    fn dir_of(candidate: usize) -> String {
        format!("{POLICIES_DIR}/c{candidate:03}")
    }

    fn policy_of(
        &self,
        item: &LibraryItem,
        base: &CompiledScene,
    ) -> Result<ImagePolicy, PolicyError> {
        let cfg = TrainConfig {
            seed: mix(self.master_seed, self.mechanism(), item.candidate as u64),
            ..self.train.clone()
        };
        let prov = Provenance {
            task: item.experience.task.name(),
            base_scene_id: item.base.scene_id.clone(),
            recording_seed: item.experience.seed,
        };
        let dir = self.run.join(Self::dir_of(item.candidate));
        let policy = if let Some(t) = matching_checkpoint(&dir, &cfg, &prov) {
            ImagePolicy::new(t)
        } else {
            let samples = match &cfg.dr {
                Some(dr) => dr_demonstrations(item, base, dr, cfg.seed)?.samples,
                None => with_camera(|camera| demonstration(item, base, camera))?,
            };
            let trained = train(&samples, &cfg, &prov, &mut |_, _| {})?;
            save(&dir, &trained)?;
            ImagePolicy::new(trained)
        };
        self.check_recorded(item.candidate, &dir)?;
        Ok(policy)
    }

    /// Refuses a checkpoint whose files no longer hash to what an earlier run of this folder
    /// recorded for `candidate` (one retrained after damage gives the recorded bytes again:
    /// training is deterministic).
    fn check_recorded(&self, candidate: usize, dir: &Path) -> Result<(), PolicyError> {
        let Some((weights, config)) = self.recorded.get(&candidate) else {
            return Ok(());
        };
        for (name, want) in [(WEIGHTS_FILE, weights), (CONFIG_FILE, config)] {
            let got = file_sha256(dir, name)?;
            if got != *want {
                return Err(PolicyError::checkpoint(
                    &dir.join(name),
                    format!(
                        "changed since collect.json recorded it (sha256 {got}, recorded {want}); the executions on file were made with the recorded one: restore it, or collect into a new folder"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The policy trained (or loaded) for `candidate` by [`Reuse::accept`].
    fn trained_policy(&self, candidate: usize) -> Result<ImagePolicy, CollectError> {
        self.entries
            .lock()
            .map_err(|_| collect_err(poisoned()))?
            .get(&candidate)
            .map(|e| e.policy.clone())
            .ok_or_else(|| {
                collect_err(PolicyError::InvalidConfig(format!(
                    "no trained policy for candidate {candidate}"
                )))
            })
    }

    /// The records of every trained policy in candidate order, with the library ids of
    /// `library`'s accepted items.
    ///
    /// # Errors
    /// [`PolicyError::Checkpoint`] when a checkpoint file cannot be read for its hash.
    pub fn records(&self, library: &Library) -> Result<PolicyManifest, PolicyError> {
        let entries = self.entries.lock().map_err(|_| poisoned())?;
        let mut policies = Vec::with_capacity(entries.len());
        for (&c, e) in entries.iter() {
            let dir = Self::dir_of(c);
            let full = self.run.join(&dir);
            policies.push(PolicyRecord {
                candidate: c,
                experience_id: library
                    .items
                    .iter()
                    .find(|it| it.candidate == c)
                    .map(|it| it.experience_id.clone()),
                weights_sha256: file_sha256(&full, WEIGHTS_FILE)?,
                config_sha256: file_sha256(&full, CONFIG_FILE)?,
                dir,
                samples: e.policy.trained().config.samples,
                final_loss: e.policy.trained().config.final_loss,
                own_base_success: e.own_base_success,
            });
        }
        // Only candidates up to the last one the library examined count as rejections.
        let rejected = policies
            .iter()
            .filter(|p| !p.own_base_success && p.candidate < library.attempts)
            .count();
        Ok(PolicyManifest {
            mechanism: self.mechanism().into(),
            train: self.train.clone(),
            policies,
            rejected,
        })
    }
}

/// The checkpoint in `dir` when it loads and is what training with `cfg` on the demonstration
/// `prov` would give: the same training settings (so the same mechanism: a Policy checkpoint
/// has no [`TrainConfig::dr`], a Policy+DR one has the randomization it was trained with), task,
/// base scene and recording seed. `None` means train.
fn matching_checkpoint(dir: &Path, cfg: &TrainConfig, prov: &Provenance) -> Option<Trained> {
    if !dir.join(CONFIG_FILE).is_file() {
        return None;
    }
    let t = load(dir).ok()?;
    let c = &t.config;
    (c.train == *cfg
        && c.base_scene_id == prov.base_scene_id
        && c.recording_seed == prov.recording_seed
        && c.task == prov.task)
        .then_some(t)
}

/// The checkpoint hashes `run/collect.json` recorded under `reuse` (none without the file, or
/// for a file this mechanism did not write: the collection refuses that folder itself).
fn recorded_hashes(run: &Path) -> BTreeMap<usize, (String, String)> {
    let Ok(bytes) = std::fs::read(run.join(roboaudit_retrieval_collect::MANIFEST_FILE)) else {
        return BTreeMap::new();
    };
    serde_json::from_slice::<roboaudit_retrieval_collect::Manifest>(&bytes)
        .ok()
        .and_then(|m| m.reuse)
        .and_then(|r| serde_json::from_value::<PolicyManifest>(r).ok())
        .map(|m| {
            m.policies
                .into_iter()
                .map(|p| (p.candidate, (p.weights_sha256, p.config_sha256)))
                .collect()
        })
        .unwrap_or_default()
}

/// Channel-interleaved `h × w × 3` values (a `pixels32` vector, rows from the top) as the
/// policy's channel-major `3 × h × w` input.
fn channel_major(hwc: &[f32]) -> Vec<f32> {
    let px = hwc.len() / 3;
    let mut out = vec![0.0f32; hwc.len()];
    for (i, rgb) in hwc.chunks_exact(3).enumerate() {
        for (c, v) in rgb.iter().enumerate() {
            out[c * px + i] = *v;
        }
    }
    out
}

fn poisoned() -> PolicyError {
    PolicyError::InvalidConfig("a collection thread panicked while holding the policies".into())
}

impl Reuse for PolicyReuse {
    fn accept(&self, item: &LibraryItem, base: &CompiledScene) -> Result<bool, CollectError> {
        let policy = self.policy_of(item, base).map_err(collect_err)?;
        let cfg = EpisodeConfig {
            seed: item.experience.seed,
            ..EpisodeConfig::default()
        };
        let ok = with_camera(|camera| policy.execute(base, item.experience.task, &cfg, camera))
            .map_err(collect_err)?;
        self.entries
            .lock()
            .map_err(|_| collect_err(poisoned()))?
            .insert(
                item.candidate,
                Entry {
                    policy,
                    own_base_success: ok,
                },
            );
        Ok(ok)
    }

    fn execute(
        &self,
        item: &LibraryItem,
        scene: &CompiledScene,
        cfg: &EpisodeConfig,
    ) -> Result<bool, CollectError> {
        let policy = self.trained_policy(item.candidate)?;
        with_camera(|camera| policy.execute(scene, item.experience.task, cfg, camera))
            .map_err(collect_err)
    }

    fn own_entries(&self) -> &'static [&'static str] {
        &[POLICIES_DIR]
    }

    fn representations(
        &self,
        library: &Library,
        experiences: &[Vec<f32>],
        scenes: &[Vec<f32>],
    ) -> Result<Vec<Representation>, CollectError> {
        let Some(first) = library.items.first() else {
            return Ok(Vec::new());
        };
        if self.train.dr.is_none() {
            return Ok(Vec::new());
        }
        let policy = self.trained_policy(first.candidate)?;
        let encode = |images: &[Vec<f32>]| -> Result<Vec<Vec<f32>>, CollectError> {
            images
                .iter()
                .map(|img| policy.encode(&channel_major(img)).map_err(collect_err))
                .collect()
        };
        Ok(vec![Representation {
            name: POLICY_ENCODER.into(),
            experiences: encode(experiences)?,
            scenes: encode(scenes)?,
        }])
    }

    fn manifest(&self, library: &Library) -> Result<Option<serde_json::Value>, CollectError> {
        let m = self.records(library).map_err(collect_err)?;
        serde_json::to_value(&m)
            .map(Some)
            .map_err(|e| collect_err(PolicyError::InvalidConfig(e.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LOW_DIM, TARGET_DIM, dr_for_task};
    use crate::frames::{Observation, Sample};

    fn tiny(cfg: &TrainConfig, prov: &Provenance) -> Trained {
        let samples: Vec<Sample> = (0..6)
            .map(|i| Sample {
                obs: Observation {
                    image: vec![i as f32 / 6.0; 3 * 32 * 32],
                    low: [i as f32; LOW_DIM],
                },
                target: [i as f32; TARGET_DIM],
            })
            .collect();
        train(&samples, cfg, prov, &mut |_, _| {}).unwrap()
    }

    #[test]
    fn pixels32_vectors_become_channel_major_images() {
        // Two pixels (r, g, b) = (1, 2, 3) and (4, 5, 6): the reds, then the greens, the blues.
        assert_eq!(
            channel_major(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
    }

    #[test]
    fn a_checkpoint_of_one_mechanism_is_not_loaded_for_the_other() {
        let policy = TrainConfig {
            steps: 2,
            seed: 5,
            channels: [2, 2],
            feature: 4,
            hidden: 4,
            ..TrainConfig::default()
        };
        let dr = TrainConfig {
            batch: Some(4),
            dr: Some(dr_for_task("stack")),
            ..policy.clone()
        };
        let prov = Provenance {
            task: "stack".into(),
            base_scene_id: "b00".into(),
            recording_seed: 3,
        };
        for (trained_with, asked) in [(&policy, &dr), (&dr, &policy)] {
            let tmp = tempfile::tempdir().unwrap();
            save(tmp.path(), &tiny(trained_with, &prov)).unwrap();
            assert!(matching_checkpoint(tmp.path(), trained_with, &prov).is_some());
            assert!(
                matching_checkpoint(tmp.path(), asked, &prov).is_none(),
                "a checkpoint trained with dr {:?} was loaded for dr {:?}",
                trained_with.dr,
                asked.dr
            );
        }
        // Other settings of the randomization are another training too.
        let tmp = tempfile::tempdir().unwrap();
        save(tmp.path(), &tiny(&dr, &prov)).unwrap();
        let mut fewer = dr.clone();
        if let Some(d) = fewer.dr.as_mut() {
            d.draws = 1;
        }
        assert!(matching_checkpoint(tmp.path(), &fewer, &prov).is_none());
    }
}
