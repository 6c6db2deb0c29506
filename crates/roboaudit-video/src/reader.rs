//! Demux and decode one MP4's video stream in presentation order, converting frames to RGB24 at
//! the stored size only when asked (most decoded frames of a pass are never picked).

use std::path::{Path, PathBuf};

use ff::codec::decoder::Check;
use ff::software::scaling;
use ff::util::frame::video::Video as RawFrame;
use ffmpeg_next as ff;
use serde::Serialize;

use crate::VideoError;

/// A decoded frame: 8-bit RGB at the stored size, row-major, `pixels.len() == width * height * 3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RgbImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Interleaved R, G, B bytes, rows top to bottom, no padding.
    pub pixels: Vec<u8>,
}

/// What the container says about the video stream, before decoding anything.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamInfo {
    /// Codec as FFmpeg names it (`av1`, `h264`, `mpeg4`, ...).
    pub codec: String,
    /// The decoder that will be used (`libdav1d` for AV1 on Debian), `None` when none exists.
    pub decoder: Option<String>,
    /// Stored width in pixels.
    pub width: u32,
    /// Stored height in pixels.
    pub height: u32,
    /// Frame count from the container's index (`None` when it does not say).
    pub frames: Option<u64>,
    /// Stream duration in seconds (`None` when the container does not say).
    pub duration_s: Option<f64>,
    /// Average frame rate, frames per second (`None` when unknown).
    pub fps: Option<f64>,
}

/// A decoded frame not yet converted to RGB.
pub struct Decoded {
    /// Presentation time, seconds (pts × time base, as PyAV and LeRobot compute it).
    pub time_s: f64,
    frame: RawFrame,
}

impl Decoded {
    /// The frame's samples plane by plane (Y, then U, then V for the YUV formats LeRobot
    /// writes), rows without padding, one byte per sample: the normative output of the decoder,
    /// which any conformant decoder of the same stream reproduces bit for bit. `None` for
    /// other formats (high bit depth, packed).
    pub fn planes(&self) -> Option<Vec<u8>> {
        use ff::format::Pixel as P;
        let f = &self.frame;
        if !matches!(
            f.format(),
            P::YUV420P
                | P::YUVJ420P
                | P::YUV422P
                | P::YUVJ422P
                | P::YUV444P
                | P::YUVJ444P
                | P::GRAY8
        ) {
            return None;
        }
        let mut out = Vec::new();
        for k in 0..f.planes() {
            let (w, h, stride) = (
                f.plane_width(k) as usize,
                f.plane_height(k) as usize,
                f.stride(k),
            );
            let data = f.data(k);
            for y in 0..h {
                out.extend_from_slice(data.get(y * stride..y * stride + w)?);
            }
        }
        Some(out)
    }
}

/// Frame durations a [`VideoReader::seek`] aims before its target: x264 reorders at most 16
/// frames (its `bframes` limit), more than any other encoder LeRobot datasets use.
pub const SEEK_BACKOFF_FRAMES: f64 = 17.0;

/// One open video stream, decoding forward from the start or from the last seek.
pub struct VideoReader {
    path: PathBuf,
    input: ff::format::context::Input,
    decoder: ff::decoder::Video,
    stream: usize,
    time_base: TimeBase,
    info: StreamInfo,
    scaler: Option<(scaling::Context, ff::format::Pixel, u32, u32)>,
    /// The demuxer is exhausted and the decoder was told so.
    drained: bool,
    /// Set by a seek: its target time and the presentation time of the first keyframe read
    /// after it. Packets before that keyframe, and packets shown before it (leading B-frames,
    /// whose earlier reference lies before the keyframe), cannot be decoded and are skipped,
    /// until a packet shown at or after the target.
    after_seek: Option<(f64, Option<f64>)>,
    /// A decode failed between a seek and its target: the stream's keyframes are not all points
    /// decoding can start from (x264's non-IDR I-frames with the decoder stopping on errors), so
    /// every later seek decodes from the start instead.
    seek_from_start: bool,
    /// Frames decoded since opening (a count for benchmarks and tests).
    decoded: u64,
}

/// A stream's time base as a fraction.
#[derive(Debug, Clone, Copy)]
struct TimeBase {
    num: f64,
    den: f64,
}

impl TimeBase {
    /// `ts × num / den` seconds, rounded once as Python's `float(pts * time_base)` (a
    /// `Fraction`) is, so times compare exactly with PyAV's and LeRobot's.
    fn seconds(self, ts: i64) -> f64 {
        ts as f64 * self.num / self.den
    }
}

/// Initializes FFmpeg once and silences its logging (libraries do not print; errors come back
/// as values).
pub(crate) fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Registration is a no-op in FFmpeg ≥ 4 and cannot fail there.
        let _ = ff::init();
        ff::util::log::set_level(ff::util::log::Level::Quiet);
    });
}

fn rate(r: ff::Rational) -> Option<f64> {
    (r.numerator() > 0 && r.denominator() > 0)
        .then(|| f64::from(r.numerator()) / f64::from(r.denominator()))
}

/// Reads the stream description of `path` without decoding.
///
/// # Errors
/// [`VideoError::Open`] for a missing or unreadable file or an unrecognized container,
/// [`VideoError::NoVideoStream`].
pub fn probe(path: &Path) -> Result<StreamInfo, VideoError> {
    init();
    let input = ff::format::input(path).map_err(|source| VideoError::Open {
        file: path.to_path_buf(),
        source,
    })?;
    Ok(describe(path, &input)?.1)
}

fn describe(
    path: &Path,
    input: &ff::format::context::Input,
) -> Result<(usize, StreamInfo, ff::codec::Parameters, TimeBase), VideoError> {
    let stream = input
        .streams()
        .best(ff::media::Type::Video)
        .ok_or_else(|| VideoError::NoVideoStream {
            file: path.to_path_buf(),
        })?;
    let params = stream.parameters();
    let tb = stream.time_base();
    let time_base = TimeBase {
        num: f64::from(tb.numerator()),
        den: f64::from(tb.denominator().max(1)),
    };
    // SAFETY-free view of the dimensions: the decoder context built from the parameters.
    let ctx = ff::codec::Context::from_parameters(params.clone()).map_err(|source| {
        VideoError::Decode {
            file: path.to_path_buf(),
            what: "reading the stream parameters".to_owned(),
            source,
        }
    })?;
    let (width, height) = ctx
        .decoder()
        .video()
        .map(|v| (v.width(), v.height()))
        .unwrap_or((0, 0));
    let id = params.id();
    let info = StreamInfo {
        codec: id.name().to_owned(),
        decoder: ff::decoder::find(id).map(|c| c.name().to_owned()),
        width,
        height,
        frames: u64::try_from(stream.frames()).ok().filter(|n| *n > 0),
        duration_s: (stream.duration() > 0).then(|| time_base.seconds(stream.duration())),
        fps: rate(stream.avg_frame_rate()),
    };
    Ok((stream.index(), info, params, time_base))
}

impl VideoReader {
    /// Opens `path` and its best video stream with a decoder that stops on bitstream errors
    /// (a corrupt frame is an error, never a silently concealed picture).
    ///
    /// # Errors
    /// [`VideoError::Open`], [`VideoError::NoVideoStream`], [`VideoError::NoDecoder`] when the
    /// linked FFmpeg cannot decode the codec, [`VideoError::Decode`] when the decoder fails to
    /// open.
    pub fn open(path: &Path) -> Result<Self, VideoError> {
        init();
        let input = ff::format::input(path).map_err(|source| VideoError::Open {
            file: path.to_path_buf(),
            source,
        })?;
        let (stream, info, params, time_base) = describe(path, &input)?;
        let codec = ff::decoder::find(params.id()).ok_or_else(|| VideoError::NoDecoder {
            file: path.to_path_buf(),
            codec: info.codec.clone(),
        })?;
        let decode_err = |what: &str, source| VideoError::Decode {
            file: path.to_path_buf(),
            what: what.to_owned(),
            source,
        };
        let mut ctx = ff::codec::Context::from_parameters(params)
            .map_err(|e| decode_err("reading the stream parameters", e))?;
        ctx.set_threading(ff::codec::threading::Config {
            kind: ff::codec::threading::Type::Frame,
            count: 0,
            ..Default::default()
        });
        let mut dec = ctx.decoder();
        dec.check(Check::EXPLODE);
        let decoder = dec
            .open_as(codec)
            .and_then(|o| o.video())
            .map_err(|e| decode_err("opening the decoder", e))?;
        Ok(Self {
            path: path.to_path_buf(),
            input,
            decoder,
            stream,
            time_base,
            info,
            scaler: None,
            drained: false,
            after_seek: None,
            seek_from_start: false,
            decoded: 0,
        })
    }

    /// The stream description.
    pub fn info(&self) -> &StreamInfo {
        &self.info
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames decoded since opening.
    pub fn decoded_frames(&self) -> u64 {
        self.decoded
    }

    /// Moves to a keyframe shown at or before `time_s` (seconds): the frames
    /// [`next_frame`](Self::next_frame) returns from there include every frame shown at or after
    /// `time_s`.
    ///
    /// The MP4 demuxer seeks by decode time. With reordered frames (H.264 and MPEG-4 B-frames)
    /// the keyframe decoded before `time_s` can be shown after it, and the B-frames shown between
    /// cannot be decoded without the keyframe before them; so the seek aims
    /// [`SEEK_BACKOFF_FRAMES`] frame durations earlier (0.5 s when the stream declares no rate).
    ///
    /// # Errors
    /// [`VideoError::Decode`] when the demuxer cannot seek.
    pub fn seek(&mut self, time_s: f64) -> Result<(), VideoError> {
        if self.seek_from_start {
            return self.rewind();
        }
        let back = self.info.fps.map_or(0.5, |fps| SEEK_BACKOFF_FRAMES / fps);
        // avformat_seek_file with stream -1 takes AV_TIME_BASE (microsecond) units; its max_ts
        // (the range's end) is inclusive: the keyframe at or before `ts`.
        let ts = ((time_s - back).max(0.0) * f64::from(ff::ffi::AV_TIME_BASE)).floor() as i64;
        self.input
            .seek(ts, ..ts)
            .map_err(|source| VideoError::Decode {
                file: self.path.clone(),
                what: format!("seeking to {time_s:.3} s"),
                source,
            })?;
        self.decoder.flush();
        self.drained = false;
        self.after_seek = Some((time_s, None));
        Ok(())
    }

    /// Back to the first packet, decoder flushed.
    fn rewind(&mut self) -> Result<(), VideoError> {
        self.input
            .seek(0, ..0)
            .map_err(|source| VideoError::Decode {
                file: self.path.clone(),
                what: "seeking to the start".to_owned(),
                source,
            })?;
        self.decoder.flush();
        self.drained = false;
        self.after_seek = None;
        Ok(())
    }

    /// The next frame in presentation order, `None` at the end of the stream. After a
    /// [`seek`](Self::seek), frames before its target may come first.
    ///
    /// # Errors
    /// [`VideoError::Decode`] for a truncated or corrupt file (naming the packet's time).
    pub fn next_frame(&mut self) -> Result<Option<Decoded>, VideoError> {
        match self.decode_next() {
            // Decoding from the keyframe the seek found failed before its target: decode from
            // the start instead (the frames before the target are skipped by the caller), and
            // for every later seek. A failure there is the file's.
            Err(_) if self.after_seek.is_some() && !self.seek_from_start => {
                self.seek_from_start = true;
                self.rewind()?;
                self.decode_next()
            }
            other => other,
        }
    }

    fn decode_next(&mut self) -> Result<Option<Decoded>, VideoError> {
        let mut frame = RawFrame::empty();
        loop {
            match self.decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    self.decoded += 1;
                    let pts = frame.pts().or_else(|| frame.timestamp()).unwrap_or(0);
                    return Ok(Some(Decoded {
                        time_s: self.time_base.seconds(pts),
                        frame,
                    }));
                }
                Err(ff::Error::Eof) => return Ok(None),
                Err(ff::Error::Other { errno }) if errno == ff::util::error::EAGAIN => {}
                Err(source) => {
                    return Err(VideoError::Decode {
                        file: self.path.clone(),
                        what: "decoding a frame".to_owned(),
                        source,
                    });
                }
            }
            if self.drained {
                return Ok(None);
            }
            self.feed()?;
        }
    }

    /// Sends the next packet of the stream to the decoder, or end-of-stream.
    fn feed(&mut self) -> Result<(), VideoError> {
        let mut packet = ff::Packet::empty();
        loop {
            match packet.read(&mut self.input) {
                Ok(()) if packet.stream() == self.stream => break,
                Ok(()) => {}
                Err(ff::Error::Eof) => {
                    self.drained = true;
                    return self
                        .decoder
                        .send_eof()
                        .map_err(|source| VideoError::Decode {
                            file: self.path.clone(),
                            what: "flushing the decoder".to_owned(),
                            source,
                        });
                }
                Err(source) => {
                    return Err(VideoError::Decode {
                        file: self.path.clone(),
                        what: "reading a packet".to_owned(),
                        source,
                    });
                }
            }
        }
        let at = packet.pts().map(|p| self.time_base.seconds(p));
        if let Some((target, key_at)) = self.after_seek {
            let shown = at.unwrap_or(f64::NEG_INFINITY);
            match key_at {
                None if !packet.is_key() => return Ok(()),
                None => self.after_seek = Some((target, Some(shown))),
                Some(k) if shown < k => return Ok(()),
                Some(_) if shown >= target => self.after_seek = None,
                Some(_) => {}
            }
        }
        self.decoder
            .send_packet(&packet)
            .map_err(|source| VideoError::Decode {
                file: self.path.clone(),
                what: at.map_or_else(
                    || "decoding a packet".to_owned(),
                    |t| format!("decoding the packet at {t:.3} s"),
                ),
                source,
            })
    }

    /// Converts a decoded frame to RGB24 at its stored size (swscale, as PyAV's `to_rgb`).
    ///
    /// # Errors
    /// [`VideoError::Decode`] when the pixel format cannot be converted.
    pub fn to_rgb(&mut self, decoded: &Decoded) -> Result<RgbImage, VideoError> {
        let src = &decoded.frame;
        let (format, width, height) = (src.format(), src.width(), src.height());
        let stale = !matches!(&self.scaler, Some((_, f, w, h)) if *f == format && *w == width && *h == height);
        let conv_err = |source| VideoError::Decode {
            file: self.path.clone(),
            what: format!("converting a {format:?} frame to RGB24"),
            source,
        };
        if stale {
            let ctx = scaling::Context::get(
                format,
                width,
                height,
                ff::format::Pixel::RGB24,
                width,
                height,
                scaling::Flags::BILINEAR,
            )
            .map_err(conv_err)?;
            self.scaler = Some((ctx, format, width, height));
        }
        let mut out = RawFrame::empty();
        if let Some((ctx, ..)) = self.scaler.as_mut() {
            ctx.run(src, &mut out).map_err(conv_err)?;
        }
        let row = width as usize * 3;
        let stride = out.stride(0);
        let data = out.data(0);
        let mut pixels = Vec::with_capacity(row * height as usize);
        for y in 0..height as usize {
            pixels.extend_from_slice(&data[y * stride..y * stride + row]);
        }
        Ok(RgbImage {
            width,
            height,
            pixels,
        })
    }
}
