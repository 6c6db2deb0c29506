//! Video frame source for roboaudit: the camera streams of LeRobot datasets (MP4 with AV1,
//! H.264 or MPEG-4 Part 2) decoded with the system's FFmpeg libraries (the libav decoders PyAV
//! and LeRobot use; AV1 through libdav1d) to RGB24 at the stored size.
//!
//! - [`VideoReader`]: open a file, seek to the keyframe before a time, decode forward in
//!   presentation order, convert a frame to RGB.
//! - [`frames_at_times`]: LeRobot's frame-for-timestamp rule (nearest frame in presentation time,
//!   strict tolerance, `float32` distances) over a batch of query times in one forward pass.
//! - [`probe`]: the stream description (codec, size, frame count, duration) without decoding.
//!
//! Errors name the file; the LeRobot layer (`roboaudit-data`) adds episode and frame.

mod error;
mod pick;
mod reader;

pub use error::{QueryError, VideoError};
/// FFmpeg's error type, as carried by [`VideoError`].
pub use ffmpeg_next::Error as FfmpegError;
pub use pick::{
    DEFAULT_TOLERANCE_S, Picked, SEEK_GAP_S, frames_at_times, prefer_before, within_tolerance,
};
pub use reader::{Decoded, RgbImage, StreamInfo, VideoReader, probe};
