//! Resumable collection: every finished pair is kept on disk as it completes, so a collection
//! stopped by a dead policy server, a timeout or a killed process continues where it stopped
//! and gives the same records, byte for byte, as one uninterrupted run.
//!
//! Layout of `DIR/records.partial/`: `run.json` (the configuration hash of this collection:
//! [`CollectConfig`], the policy's name, memory spec and chunk length, and the caller's policy
//! identity) and, per finished base pair `i`, `pair-{i:06}.parquet` (its records) then
//! `pair-{i:06}.json` (exclusions, hidden deltas, mismatches), both written atomically; a pair
//! counts as finished when its JSON exists; `collect.json` (the configuration and the policy's
//! name, memory spec and chunk length) lets the pairs be assembled without the policy
//! ([`assemble_kept`]). A partial folder of another configuration is refused, never mixed.
//!
//! Sharded (`--shard I/N`, [`collect_shard`]): the folder also holds `shard.json`
//! ([`roboaudit_shard::ShardManifest`]) and only the pairs `i` with `i mod N = I`; each pair's
//! bytes do not depend on `N`. `roboaudit merge` copies the shards' pairs into one folder, and
//! [`assemble_kept`] turns it into the records and manifest an unsharded run writes, byte for
//! byte.

use std::path::{Path, PathBuf};

use roboaudit_shard::{JobFiles, Shard, ShardManifest, config_hash, write_atomic};
use serde::{Deserialize, Serialize};

use crate::collect::{
    CollectConfig, Collection, PairExclusion, PairPart, assemble, assemble_parts, collect_pair,
};
use crate::error::HarnessError;
use crate::policy::MemoryPolicy;

/// Name of the partial folder inside the output folder.
pub const PARTIAL_DIR: &str = "records.partial";
const RUN_FILE: &str = "run.json";
const COLLECT_FILE: &str = "collect.json";
const SCHEMA: &str = "roboaudit.memory_collect_partial.v1";
/// The collection's name in configuration hashes and shard manifests.
pub const COLLECTION: &str = "memory-collect";

/// What assembling the kept pairs needs besides them (`records.partial/collect.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CollectFile {
    config: CollectConfig,
    policy: String,
    memory_spec: crate::policy::MemorySpec,
    chunk_len: usize,
}

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

/// Pair `i`'s files: `pair-{i:06}.json`, the finished marker, after its `.parquet` records.
fn pair_files() -> JobFiles {
    JobFiles {
        dir: PARTIAL_DIR.into(),
        prefix: "pair-".into(),
        width: 6,
        suffix: ".json".into(),
        companions: vec![".parquet".into()],
    }
}

/// Pair `index`'s records: the `.parquet` companion of its job file.
fn records_file(index: usize) -> PathBuf {
    pair_files().all_relative(index).swap_remove(0)
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
    std::fs::create_dir_all(&dir)
        .map_err(|e| HarnessError::partial(&dir, "create the folder", e))?;
    let path = dir.join(RUN_FILE);
    let want = PartialRun {
        schema: SCHEMA.into(),
        config_hash: hash.to_owned(),
    };
    match std::fs::read(&path) {
        Ok(bytes) => {
            let have: PartialRun = serde_json::from_slice(&bytes)
                .map_err(|e| {
                    HarnessError::foreign(
                        &path,
                        format!("it is not a partial memory collection ({e}); delete it or choose a new --out"),
                    )
                })?;
            if have != want {
                return Err(HarnessError::foreign(
                    &path,
                    format!(
                        "it holds a partial collection of another configuration ({}; this run {hash}); rerun with the same settings and policy to resume it, or choose a new --out",
                        have.config_hash
                    ),
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let bytes = serde_json::to_vec_pretty(&want)
                .map_err(|e| HarnessError::partial(&path, "serialize", e))?;
            write_atomic(&path, &bytes)
                .map_err(|(what, e)| HarnessError::partial(&path, what, e))?;
        }
        Err(e) => return Err(HarnessError::partial(&path, "read", e)),
    }
    Ok(dir)
}

fn load(out: &Path, index: usize) -> Result<PairPart, HarnessError> {
    let meta_path = out.join(pair_files().relative(index));
    let bytes =
        std::fs::read(&meta_path).map_err(|e| HarnessError::partial(&meta_path, "read", e))?;
    let meta = judge_meta(index, &bytes).map_err(|why| {
        HarnessError::foreign(
            &meta_path,
            format!("it {why}; delete it to collect the pair again"),
        )
    })?;
    let records_path = out.join(records_file(index));
    // A pair whose records do not read was cut short or damaged: like a damaged description,
    // it is the input's fault, and the pair can be collected again.
    let records = roboaudit_data::read_memory_records(&records_path).map_err(|e| {
        // The reader's message names this file again; its cause says what is wrong.
        let why = std::error::Error::source(&e)
            .map_or_else(|| e.to_string(), roboaudit_types::error_chain);
        HarnessError::foreign(
            &records_path,
            format!(
                "it does not read ({why}); delete it and {} to collect the pair again",
                meta_path.display()
            ),
        )
    })?;
    Ok(PairPart {
        index,
        records,
        excluded: meta.excluded,
        max_hidden_delta: meta.max_hidden_delta_bits.map(f64::from_bits),
        world_physics_mismatches: meta.world_physics_mismatches,
    })
}

/// Pair `index`'s description from its file's bytes, or why they are not it (a phrase after
/// "it").
fn judge_meta(index: usize, bytes: &[u8]) -> Result<PartMeta, String> {
    let meta: PartMeta =
        serde_json::from_slice(bytes).map_err(|e| format!("is not a finished pair ({e})"))?;
    if meta.index == index {
        Ok(meta)
    } else {
        Err(format!("holds pair {}, not pair {index}", meta.index))
    }
}

/// Why the pair description at `path` (with its records beside it) is not pair `job`'s, or
/// `None` when both read: the [`roboaudit_shard::PartCheck`] that `roboaudit status` and
/// `roboaudit merge` apply in each shard folder of a memory collection, so a pair
/// [`finish_merged`] could not read is refused before the merge, naming the shard's own file.
#[must_use]
pub fn part_problem(job: usize, path: &Path) -> Option<String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    if let Err(why) = judge_meta(job, &bytes) {
        return Some(why);
    }
    let records = path.with_extension("parquet");
    roboaudit_data::read_memory_records(&records)
        .err()
        .map(|e| {
            format!(
                "has records that do not read ({})",
                roboaudit_types::error_chain(&e)
            )
        })
}

fn keep(out: &Path, part: &PairPart) -> Result<(), HarnessError> {
    let records_path = out.join(records_file(part.index));
    roboaudit_data::write_memory_records(&records_path, &part.records)?;
    let meta = PartMeta {
        index: part.index,
        excluded: part.excluded.clone(),
        max_hidden_delta_bits: part.max_hidden_delta.map(f64::to_bits),
        world_physics_mismatches: part.world_physics_mismatches,
    };
    let meta_path = out.join(pair_files().relative(part.index));
    let bytes = serde_json::to_vec_pretty(&meta)
        .map_err(|e| HarnessError::partial(&meta_path, "serialize", e))?;
    write_atomic(&meta_path, &bytes).map_err(|(what, e)| HarnessError::partial(&meta_path, what, e))
}

/// The configuration hash of a collection and what assembling its pairs needs.
fn identify(
    cfg: &CollectConfig,
    policy: &dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
) -> Result<(String, CollectFile), HarnessError> {
    let identity = Identity {
        config: cfg,
        policy: policy.name(),
        memory_spec: policy.memory_spec(),
        chunk_len: policy.chunk_len(),
        policy_identity,
    };
    let hash = config_hash(COLLECTION, &identity).map_err(|e| HarnessError::Partial {
        path: out.join(PARTIAL_DIR).display().to_string(),
        message: e.to_string(),
    })?;
    let info = CollectFile {
        config: cfg.clone(),
        policy: policy.name(),
        memory_spec: policy.memory_spec(),
        chunk_len: policy.chunk_len(),
    };
    Ok((hash, info))
}

/// Writes `collect.json` into the claimed partial folder unless it is there (its content is
/// covered by the configuration hash `run.json` already checked).
fn write_collect_file(dir: &Path, info: &CollectFile) -> Result<(), HarnessError> {
    let path = dir.join(COLLECT_FILE);
    if path.is_file() {
        return Ok(());
    }
    let mut bytes = serde_json::to_vec_pretty(info)
        .map_err(|e| HarnessError::partial(&path, "serialize", e))?;
    bytes.push(b'\n');
    write_atomic(&path, &bytes).map_err(|(what, e)| HarnessError::partial(&path, what, e))
}

/// Collects the pairs `owns` accepts that are not kept yet, keeping each as it finishes, and
/// returns every accepted pair (kept ones loaded) in index order with the number resumed.
fn run_pairs(
    cfg: &CollectConfig,
    policy: &mut dyn MemoryPolicy,
    out: &Path,
    owns: &dyn Fn(usize) -> bool,
    on_pair: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<PairPart>, usize), HarnessError> {
    let task = cfg.validate()?;
    let dir = out.join(PARTIAL_DIR);
    let done: Vec<usize> = pair_files()
        .present(out)
        .map_err(|e| HarnessError::partial(&dir, "list", e))?;
    let per_pair = cfg.routes.len().max(1);
    let owned = (0..cfg.pairs).filter(|&i| owns(i)).count();
    let mut parts = Vec::with_capacity(owned);
    let mut resumed = 0;
    for i in (0..cfg.pairs).filter(|&i| owns(i)) {
        let part = if done.binary_search(&i).is_ok() {
            resumed += 1;
            load(out, i)?
        } else {
            let part = collect_pair(cfg, &task, i, policy)?;
            keep(out, &part)?;
            part
        };
        parts.push(part);
        on_pair(parts.len() * per_pair, owned * per_pair);
    }
    Ok((parts, resumed))
}

/// [`crate::collect`], keeping every finished pair in `out/records.partial/` and taking the
/// pairs already there (see the module docs). `policy_identity` is what else identifies the
/// policy (a built-in's parameters, a served policy's address), hashed with the
/// configuration. `on_pair(done, total)` counts resumed pairs too. The caller writes the
/// result and then removes the partial folder ([`finish`]).
///
/// # Errors
/// As [`crate::collect`]; [`HarnessError::ForeignPartial`] for a partial folder of another
/// configuration; [`HarnessError::Shard`] when `out` is a shard's folder;
/// [`HarnessError::Partial`] when the folder cannot be read or written;
/// [`HarnessError::Data`] for a kept records file that no longer reads.
pub fn collect_resumable(
    cfg: &CollectConfig,
    policy: &mut dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
    on_pair: &mut dyn FnMut(usize, usize),
) -> Result<(Collection, usize), HarnessError> {
    cfg.validate()?;
    let (hash, info) = identify(cfg, policy, policy_identity, out)?;
    ShardManifest::claim(out, None)?;
    let dir = claim(out, &hash)?;
    write_collect_file(&dir, &info)?;
    let (parts, resumed) = run_pairs(cfg, policy, out, &|_| true, on_pair)?;
    Ok((assemble(cfg, policy, parts), resumed))
}

/// What one shard of a collection holds after [`collect_shard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardRun {
    /// Base pairs the shard owns (`i mod N = I` of `0..pairs`).
    pub owned: usize,
    /// Of them, pairs kept by an earlier, interrupted run of this shard.
    pub resumed: usize,
}

/// The shard manifest of shard `shard` of the collection `cfg` with configuration hash `hash`:
/// one job per base pair, counted in routed pairs.
fn shard_manifest(cfg: &CollectConfig, hash: &str, shard: Shard) -> ShardManifest {
    let per_pair = cfg.routes.len().max(1);
    ShardManifest {
        schema: roboaudit_shard::SHARD_SCHEMA.into(),
        collection: COLLECTION.into(),
        config_hash: hash.to_owned(),
        shard,
        total_jobs: cfg.pairs,
        job_files: pair_files(),
        shared_files: vec![
            format!("{PARTIAL_DIR}/{RUN_FILE}"),
            format!("{PARTIAL_DIR}/{COLLECT_FILE}"),
        ],
        unit: "pairs".into(),
        total_units: cfg.pairs * per_pair,
        units_per_job: per_pair,
    }
}

/// Shard `shard` of [`collect_resumable`]: collects only the base pairs `i` with
/// `i mod N = I` into `out/records.partial/` beside a `shard.json`, resumably; nothing is
/// assembled (`roboaudit merge` joins the shards, then [`assemble_kept`]). Each pair's files
/// are the bytes an unsharded run keeps for it.
///
/// # Errors
/// As [`collect_resumable`]; [`HarnessError::Shard`] when `out` holds another shard, another
/// configuration's shard or an unsharded run's pairs.
pub fn collect_shard(
    cfg: &CollectConfig,
    policy: &mut dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
    shard: Shard,
    on_pair: &mut dyn FnMut(usize, usize),
) -> Result<ShardRun, HarnessError> {
    cfg.validate()?;
    let (hash, info) = identify(cfg, policy, policy_identity, out)?;
    std::fs::create_dir_all(out).map_err(|e| HarnessError::partial(out, "create the folder", e))?;
    ShardManifest::claim(out, Some(&shard_manifest(cfg, &hash, shard)))?;
    let dir = claim(out, &hash)?;
    write_collect_file(&dir, &info)?;
    let (parts, resumed) = run_pairs(cfg, policy, out, &|i| shard.owns(i), on_pair)?;
    Ok(ShardRun {
        owned: parts.len(),
        resumed,
    })
}

/// The collection of every pair kept in `out/records.partial/` (a merged sharded run, or an
/// unsharded run whose pairs are all kept), without the policy: its name, memory spec and
/// chunk length come from `collect.json`. Equal to what [`collect_resumable`] returns for the
/// same configuration.
///
/// # Errors
/// [`HarnessError::ForeignPartial`] when `collect.json` is missing or unreadable or a pair is
/// missing (named); [`HarnessError::Data`] for a records file that does not read.
pub fn assemble_kept(out: &Path) -> Result<Collection, HarnessError> {
    let dir = out.join(PARTIAL_DIR);
    let path = dir.join(COLLECT_FILE);
    let bytes = std::fs::read(&path).map_err(|e| {
        HarnessError::foreign(
            &path,
            format!("cannot read it ({e}): not a memory collection's kept pairs"),
        )
    })?;
    let info: CollectFile = serde_json::from_slice(&bytes).map_err(|e| {
        HarnessError::foreign(
            &path,
            format!("it is not a memory collection's description ({e})"),
        )
    })?;
    let done = pair_files()
        .present(out)
        .map_err(|e| HarnessError::partial(&dir, "list", e))?;
    let missing: Vec<usize> = (0..info.config.pairs)
        .filter(|i| done.binary_search(i).is_err())
        .collect();
    if let Some(first) = missing.first() {
        return Err(HarnessError::foreign(
            &dir,
            format!(
                "{} of {} pairs are missing (first: {}); finish the collection (or the shard that owns them) first",
                missing.len(),
                info.config.pairs,
                pair_files().relative(*first).display()
            ),
        ));
    }
    let parts = (0..info.config.pairs)
        .map(|i| load(out, i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(assemble_parts(
        &info.config,
        info.policy,
        info.memory_spec,
        info.chunk_len,
        parts,
    ))
}

/// The merge's finishing step for a memory collection (`roboaudit merge`, through
/// [`roboaudit_shard::merge_with`]): assembles the merged pairs in `merged` into the
/// `records.parquet` and `manifest.json` an unsharded run writes ([`assemble_kept`],
/// [`crate::output::write_collection`]) and removes the pairs.
///
/// # Errors
/// As [`assemble_kept`] and [`crate::output::write_collection`].
pub fn finish_merged(merged: &Path) -> Result<(), HarnessError> {
    let run = assemble_kept(merged)?;
    crate::output::write_collection(merged, &run, None)?;
    Ok(())
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
        Err(e) => Err(HarnessError::partial(&dir, "remove the folder", e)),
    }
}
