//! The two representations written to `embeddings.parquet` (seed 000 §II): raw pixels of the first
//! scene-camera image at 32×32 (`pixels32`), and the structural object-pose features of the initial
//! state (`structural`, for the structural rule).

use crate::error::Result;
use roboaudit_testbed::{
    CameraKind, CompiledScene, Episode, EpisodeConfig, SceneRenderer, TaskKind,
};

/// Name of the raw-pixel representation.
pub const PIXELS32: &str = "pixels32";
/// Name of the structural representation.
pub const STRUCTURAL: &str = "structural";

/// Side of the rendered image before 2×2 average pooling to 32×32.
const RENDER_SIDE: usize = 64;

/// The embeddings of one scene's initial state.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// 32·32·3 = 3072 values in `[0, 1]`: RGB of the 64×64 scene-camera image, 2×2 average pooled,
    /// row-major from the top-left.
    pub pixels32: Vec<f32>,
    /// Object poses (m, rad): Stack `[x0, y0, yaw0, x1, y1, yaw1]` of the red and blue blocks;
    /// Door `[lever tip x, y, z, push point x, y, z]`.
    pub structural: Vec<f32>,
}

/// Renders and measures episodes one at a time with a single GL context.
#[derive(Debug, Default)]
pub struct Embedder {
    renderer: Option<SceneRenderer>,
}

impl Embedder {
    /// An embedder; the GL context is made on first use.
    pub fn new() -> Embedder {
        Embedder::default()
    }

    /// Embeds the state of a fresh episode of `task` in `scene` with episode seed `seed` (before any
    /// action: the experience's first image when `scene` is its base scene and `seed` its recording seed).
    ///
    /// # Errors
    /// Testbed errors (no EGL context, model errors).
    pub fn embed(&mut self, scene: &CompiledScene, task: TaskKind, seed: u64) -> Result<Embedding> {
        let cfg = EpisodeConfig {
            seed,
            ..EpisodeConfig::default()
        };
        let mut ep = Episode::new(scene, task, &cfg)?;
        let renderer = match &mut self.renderer {
            Some(r) => r,
            None => self.renderer.insert(SceneRenderer::new(&ep, RENDER_SIDE)?),
        };
        let img = renderer.render(&mut ep, CameraKind::Scene)?;
        Ok(Embedding {
            pixels32: pool2(&img.rgb, img.width, img.height),
            structural: structural(&ep, task),
        })
    }
}

/// 2×2 average pooling of an RGB image to bytes scaled into `[0, 1]`.
fn pool2(rgb: &[u8], w: usize, h: usize) -> Vec<f32> {
    let (ow, oh) = (w / 2, h / 2);
    let mut out = Vec::with_capacity(ow * oh * 3);
    for y in 0..oh {
        for x in 0..ow {
            for c in 0..3 {
                let at = |yy: usize, xx: usize| f32::from(rgb[(yy * w + xx) * 3 + c]);
                let s = at(2 * y, 2 * x)
                    + at(2 * y, 2 * x + 1)
                    + at(2 * y + 1, 2 * x)
                    + at(2 * y + 1, 2 * x + 1);
                out.push(s / (4.0 * 255.0));
            }
        }
    }
    out
}

fn structural(ep: &Episode, task: TaskKind) -> Vec<f32> {
    let w = ep.world();
    let v: Vec<f64> = match task {
        TaskKind::Door => {
            let t = w.lever_tip().unwrap_or([0.0; 3]);
            let p = w.door_push_point().unwrap_or([0.0; 3]);
            vec![t[0], t[1], t[2], p[0], p[1], p[2]]
        }
        _ => (0..w.n_blocks())
            .filter_map(|i| w.block_pose(i))
            .flat_map(|p| [p.pos[0], p.pos[1], roboaudit_testbed::geom::yaw_of(p.quat)])
            .collect(),
    };
    v.into_iter().map(|x| x as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_averages_blocks() {
        // 2×2 image: one output pixel averaging four inputs per channel.
        let rgb = [0u8, 10, 255, 255, 10, 255, 0, 10, 0, 255, 10, 0];
        let out = pool2(&rgb, 2, 2);
        assert_eq!(out.len(), 3);
        assert!((out[0] - 0.5).abs() < 1e-6);
        assert!((out[1] - 10.0 / 255.0).abs() < 1e-6);
        assert!((out[2] - 0.5).abs() < 1e-6);
    }
}
