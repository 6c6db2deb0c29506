//! `collect.json`: what a run folder was collected with, the library's acceptance statistics and
//! each experience's demonstrator. A resumed run must find the same config here.

use crate::config::CollectConfig;
use crate::error::{CollectError, Result};
use crate::library::{DemoStyle, Library};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Schema tag of `collect.json`.
pub const MANIFEST_SCHEMA: &str = "roboaudit.retrieval-collect.v1";

/// Acceptance statistics of the library (seed 000 §II: failed recordings are rejected).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryStats {
    /// Accepted experiences (the pool).
    pub pool: usize,
    /// Recordings tried.
    pub attempts: usize,
    /// Recordings that failed in their own base scene.
    pub rejected: usize,
    /// `rejected / attempts`, in `[0, 1)`; `None` without attempts.
    pub rejection_rate: Option<f64>,
    /// Of `rejected`, successful recordings the reuse mechanism refused (a learned policy that
    /// did not reproduce its demonstration in its base scene); absent for Replay.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reuse_rejected: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl LibraryStats {
    /// Statistics of `library`.
    pub fn of(library: &Library) -> LibraryStats {
        LibraryStats {
            pool: library.items.len(),
            attempts: library.attempts,
            rejected: library.rejected,
            rejection_rate: library.rejection_rate(),
            reuse_rejected: library.reuse_rejected,
        }
    }
}

/// One library entry in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestExperience {
    /// Experience id.
    pub experience_id: String,
    /// Base scene id.
    pub base_scene_id: String,
    /// Candidate index.
    pub candidate: usize,
    /// Demonstrator style.
    pub style: DemoStyle,
    /// Actions in the demonstration.
    pub steps: usize,
}

/// Contents of `collect.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_SCHEMA`].
    pub schema: String,
    /// The collection config.
    pub config: CollectConfig,
    /// Total executions of the complete run.
    pub total_executions: usize,
    /// Library statistics.
    pub library: LibraryStats,
    /// Library entries in library order.
    pub experiences: Vec<ManifestExperience>,
    /// What the reuse mechanism records ([`crate::reuse::Reuse::manifest`]: for a learned
    /// mechanism, each policy's checkpoint folder and SHA-256 hashes); absent for Replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse: Option<serde_json::Value>,
}

impl Manifest {
    /// The manifest of a collection.
    pub fn new(config: &CollectConfig, library: &Library) -> Manifest {
        Manifest {
            schema: MANIFEST_SCHEMA.into(),
            config: config.clone(),
            total_executions: config.total_executions(),
            library: LibraryStats::of(library),
            experiences: library
                .items
                .iter()
                .map(|it| ManifestExperience {
                    experience_id: it.experience_id.clone(),
                    base_scene_id: it.base.scene_id.clone(),
                    candidate: it.candidate,
                    style: it.style,
                    steps: it.experience.waypoints.len(),
                })
                .collect(),
            reuse: None,
        }
    }

    /// The manifest with the reuse mechanism's record.
    #[must_use]
    pub fn with_reuse(self, reuse: Option<serde_json::Value>) -> Manifest {
        Manifest { reuse, ..self }
    }
}

/// The bytes of `path`, `None` when it does not exist.
fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CollectError::Io {
            action: "read",
            path: path.display().to_string(),
            source,
        }),
    }
}

fn manifest_error(path: &Path) -> impl FnOnce(serde_json::Error) -> CollectError + '_ {
    move |source| CollectError::Manifest {
        path: path.display().to_string(),
        source,
    }
}

/// The config recorded in `path`, `None` when the file does not exist.
///
/// # Errors
/// [`CollectError::Io`] or [`CollectError::Manifest`] when it exists but cannot be read.
pub fn read_config(path: &Path) -> Result<Option<CollectConfig>> {
    let Some(bytes) = read_bytes(path)? else {
        return Ok(None);
    };
    let m: Manifest = serde_json::from_slice(&bytes).map_err(manifest_error(path))?;
    Ok(Some(m.config))
}

/// The manifest in `path` when this harness wrote it ([`MANIFEST_SCHEMA`]); `None` when the file
/// does not exist or another harness wrote it (the Meta-World bridge's
/// `roboaudit.metaworld.retrieval.v1`, which says nothing this crate can read).
///
/// # Errors
/// [`CollectError::Io`] when it cannot be read; [`CollectError::Manifest`] when it is not JSON (a
/// damaged file, whoever wrote it) or has this schema and fields that do not parse.
pub fn read_own(path: &Path) -> Result<Option<Manifest>> {
    let Some(bytes) = read_bytes(path)? else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(manifest_error(path))?;
    if value.get("schema").and_then(serde_json::Value::as_str) != Some(MANIFEST_SCHEMA) {
        return Ok(None);
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(manifest_error(path))
}

/// Writes `bytes` to `path` through a temporary sibling and a rename, so a killed run never leaves
/// a truncated file.
///
/// # Errors
/// [`CollectError::Io`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    roboaudit_shard::write_atomic(path, bytes).map_err(|(action, source)| CollectError::Io {
        action,
        path: path.display().to_string(),
        source,
    })
}
