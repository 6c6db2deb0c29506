//! The transfer matrix of a retrieval audit, rebuilt from its run folder (the audit report does
//! not carry it): `P[e, s]` = mean success over seeds (SPEC.md §1).

use crate::{ReportError, TransferMatrix};
use roboaudit_data::{RetrievalPaths, read_executions, read_scenes};
use roboaudit_retrieval::AuditReport;
use roboaudit_stats::{Rate, mean_rate};
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
    let mut rates = Vec::with_capacity(k);
    for (e, row) in sums.iter().enumerate() {
        let mut out = Vec::with_capacity(n);
        let mut rate_row = Vec::with_capacity(n);
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
            let rate = Rate::new(wins as u64, count as u64).map_err(|e| ReportError::Matrix {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?;
            out.push(rate.to_f64());
            rate_row.push(rate);
        }
        success.push(out);
        rates.push(rate_row);
    }
    let row_order = order_desc(k, |e| mean_rate(&rates[e]));
    let column_order = order_desc(n, |s| {
        mean_rate(&rates.iter().map(|row| row[s]).collect::<Vec<_>>())
    });
    let matrix = TransferMatrix {
        experiences: audit.experiences.iter().map(|e| e.id.clone()).collect(),
        scenes: scenes.iter().map(|s| s.scene_id.clone()).collect(),
        success,
        executions: used,
        row_order,
        column_order,
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

/// Indices `0..n` by `key` descending, ties in index order. A mean whose exact denominator
/// overflows (`None`, far beyond any real run) sorts last.
fn order_desc(n: usize, key: impl Fn(usize) -> Option<Rate>) -> Vec<usize> {
    let keys: Vec<Option<Rate>> = (0..n).map(key).collect();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| keys[b].cmp(&keys[a]));
    idx
}

/// Mean of a non-empty iterator (0 when empty).
pub(crate) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 {
        0.0
    } else {
        let c = count as f64;
        sum / c
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Issue 21: two rows with the same successes in another scene order have equal quality,
    /// though their float means differ (0.1 + 0.2 + 0.3 ≠ 0.3 + 0.2 + 0.1), so the heatmap keeps
    /// them in library order; 2/5 over 5 seeds ties 4/10 over 10.
    #[test]
    fn heatmap_rows_with_equal_quality_keep_library_order() {
        let r = |k, n| Rate::new(k, n).unwrap();
        let rows = [
            vec![r(1, 10), r(2, 10), r(3, 10)],
            vec![r(3, 10), r(2, 10), r(1, 10)],
            vec![r(0, 10), r(0, 10), r(9, 10)],
            vec![r(2, 5), r(2, 10), r(0, 5)],
        ];
        let float = |row: &[Rate]| row.iter().map(|x| x.to_f64()).sum::<f64>();
        assert_ne!(float(&rows[0]), float(&rows[1]));
        assert_eq!(order_desc(4, |e| mean_rate(&rows[e])), vec![2, 0, 1, 3]);
        let swapped = [rows[1].clone(), rows[0].clone()];
        assert_eq!(order_desc(2, |e| mean_rate(&swapped[e])), vec![0, 1]);
    }
}
