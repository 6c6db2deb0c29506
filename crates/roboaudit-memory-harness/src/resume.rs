//! Resumable collection: every finished pair is kept on disk as it completes, so a collection
//! stopped by a dead policy server, a timeout or a killed process continues where it stopped
//! and gives the same records, byte for byte, as one uninterrupted run.
//!
//! Layout of `DIR/records.partial/`: `run.json` (the configuration hash of this collection:
//! [`CollectConfig`], the policy's name, memory spec and chunk length, and the caller's policy
//! identity) and, per finished base pair `i`, `pair-{i:06}.parquet` (its records) then
//! `pair-{i:06}.json` (exclusions, hidden deltas, mismatches), both written atomically; a pair
//! counts as finished when its JSON exists. A partial folder of another configuration is
//! refused, never mixed.

use std::path::{Path, PathBuf};

use roboaudit_shard::{JobFiles, config_hash, write_atomic};
use serde::{Deserialize, Serialize};

use crate::collect::{CollectConfig, Collection, PairExclusion, PairPart, assemble, collect_pair};
use crate::error::HarnessError;
use crate::policy::MemoryPolicy;

/// Name of the partial folder inside the output folder.
pub const PARTIAL_DIR: &str = "records.partial";
const RUN_FILE: &str = "run.json";
const SCHEMA: &str = "roboaudit.memory_collect_partial.v1";

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct PartialRun {
    schema: String,
    config_hash: String,
}

/// A pair's part without its records. Hidden deltas are kept as bit patterns so that the
/// resumed manifest equals the uninterrupted one exactly.
#[derive(Debug, Serialize, Deserialize)]
struct PartMeta {
    index: usize,
    excluded: Vec<PairExclusion>,
    max_hidden_delta_bits: [u64; 2],
    world_physics_mismatches: usize,
}

fn job_files(suffix: &str) -> JobFiles {
    JobFiles {
        dir: PARTIAL_DIR.into(),
        prefix: "pair-".into(),
        width: 6,
        suffix: suffix.into(),
    }
}

fn foreign(path: &Path, message: String) -> HarnessError {
    HarnessError::ForeignPartial {
        path: path.display().to_string(),
        message,
    }
}

fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Partial {
        path: path.display().to_string(),
        message: format!("cannot {what}: {e}"),
    }
}

#[derive(Serialize)]
struct Identity<'a, I: Serialize> {
    config: &'a CollectConfig,
    policy: String,
    memory_spec: crate::policy::MemorySpec,
    chunk_len: usize,
    policy_identity: &'a I,
}

/// Claims `out/records.partial/` for this configuration: creates it, or checks that the one
/// there is of the same configuration.
fn claim(out: &Path, hash: &str) -> Result<PathBuf, HarnessError> {
    let dir = out.join(PARTIAL_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, "create the folder", e))?;
    let path = dir.join(RUN_FILE);
    let want = PartialRun {
        schema: SCHEMA.into(),
        config_hash: hash.to_owned(),
    };
    match std::fs::read(&path) {
        Ok(bytes) => {
            let have: PartialRun = serde_json::from_slice(&bytes)
                .map_err(|e| {
                    foreign(
                        &path,
                        format!("it is not a partial memory collection ({e}); delete it or choose a new --out"),
                    )
                })?;
            if have != want {
                return Err(foreign(
                    &path,
                    format!(
                        "it holds a partial collection of another configuration ({}; this run {hash}); rerun with the same settings and policy to resume it, or choose a new --out",
                        have.config_hash
                    ),
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let bytes =
                serde_json::to_vec_pretty(&want).map_err(|e| io_error(&path, "serialize", e))?;
            write_atomic(&path, &bytes).map_err(|(what, e)| io_error(&path, what, e))?;
        }
        Err(e) => return Err(io_error(&path, "read", e)),
    }
    Ok(dir)
}

fn load(out: &Path, index: usize) -> Result<PairPart, HarnessError> {
    let meta_path = out.join(job_files(".json").relative(index));
    let bytes = std::fs::read(&meta_path).map_err(|e| io_error(&meta_path, "read", e))?;
    let meta: PartMeta = serde_json::from_slice(&bytes).map_err(|e| {
        foreign(
            &meta_path,
            format!("it is not a finished pair ({e}); delete it to collect the pair again"),
        )
    })?;
    if meta.index != index {
        return Err(foreign(
            &meta_path,
            format!(
                "it holds pair {}, not pair {index}; delete it to collect the pair again",
                meta.index
            ),
        ));
    }
    let records_path = out.join(job_files(".parquet").relative(index));
    let records = roboaudit_data::read_memory_records(&records_path)?;
    Ok(PairPart {
        index,
        records,
        excluded: meta.excluded,
        max_hidden_delta: meta.max_hidden_delta_bits.map(f64::from_bits),
        world_physics_mismatches: meta.world_physics_mismatches,
    })
}

fn keep(out: &Path, part: &PairPart) -> Result<(), HarnessError> {
    let records_path = out.join(job_files(".parquet").relative(part.index));
    roboaudit_data::write_memory_records(&records_path, &part.records)?;
    let meta = PartMeta {
        index: part.index,
        excluded: part.excluded.clone(),
        max_hidden_delta_bits: part.max_hidden_delta.map(f64::to_bits),
        world_physics_mismatches: part.world_physics_mismatches,
    };
    let meta_path = out.join(job_files(".json").relative(part.index));
    let bytes =
        serde_json::to_vec_pretty(&meta).map_err(|e| io_error(&meta_path, "serialize", e))?;
    write_atomic(&meta_path, &bytes).map_err(|(what, e)| io_error(&meta_path, what, e))
}

/// [`crate::collect`], keeping every finished pair in `out/records.partial/` and taking the
/// pairs already there (see the module docs). `policy_identity` is what else identifies the
/// policy (a built-in's parameters, a served policy's address), hashed with the
/// configuration. `on_pair(done, total)` counts resumed pairs too. The caller writes the
/// result and then removes the partial folder ([`finish`]).
///
/// # Errors
/// As [`crate::collect`]; [`HarnessError::Partial`] for a partial folder of another
/// configuration or one that cannot be read or written; [`HarnessError::Data`] for a kept
/// records file that no longer reads.
pub fn collect_resumable(
    cfg: &CollectConfig,
    policy: &mut dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
    on_pair: &mut dyn FnMut(usize, usize),
) -> Result<(Collection, usize), HarnessError> {
    let task = cfg.validate()?;
    let identity = Identity {
        config: cfg,
        policy: policy.name(),
        memory_spec: policy.memory_spec(),
        chunk_len: policy.chunk_len(),
        policy_identity,
    };
    let hash = config_hash("memory-collect", &identity).map_err(|e| HarnessError::Partial {
        path: out.join(PARTIAL_DIR).display().to_string(),
        message: e.to_string(),
    })?;
    let dir = claim(out, &hash)?;
    let done: Vec<usize> = job_files(".json")
        .present(out)
        .map_err(|e| io_error(&dir, "list", e))?;
    let per_pair = cfg.routes.len().max(1);
    let mut parts = Vec::with_capacity(cfg.pairs);
    let mut resumed = 0;
    for i in 0..cfg.pairs {
        let part = if done.binary_search(&i).is_ok() {
            resumed += 1;
            load(out, i)?
        } else {
            let part = collect_pair(cfg, &task, i, policy)?;
            keep(out, &part)?;
            part
        };
        parts.push(part);
        on_pair((i + 1) * per_pair, cfg.pairs * per_pair);
    }
    Ok((assemble(cfg, policy, parts), resumed))
}

/// Removes `out/records.partial/` once the collection's result is written.
///
/// # Errors
/// [`HarnessError::Partial`] when it cannot be removed.
pub fn finish(out: &Path) -> Result<(), HarnessError> {
    let dir = out.join(PARTIAL_DIR);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(&dir, "remove the folder", e)),
    }
}
