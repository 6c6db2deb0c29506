//! Offscreen rendering through MuJoCo's OpenGL renderer on EGL (Mesa's software EGL works headless).
//! A [`SceneRenderer`] owns a GL context, so keep one per thread and pass episodes to it.

use crate::episode::Episode;
use crate::error::{Result, TestbedError};
use mujoco_rs::prelude::MjvCamera;
use mujoco_rs::renderer::{MjRenderer, png};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Held while an EGL context is created or destroyed. Mesa's software driver has crashed
/// (SIGSEGV inside `swrast_dri.so`) in runs whose rayon workers created and dropped renderers at
/// the same time; rendering itself stays parallel, only the context's birth and death are
/// serialized, which costs nothing next to a rollout.
static GL_LIFECYCLE: Mutex<()> = Mutex::new(());

fn gl_lifecycle() -> MutexGuard<'static, ()> {
    GL_LIFECYCLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Which camera to render from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CameraKind {
    /// The scene camera (pose and field of view from the appearance).
    Scene,
    /// The wrist camera on the hand, looking down past the fingers.
    Wrist,
}

/// An RGB image, row-major from the top-left, 3 bytes per pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width · height · 3` bytes.
    pub rgb: Vec<u8>,
}

impl Image {
    /// PNG encoding of the image (8-bit RGB, default compression).
    ///
    /// # Errors
    /// [`TestbedError::Png`] when encoding fails.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        {
            let w = u32::try_from(self.width).map_err(|e| TestbedError::Png(e.to_string()))?;
            let h = u32::try_from(self.height).map_err(|e| TestbedError::Png(e.to_string()))?;
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut wr = enc
                .write_header()
                .map_err(|e| TestbedError::Png(e.to_string()))?;
            wr.write_image_data(&self.rgb)
                .map_err(|e| TestbedError::Png(e.to_string()))?;
        }
        Ok(out)
    }

    /// Writes the PNG to `path`.
    ///
    /// # Errors
    /// [`TestbedError::Png`] or [`TestbedError::Io`].
    pub fn save_png(&self, path: &std::path::Path) -> Result<()> {
        let bytes = self.to_png()?;
        std::fs::write(path, bytes).map_err(|source| TestbedError::Io {
            source,
            path: path.display().to_string(),
        })
    }

    /// Mean of all bytes (a cheap summary used by tests).
    pub fn mean(&self) -> f64 {
        if self.rgb.is_empty() {
            return 0.0;
        }
        self.rgb.iter().map(|&b| f64::from(b)).sum::<f64>() / self.rgb.len() as f64
    }
}

/// A square offscreen renderer of `size`² pixels for episodes of any compiled scene: it follows
/// the model of each episode passed in, rebuilding its GPU resources when the model's layout
/// changes and re-uploading its textures when their pixels change (two appearance draws of one
/// scene share a layout, so a renderer that watched the layout alone kept showing the first
/// scene's table and sky textures). An image depends on the episode and the camera only, never
/// on what the renderer drew before (tested), so one renderer can serve a thread's episodes.
#[derive(Debug)]
pub struct SceneRenderer {
    /// `None` only inside `drop`, which takes it out to destroy it under [`GL_LIFECYCLE`].
    renderer: Option<MjRenderer>,
    size: usize,
    /// FNV-1a of the texture pixels uploaded to the GL context.
    textures: u64,
}

impl SceneRenderer {
    /// Creates a renderer for episodes like `ep`; `size` must not exceed the scene's compiled render size.
    ///
    /// # Errors
    /// [`TestbedError::Render`] when no EGL/OpenGL context can be created (install `libegl1`,
    /// `libegl-mesa0`, `libgl1-mesa-dri`) or `size` is 0 or too large.
    pub fn new(ep: &Episode, size: usize) -> Result<SceneRenderer> {
        let model = ep.world().data.model();
        let max = usize::try_from(model.vis().global.offwidth).unwrap_or(0);
        if size == 0 || size > max {
            return Err(TestbedError::Render(format!(
                "size {size} is not in 1..={max} (compile the scene with a larger render size)"
            )));
        }
        let s = u32::try_from(size).map_err(|e| TestbedError::Render(e.to_string()))?;
        let built = {
            let _lifecycle = gl_lifecycle();
            MjRenderer::builder()
                .width(s)
                .height(s)
                .rgb(true)
                .depth(false)
                .camera(MjvCamera::new_fixed(ep.world().h.scene_cam))
                .build(model)
        };
        let renderer = built.map_err(|e| TestbedError::Render(format!("{e}")))?;
        Ok(SceneRenderer {
            renderer: Some(renderer),
            size,
            textures: ep.world().textures,
        })
    }

    /// Image side in pixels.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Renders the episode's present state from `camera`. Rendering reads the state only.
    ///
    /// # Errors
    /// [`TestbedError::Render`] when OpenGL fails.
    pub fn render(&mut self, ep: &mut Episode, camera: CameraKind) -> Result<Image> {
        let textures = ep.world().textures;
        let cam = match camera {
            CameraKind::Scene => ep.world().h.scene_cam,
            CameraKind::Wrist => ep.world().h.wrist_cam,
        };
        let renderer = self
            .renderer
            .as_mut()
            .ok_or_else(|| TestbedError::Render("renderer already destroyed".into()))?;
        renderer.set_camera(MjvCamera::new_fixed(cam));
        let data = &mut ep.world_mut().data;
        // A model of another layout gets a new MuJoCo context (assets, scene) in the same GL
        // context; one of the same layout keeps the context, whose textures are re-uploaded when
        // their pixels differ. Both keep the GL context: creating one costs Mesa's software
        // driver a shader compilation (about a third of a closed-loop execution's CPU time).
        renderer
            .sync_data(data)
            .map_err(|e| TestbedError::Render(format!("{e}")))?;
        if textures != self.textures {
            renderer
                .update_textures_from(data.model())
                .map_err(|e| TestbedError::Render(format!("{e}")))?;
            self.textures = textures;
        }
        renderer
            .render()
            .map_err(|e| TestbedError::Render(format!("{e}")))?;
        let rgb = renderer
            .rgb_flat()
            .ok_or_else(|| TestbedError::Render("RGB buffer missing".into()))?;
        Ok(Image {
            width: self.size,
            height: self.size,
            rgb: rgb.to_vec(),
        })
    }
}

impl Drop for SceneRenderer {
    fn drop(&mut self) {
        let _lifecycle = gl_lifecycle();
        drop(self.renderer.take());
    }
}
