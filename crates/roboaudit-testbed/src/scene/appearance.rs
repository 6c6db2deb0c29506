//! Appearance draws: colours, textures, lights and camera pose. None of these touch physics.

use super::rng::{stream, uniform};
use serde::{Deserialize, Serialize};

/// Builtin texture pattern of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TableTexture {
    /// Uniform colour (`rgb1`).
    Flat,
    /// Checkerboard of `rgb1` and `rgb2`.
    Checker,
    /// Gradient from `rgb1` to `rgb2`.
    Gradient,
}

impl TableTexture {
    /// MJCF `builtin` value.
    pub fn builtin(self) -> &'static str {
        match self {
            TableTexture::Flat => "flat",
            TableTexture::Checker => "checker",
            TableTexture::Gradient => "gradient",
        }
    }
}

/// Scene camera pose relative to the default view (camera at (1.3, 0, 0.9) looking at (0.45, 0, 0.1)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CameraPose {
    /// Position offset (m).
    pub offset: [f64; 3],
    /// Yaw of the look direction about world z (rad).
    pub yaw: f64,
    /// Pitch of the look direction (rad, positive looks further down).
    pub pitch: f64,
    /// Roll about the viewing axis (rad).
    pub roll: f64,
    /// Vertical field of view (degrees).
    pub fovy: f64,
}

/// Everything visual about a scene. Applying a different appearance to the same layout leaves every
/// physics quantity bit-identical (tested).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Appearance {
    /// Appearance draw index (0 = canonical).
    pub draw: u32,
    /// Table texture colours, RGB in `[0, 1]`.
    pub table_rgb1: [f64; 3],
    /// Second table texture colour.
    pub table_rgb2: [f64; 3],
    /// Table texture pattern.
    pub table_texture: TableTexture,
    /// Background (gradient texture of the wall behind the robot): first colour.
    pub sky_rgb1: [f64; 3],
    /// Background: second colour.
    pub sky_rgb2: [f64; 3],
    /// Multiplier of object colours in `[0.7, 1.15]` (shade; the colour name is kept).
    pub palette_brightness: f64,
    /// Mixing weight towards grey in `[0, 0.3]` (desaturation).
    pub palette_desaturate: f64,
    /// Diffuse brightness of the key light in `[0.35, 0.9]`.
    pub light_brightness: f64,
    /// Light tint multipliers (RGB) in `[0.75, 1]`.
    pub light_tint: [f64; 3],
    /// Scene camera pose.
    pub camera: CameraPose,
}

impl Appearance {
    /// The canonical appearance (draw 0).
    pub fn canonical() -> Appearance {
        Appearance {
            draw: 0,
            table_rgb1: [0.55, 0.45, 0.35],
            table_rgb2: [0.5, 0.4, 0.3],
            table_texture: TableTexture::Checker,
            sky_rgb1: [0.75, 0.8, 0.85],
            sky_rgb2: [0.3, 0.32, 0.35],
            palette_brightness: 1.0,
            palette_desaturate: 0.0,
            light_brightness: 0.7,
            light_tint: [1.0, 1.0, 1.0],
            camera: CameraPose {
                offset: [0.0; 3],
                yaw: 0.0,
                pitch: 0.0,
                roll: 0.0,
                fovy: 45.0,
            },
        }
    }

    /// Appearance draw `draw` of a scene set with seed `seed`; draw 0 is [`Appearance::canonical`].
    /// Ranges: table and background colours uniform per channel, camera offset ≤ 8 cm per axis, yaw and
    /// pitch ≤ 0.12 rad, roll ≤ 0.05 rad, field of view 38–55°.
    pub fn sample(seed: u64, draw: u32) -> Appearance {
        if draw == 0 {
            return Appearance::canonical();
        }
        let mut r = stream(seed, "appearance", u64::from(draw));
        let mut rgb = |lo: f64, hi: f64| {
            [
                uniform(&mut r, lo, hi),
                uniform(&mut r, lo, hi),
                uniform(&mut r, lo, hi),
            ]
        };
        let table_rgb1 = rgb(0.2, 0.9);
        let table_rgb2 = rgb(0.2, 0.9);
        let sky_rgb1 = rgb(0.3, 1.0);
        let sky_rgb2 = rgb(0.0, 0.6);
        let light_tint = rgb(0.75, 1.0);
        let tex = match (uniform(&mut r, 0.0, 3.0)) as u32 {
            0 => TableTexture::Flat,
            1 => TableTexture::Checker,
            _ => TableTexture::Gradient,
        };
        Appearance {
            draw,
            table_rgb1,
            table_rgb2,
            table_texture: tex,
            sky_rgb1,
            sky_rgb2,
            palette_brightness: uniform(&mut r, 0.7, 1.15),
            palette_desaturate: uniform(&mut r, 0.0, 0.3),
            light_brightness: uniform(&mut r, 0.35, 0.9),
            light_tint,
            camera: CameraPose {
                offset: [
                    uniform(&mut r, -0.08, 0.08),
                    uniform(&mut r, -0.08, 0.08),
                    uniform(&mut r, -0.08, 0.08),
                ],
                yaw: uniform(&mut r, -0.12, 0.12),
                pitch: uniform(&mut r, -0.12, 0.12),
                roll: uniform(&mut r, -0.05, 0.05),
                fovy: uniform(&mut r, 38.0, 55.0),
            },
        }
    }

    /// Object colour after the palette shade: `brightness · ((1 − d) · rgb + d · grey)`, clamped to `[0, 1]`.
    pub fn shade(&self, rgb: [f64; 3]) -> [f64; 3] {
        let grey = (rgb[0] + rgb[1] + rgb[2]) / 3.0;
        let d = self.palette_desaturate;
        rgb.map(|c| (self.palette_brightness * ((1.0 - d) * c + d * grey)).clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_reproducible_and_distinct() {
        assert_eq!(Appearance::sample(3, 2), Appearance::sample(3, 2));
        assert_ne!(Appearance::sample(3, 2), Appearance::sample(3, 1));
        assert_eq!(Appearance::sample(9, 0), Appearance::canonical());
        let a = Appearance::sample(1, 4);
        assert!((38.0..55.0).contains(&a.camera.fovy));
    }

    #[test]
    fn shade_keeps_identity_at_canonical() {
        let c = Appearance::canonical();
        assert_eq!(c.shade([0.2, 0.4, 0.6]), [0.2, 0.4, 0.6]);
    }
}
