//! `memory intervene --shard I/N`: the recipients of an intervention study as a sharded job
//! list. Recipient `i` is job `i`; shard `I/N` runs the recipients with `i mod N = I` and keeps
//! each as `interventions.partial/recipient-{i:06}.json` ([`RecipientPart`], written atomically:
//! a rerun of the shard skips the recipients already there). `interventions.partial/study.json`
//! (the study kind, configuration and policy name) is the same in every shard. `roboaudit merge`
//! copies the parts into one folder and [`finish_merged`] assembles them into the
//! `interventions.json` and `interventions.md` an unsharded run writes, byte for byte: a
//! recipient's continuations depend on the configuration and its index only, and the rates and
//! intervals are computed from all of them at assembly, as the unsharded run does.

use std::path::Path;

use roboaudit_shard::{JobFiles, Shard, ShardManifest, config_hash, write_atomic};
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::intervene::{
    InterventionConfig, RecipientPart, StudyKind, assemble_study, prepare, run_recipient,
};
use crate::policy::MemoryPolicy;

pub use crate::intervene_output::{REPORT_FILE, STUDY_FILE};

/// The collection's name in configuration hashes and shard manifests.
pub const COLLECTION: &str = "memory-intervene";
/// Folder of a shard's recipient parts inside its output folder.
pub const PARTIAL_DIR: &str = "interventions.partial";
const SPEC_FILE: &str = "study.json";

/// What assembling the parts needs besides them (`interventions.partial/study.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StudySpec {
    study: StudyKind,
    config: InterventionConfig,
    policy: String,
}

#[derive(Serialize)]
struct Identity<'a, I: Serialize> {
    spec: &'a StudySpec,
    memory_spec: crate::policy::MemorySpec,
    chunk_len: usize,
    policy_identity: &'a I,
}

/// Recipient `i`'s file, the job file of job `i`.
fn part_files() -> JobFiles {
    JobFiles {
        dir: PARTIAL_DIR.into(),
        prefix: "recipient-".into(),
        width: 6,
        suffix: ".json".into(),
        companions: Vec::new(),
    }
}

fn json_bytes<T: Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, HarnessError> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| HarnessError::partial(path, "serialize", e))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Refuses an unsharded study's output folder that holds a shard of a sharded one (its result
/// would land among the shard's parts).
///
/// # Errors
/// [`HarnessError::Shard`] naming the shard the folder holds.
pub fn refuse_shard_folder(out: &Path) -> Result<(), HarnessError> {
    Ok(ShardManifest::claim(out, None)?)
}

/// What one shard of a study holds after [`run_shard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardRun {
    /// Recipients the shard owns.
    pub owned: usize,
    /// Of them, recipients kept by an earlier, interrupted run of this shard.
    pub resumed: usize,
}

/// Shard `shard` of the `kind` study of `cfg` with `policy`: runs the recipients it owns that
/// are not kept in `out` yet, keeping each as it finishes (see the module docs).
/// `policy_identity` is what else identifies the policy (a built-in's parameters), hashed with
/// the configuration. `on_recipient(done, owned)` counts kept recipients too.
///
/// # Errors
/// As [`crate::intervene::replacement_study`] / [`crate::intervene::restoration_study`];
/// [`HarnessError::Shard`] when `out` holds another shard, another configuration's shard or an
/// unsharded study; [`HarnessError::Partial`] when a file cannot be written.
pub fn run_shard(
    kind: StudyKind,
    cfg: &InterventionConfig,
    policy: &mut dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
    shard: Shard,
    on_recipient: &mut dyn FnMut(usize, usize),
) -> Result<ShardRun, HarnessError> {
    let task = prepare(kind, cfg, policy)?;
    let spec = StudySpec {
        study: kind,
        config: cfg.clone(),
        policy: policy.name(),
    };
    let identity = Identity {
        spec: &spec,
        memory_spec: policy.memory_spec(),
        chunk_len: policy.chunk_len(),
        policy_identity,
    };
    let hash = config_hash(COLLECTION, &identity)?;
    let manifest = ShardManifest {
        schema: roboaudit_shard::SHARD_SCHEMA.into(),
        collection: COLLECTION.into(),
        config_hash: hash,
        shard,
        total_jobs: cfg.episodes,
        job_files: part_files(),
        shared_files: vec![format!("{PARTIAL_DIR}/{SPEC_FILE}")],
        unit: "recipients".into(),
        total_units: cfg.episodes,
        units_per_job: 1,
    };
    let dir = out.join(PARTIAL_DIR);
    std::fs::create_dir_all(&dir)
        .map_err(|e| HarnessError::partial(&dir, "create the folder", e))?;
    ShardManifest::claim(out, Some(&manifest))?;
    let spec_path = dir.join(SPEC_FILE);
    if !spec_path.is_file() {
        let bytes = json_bytes(&spec_path, &spec)?;
        write_atomic(&spec_path, &bytes)
            .map_err(|(what, e)| HarnessError::partial(&spec_path, what, e))?;
    }
    let done = part_files().present(out)?;
    let owned = shard.job_count(cfg.episodes);
    let (mut finished, mut resumed) = (0, 0);
    for i in shard.jobs(cfg.episodes) {
        if done.binary_search(&i).is_ok() {
            resumed += 1;
        } else {
            let part = run_recipient(kind, cfg, &task, i, policy)?;
            let path = out.join(part_files().relative(i));
            let bytes = json_bytes(&path, &part)?;
            write_atomic(&path, &bytes)
                .map_err(|(what, e)| HarnessError::partial(&path, what, e))?;
        }
        finished += 1;
        on_recipient(finished, owned);
    }
    Ok(ShardRun { owned, resumed })
}

/// The merge's finishing step for an intervention study (`roboaudit merge`, through
/// [`roboaudit_shard::merge_with`]): assembles the recipient parts merged into `merged` into
/// [`STUDY_FILE`] and [`REPORT_FILE`], the bytes an unsharded `memory intervene` writes, and
/// removes the parts.
///
/// # Errors
/// [`HarnessError::ForeignPartial`] naming a part or `study.json` that does not read, or a
/// missing recipient; [`HarnessError::Partial`] when a file cannot be written or removed.
pub fn finish_merged(merged: &Path) -> Result<(), HarnessError> {
    let dir = merged.join(PARTIAL_DIR);
    let spec_path = dir.join(SPEC_FILE);
    let read =
        |path: &Path| std::fs::read(path).map_err(|e| HarnessError::partial(path, "read", e));
    let spec: StudySpec = serde_json::from_slice(&read(&spec_path)?).map_err(|e| {
        HarnessError::foreign(
            &spec_path,
            format!("it is not an intervention study's description ({e})"),
        )
    })?;
    let done = part_files().present(merged)?;
    if let Some(i) = (0..spec.config.episodes).find(|i| done.binary_search(i).is_err()) {
        return Err(HarnessError::foreign(
            &merged.join(part_files().relative(i)),
            "the recipient's part is missing; rerun the shard that owns it".into(),
        ));
    }
    let mut parts = Vec::with_capacity(spec.config.episodes);
    for i in 0..spec.config.episodes {
        let path = merged.join(part_files().relative(i));
        let part: RecipientPart = serde_json::from_slice(&read(&path)?).map_err(|e| {
            HarnessError::foreign(
                &path,
                format!("it is not a recipient's part ({e}); delete it and rerun its shard"),
            )
        })?;
        if part.index != i {
            return Err(HarnessError::foreign(
                &path,
                format!(
                    "it holds recipient {}, not {i}; delete it and rerun its shard",
                    part.index
                ),
            ));
        }
        parts.push(part);
    }
    let study = assemble_study(spec.study, &spec.config, parts)?;
    crate::intervene_output::write_study(merged, &study, &spec.policy)?;
    std::fs::remove_dir_all(&dir).map_err(|e| HarnessError::partial(&dir, "remove the folder", e))
}
