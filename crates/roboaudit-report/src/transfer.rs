//! The transfer matrix of a retrieval audit, rebuilt from its run folder (the audit report does
//! not carry it): `P[e, s]` = mean success over seeds (SPEC.md §1).

use crate::{ReportError, TransferMatrix};
use roboaudit_data::{RetrievalPaths, read_executions, read_scenes};
use roboaudit_retrieval::AuditReport;
use std::collections::HashMap;
use std::path::Path;

/// Tolerance when checking that a rebuilt matrix reproduces the audit's random reference.
const MATCH_TOLERANCE: f64 = 1e-9;

/// True when `dir` looks like a retrieval run folder: a scenes table and an execution log.
pub(crate) fn is_run_dir(dir: &Path) -> bool {
    let paths = RetrievalPaths::from_run_dir(dir);
    paths.scenes.is_file() && (paths.executions.is_file() || paths.executions.is_dir())
}

/// Result of reading a run folder for one audit.
pub(crate) enum Loaded {
    /// The run's matrix reproduces the audit.
    Matrix(TransferMatrix),
    /// The run belongs to another audit (the reason says which check failed).
    Mismatch(String),
}

/// Reads the scenes and executions of `dir` and builds `P` over the audit's experiences and the
/// run's query scenes; executions of other scenes (own-base runs) are ignored.
///
/// # Errors
/// [`ReportError::Data`] for a malformed table (naming file, row and column) and
/// [`ReportError::Matrix`] for a library × query cell without executions.
pub(crate) fn load(dir: &Path, audit: &AuditReport) -> Result<Loaded, ReportError> {
    let paths = RetrievalPaths::from_run_dir(dir);
    let scenes = read_scenes(&paths.scenes)?;
    if scenes.len() != audit.n_scenes {
        return Ok(Loaded::Mismatch(format!(
            "the run has {} query scenes, the audit {}",
            scenes.len(),
            audit.n_scenes
        )));
    }
    let executions = read_executions(&paths.executions)?;
    let scene_index: HashMap<&str, usize> = scenes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.scene_id.as_str(), i))
        .collect();
    let exp_index: HashMap<&str, usize> = audit
        .experiences
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let (k, n) = (audit.experiences.len(), scenes.len());
    let mut sums = vec![vec![(0usize, 0usize); n]; k];
    let mut used = 0usize;
    for x in &executions {
        let (Some(&e), Some(&s)) = (
            exp_index.get(x.experience_id.as_str()),
            scene_index.get(x.scene_id.as_str()),
        ) else {
            continue;
        };
        let cell = &mut sums[e][s];
        cell.0 += usize::from(x.success);
        cell.1 += 1;
        used += 1;
    }
    let mut success = Vec::with_capacity(k);
    for (e, row) in sums.iter().enumerate() {
        let mut out = Vec::with_capacity(n);
        for (s, &(wins, count)) in row.iter().enumerate() {
            if count == 0 {
                return Err(ReportError::Matrix {
                    path: dir.to_path_buf(),
                    message: format!(
                        "no execution of experience {} in query scene {}",
                        audit.experiences[e].id, scenes[s].scene_id
                    ),
                });
            }
            #[allow(clippy::cast_precision_loss)]
            out.push(wins as f64 / count as f64);
        }
        success.push(out);
    }
    let matrix = TransferMatrix {
        experiences: audit.experiences.iter().map(|e| e.id.clone()).collect(),
        scenes: scenes.iter().map(|s| s.scene_id.clone()).collect(),
        success,
        executions: used,
    };
    let random = mean(matrix.success.iter().flatten().copied());
    if (random - audit.reference.random).abs() > MATCH_TOLERANCE {
        return Ok(Loaded::Mismatch(format!(
            "the run's mean success {random:.4} differs from the audit's random reference {:.4}",
            audit.reference.random
        )));
    }
    Ok(Loaded::Matrix(matrix))
}

/// Mean of a non-empty iterator (0 when empty).
pub(crate) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 {
        0.0
    } else {
        #[allow(clippy::cast_precision_loss)]
        let c = count as f64;
        sum / c
    }
}
