//! Episode success labels (SPEC.md §3 terminal label `r_i ∈ {0,1}`): from a dataset column,
//! from the last reward of each episode, or from a labels file (`episode_index`, `success`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::LeRobotDataset;
use crate::DataError;
use crate::cell;
use crate::readers::required;
use crate::source::{Columns, scan};

/// Where episode success labels come from.
#[derive(Debug, Clone, PartialEq)]
pub enum SuccessSource {
    /// A boolean or 0/1 column such as `next.success`: an episode succeeded when the column is
    /// true on any of its frames (LeRobot sets it on the frame where success is reached).
    Column(String),
    /// The last frame's value of a reward column such as `next.reward`: success when it is at
    /// least `threshold`.
    LastReward {
        /// Reward column.
        column: String,
        /// Smallest reward that counts as success.
        threshold: f64,
    },
    /// The largest value over the episode's frames of a dense reward column such as pusht's
    /// per-frame coverage `next.reward`: success when it is at least `threshold` ("ever reached").
    MaxReward {
        /// Reward column.
        column: String,
        /// Smallest peak reward that counts as success.
        threshold: f64,
    },
    /// A labels file (CSV, Parquet or JSONL) with columns `episode_index`, `success` (0/1 or
    /// true/false), one row per episode.
    File(PathBuf),
}

/// One episode's success label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EpisodeLabel {
    /// `episode_index`.
    pub episode_index: i64,
    /// Whether the episode succeeded.
    pub success: bool,
}

/// The columns every labels file has.
const LABEL_COLUMNS: &[&str] = &["episode_index", "success"];

/// Reads a labels file (`episode_index`, `success`), in file order.
///
/// # Errors
/// [`DataError`] naming file, row and column for a missing or malformed value, an unsupported
/// extension, an empty file, or an episode labelled twice (naming both rows).
pub fn read_labels_file(path: impl AsRef<Path>) -> Result<Vec<EpisodeLabel>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: LABEL_COLUMNS,
        optional: &[],
        all: false,
    };
    let mut out = Vec::new();
    let mut first_row: HashMap<i64, usize> = HashMap::new();
    scan(file, &columns, &mut |r, row| {
        let episode_index = required(
            file,
            row,
            "episode_index",
            cell::to_int(r.get("episode_index")),
        )?;
        if let Some(first) = first_row.insert(episode_index, row) {
            return Err(DataError::invalid(
                file,
                Some(row),
                Some("episode_index"),
                format!("episode {episode_index} is labelled twice, first at row {first}"),
            ));
        }
        let success = required(file, row, "success", cell::to_bool(r.get("success")))?;
        out.push(EpisodeLabel {
            episode_index,
            success,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Where the labels of a labels file come from, by its `source` column: a labels file written
/// by `roboaudit data detect` says `label` for a label given in its partial labels file and
/// `detector` for one the success detector predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelSources {
    /// Rows of the file.
    pub rows: usize,
    /// Rows whose `source` is `detector`.
    pub predicted: usize,
}

/// Reads the `source` column of a labels file (CSV, Parquet or JSONL; `episode_index`,
/// `success`, `source`): `Ok(None)` when the file has no `source` column.
///
/// # Errors
/// [`DataError`] naming the file for an unreadable or empty file, an unsupported extension, or
/// a missing `episode_index` or `success` column.
pub fn read_label_sources(path: impl AsRef<Path>) -> Result<Option<LabelSources>, DataError> {
    let file = path.as_ref();
    let columns = Columns {
        required: LABEL_COLUMNS,
        optional: &["source"],
        all: false,
    };
    let (mut with_source, mut predicted) = (false, 0usize);
    let rows = scan(file, &columns, &mut |r, _| {
        with_source |= r.column_names().contains(&"source");
        predicted += usize::from(matches!(r.get("source"), cell::Cell::Str(s) if s == "detector"));
        Ok(())
    })?;
    Ok(with_source.then_some(LabelSources { rows, predicted }))
}

impl LeRobotDataset {
    /// One success label per episode of the metadata, in episode order.
    ///
    /// A column that is never true yields all-`false` labels, not an error;
    /// [`inspect`](Self::inspect) flags that case.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when the column is not a declared numeric feature, a success
    /// column holds a value other than 0/1, a labels file names an episode the dataset does not
    /// have (naming the row) or leaves an episode unlabelled; plus any read error.
    pub fn success_labels(&self, source: &SuccessSource) -> Result<Vec<EpisodeLabel>, DataError> {
        match source {
            SuccessSource::Column(column) => {
                let frames = self.read_frames(&[column.as_str()])?;
                let mut out = Vec::with_capacity(frames.len());
                for ep in &frames {
                    let values = ep.column(column).unwrap_or_default();
                    let mut success = false;
                    for (t, v) in values.iter().enumerate() {
                        match v.first().copied() {
                            Some(1.0) => success = true,
                            Some(0.0) => {}
                            other => {
                                return Err(DataError::invalid(
                                    &self.root.join(
                                        self.episode_or_err(ep.episode_index)?.data_file.as_path(),
                                    ),
                                    None,
                                    Some(column),
                                    format!(
                                        "episode {} frame {}: expected 0/1 or true/false, got {other:?}",
                                        ep.episode_index, ep.frame_index[t]
                                    ),
                                ));
                            }
                        }
                    }
                    out.push(EpisodeLabel {
                        episode_index: ep.episode_index,
                        success,
                    });
                }
                Ok(out)
            }
            SuccessSource::LastReward { column, threshold } => {
                self.reward_labels(column, |rewards| {
                    rewards
                        .last()
                        .and_then(|v| v.first())
                        .is_some_and(|r| f64::from(*r) >= *threshold)
                })
            }
            SuccessSource::MaxReward { column, threshold } => {
                self.reward_labels(column, |rewards| {
                    rewards
                        .iter()
                        .filter_map(|v| v.first())
                        .any(|r| f64::from(*r) >= *threshold)
                })
            }
            SuccessSource::File(path) => {
                let labels = read_labels_file(path)?;
                let mut by_episode: HashMap<i64, bool> = HashMap::new();
                for (k, label) in labels.iter().enumerate() {
                    if self.episode(label.episode_index).is_none() {
                        return Err(DataError::invalid(
                            path,
                            Some(k + 1),
                            Some("episode_index"),
                            format!(
                                "episode {} is not in the dataset {}",
                                label.episode_index,
                                self.root.display()
                            ),
                        ));
                    }
                    by_episode.insert(label.episode_index, label.success);
                }
                let missing: Vec<i64> = self
                    .episodes
                    .iter()
                    .map(|e| e.index)
                    .filter(|i| !by_episode.contains_key(i))
                    .collect();
                if let Some(first) = missing.first() {
                    return Err(DataError::invalid(
                        path,
                        None,
                        Some("episode_index"),
                        format!(
                            "{} of {} episodes have no label (first: episode {first})",
                            missing.len(),
                            self.episodes.len()
                        ),
                    ));
                }
                Ok(self
                    .episodes
                    .iter()
                    .map(|e| EpisodeLabel {
                        episode_index: e.index,
                        success: by_episode.get(&e.index).copied().unwrap_or(false),
                    })
                    .collect())
            }
        }
    }

    /// One label per episode: `success` of the episode's per-frame values of reward `column`
    /// (a missing column reads as no frames).
    fn reward_labels(
        &self,
        column: &str,
        success: impl Fn(&[Vec<f32>]) -> bool,
    ) -> Result<Vec<EpisodeLabel>, DataError> {
        let frames = self.read_frames(&[column])?;
        Ok(frames
            .iter()
            .map(|ep| EpisodeLabel {
                episode_index: ep.episode_index,
                success: success(ep.column(column).unwrap_or_default()),
            })
            .collect())
    }
}
