//! The files of an `fqe actions` run: the partial folder that makes it resumable (resume state,
//! one Parquet part and one timing file per finished episode), the manifest path, and atomic
//! writes, so an interrupted run never leaves a half-written file.

use std::path::{Path, PathBuf};

use roboaudit_data::lerobot::policy_actions_parquet;

use super::ResumeState;
use crate::error::PolicyClientError;

/// The partial folder of `out`.
pub fn partial_dir(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// The manifest path of `out`: `<stem>.manifest.json` beside it.
pub fn manifest_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "actions".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.manifest.json"))
}

pub(super) fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> PolicyClientError + 'a {
    move |source| PolicyClientError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

pub(super) fn part_path(partial: &Path, episode: i64) -> PathBuf {
    partial.join(format!("episode-{episode:06}.parquet"))
}

pub(super) fn timing_path(partial: &Path, episode: i64) -> PathBuf {
    partial.join(format!("episode-{episode:06}.json"))
}

/// Creates the partial folder with its state, or checks an existing one agrees.
pub(super) fn prepare_partial(
    partial: &Path,
    state: &ResumeState,
) -> Result<(), PolicyClientError> {
    let state_file = partial.join("state.json");
    if state_file.exists() {
        let text = std::fs::read_to_string(&state_file).map_err(io("cannot read", &state_file))?;
        let old: ResumeState = serde_json::from_str(&text).map_err(|e| {
            PolicyClientError::Invalid(format!(
                "{}: not a resume state ({e}); remove the folder",
                state_file.display()
            ))
        })?;
        if &old != state {
            return Err(PolicyClientError::Invalid(format!(
                "{} holds an interrupted run with other settings (policy name, dataset, samples, seed, features or keys); rerun it with the same settings or remove the folder",
                partial.display()
            )));
        }
        return Ok(());
    }
    std::fs::create_dir_all(partial).map_err(io("cannot create", partial))?;
    let json =
        serde_json::to_vec_pretty(state).map_err(|e| PolicyClientError::Invalid(e.to_string()))?;
    write_atomic(&state_file, &json)
}

/// Writes `bytes` to `path` atomically ([`roboaudit_data::atomic::write_atomic`]).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PolicyClientError> {
    roboaudit_data::atomic::write_atomic(path, bytes).map_err(|e| PolicyClientError::Io {
        action: "cannot write",
        path: e.path,
        source: e
            .source
            .unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::IsADirectory)),
    })
}

/// Writes rows `(index, sample, action)` as a policy-actions Parquet file, atomically.
///
/// # Errors
/// [`PolicyClientError::Io`] / [`PolicyClientError::Invalid`] for encoding failures.
pub fn write_rows(path: &Path, rows: &[(i64, i64, Vec<f32>)]) -> Result<(), PolicyClientError> {
    let bytes = policy_actions_parquet(path, rows.iter().map(|r| (r.0, r.1, r.2.as_slice())))
        .map_err(|e| PolicyClientError::Invalid(e.to_string()))?;
    write_atomic(path, &bytes)
}
