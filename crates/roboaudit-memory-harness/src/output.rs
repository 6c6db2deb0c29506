//! A collection's result files: `records.parquet` and `manifest.json`, written together, as an
//! unsharded `memory collect` leaves them and as the merge of its shards must leave them.

use std::path::{Path, PathBuf};

use crate::collect::{Collection, Manifest};
use crate::error::HarnessError;

/// File name of the records inside a collection's folder.
pub const RECORDS_FILE: &str = "records.parquet";
/// File name of the manifest inside a collection's folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The manifest as the bytes of `manifest.json`: pretty JSON with its keys sorted (through
/// [`serde_json::Value`], so that `extra` fields, e.g. a served policy's address and latency,
/// land in the same order whoever adds them).
///
/// # Errors
/// [`HarnessError::Partial`] when the manifest cannot be serialized.
pub fn manifest_bytes(
    manifest: &Manifest,
    extra: Option<(&str, serde_json::Value)>,
) -> Result<Vec<u8>, HarnessError> {
    let encode =
        |e: serde_json::Error| HarnessError::partial(Path::new(MANIFEST_FILE), "serialize", e);
    let mut v = serde_json::to_value(manifest).map_err(encode)?;
    if let (Some((key, value)), Some(map)) = (extra, v.as_object_mut()) {
        map.insert(key.to_owned(), value);
    }
    serde_json::to_vec_pretty(&v).map_err(encode)
}

/// Writes `files` as one result: each is first written in full to a synced temporary sibling
/// (mode 0644), and only when all are is each renamed into place, so a full disk or a folder in
/// the way leaves none of them.
///
/// # Errors
/// [`HarnessError::Partial`] naming the file that could not be written.
pub fn write_together(files: &[(&Path, &[u8])]) -> Result<(), HarnessError> {
    let mut staged = Vec::with_capacity(files.len());
    for &(path, bytes) in files {
        if path.is_dir() {
            return Err(HarnessError::partial(path, "write it", "it is a folder"));
        }
        let tmp = roboaudit_shard::stage(path, bytes).map_err(|(step, e)| {
            match step.strip_suffix(" for") {
                // The temporary file is the folder's.
                Some(create) => {
                    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
                    HarnessError::partial(dir.unwrap_or(Path::new(".")), create, e)
                }
                None => HarnessError::partial(path, step, e),
            }
        })?;
        staged.push((path, tmp));
    }
    for (path, tmp) in staged {
        tmp.persist(path)
            .map_err(|e| HarnessError::partial(path, "write", e.error))?;
    }
    Ok(())
}

/// The records as Parquet bytes (the writer writes to a path: a temporary file in `dir`,
/// removed when done).
fn records_bytes(
    dir: &Path,
    records: &[roboaudit_data::MemoryRecord],
) -> Result<Vec<u8>, HarnessError> {
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".parquet")
        .tempfile_in(dir)
        .map_err(|e| HarnessError::partial(dir, "create a temporary file", e))?;
    roboaudit_data::write_memory_records(tmp.path(), records)?;
    std::fs::read(tmp.path()).map_err(|e| HarnessError::partial(tmp.path(), "read back", e))
}

/// Writes `run`'s `records.parquet` and `manifest.json` (with `extra`, see [`manifest_bytes`])
/// into `out` together, then removes the kept pairs ([`crate::resume::finish`]); returns the
/// manifest's path.
///
/// # Errors
/// [`HarnessError::Partial`] or [`HarnessError::Data`] when a file cannot be written.
pub fn write_collection(
    out: &Path,
    run: &Collection,
    extra: Option<(&str, serde_json::Value)>,
) -> Result<PathBuf, HarnessError> {
    let records_path = out.join(RECORDS_FILE);
    let manifest_path = out.join(MANIFEST_FILE);
    let json = manifest_bytes(&run.manifest, extra)?;
    let parquet = records_bytes(out, &run.records)?;
    // Records without their manifest would block every rerun (records are never overwritten)
    // while telling nobody how they were collected.
    write_together(&[(&records_path, &parquet), (&manifest_path, &json)])?;
    crate::resume::finish(out)?;
    Ok(manifest_path)
}
