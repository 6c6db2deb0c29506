//! `inspect`'s video check: every MP4 file of a video feature is opened and decoded whole (no
//! colour conversion), and each episode it holds must have a decoded frame within LeRobot's
//! tolerance of every frame time `from_timestamp + k / fps`, `k < length`. Failures become
//! [`Problem`](super::Problem)s naming file and episode, never errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use roboaudit_video::{DEFAULT_TOLERANCE_S, VideoReader, within_tolerance};

use super::inspect::Problems;
use super::{Episode, LeRobotDataset};

/// What decoding the files of one feature found.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Decoded {
    /// Files decoded to the end without error.
    pub files: usize,
    /// Frames decoded in them.
    pub frames: u64,
}

/// The decoded frame time nearest to `t` in the sorted `times` (the earlier on a tie).
fn nearest(times: &[f64], t: f64) -> Option<f64> {
    let k = times.partition_point(|x| *x < t);
    let after = times.get(k).copied();
    let before = k.checked_sub(1).map(|j| times[j]);
    if roboaudit_video::prefer_before(t, before, after) {
        before
    } else {
        after
    }
}

impl LeRobotDataset {
    /// Decodes every present MP4 file of `feature` and checks it against its episodes.
    pub(crate) fn check_video_frames(&self, feature: &str, problems: &mut Problems) -> Decoded {
        let mut by_file: BTreeMap<PathBuf, Vec<(&Episode, f64)>> = BTreeMap::new();
        for ep in &self.episodes {
            if let Ok((file, from)) = self.video_file(ep, feature)
                && file.is_file()
            {
                by_file.entry(file).or_default().push((ep, from));
            }
        }
        let mut out = Decoded::default();
        for (file, episodes) in by_file {
            let rel = file.strip_prefix(&self.root).unwrap_or(&file).to_path_buf();
            let first = episodes.iter().map(|e| e.0.index).min();
            match decode_times(&file) {
                Err(message) => problems.push(
                    "undecodable video",
                    &rel,
                    first,
                    None,
                    format!("video feature \"{feature}\": {message}"),
                ),
                Ok(times) => {
                    out.files += 1;
                    out.frames += times.len() as u64;
                    self.check_episodes(feature, &rel, &times, &episodes, problems);
                }
            }
        }
        out
    }

    fn check_episodes(
        &self,
        feature: &str,
        rel: &Path,
        times: &[f64],
        episodes: &[(&Episode, f64)],
        problems: &mut Problems,
    ) {
        let fps = self.info.fps;
        let mut expected = 0u64;
        for (ep, from) in episodes {
            let Some(length) = ep.length else { continue };
            expected += length;
            let mut missing = 0u64;
            let mut first_miss = None;
            for k in 0..length {
                let t = from + k as f64 / fps;
                let near = nearest(times, t);
                if !near.is_some_and(|n| within_tolerance(t, n, DEFAULT_TOLERANCE_S)) {
                    missing += 1;
                    first_miss = first_miss.or(Some((k, t, near)));
                }
            }
            if let Some((k, t, near)) = first_miss {
                problems.push(
                    "video frames",
                    rel,
                    Some(ep.index),
                    None,
                    format!(
                        "video feature \"{feature}\", episode {}: {missing} of {length} frame times have no decoded frame within {DEFAULT_TOLERANCE_S} s (first: frame {k} at {t:.6} s, nearest decoded frame {}); the file holds {} frames",
                        ep.index,
                        near.map_or_else(|| "none".to_owned(), |n| format!("at {n:.6} s")),
                        times.len()
                    ),
                );
            }
        }
        // A one-episode-per-file layout (v2.1, or v3.0 files of one episode): every decoded
        // frame belongs to the episode, so the counts must agree.
        if expected > 0 && times.len() as u64 != expected {
            let what = if episodes.len() == 1 {
                "its episode's length"
            } else {
                "the lengths of its episodes"
            };
            problems.push(
                "video frame count",
                rel,
                episodes.iter().map(|e| e.0.index).min(),
                None,
                format!(
                    "video feature \"{feature}\": the file holds {} frames, {what} add up to {expected}",
                    times.len()
                ),
            );
        }
    }
}

/// Presentation times of every frame of `file`, sorted; the error's text names the failure.
fn decode_times(file: &Path) -> Result<Vec<f64>, String> {
    let mut reader = VideoReader::open(file).map_err(|e| roboaudit_types::error_chain(&e))?;
    let mut times = Vec::new();
    while let Some(d) = reader
        .next_frame()
        .map_err(|e| roboaudit_types::error_chain(&e))?
    {
        times.push(d.time_s);
    }
    times.sort_by(f64::total_cmp);
    Ok(times)
}
