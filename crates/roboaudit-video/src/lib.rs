//! Video frame source for roboaudit: the camera streams of LeRobot datasets (MP4 with AV1,
//! H.264 or MPEG-4 Part 2) decoded with the system's FFmpeg libraries (the libav decoders PyAV
//! and LeRobot use; AV1 through libdav1d) to RGB24 at the stored size.
//!
//! - [`VideoReader`]: open a file, seek to the keyframe before a time, decode forward in
//!   presentation order, convert a frame to RGB.
//! - [`frames_at_times`]: LeRobot's frame-for-timestamp rule (nearest frame in presentation time,
//!   strict tolerance, `float32` distances) over a batch of query times in one forward pass.
//! - [`probe`]: the stream description (codec, size, frame count, duration) without decoding.
//! - [`VideoWriter`]: RGB24 frames to an MP4 with LeRobot's encoder settings (`yuv420p`, GOP 2,
//!   CRF 30, AV1 from `libsvtav1` when linked and the frames are at least 64 px, else H.264 from `libx264`), written atomically.
//!
//! Errors name the file ([`VideoError`] reading, [`EncodeError`] writing); the LeRobot layer (`roboaudit-data`) adds episode and frame.

mod error;
mod pick;
mod reader;
mod writer;

pub use error::{QueryError, VideoError};
/// FFmpeg's error type, as carried by [`VideoError`].
pub use ffmpeg_next::Error as FfmpegError;
pub use pick::{
    DEFAULT_TOLERANCE_S, Picked, SEEK_GAP_S, frames_at_times, prefer_before, within_tolerance,
};
pub use reader::{Decoded, RgbImage, StreamInfo, VideoReader, probe};
pub use writer::{
    ENCODER_THREADS, EncodeError, EncodeSettings, EncodedVideo, LEROBOT_CRF, LEROBOT_GOP, PIX_FMT,
    SVT_AV1_MIN_SIDE, VideoCodec, VideoWriter,
};
