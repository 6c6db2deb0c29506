//! `shard.json`: which shard of which configuration a folder holds, and how its job files are named.

use crate::error::{Result, ShardError};
use crate::spec::Shard;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Name of the shard manifest in a shard folder (absent from unsharded and merged run folders).
pub const SHARD_FILE: &str = "shard.json";
/// Schema tag of [`SHARD_FILE`].
pub const SHARD_SCHEMA: &str = "roboaudit.shard.v1";
/// Most jobs a shard manifest may declare (a collection of more would not fit on any cluster
/// this is for: a retrieval part holds hundreds of executions).
pub const MAX_JOBS: usize = 100_000_000;

/// The configuration hash of a collection: `sha256:` + 64 hex digits over the collection's name, a
/// newline and the configuration's JSON (serde field order, so the same configuration value always
/// gives the same hash).
///
/// # Errors
/// [`ShardError::Json`] when the configuration cannot be serialized.
pub fn config_hash(collection: &str, config: &impl Serialize) -> Result<String> {
    let json = serde_json::to_vec(config).map_err(|source| ShardError::Json {
        path: format!("the {collection} configuration"),
        source,
    })?;
    let mut hasher = Sha256::new();
    hasher.update(collection.as_bytes());
    hasher.update(b"\n");
    hasher.update(&json);
    let mut out = String::from("sha256:");
    for b in hasher.finalize() {
        out.push_str(&format!("{b:02x}"));
    }
    Ok(out)
}

/// How job `j`'s file is named inside a run folder: `{dir}/{prefix}{j, zero-padded to width}{suffix}`,
/// e.g. `executions/part-000012.parquet`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobFiles {
    /// Sub-folder of the run folder holding the job files (relative, `/`-separated).
    pub dir: String,
    /// File name before the job number.
    pub prefix: String,
    /// Digits of the zero-padded job number.
    pub width: usize,
    /// File name after the job number.
    pub suffix: String,
    /// Suffixes of further files of each job, beside its job file under the same name stem
    /// (e.g. `.parquet` beside `pair-000003.json`). A collector writes them before the job file,
    /// which marks the job finished; the merge checks and copies them with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<String>,
}

impl JobFiles {
    /// Path of job `job`'s file relative to the run folder.
    pub fn relative(&self, job: usize) -> PathBuf {
        Path::new(&self.dir).join(self.file_name(job))
    }

    /// Paths of all of job `job`'s files relative to the run folder: its companions, in their
    /// order, then its job file.
    pub fn all_relative(&self, job: usize) -> Vec<PathBuf> {
        let stem = format!("{}{:0width$}", self.prefix, job, width = self.width);
        self.companions
            .iter()
            .map(|c| Path::new(&self.dir).join(format!("{stem}{c}")))
            .chain(std::iter::once(self.relative(job)))
            .collect()
    }

    fn file_name(&self, job: usize) -> String {
        format!(
            "{}{:0width$}{}",
            self.prefix,
            job,
            self.suffix,
            width = self.width
        )
    }

    /// The job numbers whose files exist in run folder `root`, ascending. Temporary files of a write
    /// killed before its rename and names that do not re-render exactly (`part-7.parquet`) are
    /// not job files.
    ///
    /// # Errors
    /// [`ShardError::Io`] when the job-file folder exists but cannot be listed.
    pub fn present(&self, root: &Path) -> Result<Vec<usize>> {
        let dir = root.join(&self.dir);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(ShardError::io("list", &dir)(e)),
        };
        let mut jobs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(ShardError::io("list", &dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let job = name
                .strip_prefix(self.prefix.as_str())
                .and_then(|n| n.strip_suffix(self.suffix.as_str()))
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<usize>().ok());
            if let Some(job) = job.filter(|&j| self.file_name(j) == name) {
                jobs.push(job);
            }
        }
        jobs.sort_unstable();
        Ok(jobs)
    }
}

/// Contents of [`SHARD_FILE`]: everything [`crate::merge`] needs to check and merge a shard folder
/// without knowing the collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardManifest {
    /// [`SHARD_SCHEMA`].
    pub schema: String,
    /// The collection kind, e.g. `retrieval-collect`.
    pub collection: String,
    /// [`config_hash`] of the collection's configuration.
    pub config_hash: String,
    /// This folder's shard.
    pub shard: Shard,
    /// Jobs of the whole collection (job files of all shards together).
    pub total_jobs: usize,
    /// How job files are named.
    pub job_files: JobFiles,
    /// Files every shard writes with the same bytes (relative, `/`-separated); the merge copies
    /// them once after checking that all shards agree. A name ending in `/` is a folder whose
    /// files (all of them, at any depth) every shard writes alike, e.g. `policies/`: the trained
    /// checkpoints each shard of a learned-policy collection makes for itself.
    pub shared_files: Vec<String>,
    /// What a job's work is counted in for progress (e.g. `executions`).
    pub unit: String,
    /// Units of the whole collection.
    pub total_units: usize,
    /// Units per job: job `j` holds `min(units_per_job, total_units − j · units_per_job)`.
    pub units_per_job: usize,
}

impl ShardManifest {
    /// Units of work in job `job` (the last job may be short).
    pub fn units_of(&self, job: usize) -> usize {
        self.units_per_job.min(
            self.total_units
                .saturating_sub(job.saturating_mul(self.units_per_job)),
        )
    }

    /// Checks what no collector writes: job numbers past [`MAX_JOBS`], a job-number width past
    /// 12 digits, zero units per job, more units than the jobs hold, and file names that leave
    /// the shard folder (absolute, `..`, or a separator inside a name part).
    fn check(&self) -> std::result::Result<(), String> {
        let f = &self.job_files;
        if self.total_jobs > MAX_JOBS {
            return Err(format!(
                "total_jobs {} is above the {MAX_JOBS} any collection writes",
                self.total_jobs
            ));
        }
        if !(1..=12).contains(&f.width) {
            return Err(format!("job_files.width {} is not in 1..=12", f.width));
        }
        if self.units_per_job == 0
            || self.total_units > self.total_jobs.saturating_mul(self.units_per_job)
        {
            return Err(format!(
                "{} units in {} jobs of {} units each do not fit",
                self.total_units, self.total_jobs, self.units_per_job
            ));
        }
        let inside = |p: &str| {
            let p = Path::new(p);
            !p.as_os_str().is_empty()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        let plain = |n: &str| !n.contains(['/', '\\']) && n != "..";
        let names_ok = plain(&f.prefix)
            && plain(&f.suffix)
            && f.companions.iter().all(|c| plain(c))
            && inside(&f.dir)
            && self.shared_files.iter().all(|p| inside(p));
        if !names_ok {
            return Err(
                "its job or shared file names leave the shard folder (absolute, `..` or a separator in a name part)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Reads `dir/shard.json`; `None` when it does not exist.
    ///
    /// # Errors
    /// [`ShardError::Io`] or [`ShardError::Json`] when it exists but cannot be read or parsed,
    /// [`ShardError::NotAShard`] for another schema or a manifest no collector writes (see
    /// `check`: out-of-range counts, file names outside the folder).
    pub fn read(dir: &Path) -> Result<Option<ShardManifest>> {
        let path = dir.join(SHARD_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ShardError::io("read", &path)(e)),
        };
        let m: ShardManifest =
            serde_json::from_slice(&bytes).map_err(|source| ShardError::Json {
                path: path.display().to_string(),
                source,
            })?;
        if m.schema != SHARD_SCHEMA {
            return Err(ShardError::NotAShard {
                path: path.display().to_string(),
                reason: format!("schema \"{}\", expected \"{SHARD_SCHEMA}\"", m.schema),
            });
        }
        Shard::new(m.shard.index, m.shard.count).map_err(|e| ShardError::NotAShard {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        m.check().map_err(|reason| ShardError::NotAShard {
            path: path.display().to_string(),
            reason,
        })?;
        Ok(Some(m))
    }

    /// Makes `dir` a folder of this shard before a collector writes job files there, or checks that
    /// it already is one (a resumed shard). `wanted` is `None` for an unsharded run, which must not
    /// find a shard manifest; a shard must not find job files without one (an unsharded run's).
    ///
    /// # Errors
    /// [`ShardError::Conflict`] naming what the folder holds instead; I/O errors.
    pub fn claim(dir: &Path, wanted: Option<&ShardManifest>) -> Result<()> {
        let conflict = |reason: String| ShardError::Conflict {
            path: dir.display().to_string(),
            reason,
        };
        match (ShardManifest::read(dir)?, wanted) {
            (None, None) => Ok(()),
            (Some(have), None) => Err(conflict(format!(
                "it holds shard {} of a sharded {} run; resume it with --shard {}, or merge the shards with `roboaudit merge`",
                have.shard, have.collection, have.shard
            ))),
            (Some(have), Some(want)) if &have == want => Ok(()),
            (Some(have), Some(want)) => Err(conflict(if have.config_hash != want.config_hash {
                format!(
                    "it holds a shard of another configuration ({} {}, this run {}); use a new folder",
                    have.collection, have.config_hash, want.config_hash
                )
            } else {
                format!(
                    "it holds shard {}, not {}; each shard needs its own folder",
                    have.shard, want.shard
                )
            })),
            (None, Some(want)) => {
                if !want.job_files.present(dir)?.is_empty() {
                    return Err(conflict(format!(
                        "it holds job files ({}) but no {SHARD_FILE}: an unsharded run; resume it without --shard",
                        want.job_files.dir
                    )));
                }
                write_atomic(&dir.join(SHARD_FILE), &want.to_json()?)
            }
        }
    }

    fn to_json(&self) -> Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(self).map_err(|source| ShardError::Json {
            path: SHARD_FILE.into(),
            source,
        })?;
        v.push(b'\n');
        Ok(v)
    }
}

/// [`crate::write_atomic`] with its failure as a [`ShardError::Io`].
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::atomic::write_atomic(path, bytes)
        .map_err(|(action, source)| ShardError::io(action, path)(source))
}
