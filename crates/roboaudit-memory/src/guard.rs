//! The preregistration guard (SPEC.md §2): a result whose plan changed after outcomes were
//! recorded is refused.

use std::path::Path;

use roboaudit_types::MemoryRecord;

use crate::MemoryError;
use crate::report::SCHEMA;

/// File name of the audit inside an output folder.
pub const AUDIT_FILE: &str = "audit.json";

/// Refuses to write into `out_dir` when it already holds an `audit.json` produced under a
/// plan whose hash differs from `plan_hash`. A folder without `audit.json` (or a missing
/// folder) passes; re-running under the same plan passes.
///
/// # Errors
/// [`MemoryError::PlanChanged`] for a different hash; [`MemoryError::ExistingOutput`] when
/// the existing `audit.json` cannot be read or is not a memory audit (so it cannot be checked).
pub fn check_output_plan(out_dir: &Path, plan_hash: &str) -> Result<(), MemoryError> {
    let file = out_dir.join(AUDIT_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(MemoryError::ExistingOutput {
                message: format!("cannot read it ({e})"),
                file,
            });
        }
    };
    let existing = |message: String| MemoryError::ExistingOutput {
        message,
        file: file.clone(),
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| existing(format!("it is not valid JSON ({e})")))?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    if schema != SCHEMA {
        return Err(existing(format!(
            "it is not a memory audit (schema \"{schema}\", expected \"{SCHEMA}\"); choose another output folder"
        )));
    }
    let previous = value
        .get("plan_hash")
        .and_then(|s| s.as_str())
        .ok_or_else(|| existing("it has no plan_hash".to_owned()))?;
    if previous != plan_hash {
        return Err(MemoryError::PlanChanged {
            what: "an existing audit.json",
            previous: previous.to_owned(),
            current: plan_hash.to_owned(),
            file,
        });
    }
    Ok(())
}

/// Refuses records whose `plan_hash` column (written by the harness that recorded the
/// outcomes) differs from `plan_hash`. Records without the column pass.
///
/// # Errors
/// [`MemoryError::PlanChanged`] naming `records_path`.
pub fn check_records_plan(
    records: &[MemoryRecord],
    plan_hash: &str,
    records_path: &Path,
) -> Result<(), MemoryError> {
    match records
        .iter()
        .filter_map(|r| r.plan_hash.as_deref())
        .find(|h| *h != plan_hash)
    {
        Some(previous) => Err(MemoryError::PlanChanged {
            what: "the records file",
            previous: previous.to_owned(),
            current: plan_hash.to_owned(),
            file: records_path.to_path_buf(),
        }),
        None => Ok(()),
    }
}
