//! Numeric frames of episodes, as `f32` vectors per frame.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::LeRobotDataset;
use super::info::FeatureKind;
use super::table::ParquetTable;
use crate::DataError;

/// One requested column of an episode: one vector per frame (scalars are one-element vectors).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedColumn {
    /// Feature name.
    pub name: String,
    /// `values[t]` is frame `t`'s value, of the feature's width (product of its shape).
    pub values: Vec<Vec<f32>>,
}

/// Numeric frames of one episode, ordered by `frame_index`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodeFrames {
    /// `episode_index`.
    pub episode_index: i64,
    /// Global `index` of each frame (the key of policy-actions files).
    pub index: Vec<i64>,
    /// `frame_index` of each frame.
    pub frame_index: Vec<i64>,
    /// The requested columns, in request order.
    pub columns: Vec<NamedColumn>,
}

impl EpisodeFrames {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the episode has no frames (never true for frames returned by the reader).
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The values of column `name`, if it was requested.
    pub fn column(&self, name: &str) -> Option<&[Vec<f32>]> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.values.as_slice())
    }
}

fn shape_text(f: &super::Feature) -> String {
    match f.kind {
        FeatureKind::Numeric => format!("[{}]", f.width()),
        _ => String::new(),
    }
}

/// The error for a feature that cannot be read as `wanted` (`numbers` or `an image`).
pub(crate) fn not_readable(ds: &LeRobotDataset, feature: &str, wanted: &str) -> DataError {
    let info_file = ds.root.join("meta/info.json");
    let message = match ds.feature(feature) {
        None => format!(
            "feature \"{feature}\" is not declared in meta/info.json; declared features: {}",
            ds.describe_features()
        ),
        Some(f) if f.kind == FeatureKind::Video => format!(
            "feature \"{feature}\" is a video (MP4 files{}), not {wanted}: its frames are read with the video frame source",
            f.video
                .as_ref()
                .and_then(|v| v.codec.as_deref())
                .map(|c| format!(", codec {c}"))
                .unwrap_or_default()
        ),
        Some(f) => format!(
            "feature \"{feature}\" has dtype \"{}\" and cannot be read as {wanted}",
            f.dtype
        ),
    };
    DataError::invalid(&info_file, None, Some(feature), message)
}

impl LeRobotDataset {
    /// The declared features as `name (dtype)`, comma-separated, for messages that name a
    /// feature the dataset does not have (bookkeeping columns such as `index` left out).
    pub fn describe_features(&self) -> String {
        const BOOKKEEPING: [&str; 5] = [
            "timestamp",
            "frame_index",
            "episode_index",
            "index",
            "task_index",
        ];
        let names: Vec<String> = self
            .info
            .features
            .iter()
            .filter(|f| !BOOKKEEPING.contains(&f.name.as_str()))
            .map(|f| format!("{} ({}{})", f.name, f.dtype, shape_text(f)))
            .collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    }

    fn check_numeric(&self, columns: &[&str]) -> Result<(), DataError> {
        for name in columns {
            if self.feature(name).map(|f| f.kind) != Some(FeatureKind::Numeric) {
                return Err(not_readable(self, name, "numbers"));
            }
        }
        Ok(())
    }

    /// Reads the numeric `columns` of episode `episode`, ordered by `frame_index`.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when a column is not a declared numeric feature (a `video`
    /// feature's message says it needs decoding), the episode is unknown or has no rows, or a
    /// value is null or has a width different from the feature's shape (naming file, row and
    /// column); I/O and Parquet errors of the data file.
    pub fn read_episode_frames(
        &self,
        episode: i64,
        columns: &[&str],
    ) -> Result<EpisodeFrames, DataError> {
        self.check_numeric(columns)?;
        let ep = self.episode_or_err(episode)?;
        let wanted = HashSet::from([episode]);
        let mut found = self.read_file_frames(&ep.data_file, columns, &wanted)?;
        found.remove(&episode).ok_or_else(|| {
            DataError::invalid(
                &self.root.join(&ep.data_file),
                None,
                Some("episode_index"),
                format!("episode {episode} has no rows"),
            )
        })
    }

    /// Reads the numeric `columns` of every episode in the metadata (each data file once),
    /// in episode order.
    ///
    /// # Errors
    /// As [`read_episode_frames`](Self::read_episode_frames), for the first failing episode.
    pub fn read_frames(&self, columns: &[&str]) -> Result<Vec<EpisodeFrames>, DataError> {
        self.check_numeric(columns)?;
        let mut by_file: BTreeMap<&Path, HashSet<i64>> = BTreeMap::new();
        for ep in &self.episodes {
            by_file.entry(&ep.data_file).or_default().insert(ep.index);
        }
        let mut all = BTreeMap::new();
        for (file, wanted) in &by_file {
            all.append(&mut self.read_file_frames(file, columns, wanted)?);
        }
        let mut out = Vec::with_capacity(self.episodes.len());
        for ep in &self.episodes {
            out.push(all.remove(&ep.index).ok_or_else(|| {
                DataError::invalid(
                    &self.root.join(&ep.data_file),
                    None,
                    Some("episode_index"),
                    format!("episode {} has no rows", ep.index),
                )
            })?);
        }
        Ok(out)
    }

    /// Frames of the `wanted` episodes found in one data file.
    fn read_file_frames(
        &self,
        rel: &Path,
        columns: &[&str],
        wanted: &HashSet<i64>,
    ) -> Result<BTreeMap<i64, EpisodeFrames>, DataError> {
        let file = self.root.join(rel);
        let table = ParquetTable::read(&file, &|n| {
            columns.contains(&n) || n == "episode_index" || n == "frame_index" || n == "index"
        })?;
        let episodes = table.ints("episode_index")?;
        let frames = table.ints("frame_index")?;
        let index = table.ints("index")?;
        let mut values = Vec::with_capacity(columns.len());
        for name in columns {
            let width = self.feature(name).map_or(1, super::Feature::width);
            let column = table.vectors(name)?;
            if let Some(k) = column.iter().position(|v| v.len() != width) {
                return Err(DataError::invalid(
                    &file,
                    Some(k + 1),
                    Some(name),
                    format!(
                        "expected {width} values (shape in meta/info.json), got {}",
                        column[k].len()
                    ),
                ));
            }
            values.push(column);
        }
        let mut rows: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (k, ep) in episodes.iter().enumerate() {
            if wanted.contains(ep) {
                rows.entry(*ep).or_default().push(k);
            }
        }
        let mut out = BTreeMap::new();
        for (ep, mut ks) in rows {
            ks.sort_by_key(|&k| frames[k]);
            out.insert(
                ep,
                EpisodeFrames {
                    episode_index: ep,
                    index: ks.iter().map(|&k| index[k]).collect(),
                    frame_index: ks.iter().map(|&k| frames[k]).collect(),
                    columns: columns
                        .iter()
                        .zip(&values)
                        .map(|(name, column)| NamedColumn {
                            name: (*name).to_owned(),
                            values: ks.iter().map(|&k| column[k].clone()).collect(),
                        })
                        .collect(),
                },
            );
        }
        Ok(out)
    }
}
