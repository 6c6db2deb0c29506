//! `video` features: frames decoded from the MP4 files the episodes metadata points to, picked
//! for each frame's timestamp with LeRobot's rule (`roboaudit_video::frames_at_times`): the
//! query time is the episode's `from_timestamp` in the file (0 for v2.1) plus the frame's
//! `timestamp` (a `float32` column widened to `f64`, as LeRobot's reader does).
//!
//! A pass decodes each MP4 file once, in time order, for all the episodes it holds (v3.0 keeps
//! many per file), and skips files none of whose frames are wanted (all cached).

use roboaudit_types::seed::Fnv1a;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use roboaudit_video::{FfmpegError, QueryError, VideoError, VideoReader, frames_at_times};

use super::image::Rgb8Image;
use super::info::FeatureKind;
use super::table::ParquetTable;
use super::{Episode, LeRobotDataset, frames::not_readable};
use crate::DataError;

/// One frame of a video feature, as a pass identifies it before decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoFrameId {
    /// `episode_index`.
    pub episode_index: i64,
    /// `frame_index`.
    pub frame_index: i64,
    /// Global `index` of the row.
    pub index: i64,
    /// Query time in the MP4 file, seconds (`from_timestamp + timestamp`).
    pub time_s: f64,
    /// Content key: FNV-1a 64 of the MP4 file's content hash and `time_s`'s bits; the same
    /// frame of the same file has the same key in any dataset or run (for feature caches).
    pub key: u64,
}

/// FNV-1a 64 of a file's bytes, read in 1 MiB blocks.
fn file_hash(path: &Path) -> Result<u64, std::io::Error> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0; 1 << 20];
    let mut h = Fnv1a::new();
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(h.finish());
        }
        h.write(&buf[..n]);
    }
}

fn frame_key(file_hash: u64, time_s: f64) -> u64 {
    Fnv1a::new()
        .write_u64(file_hash)
        .write_u64(time_s.to_bits())
        .finish()
}

/// Rows of one episode in a data file: (frame_index, index, timestamp).
type Rows = Vec<(i64, i64, f32)>;

impl LeRobotDataset {
    /// The MP4 file holding episode `ep`'s frames of `feature` and the episode's start in it:
    /// the file the metadata names, or the same path under `video/` instead of `videos/` when
    /// only that exists (seen in real datasets).
    ///
    /// # Errors
    /// [`DataError::Invalid`] when the metadata gives the episode no file for the feature.
    pub fn video_file(&self, ep: &Episode, feature: &str) -> Result<(PathBuf, f64), DataError> {
        let v = ep
            .videos
            .iter()
            .find(|v| v.feature == feature)
            .ok_or_else(|| {
                DataError::invalid(
                    &self.root.join(&ep.meta_file),
                    Some(ep.meta_row),
                    Some(feature),
                    format!("episode {} names no video file for \"{feature}\"", ep.index),
                )
            })?;
        let full = self.root.join(&v.file);
        let file = if full.is_file() {
            full
        } else {
            super::inspect::misplaced_video(&self.root, &v.file)
                .map_or(full, |alt| self.root.join(alt))
        };
        Ok((file, v.from_timestamp.unwrap_or(0.0)))
    }

    pub(crate) fn check_video(&self, feature: &str) -> Result<(), DataError> {
        if self.feature(feature).map(|f| f.kind) == Some(FeatureKind::Video) {
            Ok(())
        } else {
            Err(not_readable(self, feature, "a video"))
        }
    }

    /// Per episode of `wanted`, its rows (frame_index order) from the data files, each file once.
    fn video_rows(&self, wanted: &BTreeSet<i64>) -> Result<BTreeMap<i64, Rows>, DataError> {
        let mut files: BTreeSet<&Path> = BTreeSet::new();
        for ep in self.episodes.iter().filter(|e| wanted.contains(&e.index)) {
            files.insert(&ep.data_file);
        }
        let mut out: BTreeMap<i64, Rows> = BTreeMap::new();
        for rel in files {
            let file = self.root.join(rel);
            let table = ParquetTable::read(&file, &|n| {
                matches!(n, "episode_index" | "frame_index" | "index" | "timestamp")
            })?;
            let episodes = table.ints("episode_index")?;
            let frames = table.ints("frame_index")?;
            let index = table.ints("index")?;
            let times = table.vectors("timestamp")?;
            for (k, ep) in episodes.iter().enumerate() {
                if wanted.contains(ep) {
                    let t = times[k].first().copied().ok_or_else(|| {
                        DataError::invalid(&file, Some(k + 1), Some("timestamp"), "empty timestamp")
                    })?;
                    out.entry(*ep).or_default().push((frames[k], index[k], t));
                }
            }
        }
        for rows in out.values_mut() {
            rows.sort_by_key(|r| r.0);
        }
        Ok(out)
    }

    /// Calls `f` with the decoded frames of the `video` feature `feature` whose id `wanted`
    /// accepts, MP4 file by MP4 file (path order), each file decoded once in time order;
    /// `wanted` sees every frame of every episode in the metadata (in file, then time order)
    /// before any is decoded. `tolerance_s` is LeRobot's (`roboaudit_video::DEFAULT_TOLERANCE_S`).
    ///
    /// # Errors
    /// [`DataError::Invalid`] when `feature` is not a declared video feature;
    /// [`DataError::Video`] naming episode, frame and MP4 file when a file is missing,
    /// truncated or undecodable or a frame's timestamp has no frame within the tolerance; data
    /// file errors; and whatever `f` returns.
    pub fn for_each_video_frame<E: From<DataError>>(
        &self,
        feature: &str,
        tolerance_s: f64,
        wanted: &mut dyn FnMut(&VideoFrameId) -> bool,
        f: &mut dyn FnMut(&VideoFrameId, Rgb8Image) -> Result<(), E>,
    ) -> Result<(), E> {
        let all: BTreeSet<i64> = self.episodes.iter().map(|e| e.index).collect();
        self.video_pass(feature, tolerance_s, &all, wanted, f)
    }

    /// [`for_each_video_frame`](Self::for_each_video_frame) over the episodes in `only`.
    fn video_pass<E: From<DataError>>(
        &self,
        feature: &str,
        tolerance_s: f64,
        only: &BTreeSet<i64>,
        wanted: &mut dyn FnMut(&VideoFrameId) -> bool,
        f: &mut dyn FnMut(&VideoFrameId, Rgb8Image) -> Result<(), E>,
    ) -> Result<(), E> {
        self.check_video(feature)?;
        let rows = self.video_rows(only)?;
        let mut by_file: BTreeMap<PathBuf, Vec<(&Episode, f64)>> = BTreeMap::new();
        for ep in self.episodes.iter().filter(|e| only.contains(&e.index)) {
            let (file, from) = self.video_file(ep, feature)?;
            by_file.entry(file).or_default().push((ep, from));
        }
        for (file, mut episodes) in by_file {
            episodes.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.index.cmp(&b.0.index)));
            let first = episodes.first().map_or(-1, |e| e.0.index);
            let video_err = |episode, frame, error| DataError::Video {
                episode,
                frame,
                feature: feature.to_owned(),
                error,
            };
            let hash = file_hash(&file).map_err(|e| {
                // FFmpeg's own message for the file (missing, unreadable) when it has one.
                let error = VideoReader::open(&file).err().unwrap_or(VideoError::Open {
                    file: file.clone(),
                    source: FfmpegError::from(-e.raw_os_error().unwrap_or(5)),
                });
                video_err(first, None, error)
            })?;
            let mut ids = Vec::new();
            for (ep, from) in &episodes {
                for &(frame_index, index, t) in rows.get(&ep.index).into_iter().flatten() {
                    let time_s = from + f64::from(t);
                    let id = VideoFrameId {
                        episode_index: ep.index,
                        frame_index,
                        index,
                        time_s,
                        key: frame_key(hash, time_s),
                    };
                    if wanted(&id) {
                        ids.push(id);
                    }
                }
            }
            if ids.is_empty() {
                continue;
            }
            let mut reader = VideoReader::open(&file).map_err(|e| video_err(first, None, e))?;
            let times: Vec<f64> = ids.iter().map(|id| id.time_s).collect();
            let mut failed = None;
            let result =
                frames_at_times::<QueryError>(&mut reader, &times, tolerance_s, &mut |p| {
                    let id = &ids[p.query];
                    let image = Rgb8Image {
                        width: p.image.width,
                        height: p.image.height,
                        pixels: p.image.pixels.clone(),
                    };
                    if let Err(e) = f(id, image) {
                        failed = Some(e);
                        return Err(QueryError {
                            query: Some(p.query),
                            error: VideoError::BadQuery {
                                file: file.clone(),
                                query_s: f64::NAN,
                            },
                        });
                    }
                    Ok(())
                });
            if let Some(e) = failed {
                return Err(e);
            }
            if let Err(QueryError { query, error }) = result {
                let (episode, frame) = query
                    .map(|k| (ids[k].episode_index, Some(ids[k].frame_index)))
                    .unwrap_or((first, None));
                return Err(video_err(episode, frame, error).into());
            }
        }
        Ok(())
    }

    /// Decodes frame `frame` (its `frame_index`) of episode `episode` of the `video` feature
    /// `feature`: seeks to the keyframe before the frame's time and decodes forward.
    ///
    /// # Errors
    /// As [`for_each_video_frame`](Self::for_each_video_frame); [`DataError::Invalid`] when
    /// the episode or frame does not exist.
    pub fn read_video_frame(
        &self,
        episode: i64,
        frame: i64,
        feature: &str,
        tolerance_s: f64,
    ) -> Result<Rgb8Image, DataError> {
        self.check_video(feature)?;
        let ep = self.episode_or_err(episode)?;
        let no_frame = || {
            DataError::invalid(
                &self.root.join(&ep.data_file),
                None,
                Some("frame_index"),
                format!("episode {episode} has no frame {frame}"),
            )
        };
        let rows = self.video_rows(&BTreeSet::from([episode]))?;
        if !rows
            .get(&episode)
            .is_some_and(|r| r.iter().any(|(f, ..)| *f == frame))
        {
            return Err(no_frame());
        }
        let mut found = None;
        let only = BTreeSet::from([episode]);
        let mut pick = |id: &VideoFrameId| id.frame_index == frame;
        self.video_pass::<DataError>(feature, tolerance_s, &only, &mut pick, &mut |_, img| {
            found = Some(img);
            Ok(())
        })?;
        found.ok_or_else(no_frame)
    }

    /// One frame of a camera, whichever way it is stored: a `video` feature through
    /// [`read_video_frame`](Self::read_video_frame), an `image` feature through
    /// [`read_image`](Self::read_image) (`tolerance_s` unused).
    ///
    /// # Errors
    /// Those of the two readers.
    pub fn read_frame(
        &self,
        episode: i64,
        frame: i64,
        feature: &str,
        tolerance_s: f64,
    ) -> Result<Rgb8Image, DataError> {
        if self.feature(feature).map(|f| f.kind) == Some(FeatureKind::Video) {
            self.read_video_frame(episode, frame, feature, tolerance_s)
        } else {
            self.read_image(episode, frame, feature)
        }
    }

    /// The `video` features, sorted by name, whose MP4 files exist for every episode of the
    /// metadata and whose first file opens with a decoder (a cheap check: no frame is
    /// decoded). What `--features auto` may pick as a camera.
    pub fn decodable_video_features(&self) -> Vec<String> {
        self.video_feature_checks()
            .into_iter()
            .filter(|(_, problem)| problem.is_none())
            .map(|(name, _)| name)
            .collect()
    }

    /// The camera a command picks when none is named (`embed`, `--features auto`): the first
    /// `image` feature by name, else the first of
    /// [`decodable_video_features`](Self::decodable_video_features); `None` without either.
    pub fn first_camera(&self) -> Option<String> {
        self.features()
            .iter()
            .filter(|f| f.kind == FeatureKind::Image)
            .map(|f| f.name.as_str())
            .min()
            .map(str::to_owned)
            .or_else(|| self.decodable_video_features().into_iter().next())
    }

    /// The `video` features, sorted by name, that [`decodable_video_features`]
    /// (Self::decodable_video_features) leaves out, each with why: the episode with no file in
    /// the metadata, the first missing MP4 file, or the first file's open error. What a user
    /// needs to hear when `--features auto` passes a camera over.
    pub fn undecodable_video_features(&self) -> Vec<(String, String)> {
        self.video_feature_checks()
            .into_iter()
            .filter_map(|(name, problem)| Some((name, problem?)))
            .collect()
    }

    /// Every `video` feature, sorted by name, with why it cannot serve as a camera (`None`: it
    /// can).
    fn video_feature_checks(&self) -> Vec<(String, Option<String>)> {
        let mut out: Vec<(String, Option<String>)> = self
            .info
            .features
            .iter()
            .filter(|f| f.kind == FeatureKind::Video)
            .map(|f| (f.name.clone(), self.video_feature_problem(&f.name)))
            .collect();
        out.sort();
        out
    }

    /// Why `feature`'s MP4 files cannot serve as a camera, or `None` when they can.
    fn video_feature_problem(&self, feature: &str) -> Option<String> {
        let mut files = BTreeSet::new();
        for ep in &self.episodes {
            match self.video_file(ep, feature) {
                Ok((file, _)) => {
                    files.insert(file);
                }
                Err(e) => return Some(roboaudit_types::error_chain(&e)),
            }
        }
        let Some(first) = files.first() else {
            return Some("the metadata lists no episode".to_owned());
        };
        if let Some(missing) = files.iter().find(|p| !p.is_file()) {
            return Some(format!("{} is missing", missing.display()));
        }
        VideoReader::open(first).err().map(|e| {
            format!(
                "{} does not open: {}",
                first.display(),
                roboaudit_types::error_chain(&e)
            )
        })
    }
}
