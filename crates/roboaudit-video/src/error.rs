//! The crate's one error type. Every variant names the video file; the LeRobot layer adds the
//! episode and frame a failing query belongs to.

use std::path::PathBuf;

/// What went wrong reading a video file.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    /// The file does not exist or cannot be read.
    #[error("cannot open video {}", file.display())]
    Open {
        /// The video file.
        file: PathBuf,
        /// FFmpeg's reason (a missing file reads "No such file or directory").
        source: ffmpeg_next::Error,
    },
    /// The container holds no video stream.
    #[error("no video stream, in {}", file.display())]
    NoVideoStream {
        /// The video file.
        file: PathBuf,
    },
    /// The stream's codec has no decoder in the linked FFmpeg libraries.
    #[error("no decoder for codec {codec} in the linked FFmpeg libraries, in {}", file.display())]
    NoDecoder {
        /// The video file.
        file: PathBuf,
        /// The stream's codec, as FFmpeg names it (`av1`, `h264`, `mpeg4`, ...).
        codec: String,
    },
    /// Demuxing, decoding or colour conversion failed (a truncated file, a corrupt frame).
    #[error("cannot decode video {} ({what})", file.display())]
    Decode {
        /// The video file.
        file: PathBuf,
        /// The step that failed and where, e.g. `packet near 3.200 s`.
        what: String,
        /// FFmpeg's reason.
        source: ffmpeg_next::Error,
    },
    /// No decoded frame lies within the tolerance of a query time (LeRobot's check: the
    /// nearest frame's distance must be strictly below `tolerance_s`).
    #[error(
        "no frame within {tolerance_s} s of {query_s:.6} s (nearest decoded frame at {}), in {}",
        nearest_s.map_or_else(|| "none: the video has no frames there".to_owned(), |t| format!("{t:.6} s")),
        file.display()
    )]
    Tolerance {
        /// The video file.
        file: PathBuf,
        /// The query time, seconds in the file.
        query_s: f64,
        /// Presentation time of the nearest decoded frame, seconds; `None` when none was decoded.
        nearest_s: Option<f64>,
        /// The tolerance, seconds.
        tolerance_s: f64,
    },
    /// A query time is not a finite number.
    #[error("query time {query_s} is not finite, in {}", file.display())]
    BadQuery {
        /// The video file.
        file: PathBuf,
        /// The offending time.
        query_s: f64,
    },
}

impl VideoError {
    /// The video file the error is about.
    pub fn file(&self) -> &std::path::Path {
        match self {
            Self::Open { file, .. }
            | Self::NoVideoStream { file }
            | Self::NoDecoder { file, .. }
            | Self::Decode { file, .. }
            | Self::Tolerance { file, .. }
            | Self::BadQuery { file, .. } => file,
        }
    }
}

/// An error met while serving a batch of queries: the query being served (index into the
/// caller's slice), when there was one, and the error.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct QueryError {
    /// Index of the query being served when it failed; `None` for errors before any query.
    pub query: Option<usize>,
    /// What went wrong.
    #[source]
    pub error: VideoError,
}
