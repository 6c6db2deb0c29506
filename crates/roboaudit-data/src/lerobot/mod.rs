//! LeRobot datasets, format v3.0 and v2.1: metadata, numeric frames, PNG `image` features,
//! success labels and an inspection report.
//!
//! Layout read (LeRobot's documented formats):
//! - `meta/info.json`: version, fps, robot, totals, `data_path`/`video_path` templates, features;
//! - v3.0: `meta/episodes/chunk-*/file-*.parquet` (episode → data file, global index range,
//!   video file and time range), `meta/tasks.parquet`, `data/chunk-*/file-*.parquet` with many
//!   episodes per file;
//! - v2.1: `meta/episodes.jsonl`, `meta/tasks.jsonl`, one `data/chunk-*/episode_*.parquet` per
//!   episode.
//!
//! `video` features are MP4 files (AV1, H.264, MPEG-4), decoded through `roboaudit-video` with
//! LeRobot's frame-for-timestamp rule ([`LeRobotDataset::for_each_video_frame`],
//! [`LeRobotDataset::read_video_frame`]).
//! Opening checks only what reading needs; [`LeRobotDataset::inspect`] checks everything else
//! and reports inconsistencies as [`Problem`]s instead of failing.
//!
//! ```no_run
//! use roboaudit_data::lerobot::LeRobotDataset;
//! let ds = LeRobotDataset::open("datasets/pusht")?;
//! let report = ds.inspect()?;
//! println!("{}", roboaudit_data::lerobot::render_inspect(&report));
//! # Ok::<(), roboaudit_data::DataError>(())
//! ```

mod frames;
mod image;
mod image_stream;
mod info;
mod inspect;
mod labels;
mod labels_verdict;
mod meta;
mod mp4;
mod policy_actions;
mod render;
pub mod request;
mod scan;
mod stats_check;
mod table;
mod video;
mod video_check;
pub mod write;

use std::path::{Path, PathBuf};

pub use frames::{EpisodeFrames, NamedColumn};
pub use image::{Rgb8Image, decode_png};
pub use image_stream::ImageBytes;
pub use info::{Feature, FeatureKind, ImageLayout, Info, LeRobotVersion, VideoInfo};
pub use inspect::{FeatureSummary, InspectReport, LabelSummary, Problem};
pub use labels::{EpisodeLabel, LabelSources, SuccessSource, read_label_sources, read_labels_file};
pub use meta::{Episode, Task, VideoLocation};
pub use policy_actions::{PolicyActions, policy_actions_parquet, read_policy_actions};
pub use render::render_inspect;
/// LeRobot's default tolerance between a frame's timestamp and the decoded frame, seconds.
pub use roboaudit_video::DEFAULT_TOLERANCE_S;
pub use video::VideoFrameId;

use crate::DataError;

/// An opened LeRobot dataset: its metadata in memory, frames read on demand.
#[derive(Debug, Clone)]
pub struct LeRobotDataset {
    root: PathBuf,
    info: Info,
    episodes: Vec<Episode>,
    tasks: Vec<Task>,
}

impl LeRobotDataset {
    /// Opens the dataset at `dir`: reads `meta/info.json`, the episodes and the tasks metadata.
    /// No data file is read.
    ///
    /// # Errors
    /// [`DataError`] naming the file when `meta/info.json` is missing (pointing to `dir/dataset`
    /// when that is a dataset: a run folder), unreadable, has an unsupported `codebase_version`
    /// or no `fps`, or a `data_path`/`video_path` leaving the folder; when the episodes or tasks
    /// metadata is missing or malformed; or when an episode index is described twice.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DataError> {
        let root = dir.as_ref().to_path_buf();
        let info_file = root.join("meta/info.json");
        // A run folder of `fqe collect` holds its dataset in `dataset/`: say so rather than
        // only that meta/info.json is missing.
        if !info_file.exists() && root.join("dataset/meta/info.json").is_file() {
            return Err(DataError::invalid(
                &info_file,
                None,
                None,
                format!(
                    "{} is not a LeRobot dataset, but {} is (a run folder: give the dataset \
                     folder, or `fqe fit --run` the run)",
                    root.display(),
                    root.join("dataset").display()
                ),
            ));
        }
        let info = info::read_info(&info_file)?;
        let episodes = meta::read_episodes(&root, &info)?;
        let tasks = meta::read_tasks(&root, info.version)?;
        Ok(Self {
            root,
            info,
            episodes,
            tasks,
        })
    }

    /// The dataset folder given to [`open`](Self::open).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Format version.
    pub fn version(&self) -> LeRobotVersion {
        self.info.version
    }

    /// The parsed `meta/info.json`.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// Features sorted by name, the bookkeeping columns (`timestamp`, `index`, ...) last.
    pub fn features(&self) -> &[Feature] {
        &self.info.features
    }

    /// The feature named `name`, if declared.
    pub fn feature(&self, name: &str) -> Option<&Feature> {
        self.info.features.iter().find(|f| f.name == name)
    }

    /// Episodes from the metadata, sorted by index.
    pub fn episodes(&self) -> &[Episode] {
        &self.episodes
    }

    /// The episode with index `index`, if described by the metadata.
    pub fn episode(&self, index: i64) -> Option<&Episode> {
        self.episodes
            .binary_search_by_key(&index, |e| e.index)
            .ok()
            .map(|k| &self.episodes[k])
    }

    /// Tasks, sorted by task index.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Frames per second from `meta/info.json`.
    pub fn fps(&self) -> f64 {
        self.info.fps
    }

    /// `robot_type`, when given.
    pub fn robot_type(&self) -> Option<&str> {
        self.info.robot_type.as_deref()
    }

    fn episode_or_err(&self, index: i64) -> Result<&Episode, DataError> {
        self.episode(index).ok_or_else(|| {
            DataError::invalid(
                &self.root.join("meta"),
                None,
                Some("episode_index"),
                format!(
                    "episode {index} is not in the episodes metadata ({} episodes)",
                    self.episodes.len()
                ),
            )
        })
    }
}
