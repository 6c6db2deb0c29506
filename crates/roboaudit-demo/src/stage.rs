//! The stage bookkeeping of reruns into the same folder: a stage's `demo-stage.json` records the
//! settings it ran with and the fingerprints of its outputs, so that a rerun skips it only while
//! both still hold; and the scale check of `--out`.

use crate::{DemoError, Scale};
use std::path::Path;

/// File that records the settings a finished stage ran with, and the fingerprints of its outputs.
pub const STAMP: &str = "demo-stage.json";

/// 64-bit FNV-1a (hex) of a stage output's bytes, or `None` when it cannot be read.
fn fingerprint(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| roboaudit_fqe::fingerprint(&b))
}

/// The stamp of a stage run with `settings` whose `outputs` (relative to `dir`) are as they are now;
/// `None` when one of them cannot be read.
fn stamp(dir: &Path, settings: &serde_json::Value, outputs: &[&str]) -> Option<serde_json::Value> {
    let mut prints = serde_json::Map::new();
    for f in outputs {
        prints.insert((*f).to_owned(), fingerprint(&dir.join(f))?.into());
    }
    Some(serde_json::json!({ "settings": settings, "outputs": prints }))
}

/// True when `dir` holds a stamp of `settings` and every file in `outputs` (relative to `dir`) still
/// has the bytes the stage wrote. The settings alone would vouch for anything written there since,
/// e.g. an `fqe fit --out DIR/fqe` of another dataset presented under the demo's headline; such a
/// stage is redone, with a line to `note` since the replaced file was someone's result.
pub(crate) fn stage_done(
    dir: &Path,
    settings: &serde_json::Value,
    outputs: &[&str],
    note: &dyn Fn(&str),
) -> bool {
    let Ok(text) = std::fs::read(dir.join(STAMP)) else {
        return false;
    };
    let Ok(found) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return false;
    };
    if found.get("settings") != Some(settings) {
        return false;
    }
    if stamp(dir, settings, outputs).is_some_and(|now| now == found) {
        return true;
    }
    note(&format!(
        "note: {} holds outputs the demo did not write ({}); redoing this stage",
        dir.display(),
        outputs.join(", ")
    ));
    false
}

/// Writes the stamp of a finished stage (last, so that an interrupted stage is redone), with the
/// fingerprints of its `outputs` (relative to `dir`), which must all be written.
///
/// # Errors
/// [`DemoError::Stamp`] when an output cannot be read back, else serialization and write errors.
pub(crate) fn mark_done(
    dir: &Path,
    settings: &serde_json::Value,
    outputs: &[&str],
) -> Result<(), DemoError> {
    let Some(stamp) = stamp(dir, settings, outputs) else {
        return Err(DemoError::Stamp {
            dir: dir.to_path_buf(),
            outputs: outputs.iter().map(|s| (*s).to_owned()).collect(),
        });
    };
    let json = serde_json::to_vec_pretty(&stamp).map_err(DemoError::serialize("stage settings"))?;
    Ok(roboaudit_data::atomic::write_atomic(
        &dir.join(STAMP),
        &json,
    )?)
}

/// Removes a stage's stamp before its outputs are rewritten: a stale stamp must not vouch for
/// half-new outputs.
pub(crate) fn clear(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(STAMP));
}

/// Refuses a folder that holds a demo of another scale: its runs could not be reused.
///
/// # Errors
/// [`DemoError::Usage`] naming the scale found.
pub fn check_scale(out: &Path, scale: Scale) -> Result<(), DemoError> {
    let Ok(text) = std::fs::read(out.join("audit.json")) else {
        return Ok(());
    };
    let found = serde_json::from_slice::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("scale").and_then(|s| s.as_str()).map(str::to_owned));
    match found {
        Some(s) if s != crate::scale_name(scale) => Err(DemoError::Usage(format!(
            "{} holds a --scale {s} demo; rerun with --scale {s} or choose another --out",
            out.display()
        ))),
        _ => Ok(()),
    }
}

/// Removes folders `parent/PREFIX*` left by an interrupted run of a stage (Ctrl-C skips the
/// temporary folder's clean-up). Only folders with exactly this prefix, directly in `parent`;
/// a folder that cannot be removed is left (the stage still runs in a fresh one).
pub(crate) fn remove_stale_temps(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let stale = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(prefix))
            && e.file_type().is_ok_and(|t| t.is_dir());
        if stale {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A stamp vouches for its stage only while the settings and every output's bytes are
    /// as written; an output replaced since is redone, with a note.
    #[test]
    fn a_stamp_vouches_only_for_unchanged_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let settings = serde_json::json!({ "pairs": 8 });
        let notes = RefCell::new(Vec::new());
        let note = |l: &str| notes.borrow_mut().push(l.to_owned());
        std::fs::write(d.join("a.json"), b"{}").unwrap();
        assert!(
            !stage_done(d, &settings, &["a.json"], &note),
            "no stamp yet"
        );
        mark_done(d, &settings, &["a.json"]).unwrap();
        assert!(stage_done(d, &settings, &["a.json"], &note));
        let other = serde_json::json!({ "pairs": 9 });
        assert!(!stage_done(d, &other, &["a.json"], &note));
        assert!(notes.borrow().is_empty(), "other settings redo quietly");
        std::fs::write(d.join("a.json"), b"{\"x\": 1}").unwrap();
        assert!(!stage_done(d, &settings, &["a.json"], &note));
        assert_eq!(notes.borrow().len(), 1);
        assert!(notes.borrow()[0].contains("outputs the demo did not write"));
        clear(d);
        assert!(!d.join(STAMP).exists());
    }

    #[test]
    fn a_missing_output_cannot_be_stamped() {
        let dir = tempfile::tempdir().unwrap();
        let err = mark_done(dir.path(), &serde_json::json!({}), &["gone.json"]).unwrap_err();
        assert!(matches!(err, DemoError::Stamp { .. }), "{err}");
        assert!(err.to_string().contains("gone.json"), "{err}");
    }

    #[test]
    fn a_demo_of_another_scale_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        check_scale(dir.path(), Scale::Small).unwrap();
        std::fs::write(dir.path().join("audit.json"), br#"{"scale": "standard"}"#).unwrap();
        check_scale(dir.path(), Scale::Standard).unwrap();
        let err = check_scale(dir.path(), Scale::Small).unwrap_err();
        assert!(matches!(err, DemoError::Usage(_)), "{err}");
        assert!(err.to_string().contains("--scale standard"), "{err}");
    }

    #[test]
    fn only_stale_temporary_folders_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join(".run-x")).unwrap();
        std::fs::create_dir(d.join("run")).unwrap();
        std::fs::write(d.join(".run-file"), b"").unwrap();
        remove_stale_temps(d, ".run-");
        assert!(!d.join(".run-x").exists());
        assert!(d.join("run").exists());
        assert!(d.join(".run-file").exists());
    }
}
