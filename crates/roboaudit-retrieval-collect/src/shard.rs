//! Sharding of the execution job list (`--shard I/N`, a Slurm array task per shard): a sharding
//! job is one part file of `config.chunk` executions, so shard `I/N` writes the parts `p` with
//! `p mod N = I`, each with the same rows and bytes as in the unsharded run (part boundaries and
//! episode seeds depend on the config only). `roboaudit merge` puts the parts back together.

use crate::collect::{EXECUTIONS_DIR, MANIFEST_FILE};
use crate::config::CollectConfig;
use crate::error::{CollectError, Result};
use roboaudit_shard::{JobFiles, SHARD_SCHEMA, Shard, ShardManifest, config_hash};

/// The collection name recorded in shard manifests and hashed with the config.
pub const COLLECTION: &str = "retrieval-collect";

/// Files every shard writes with the same bytes (the merge copies them once).
pub const SHARED_FILES: [&str; 4] = [
    MANIFEST_FILE,
    "scenes.csv",
    "experiences.csv",
    "embeddings.parquet",
];

/// How the part files are named: `executions/part-NNNNNN.parquet`.
pub fn part_files() -> JobFiles {
    JobFiles {
        dir: EXECUTIONS_DIR.into(),
        prefix: "part-".into(),
        width: 6,
        suffix: ".parquet".into(),
        companions: Vec::new(),
    }
}

/// Number of part files (sharding jobs) of the complete run.
pub fn part_count(config: &CollectConfig) -> usize {
    config.total_executions().div_ceil(config.chunk)
}

/// The execution range `start..end` of part `part`.
pub fn part_range(config: &CollectConfig, part: usize) -> std::ops::Range<usize> {
    let total = config.total_executions();
    let start = (part * config.chunk).min(total);
    start..(start + config.chunk).min(total)
}

/// The shard manifest of shard `shard` of `config` (configuration hash over the whole config).
/// `own_entries` are the folders the mechanism writes into the run ([`crate::Reuse::own_entries`]:
/// `policies` for a learned one, which every shard trains alike); the merge checks and copies
/// them as shared folders.
///
/// # Errors
/// [`CollectError::Shard`] when the config cannot be hashed.
pub fn shard_manifest(
    config: &CollectConfig,
    shard: Shard,
    own_entries: &[&str],
) -> Result<ShardManifest> {
    Ok(ShardManifest {
        schema: SHARD_SCHEMA.into(),
        collection: COLLECTION.into(),
        config_hash: config_hash(COLLECTION, config)?,
        shard,
        total_jobs: part_count(config),
        job_files: part_files(),
        shared_files: SHARED_FILES
            .iter()
            .map(|s| (*s).to_string())
            .chain(own_entries.iter().map(|e| format!("{e}/")))
            .collect(),
        unit: "executions".into(),
        total_units: config.total_executions(),
        units_per_job: config.chunk,
    })
}

impl From<roboaudit_shard::ShardError> for CollectError {
    fn from(e: roboaudit_shard::ShardError) -> Self {
        match e {
            roboaudit_shard::ShardError::Conflict { path, reason } => {
                CollectError::Resume { path, reason }
            }
            other => CollectError::Shard(other),
        }
    }
}
