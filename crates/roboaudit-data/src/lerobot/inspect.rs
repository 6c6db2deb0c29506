//! `inspect`: a summary of a dataset and every inconsistency found between its metadata, data
//! and video files (each MP4 decoded whole). Inconsistencies are collected as [`Problem`]s, never raised as errors.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::info::{FeatureKind, ImageLayout, LeRobotVersion};
use super::meta::Task;
use super::{LeRobotDataset, labels_verdict, mp4, scan};
use crate::DataError;

/// One inconsistency: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// The file at fault, relative to the dataset root.
    pub file: PathBuf,
    /// The episode concerned, when one is.
    pub episode: Option<i64>,
    /// 1-based row of `file`, when one row is at fault.
    pub row: Option<usize>,
    /// What is wrong, with the values seen.
    pub message: String,
    /// Whether the problem stops `fqe fit` and `data detect` from reading the dataset with
    /// their default columns: a data file missing or unreadable, an episode without rows, a
    /// repeated global `index`, or a missing, malformed, non-finite or undecodable value in
    /// `action`, `observation.state` or an `image` feature. `data inspect` exits with code 3
    /// when any problem blocks.
    pub blocking: bool,
}

/// One feature as declared and as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureSummary {
    /// Feature key.
    pub name: String,
    /// Declared dtype.
    pub dtype: String,
    /// Declared shape.
    pub shape: Vec<usize>,
    /// How it is stored.
    pub kind: FeatureKind,
    /// Axis order, for image and video features.
    pub layout: Option<ImageLayout>,
    /// Number of element names declared.
    pub names: Option<usize>,
    /// Arrow storage type seen in the first data file (`None` for videos or unread files).
    pub storage: Option<String>,
    /// A remark for the reader (video codec and that it needs decoding; variable-size lists).
    pub note: Option<String>,
}

/// What can serve as the success label (SPEC.md §3 `r_i`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelSummary {
    /// `(column, episodes where it is true on some frame)` for each success-like column.
    pub success_columns: Vec<(String, usize)>,
    /// Reward column statistics, when the dataset has `next.reward` or `reward`.
    pub reward: Option<RewardSummary>,
    /// Frames where `next.done` is true, when the column exists.
    pub done_frames: Option<usize>,
    /// One sentence: which source to use, or that a labels file is needed.
    pub verdict: String,
}

/// Statistics of a reward column over all frames.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewardSummary {
    /// Column name.
    pub column: String,
    /// Smallest reward.
    pub min: f64,
    /// Largest reward.
    pub max: f64,
    /// Mean reward over frames.
    pub mean: f64,
    /// Frames with a non-zero reward.
    pub nonzero_frames: usize,
    /// Largest last-frame reward over episodes.
    pub max_last: f64,
    /// Whether every value is 0 or 1 (a sparse success reward).
    pub binary: bool,
}

/// Video files of one video feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VideoSummary {
    /// Feature key.
    pub feature: String,
    /// Codec declared in `meta/info.json`.
    pub declared_codec: Option<String>,
    /// Distinct files the metadata points to.
    pub files_expected: usize,
    /// How many of them exist.
    pub files_present: usize,
    /// Codec read from the first file found (at the expected path or a recognised misplacement).
    pub found_codec: Option<String>,
    /// Files (present, possibly misplaced) that decoded to the end.
    pub files_decoded: usize,
    /// Frames decoded in them.
    pub frames_decoded: u64,
}

/// The result of [`LeRobotDataset::inspect`]; serializable as JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectReport {
    /// Dataset folder.
    pub dir: PathBuf,
    /// Format version.
    pub version: LeRobotVersion,
    /// `robot_type`.
    pub robot_type: Option<String>,
    /// Frames per second.
    pub fps: f64,
    /// Episodes in the metadata.
    pub episodes: usize,
    /// `total_episodes` of `meta/info.json`.
    pub total_episodes: Option<u64>,
    /// Distinct episodes found in the data files.
    pub episodes_in_data: usize,
    /// Data rows read.
    pub frames: usize,
    /// `total_frames` of `meta/info.json`.
    pub total_frames: Option<u64>,
    /// Shortest and longest episode (rows in the data), when any was read.
    pub episode_length_range: Option<(usize, usize)>,
    /// Distinct data files the metadata points to.
    pub data_files: usize,
    /// Tasks.
    pub tasks: Vec<Task>,
    /// Features in the order of [`LeRobotDataset::features`].
    pub features: Vec<FeatureSummary>,
    /// One entry per video feature.
    pub videos: Vec<VideoSummary>,
    /// Label availability.
    pub labels: LabelSummary,
    /// Inconsistencies, in the order found (repeats of one kind are summarised after 5).
    pub problems: Vec<Problem>,
    /// Data files that exist but cannot be read at all (a corrupt or truncated Parquet file).
    pub unreadable_data_files: usize,
    /// Problems that make the dataset unusable ([`Problem::blocking`]), counting those beyond
    /// the first few of a kind that [`problems`](Self::problems) leaves out.
    pub blocking_problems: usize,
}

/// Collects problems, keeping the first few of each kind and counting the rest.
#[derive(Default)]
pub(crate) struct Problems {
    list: Vec<Problem>,
    counts: BTreeMap<&'static str, usize>,
    blocking: usize,
}

/// Problems of one kind kept before the rest are only counted.
const PER_KIND: usize = 5;

impl Problems {
    pub(crate) fn push(
        &mut self,
        kind: &'static str,
        file: &Path,
        episode: Option<i64>,
        row: Option<usize>,
        message: impl Into<String>,
    ) {
        self.add(kind, file, episode, row, message.into(), false);
    }

    /// [`push`](Self::push) for a problem that makes the dataset unusable ([`Problem::blocking`]).
    pub(crate) fn push_blocking(
        &mut self,
        kind: &'static str,
        file: &Path,
        episode: Option<i64>,
        row: Option<usize>,
        message: impl Into<String>,
    ) {
        self.add(kind, file, episode, row, message.into(), true);
    }

    fn add(
        &mut self,
        kind: &'static str,
        file: &Path,
        episode: Option<i64>,
        row: Option<usize>,
        message: String,
        blocking: bool,
    ) {
        self.blocking += usize::from(blocking);
        let count = self.counts.entry(kind).or_insert(0);
        *count += 1;
        if *count <= PER_KIND {
            self.list.push(Problem {
                file: file.to_path_buf(),
                episode,
                row,
                message,
                blocking,
            });
        }
    }

    /// The problems, and how many of them block.
    fn finish(mut self) -> (Vec<Problem>, usize) {
        for (kind, count) in &self.counts {
            if *count > PER_KIND {
                self.list.push(Problem {
                    file: PathBuf::new(),
                    episode: None,
                    row: None,
                    message: format!(
                        "... and {} more problems of kind \"{kind}\" (only the first {PER_KIND} are listed)",
                        count - PER_KIND
                    ),
                    blocking: false,
                });
            }
        }
        (self.list, self.blocking)
    }
}

impl LeRobotDataset {
    /// Reads every data file and checks the dataset against its metadata: row counts against
    /// `total_frames` and episode lengths, `frame_index` and global `index` continuity,
    /// `timestamp = frame_index / fps` (within 1e-4 s), v3.0 index ranges, data and video files
    /// present, declared features against columns and widths, NaN or infinite values in numeric
    /// columns, the first and last frame of every episode of each `image` feature decoded (a
    /// sample: decoding every frame would cost as much as encoding them), declared against
    /// actual video codecs, per-feature fps, task indices, label availability, and that
    /// `meta/stats.json`, when present, parses and gives each feature's `min`, `max`, `mean` and
    /// `std` as many numbers as the feature has values (numeric) or channels (image, video).
    ///
    /// # Errors
    /// None at present: unreadable files become [`Problem`]s. The `Result` leaves room for
    /// failures that make a report meaningless.
    pub fn inspect(&self) -> Result<InspectReport, DataError> {
        let mut problems = Problems::default();
        let info_file = Path::new("meta/info.json");
        self.check_metadata(&mut problems, info_file);
        self.check_stats(&mut problems);
        let scanned = scan::scan_data(self, &mut problems);
        let videos = self.check_videos(&mut problems);
        let labels = labels_verdict::label_summary(self, &scanned, &mut problems);
        if let Some(total) = self.info.total_frames
            && total != scanned.rows as u64
            && scanned.unreadable_files == 0
        {
            problems.push(
                "frame count",
                info_file,
                None,
                None,
                format!(
                    "total_frames is {total}, the data files hold {} rows",
                    scanned.rows
                ),
            );
        }
        let features = self
            .info
            .features
            .iter()
            .map(|f| FeatureSummary {
                name: f.name.clone(),
                dtype: f.dtype.clone(),
                shape: f.shape.clone(),
                kind: f.kind,
                layout: f.layout,
                names: f.names.as_ref().map(Vec::len),
                storage: scanned.storage.get(&f.name).cloned(),
                note: match f.kind {
                    FeatureKind::Video => Some(format!(
                        "video{}: MP4 frames, decoded by timestamp",
                        f.video
                            .as_ref()
                            .and_then(|v| v.codec.as_deref())
                            .map(|c| format!(" ({c})"))
                            .unwrap_or_default()
                    )),
                    _ => scanned.notes.get(&f.name).cloned(),
                },
            })
            .collect();
        let lengths = scanned.episodes.values().map(|e| e.rows);
        let (problems, blocking_problems) = problems.finish();
        Ok(InspectReport {
            dir: self.root.clone(),
            version: self.info.version,
            robot_type: self.info.robot_type.clone(),
            fps: self.info.fps,
            episodes: self.episodes.len(),
            total_episodes: self.info.total_episodes,
            episodes_in_data: scanned.episodes.len(),
            frames: scanned.rows,
            total_frames: self.info.total_frames,
            episode_length_range: lengths.clone().min().zip(lengths.max()),
            data_files: scanned.files,
            tasks: self.tasks.clone(),
            features,
            videos,
            labels,
            problems,
            unreadable_data_files: scanned.unreadable.len(),
            blocking_problems,
        })
    }

    fn check_metadata(&self, problems: &mut Problems, info_file: &Path) {
        let counts = [
            (
                "episode count",
                "total_episodes",
                self.info.total_episodes,
                self.episodes.len(),
                "the episodes metadata describes",
            ),
            (
                "task count",
                "total_tasks",
                self.info.total_tasks,
                self.tasks.len(),
                "the tasks metadata lists",
            ),
        ];
        for (kind, key, total, found, metadata) in counts {
            if let Some(total) = total
                && total != found as u64
            {
                problems.push(
                    kind,
                    info_file,
                    None,
                    None,
                    format!("{key} is {total}, {metadata} {found}"),
                );
            }
        }
        let fps = self.info.fps;
        for f in &self.info.features {
            let video_fps = f.video.as_ref().and_then(|v| v.fps);
            for (what, value) in [("fps", f.fps), ("video.fps", video_fps)] {
                if let Some(v) = value
                    && (v - fps).abs() > 1e-9
                {
                    problems.push(
                        "feature fps",
                        info_file,
                        None,
                        None,
                        format!(
                            "feature \"{}\" has {what} {v}, the dataset has fps {fps}",
                            f.name
                        ),
                    );
                }
            }
        }
        // (episode, feature, span, expected) of every episode whose video span disagrees.
        let mut spans = Vec::new();
        let mut checked = 0;
        for ep in &self.episodes {
            for video in &ep.videos {
                if let (Some(from), Some(to), Some(length)) =
                    (video.from_timestamp, video.to_timestamp, ep.length)
                {
                    checked += 1;
                    let expected = length as f64 / fps;
                    if ((to - from) - expected).abs() > 0.5 / fps {
                        spans.push((ep, &video.feature, to - from, length, expected));
                    }
                }
            }
        }
        if let Some((ep, feature, span, length, expected)) = spans.first() {
            let short = spans
                .iter()
                .filter(|(_, _, span, length, _)| {
                    ((span * fps) - (*length as f64 - 1.0)).abs() < 0.5
                })
                .count();
            let pattern = if short == spans.len() {
                ", each one frame short ((length − 1)/fps)".to_owned()
            } else {
                String::new()
            };
            problems.push(
                "video time range",
                &ep.meta_file,
                Some(ep.index),
                Some(ep.meta_row),
                format!(
                    "to_timestamp − from_timestamp disagrees with length/fps in {} of {checked} episode videos{pattern}; e.g. episode {} videos/{feature}: {span:.4} s, but {length}/{fps} = {expected:.4} s",
                    spans.len(),
                    ep.index,
                ),
            );
        }
    }

    fn check_videos(&self, problems: &mut Problems) -> Vec<VideoSummary> {
        let mut out = Vec::new();
        for feature in self
            .info
            .features
            .iter()
            .filter(|f| f.kind == FeatureKind::Video)
        {
            // file -> first episode using it
            let mut files: BTreeMap<&Path, i64> = BTreeMap::new();
            for ep in &self.episodes {
                for v in ep.videos.iter().filter(|v| v.feature == feature.name) {
                    files.entry(&v.file).or_insert(ep.index);
                }
            }
            let mut present = 0;
            let mut found_codec = None;
            let mut missing: Vec<(&Path, i64)> = Vec::new();
            let mut misplaced: Vec<PathBuf> = Vec::new();
            for (file, episode) in &files {
                let full = self.root.join(file);
                if full.is_file() {
                    present += 1;
                    found_codec = found_codec.or_else(|| mp4::codec_of(&full));
                } else {
                    missing.push((file, *episode));
                    if let Some(alt) = misplaced_video(&self.root, file) {
                        found_codec = found_codec.or_else(|| mp4::codec_of(&self.root.join(&alt)));
                        misplaced.push(alt);
                    }
                }
            }
            if let Some((file, episode)) = missing.first() {
                let message = format!(
                    "video feature \"{}\": {} of {} video files are missing (first: episode {episode})",
                    feature.name,
                    missing.len(),
                    files.len()
                );
                problems.push("missing video", file, Some(*episode), None, message);
            }
            if let Some(first) = misplaced.first() {
                problems.push(
                    "misplaced video",
                    first,
                    None,
                    None,
                    format!(
                        "{} video file(s) of \"{}\" exist under a different folder than video_path says (video_path: {})",
                        misplaced.len(),
                        feature.name,
                        self.info.video_path.as_deref().unwrap_or("none")
                    ),
                );
            }
            let declared = feature.video.as_ref().and_then(|v| v.codec.clone());
            if let (Some(d), Some(f)) = (&declared, &found_codec)
                && !mp4::same_codec(d, f)
            {
                problems.push(
                    "codec",
                    Path::new("meta/info.json"),
                    None,
                    None,
                    format!(
                        "video feature \"{}\" declares codec {d}, but its MP4 file holds {f}",
                        feature.name
                    ),
                );
            }
            let decoded = self.check_video_frames(&feature.name, problems);
            out.push(VideoSummary {
                feature: feature.name.clone(),
                declared_codec: declared,
                files_expected: files.len(),
                files_present: present,
                found_codec,
                files_decoded: decoded.files,
                frames_decoded: decoded.frames,
            });
        }
        out
    }
}

/// A video at `videos/…` that is really at `video/…` (seen in real datasets), relative path.
pub(crate) fn misplaced_video(root: &Path, rel: &Path) -> Option<PathBuf> {
    let rest = rel.strip_prefix("videos").ok()?;
    let alt = Path::new("video").join(rest);
    root.join(&alt).is_file().then_some(alt)
}

/// Per-episode accumulation while scanning data files.
#[derive(Debug, Default)]
pub(crate) struct EpisodeScan {
    pub rows: usize,
    pub min_index: Option<i64>,
    pub max_index: Option<i64>,
    /// Per success-like column: true on some frame.
    pub success: HashMap<String, bool>,
    /// Last frame's reward (by frame_index).
    pub last_reward: Option<(i64, f64)>,
    /// Frames with `next.done` true, and whether the last frame is among them.
    pub done_frames: Vec<i64>,
    pub max_frame: Option<i64>,
}
