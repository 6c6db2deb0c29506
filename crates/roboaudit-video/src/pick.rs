//! LeRobot's frame-for-timestamp rule (`lerobot.datasets.video_utils.decode_video_frames`, pyav
//! backend): for each query time the decoded frame nearest in presentation time is taken, the
//! earlier one on a tie (`argmin` over frames in decode order), and the query fails unless that
//! distance is strictly below `tolerance_s`. LeRobot computes the distances in `float32`
//! (`torch.cdist` on `float32` tensors), so this does too: which frame is picked and whether it
//! passes are then the same bit for bit.
//!
//! Queries are served in time order in one forward pass: the reader seeks (to the keyframe at or
//! before a query) only to skip a gap longer than [`SEEK_GAP_S`], never backwards, so one call
//! decodes each frame of the file at most once and holds two decoded frames at a time.

use crate::reader::{Decoded, RgbImage, VideoReader};
use crate::{QueryError, VideoError};

/// LeRobot's default `tolerance_s`, seconds.
pub const DEFAULT_TOLERANCE_S: f64 = 1e-4;

/// A gap between the decoded position and the next query longer than this (seconds) is skipped
/// by seeking instead of decoding through it.
pub const SEEK_GAP_S: f64 = 2.0;

/// A frame picked for a query.
#[derive(Debug, Clone, Copy)]
pub struct Picked<'a> {
    /// Index of the query in the caller's slice.
    pub query: usize,
    /// The query time, seconds in the file.
    pub query_s: f64,
    /// Presentation time of the picked frame, seconds.
    pub frame_s: f64,
    /// The frame, RGB24 at the stored size.
    pub image: &'a RgbImage,
}

/// LeRobot's distance between a query and a frame time: `|q − t|` in `float32`.
fn distance(query_s: f64, frame_s: f64) -> f32 {
    ((query_s as f32) - (frame_s as f32)).abs()
}

/// Which of the two frames around a query LeRobot takes: `before` (time < query) wins ties.
/// Returns `true` for `before`.
pub fn prefer_before(query_s: f64, before_s: Option<f64>, after_s: Option<f64>) -> bool {
    match (before_s, after_s) {
        (Some(b), Some(a)) => distance(query_s, b) <= distance(query_s, a),
        (Some(_), None) => true,
        _ => false,
    }
}

/// Whether a frame at `frame_s` passes LeRobot's tolerance for a query at `query_s`.
pub fn within_tolerance(query_s: f64, frame_s: f64, tolerance_s: f64) -> bool {
    distance(query_s, frame_s) < tolerance_s as f32
}

/// Serves `times` (seconds in the file, any order) with LeRobot's rule, calling `f` once per
/// query in time order (ties in slice order).
///
/// # Errors
/// A [`QueryError`] naming the query: [`VideoError::BadQuery`] for a non-finite time,
/// [`VideoError::Tolerance`] when the nearest frame is too far (a time outside the video),
/// [`VideoError::Decode`] for a corrupt or truncated file; and whatever `f` returns.
pub fn frames_at_times<E: From<QueryError>>(
    reader: &mut VideoReader,
    times: &[f64],
    tolerance_s: f64,
    f: &mut dyn FnMut(Picked<'_>) -> Result<(), E>,
) -> Result<(), E> {
    if let Some(k) = times.iter().position(|t| !t.is_finite()) {
        return Err(QueryError {
            query: Some(k),
            error: VideoError::BadQuery {
                file: reader.path().to_path_buf(),
                query_s: times[k],
            },
        }
        .into());
    }
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by(|a, b| times[*a].total_cmp(&times[*b]));
    let mut before: Option<Decoded> = None;
    let mut after: Option<Decoded> = None;
    let mut ended = false;
    let mut started = false;
    // The last converted frame, reused when consecutive queries pick it.
    let mut rgb: Option<(f64, RgbImage)> = None;
    for k in order {
        let q = times[k];
        let tag = |error| QueryError {
            query: Some(k),
            error,
        };
        let reached = after
            .as_ref()
            .or(before.as_ref())
            .map(|d| d.time_s)
            .unwrap_or(0.0);
        if (!started && q > SEEK_GAP_S) || (started && !ended && q - reached > SEEK_GAP_S) {
            reader.seek(q).map_err(tag)?;
            before = None;
            after = None;
            ended = false;
        }
        started = true;
        // Advance until `after` is the first frame at or past q and `before` the one before it.
        while !ended && after.as_ref().is_none_or(|a| a.time_s < q) {
            match reader.next_frame().map_err(tag)? {
                Some(d) => {
                    if let Some(a) = after.take() {
                        before = Some(a);
                    }
                    if d.time_s < q {
                        before = Some(d);
                    } else {
                        after = Some(d);
                    }
                }
                None => {
                    ended = true;
                    if let Some(a) = after.take().filter(|a| a.time_s < q) {
                        before = Some(a);
                    } else if let Some(a) = after.take() {
                        after = Some(a);
                    }
                }
            }
        }
        let (b, a) = (
            before.as_ref().map(|d| d.time_s),
            after.as_ref().map(|d| d.time_s),
        );
        let chosen = if prefer_before(q, b, a) {
            before.as_ref()
        } else {
            after.as_ref()
        };
        let Some(chosen) = chosen else {
            return Err(tag(VideoError::Tolerance {
                file: reader.path().to_path_buf(),
                query_s: q,
                nearest_s: None,
                tolerance_s,
            })
            .into());
        };
        if !within_tolerance(q, chosen.time_s, tolerance_s) {
            return Err(tag(VideoError::Tolerance {
                file: reader.path().to_path_buf(),
                query_s: q,
                nearest_s: Some(chosen.time_s),
                tolerance_s,
            })
            .into());
        }
        if rgb.as_ref().is_none_or(|(t, _)| *t != chosen.time_s) {
            rgb = Some((chosen.time_s, reader.to_rgb(chosen).map_err(tag)?));
        }
        if let Some((t, image)) = &rgb {
            f(Picked {
                query: k,
                query_s: q,
                frame_s: *t,
                image,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_earlier_frame_in_float32() {
        // Exactly half-way between frames 0.1 and 0.2 in f32 arithmetic: the earlier wins.
        assert!(
            prefer_before(0.15, Some(0.1), Some(0.2))
                == (distance(0.15, 0.1) <= distance(0.15, 0.2))
        );
        assert!(prefer_before(0.5, Some(0.25), Some(0.75)));
        assert!(!prefer_before(0.5, Some(0.25), Some(0.7)));
        assert!(!prefer_before(0.0, None, Some(0.0)));
        assert!(prefer_before(9.0, Some(1.0), None));
    }

    #[test]
    fn tolerance_is_strict_and_in_float32() {
        // 1/30 s in f64 vs the f32 of the frame time: equal in f32, so within any tolerance.
        assert!(within_tolerance(1.0 / 30.0, f64::from(1.0f32 / 30.0), 1e-4));
        assert!(!within_tolerance(1.0, 1.0 + 2e-4, 1e-4));
        assert!(within_tolerance(1.0, 1.0 + 5e-5, 1e-4));
        // Distance exactly at the tolerance fails (LeRobot asserts `min < tolerance_s`).
        assert!(!within_tolerance(0.0, 0.5, 0.5));
    }
}
