//! Image preprocessing shared by the encoders: area (box-filter) resampling of an RGB8 frame to
//! the encoder's input size, and per-channel normalization into the channel-height-width tensor
//! layout the networks take.
//!
//! Every encoder resamples the **whole** frame to a square (no crop: a robot camera's workspace
//! is not cut; a non-square frame is stretched). This differs from torchvision's and CLIP's
//! evaluation transforms (resize the short side, centre crop, bilinear or bicubic); features of
//! the same weights are therefore not those of the reference pipelines on the same photo, but
//! they are the same function of the network input, which is what the reference test checks.

use roboaudit_data::lerobot::Rgb8Image;

use crate::EncoderError;

/// ImageNet channel means (R, G, B) of pixels scaled to `[0, 1]` (torchvision's and DINOv2's).
pub const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
/// ImageNet channel standard deviations (R, G, B).
pub const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];
/// CLIP's channel means (R, G, B) of pixels scaled to `[0, 1]` (OpenAI CLIP and transformers'
/// `CLIPImageProcessor`).
pub const CLIP_MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
/// CLIP's channel standard deviations (R, G, B): (0.26862954, 0.26130258, 0.27577711), written
/// here as the nearest `f32` values.
pub const CLIP_STD: [f32; 3] = [0.268_629_54, 0.261_302_6, 0.275_777_1];

/// For each output cell of `0..out`, the input cells it overlaps and the overlap fraction (sum 1).
fn area_weights(input: usize, out: usize) -> Vec<Vec<(usize, f64)>> {
    let scale = input as f64 / out as f64;
    (0..out)
        .map(|o| {
            let (lo, hi) = (o as f64 * scale, (o + 1) as f64 * scale);
            let (first, last) = (lo.floor() as usize, (hi.ceil() as usize).min(input));
            (first..last)
                .filter_map(|i| {
                    let overlap = (hi.min((i + 1) as f64) - lo.max(i as f64)) / scale;
                    (overlap > 0.0).then_some((i, overlap))
                })
                .collect()
        })
        .collect()
}

/// Area (box-filter) resampling to `side × side`, RGB, scaled to `[0, 1]`, HWC order.
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image, a zero side or a pixel buffer of the wrong size.
pub fn area_resample(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
    area_resample_to(image, side, side)
}

/// Area (box-filter) resampling to `width × height` (each output pixel the overlap-weighted mean
/// of the input pixels it covers), RGB, scaled to `[0, 1]`, HWC order: `height · width · 3`
/// values. The resize of [`area_resample`] for any output shape (the report's thumbnails).
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image, a zero output size or a pixel buffer of the
/// wrong size.
pub fn area_resample_to(
    image: &Rgb8Image,
    width: usize,
    height: usize,
) -> Result<Vec<f32>, EncoderError> {
    let (w, h) = (image.width as usize, image.height as usize);
    if w == 0 || h == 0 || width == 0 || height == 0 || image.pixels.len() != w * h * 3 {
        return Err(EncoderError::InvalidImage(format!(
            "cannot resample a {w}×{h} image with {} bytes to {width}×{height}",
            image.pixels.len()
        )));
    }
    let wx = area_weights(w, width);
    let wy = area_weights(h, height);
    let mut out = Vec::with_capacity(width * height * 3);
    for ys in &wy {
        for xs in &wx {
            let mut acc = [0.0f64; 3];
            for (y, fy) in ys {
                for (x, fx) in xs {
                    let k = (y * w + x) * 3;
                    for (c, a) in acc.iter_mut().enumerate() {
                        *a += fy * fx * f64::from(image.pixels[k + c]);
                    }
                }
            }
            out.extend(acc.iter().map(|a| (a / 255.0) as f32));
        }
    }
    Ok(out)
}

/// The network input of `image`: area-resampled to `side × side` ([`area_resample`]), each
/// channel `c` mapped to `(v − mean[c]) / std[c]`, in channel-height-width order (`3 · side²`
/// values).
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image, a zero side or a pixel buffer of the wrong
/// size.
pub fn normalized_chw(
    image: &Rgb8Image,
    side: usize,
    mean: [f32; 3],
    std: [f32; 3],
) -> Result<Vec<f32>, EncoderError> {
    let hwc = area_resample(image, side)?;
    let plane = side * side;
    let mut chw = vec![0f32; 3 * plane];
    for (p, px) in hwc.chunks_exact(3).enumerate() {
        for c in 0..3 {
            chw[c * plane + p] = (px[c] - mean[c]) / std[c];
        }
    }
    Ok(chw)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn area_resample_averages_blocks_and_fractional_overlaps() {
        // 4×1 → 2×… is not square; use 4×4 → 2×2: each output is the mean of a 2×2 block.
        let mut pixels = Vec::new();
        for y in 0..4u8 {
            for x in 0..4u8 {
                pixels.extend_from_slice(&[x * 50, y * 50, 255]);
            }
        }
        let img = Rgb8Image {
            width: 4,
            height: 4,
            pixels,
        };
        let out = area_resample(&img, 2).unwrap();
        // Output (0,0): red mean of x ∈ {0,1} = 25, green mean of y ∈ {0,1} = 25, blue 255.
        assert!((out[0] - 25.0 / 255.0).abs() < 1e-6);
        assert!((out[1] - 25.0 / 255.0).abs() < 1e-6);
        assert!((out[2] - 1.0).abs() < 1e-6);
        // Output (1,0): red mean of x ∈ {2,3} = 125.
        assert!((out[3] - 125.0 / 255.0).abs() < 1e-6);
        // 3 → 2 cells: output 0 covers cell 0 fully and half of cell 1 (weights 2/3, 1/3).
        let w = area_weights(3, 2);
        assert_eq!(w[0].len(), 2);
        assert!((w[0][0].1 - 2.0 / 3.0).abs() < 1e-12 && (w[0][1].1 - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn area_resample_to_keeps_rows_and_columns_apart() {
        // 4 wide × 2 high → 2 × 1: each output averages a 2 × 2 block; the red ramp runs along x.
        let mut pixels = Vec::new();
        for y in 0..2u8 {
            for x in 0..4u8 {
                pixels.extend_from_slice(&[x * 60, y * 100, 0]);
            }
        }
        let img = Rgb8Image {
            width: 4,
            height: 2,
            pixels,
        };
        let out = area_resample_to(&img, 2, 1).unwrap();
        assert_eq!(out.len(), 6);
        // Red: mean of {0, 60} = 30 and of {120, 180} = 150; green: mean of {0, 100} = 50.
        let want = [30.0, 50.0, 0.0, 150.0, 50.0, 0.0];
        for (o, w) in out.iter().zip(want) {
            assert!((o - w / 255.0).abs() < 1e-6, "{o} vs {w}");
        }
        assert!(area_resample_to(&img, 0, 1).is_err());
    }
}
