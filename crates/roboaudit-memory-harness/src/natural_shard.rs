//! `memory natural --shard I/N`: the episodes of a natural study as a sharded job list. Episode
//! `i` is job `i`; shard `I/N` runs the episodes with `i mod N = I` and keeps each as
//! `natural.partial/episode-{i:06}.json` ([`NaturalPart`], written atomically: a rerun of the
//! shard skips the episodes already there). `natural.partial/study.json` (the configuration and
//! the policy name) is the same in every shard. `roboaudit merge` copies the parts into one
//! folder and [`finish_merged`] assembles them into the `natural.json` and `natural.md` an
//! unsharded run writes, byte for byte: an episode depends on the configuration and its index
//! only (the policy is reset first), and the analysis is computed from all of them at assembly.

use std::path::Path;

use roboaudit_shard::Shard;
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::natural::{NaturalConfig, NaturalEpisode, assemble_study, prepare, run_episode};
use crate::policy::MemoryPolicy;
use crate::shard_parts::PartSet;

pub use crate::natural::{STUDY_FILE, SUMMARY_FILE};
pub use crate::shard_parts::{ShardRun, refuse_shard_folder};

/// The collection's name in configuration hashes and shard manifests.
pub const COLLECTION: &str = "memory-natural";
/// Folder of a shard's episode parts inside its output folder.
pub const PARTIAL_DIR: &str = "natural.partial";

const PARTS: PartSet = PartSet {
    dir: PARTIAL_DIR,
    prefix: "episode-",
    unit: "episode",
    collection: COLLECTION,
    units: "episodes",
};

/// One natural episode as a shard keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaturalPart {
    /// Episode index in `0..episodes`.
    pub index: usize,
    /// The episode's record.
    pub episode: NaturalEpisode,
}

impl crate::shard_parts::UnitPart for NaturalPart {
    fn unit(&self) -> usize {
        self.index
    }
}

/// What assembling the parts needs besides them (`natural.partial/study.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StudySpec {
    config: NaturalConfig,
    policy: String,
}

/// Shard `shard` of the natural study of `cfg` with `policy`: runs the episodes it owns that are
/// not kept in `out` yet, keeping each as it finishes (see the module docs). `policy_identity` is
/// what else identifies the policy (a built-in's parameters, a checkpoint's weights hash), hashed
/// with the configuration. `on_episode(done, owned)` counts kept episodes too.
///
/// # Errors
/// As [`crate::natural::natural_study`]; [`HarnessError::Shard`] when `out` holds another shard,
/// another configuration's shard or an unsharded study; [`HarnessError::Partial`] when a file
/// cannot be written.
pub fn run_shard(
    cfg: &NaturalConfig,
    policy: &mut dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
    shard: Shard,
    on_episode: &mut dyn FnMut(usize, usize),
) -> Result<ShardRun, HarnessError> {
    let task = prepare(cfg)?;
    let spec = StudySpec {
        config: cfg.clone(),
        policy: policy.name(),
    };
    PARTS.run(
        (out, shard),
        (&spec, policy_identity),
        policy,
        cfg.cohort.episodes,
        &mut |i, policy| {
            Ok(NaturalPart {
                index: i,
                episode: run_episode(cfg, &task, i, policy)?,
            })
        },
        on_episode,
    )
}

/// Why the file at `path` is not episode `job`'s part, or `None` when it is: the
/// [`roboaudit_shard::PartCheck`] that `roboaudit status` and `roboaudit merge` apply in each
/// shard folder, so a part [`finish_merged`] could not read is refused before the merge, naming
/// the shard's own file.
#[must_use]
pub fn part_problem(job: usize, path: &Path) -> Option<String> {
    PARTS.problem::<NaturalPart>(job, path)
}

/// The merge's finishing step for a natural study (`roboaudit merge`, through
/// [`roboaudit_shard::merge_with`]): assembles the episode parts merged into `merged` into
/// [`STUDY_FILE`] and [`SUMMARY_FILE`], the bytes an unsharded `memory natural` writes, and
/// removes the parts.
///
/// # Errors
/// [`HarnessError::ForeignPartial`] naming a part or `study.json` that does not read, or a
/// missing episode; [`HarnessError::Partial`] when a file cannot be written or removed;
/// bootstrap errors.
pub fn finish_merged(merged: &Path) -> Result<(), HarnessError> {
    PARTS.finish(
        merged,
        "a natural study",
        |s: &StudySpec| s.config.cohort.episodes,
        |spec, parts: Vec<NaturalPart>| {
            let episodes = parts.into_iter().map(|p| p.episode).collect();
            let study = assemble_study(&spec.config, spec.policy, episodes)?;
            crate::natural::write_study(merged, &study)
        },
    )
}
