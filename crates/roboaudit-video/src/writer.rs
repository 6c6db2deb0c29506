//! Encode RGB24 frames into an MP4 the way LeRobot's `encode_video_frames` does: `yuv420p`,
//! GOP 2, CRF 30, AV1 from `libsvtav1` when the linked FFmpeg has it, else H.264 from `libx264`,
//! constant frame rate, frame `k` presented at `k / fps` seconds.

use std::path::{Path, PathBuf};

use ff::software::scaling;
use ff::util::frame::video::Video as RawFrame;
use ffmpeg_next as ff;
use serde::Serialize;

/// LeRobot's GOP size (`g=2`): a keyframe every second frame, so any frame decodes from at most
/// one predecessor.
pub const LEROBOT_GOP: u32 = 2;
/// LeRobot's constant rate factor (`crf=30`).
pub const LEROBOT_CRF: u32 = 30;
/// Pixel format of every written stream.
pub const PIX_FMT: &str = "yuv420p";

/// The codec a stream is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum VideoCodec {
    /// AV1 through `libsvtav1` (LeRobot's default).
    Av1,
    /// H.264 through `libx264`.
    H264,
}

impl VideoCodec {
    /// The FFmpeg encoder's name (`libsvtav1`, `libx264`).
    pub fn encoder_name(self) -> &'static str {
        match self {
            Self::Av1 => "libsvtav1",
            Self::H264 => "libx264",
        }
    }

    /// The codec's name as LeRobot's `info.json` records it (`av1`, `h264`).
    pub fn codec_name(self) -> &'static str {
        match self {
            Self::Av1 => "av1",
            Self::H264 => "h264",
        }
    }

    /// Whether the linked FFmpeg libraries have this encoder.
    pub fn available(self) -> bool {
        crate::reader::init();
        ff::encoder::find_by_name(self.encoder_name()).is_some()
    }

    /// AV1 when `libsvtav1` is linked, else H.264 when `libx264` is, else `None`.
    pub fn preferred() -> Option<Self> {
        [Self::Av1, Self::H264].into_iter().find(|c| c.available())
    }

    /// [`preferred`](Self::preferred) for `width`×`height` frames: AV1 only when both sides are
    /// at least [`SVT_AV1_MIN_SIDE`] (SVT-AV1 1.4 refuses smaller pictures), else H.264.
    pub fn preferred_for(width: u32, height: u32) -> Option<Self> {
        let fits = |c: &Self| *c != Self::Av1 || width.min(height) >= SVT_AV1_MIN_SIDE;
        [Self::Av1, Self::H264]
            .into_iter()
            .find(|c| fits(c) && c.available())
    }
}

/// Smallest picture side, pixels, SVT-AV1 (as linked from Debian 12, 1.4) encodes.
pub const SVT_AV1_MIN_SIDE: u32 = 64;

/// Encoder settings. [`EncodeSettings::lerobot`] gives LeRobot's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EncodeSettings {
    /// Codec.
    pub codec: VideoCodec,
    /// Frames per second; frame `k` gets pts `k` in a `1/fps` time base.
    pub fps: u32,
    /// GOP size (keyframe interval), frames.
    pub gop: u32,
    /// Constant rate factor.
    pub crf: u32,
}

impl EncodeSettings {
    /// LeRobot's settings at `fps` with the preferred available codec ([`VideoCodec::preferred`]).
    ///
    /// # Errors
    /// [`EncodeError::NoEncoder`] when neither `libsvtav1` nor `libx264` is linked.
    pub fn lerobot(fps: u32) -> Result<Self, EncodeError> {
        Self::lerobot_for(fps, u32::MAX, u32::MAX)
    }

    /// LeRobot's settings at `fps` for `width`×`height` frames, with
    /// [`VideoCodec::preferred_for`] the size.
    ///
    /// # Errors
    /// [`EncodeError::NoEncoder`] when no fitting encoder is linked.
    pub fn lerobot_for(fps: u32, width: u32, height: u32) -> Result<Self, EncodeError> {
        let codec =
            VideoCodec::preferred_for(width, height).ok_or_else(|| EncodeError::NoEncoder {
                encoder: "libsvtav1 or libx264".to_owned(),
            })?;
        Ok(Self {
            codec,
            fps,
            gop: LEROBOT_GOP,
            crf: LEROBOT_CRF,
        })
    }
}

/// What went wrong writing a video file.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The linked FFmpeg libraries have no such encoder.
    #[error("no {encoder} encoder in the linked FFmpeg libraries")]
    NoEncoder {
        /// The encoder asked for.
        encoder: String,
    },
    /// Width or height odd or zero (`yuv420p` needs even sides), `fps` zero, or a frame of the
    /// wrong size.
    #[error("invalid video input: {reason}, for {}", file.display())]
    BadInput {
        /// The file being written.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// FFmpeg failed (opening the encoder, muxing, writing).
    #[error("cannot encode video {} ({what})", file.display())]
    Encode {
        /// The file being written.
        file: PathBuf,
        /// The step that failed.
        what: String,
        /// FFmpeg's reason.
        source: ff::Error,
    },
    /// Renaming the finished temporary file into place failed.
    #[error("cannot move the finished video into place at {}", file.display())]
    Io {
        /// The file being written.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What [`VideoWriter::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EncodedVideo {
    /// The final file.
    pub file: PathBuf,
    /// Frames written.
    pub frames: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The settings used.
    pub settings: EncodeSettings,
}

/// Threads given to the encoder. One: SVT-AV1 and x264 then make every decision in one fixed
/// order, so the same frames give the same bytes on any machine; the frames roboaudit writes are
/// small (≤ 256×256), where one thread encodes hundreds of frames a second.
pub const ENCODER_THREADS: usize = 1;

/// An MP4 being written. Frames go to `<file>.tmp`; [`finish`](Self::finish) flushes the encoder,
/// writes the trailer and renames the file into place, so a reader never sees a partial video.
pub struct VideoWriter {
    file: PathBuf,
    tmp: PathBuf,
    output: ff::format::context::Output,
    encoder: ff::encoder::Video,
    scaler: scaling::Context,
    enc_tb: ff::Rational,
    stream_tb: ff::Rational,
    width: u32,
    height: u32,
    frames: u64,
    settings: EncodeSettings,
}

impl VideoWriter {
    /// Starts an MP4 at `file` (its directory must exist) of `width`×`height` frames.
    ///
    /// # Errors
    /// [`EncodeError::BadInput`] for odd or zero sides or zero fps, [`EncodeError::NoEncoder`],
    /// [`EncodeError::Encode`] when FFmpeg cannot create the file or open the encoder.
    pub fn create(
        file: &Path,
        width: u32,
        height: u32,
        settings: &EncodeSettings,
    ) -> Result<Self, EncodeError> {
        crate::reader::init();
        let bad = |reason: String| EncodeError::BadInput {
            file: file.to_path_buf(),
            reason,
        };
        if width == 0 || height == 0 || width % 2 == 1 || height % 2 == 1 {
            return Err(bad(format!(
                "frame size {width}x{height}: yuv420p needs even, non-zero sides"
            )));
        }
        if settings.fps == 0 || settings.gop == 0 {
            return Err(bad("fps and gop must be positive".to_owned()));
        }
        let fps = i32::try_from(settings.fps).map_err(|_| bad("fps too large".to_owned()))?;
        let codec = ff::encoder::find_by_name(settings.codec.encoder_name()).ok_or_else(|| {
            EncodeError::NoEncoder {
                encoder: settings.codec.encoder_name().to_owned(),
            }
        })?;
        let mut tmp_name = file.as_os_str().to_owned();
        tmp_name.push(".tmp");
        let tmp = PathBuf::from(tmp_name);
        let err = |what: &str| {
            let file = file.to_path_buf();
            let what = what.to_owned();
            move |source| EncodeError::Encode { file, what, source }
        };
        let mut output =
            ff::format::output_as(&tmp, "mp4").map_err(err("creating the MP4 container"))?;
        let global_header = output
            .format()
            .flags()
            .contains(ff::format::Flags::GLOBAL_HEADER);
        let enc_tb = ff::Rational::new(1, fps);
        let mut ctx = ff::codec::Context::new_with_codec(codec);
        ctx.set_threading(ff::codec::threading::Config {
            kind: ff::codec::threading::Type::Frame,
            count: ENCODER_THREADS,
            ..Default::default()
        });
        let mut enc = ctx.encoder().video().map_err(err("creating the encoder"))?;
        enc.set_width(width);
        enc.set_height(height);
        enc.set_format(ff::format::Pixel::YUV420P);
        enc.set_time_base(enc_tb);
        enc.set_frame_rate(Some(ff::Rational::new(fps, 1)));
        enc.set_gop(settings.gop);
        if global_header {
            enc.set_flags(ff::codec::Flags::GLOBAL_HEADER);
        }
        let mut opts = ff::Dictionary::new();
        opts.set("crf", &settings.crf.to_string());
        if settings.codec == VideoCodec::Av1 {
            opts.set("svtav1-params", &format!("lp={ENCODER_THREADS}"));
        }
        let encoder = enc
            .open_as_with(codec, opts)
            .map_err(err("opening the encoder"))?;
        {
            let mut stream = output
                .add_stream(codec)
                .map_err(err("adding the video stream"))?;
            stream.set_parameters(&encoder);
            stream.set_time_base(enc_tb);
            stream.set_rate(ff::Rational::new(fps, 1));
            stream.set_avg_frame_rate(ff::Rational::new(fps, 1));
        }
        output
            .write_header()
            .map_err(err("writing the MP4 header"))?;
        let stream_tb = output.stream(0).map(|s| s.time_base()).unwrap_or(enc_tb);
        let scaler = scaling::Context::get(
            ff::format::Pixel::RGB24,
            width,
            height,
            ff::format::Pixel::YUV420P,
            width,
            height,
            scaling::Flags::BILINEAR,
        )
        .map_err(err("creating the RGB24 to yuv420p converter"))?;
        Ok(Self {
            file: file.to_path_buf(),
            tmp,
            output,
            encoder,
            scaler,
            enc_tb,
            stream_tb,
            width,
            height,
            frames: 0,
            settings: settings.clone(),
        })
    }

    /// Frames pushed so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Appends one frame: interleaved RGB24, rows top to bottom without padding,
    /// `rgb.len() == width * height * 3`. It is presented at `frames() / fps` seconds.
    ///
    /// # Errors
    /// [`EncodeError::BadInput`] for a buffer of the wrong length, [`EncodeError::Encode`].
    pub fn push(&mut self, rgb: &[u8]) -> Result<(), EncodeError> {
        let row = self.width as usize * 3;
        if rgb.len() != row * self.height as usize {
            return Err(EncodeError::BadInput {
                file: self.file.clone(),
                reason: format!(
                    "frame {} has {} bytes, expected {}x{}x3",
                    self.frames,
                    rgb.len(),
                    self.width,
                    self.height
                ),
            });
        }
        let mut src = RawFrame::new(ff::format::Pixel::RGB24, self.width, self.height);
        let stride = src.stride(0);
        let data = src.data_mut(0);
        for (y, line) in rgb.chunks_exact(row).enumerate() {
            data[y * stride..y * stride + row].copy_from_slice(line);
        }
        let mut yuv = RawFrame::empty();
        let file = self.file.clone();
        self.scaler
            .run(&src, &mut yuv)
            .map_err(|source| EncodeError::Encode {
                file,
                what: "converting RGB24 to yuv420p".to_owned(),
                source,
            })?;
        let pts = i64::try_from(self.frames).unwrap_or(i64::MAX);
        yuv.set_pts(Some(pts));
        self.encoder
            .send_frame(&yuv)
            .map_err(|source| EncodeError::Encode {
                file: self.file.clone(),
                what: format!("encoding frame {}", self.frames),
                source,
            })?;
        self.frames += 1;
        self.drain()
    }

    /// Writes every packet the encoder has ready.
    fn drain(&mut self) -> Result<(), EncodeError> {
        let mut packet = ff::Packet::empty();
        loop {
            match self.encoder.receive_packet(&mut packet) {
                Ok(()) => {
                    packet.set_stream(0);
                    packet.rescale_ts(self.enc_tb, self.stream_tb);
                    packet
                        .write_interleaved(&mut self.output)
                        .map_err(|source| EncodeError::Encode {
                            file: self.file.clone(),
                            what: "writing a packet".to_owned(),
                            source,
                        })?;
                }
                Err(ff::Error::Eof) => return Ok(()),
                Err(ff::Error::Other { errno }) if errno == ff::util::error::EAGAIN => {
                    return Ok(());
                }
                Err(source) => {
                    return Err(EncodeError::Encode {
                        file: self.file.clone(),
                        what: "receiving a packet".to_owned(),
                        source,
                    });
                }
            }
        }
    }

    /// Flushes the encoder, writes the MP4 trailer and renames the temporary file to the final
    /// path.
    ///
    /// # Errors
    /// [`EncodeError::BadInput`] when no frame was pushed, [`EncodeError::Encode`],
    /// [`EncodeError::Io`] when the rename fails.
    pub fn finish(mut self) -> Result<EncodedVideo, EncodeError> {
        if self.frames == 0 {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(EncodeError::BadInput {
                file: self.file.clone(),
                reason: "no frames".to_owned(),
            });
        }
        self.encoder
            .send_eof()
            .map_err(|source| EncodeError::Encode {
                file: self.file.clone(),
                what: "flushing the encoder".to_owned(),
                source,
            })?;
        self.drain()?;
        self.output
            .write_trailer()
            .map_err(|source| EncodeError::Encode {
                file: self.file.clone(),
                what: "writing the MP4 trailer".to_owned(),
                source,
            })?;
        std::fs::rename(&self.tmp, &self.file).map_err(|source| EncodeError::Io {
            file: self.file.clone(),
            source,
        })?;
        Ok(EncodedVideo {
            file: self.file.clone(),
            frames: self.frames,
            width: self.width,
            height: self.height,
            settings: self.settings.clone(),
        })
    }
}

impl Drop for VideoWriter {
    fn drop(&mut self) {
        // An unfinished writer leaves nothing behind (after `finish` the file is gone already).
        let _ = std::fs::remove_file(&self.tmp);
    }
}
