//! `image` features: PNG bytes stored in Parquet (`{bytes, path}` structs), decoded to RGB8.

use std::io::Cursor;
use std::ops::ControlFlow;

use serde::Serialize;

use super::LeRobotDataset;
use crate::DataError;

/// A decoded image: 8-bit RGB, row-major, `pixels.len() == width * height * 3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rgb8Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Interleaved R, G, B bytes, rows top to bottom.
    pub pixels: Vec<u8>,
}

impl Rgb8Image {
    /// The `[r, g, b]` of pixel `(x, y)`, or `None` outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let k = (usize::try_from(y).ok()? * usize::try_from(self.width).ok()?
            + usize::try_from(x).ok()?)
            * 3;
        Some([self.pixels[k], self.pixels[k + 1], self.pixels[k + 2]])
    }
}

impl Rgb8Image {
    /// Encodes the image as an 8-bit RGB PNG (default compression).
    ///
    /// # Errors
    /// A message when the pixel buffer does not match `width × height × 3` or the encoder
    /// fails.
    pub fn to_png(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| format!("cannot encode PNG: {e}"))?;
        writer
            .write_image_data(&self.pixels)
            .map_err(|e| format!("cannot encode PNG: {e}"))?;
        writer
            .finish()
            .map_err(|e| format!("cannot encode PNG: {e}"))?;
        Ok(out)
    }
}

/// Decodes PNG bytes of any colour type and bit depth to RGB8 (alpha dropped, grey copied to
/// the three channels, 16-bit samples truncated to their high byte).
///
/// # Errors
/// A message (no file name: the caller knows it) when the bytes are not a valid PNG image.
pub fn decode_png(bytes: &[u8]) -> Result<Rgb8Image, String> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder
        .read_info()
        .map_err(|e| format!("not a valid PNG image: {e}"))?;
    let size = reader
        .output_buffer_size()
        .ok_or("PNG image too large to decode")?;
    let mut buf = vec![0; size];
    let out = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("corrupt PNG image: {e}"))?;
    buf.truncate(out.buffer_size());
    let samples = match out.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err("indexed PNG was not expanded".to_owned()),
    };
    let pixels = if samples == 3 && out.line_size == out.width as usize * 3 {
        buf
    } else {
        let mut rgb = Vec::with_capacity(out.width as usize * out.height as usize * 3);
        for line in buf.chunks(out.line_size) {
            for px in line[..out.width as usize * samples].chunks(samples) {
                match samples {
                    1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                    _ => rgb.extend_from_slice(&px[..3]),
                }
            }
        }
        rgb
    };
    Ok(Rgb8Image {
        width: out.width,
        height: out.height,
        pixels,
    })
}

impl LeRobotDataset {
    /// Decodes frame `frame` (the `frame_index` value) of episode `episode` of the `image`
    /// feature `feature` to RGB8. Inline PNG bytes are used; when a row holds only a `path`,
    /// it is read relative to the dataset root. Only the episode's data file is streamed, up to
    /// the frame; to read many frames, stream them with
    /// [`for_each_image`](Self::for_each_image) instead.
    ///
    /// # Errors
    /// [`DataError::Invalid`] when the feature is not declared, is a `video` feature (read those with
    /// [`read_video_frame`](Self::read_video_frame)) or is not an image; when the episode or frame does not exist; or when the bytes are not a
    /// valid PNG (naming file, row and column). [`DataError::Io`]/[`DataError::Parquet`] when
    /// the data file cannot be read.
    pub fn read_image(
        &self,
        episode: i64,
        frame: i64,
        feature: &str,
    ) -> Result<Rgb8Image, DataError> {
        self.check_image(feature)?;
        let ep = self.episode_or_err(episode)?;
        let file = self.root.join(&ep.data_file);
        let mut found = None;
        self.stream_file::<DataError>(&file, feature, false, &mut |img| {
            if img.episode_index == episode && img.frame_index == frame {
                found = Some(img.decode()?);
                return Ok(ControlFlow::Break(()));
            }
            Ok(ControlFlow::Continue(()))
        })?;
        found.ok_or_else(|| {
            DataError::invalid(
                &file,
                None,
                Some("frame_index"),
                format!("episode {episode} has no frame {frame}"),
            )
        })
    }
}
