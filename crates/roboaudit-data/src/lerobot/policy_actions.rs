//! Policy-actions files (SPEC.md §3): target-policy actions written by any external policy,
//! `M` samples per dataset frame. Columns: `index` (global frame index), `sample` (0..M−1),
//! `action` (float vector).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder};
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;

use super::LeRobotDataset;
use crate::DataError;
use crate::cell;
use crate::readers::required;
use crate::source::{Columns, scan};

/// Encodes rows `(index, sample, action)` as the bytes of a policy-actions Parquet file, the
/// format [`read_policy_actions`] reads: columns `index` (int64), `sample` (int64) and `action`
/// (list of float32), one row per item in the given order. `path` only names the file in errors.
///
/// # Errors
/// [`DataError::Invalid`] naming `path` when Arrow or Parquet cannot encode the rows.
pub fn policy_actions_parquet<'a>(
    path: &Path,
    rows: impl Iterator<Item = (i64, i64, &'a [f32])>,
) -> Result<Vec<u8>, DataError> {
    let (mut index, mut sample) = (Vec::new(), Vec::new());
    let mut list = ListBuilder::new(Float32Builder::new()).with_field(Arc::new(Field::new(
        "item",
        DataType::Float32,
        true,
    )));
    for (i, k, action) in rows {
        index.push(i);
        sample.push(k);
        list.values().append_slice(action);
        list.append(true);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(index)),
        Arc::new(Int64Array::from(sample)),
        Arc::new(list.finish()),
    ];
    let schema = Schema::new(
        ["index", "sample", "action"]
            .iter()
            .zip(&cols)
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), false))
            .collect::<Vec<_>>(),
    );
    let encode = |e: String| DataError::invalid(path, None, None, format!("cannot encode: {e}"));
    let batch = RecordBatch::try_new(Arc::new(schema), cols).map_err(|e| encode(e.to_string()))?;
    let mut buf = Vec::new();
    let mut w =
        ArrowWriter::try_new(&mut buf, batch.schema(), None).map_err(|e| encode(e.to_string()))?;
    w.write(&batch).map_err(|e| encode(e.to_string()))?;
    w.close().map_err(|e| encode(e.to_string()))?;
    Ok(buf)
}

/// Target-policy actions, `samples` per frame, for a set of dataset frames.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyActions {
    /// Global frame indices covered, sorted ascending, unique.
    pub index: Vec<i64>,
    /// Samples per frame (`M` ≥ 1), the same for every frame.
    pub samples: usize,
    /// Action width.
    pub action_dim: usize,
    /// `index.len() × samples × action_dim` values: frame-major, then sample, then dimension.
    pub actions: Vec<f32>,
    /// The file read.
    pub file: PathBuf,
}

impl PolicyActions {
    /// The `samples × action_dim` block of frame `index` (sample-major), if covered.
    pub fn frame(&self, index: i64) -> Option<&[f32]> {
        let k = self.index.binary_search(&index).ok()?;
        let block = self.samples * self.action_dim;
        self.actions.get(k * block..(k + 1) * block)
    }

    /// Action `sample` of frame `index`, if covered.
    pub fn sample(&self, index: i64, sample: usize) -> Option<&[f32]> {
        if sample >= self.samples {
            return None;
        }
        let block = self.frame(index)?;
        block.get(sample * self.action_dim..(sample + 1) * self.action_dim)
    }
}

/// Reads and checks a policy-actions file (CSV, Parquet or JSONL).
///
/// # Errors
/// [`DataError`] naming file, row and column for a missing or malformed value, a negative
/// `index` or `sample`, a non-finite or empty action, an action whose width differs from the
/// first row's, a repeated `(index, sample)` (naming both rows), or a frame whose samples are
/// not exactly `0..M` with the same `M` as the first frame; an empty file.
pub fn read_policy_actions(path: impl AsRef<Path>) -> Result<PolicyActions, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: &["index", "sample", "action"],
        optional: &[],
        all: false,
    };
    // (index, sample) -> (row, action)
    let mut rows: HashMap<(i64, usize), (usize, Vec<f32>)> = HashMap::new();
    let mut dim: Option<(usize, usize)> = None;
    scan(file, &columns, &mut |r, row| {
        let index = required(file, row, "index", cell::to_int(r.get("index")))?;
        let sample = required(file, row, "sample", cell::to_int(r.get("sample")))?;
        if index < 0 {
            return Err(DataError::invalid(
                file,
                Some(row),
                Some("index"),
                format!("negative frame index {index}"),
            ));
        }
        let sample = usize::try_from(sample).map_err(|_| {
            DataError::invalid(
                file,
                Some(row),
                Some("sample"),
                format!("negative sample {sample}"),
            )
        })?;
        let action = required(file, row, "action", cell::to_vector(r.get("action")))?;
        match dim {
            None => dim = Some((action.len(), row)),
            Some((d, first)) if d != action.len() => {
                return Err(DataError::invalid(
                    file,
                    Some(row),
                    Some("action"),
                    format!("action has {} values, row {first} has {d}", action.len()),
                ));
            }
            Some(_) => {}
        }
        if let Some((first, _)) = rows.insert((index, sample), (row, action)) {
            return Err(DataError::invalid(
                file,
                Some(row),
                None,
                format!("frame {index} sample {sample} appears twice, first at row {first}"),
            ));
        }
        Ok(())
    })?;
    let action_dim = dim.map_or(0, |(d, _)| d);
    let mut per_frame: HashMap<i64, Vec<usize>> = HashMap::new();
    for (index, sample) in rows.keys() {
        per_frame.entry(*index).or_default().push(*sample);
    }
    let mut index: Vec<i64> = per_frame.keys().copied().collect();
    index.sort_unstable();
    let samples = per_frame.get(&index[0]).map_or(0, Vec::len);
    for i in &index {
        let mut got = per_frame.get(i).cloned().unwrap_or_default();
        got.sort_unstable();
        if got.len() != samples || got.iter().enumerate().any(|(k, s)| k != *s) {
            let row = rows.get(&(*i, got[0])).map(|(r, _)| *r);
            return Err(DataError::invalid(
                file,
                row,
                Some("sample"),
                format!(
                    "frame {i} has samples {got:?}; every frame needs samples 0..{} like frame {}",
                    samples.saturating_sub(1),
                    index[0]
                ),
            ));
        }
    }
    let mut actions = Vec::with_capacity(index.len() * samples * action_dim);
    for i in &index {
        for s in 0..samples {
            if let Some((_, a)) = rows.get(&(*i, s)) {
                actions.extend_from_slice(a);
            }
        }
    }
    Ok(PolicyActions {
        index,
        samples,
        action_dim,
        actions,
        file: file.to_path_buf(),
    })
}

impl LeRobotDataset {
    /// Checks `actions` against this dataset: the action width equals the width of feature
    /// `action_feature`, and every frame index exists in the data. Returns how many dataset
    /// frames have no policy actions (0 when the file covers the dataset).
    ///
    /// # Errors
    /// [`DataError::Invalid`] naming the policy-actions file for a width mismatch or an
    /// unknown frame index; read errors of the data files.
    pub fn check_policy_actions(
        &self,
        actions: &PolicyActions,
        action_feature: &str,
    ) -> Result<usize, DataError> {
        let width = self
            .feature(action_feature)
            .map(super::Feature::width)
            .ok_or_else(|| super::frames::not_readable(self, action_feature, "numbers"))?;
        if width != actions.action_dim {
            return Err(DataError::invalid(
                &actions.file,
                None,
                Some("action"),
                format!(
                    "actions have {} values, the dataset's \"{action_feature}\" has {width}",
                    actions.action_dim
                ),
            ));
        }
        let known: HashSet<i64> = self
            .read_frames(&[])?
            .iter()
            .flat_map(|e| e.index.iter().copied())
            .collect();
        if let Some(bad) = actions.index.iter().find(|i| !known.contains(i)) {
            return Err(DataError::invalid(
                &actions.file,
                None,
                Some("index"),
                format!(
                    "frame index {bad} is not in the dataset {}",
                    self.root.display()
                ),
            ));
        }
        Ok(known.len().saturating_sub(actions.index.len()))
    }
}
