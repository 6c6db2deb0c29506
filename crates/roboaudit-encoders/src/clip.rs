//! A pretrained CLIP image tower (Radford et al. 2021) loaded from a local safetensors file and
//! run with candle-transformers' `ClipVisionTransformer` on the CPU (seed 000 §II: the "CLIP"
//! embedding). Nothing is downloaded.
//!
//! - **Weights**: the Hugging Face transformers layout of the vision tower
//!   (`embeddings.{class_embedding, patch_embedding.weight, position_embedding.weight}`,
//!   `pre_layrnorm`, `encoder.layers.{i}.{self_attn.{q,k,v,out}_proj, layer_norm1, mlp.fc1,
//!   mlp.fc2, layer_norm2}`, `post_layernorm`), under `vision_model.` as in the
//!   `model.safetensors` of a full `CLIPModel` (e.g. `openai/clip-vit-base-patch32`) and in
//!   transformers 4's `CLIPVisionModel.state_dict()`, or without the prefix as transformers 5's
//!   `CLIPVisionModel.state_dict()` saves it. A `CLIPModel`'s `text_model.*`, `text_projection`,
//!   `visual_projection`, `logit_scale` and `position_ids` tensors are accepted and not read.
//!   Depth, width, MLP width, patch and input size are read from the shapes; the head count is
//!   explicit or `width / 64` (every released CLIP ViT). The activation is QuickGELU (OpenAI's
//!   CLIP; candle-transformers 0.11.1 has no other), LayerNorm ε = 1e-5.
//! - **Preprocessing** ([`preprocess`]): the whole frame area-resampled to the checkpoint's
//!   `image_size` (224 for ViT-B/32; no crop, see [`crate::image`]), scaled to `[0, 1]`,
//!   normalized with CLIP's mean and std, channel-height-width order. The input size is fixed by
//!   the position embeddings (candle-transformers does not interpolate them).
//! - **Feature**: the pooled output — the class token after `post_layernorm` — `width` values (768
//!   for ViT-B/32), `f32`. The `visual_projection` to the joint image-text space (512 values for
//!   ViT-B/32) is **not** applied: the rules compare images with images, and the pooled output
//!   is the representation before the one linear map trained for text matching.

use std::collections::BTreeSet;
use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::clip::text_model::Activation;
use candle_transformers::models::clip::vision_model::{ClipVisionConfig, ClipVisionTransformer};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_data::lerobot::Rgb8Image;
use serde::Serialize;

use crate::EncoderError;
use crate::frozen::{Backbone, Frozen};
use crate::image::{CLIP_MEAN, CLIP_STD, normalized_chw};
use crate::weights::{self, check_and_load};

/// The architecture's name in errors.
pub const ARCHITECTURE: &str = "CLIP vision tower (transformers layout)";
/// Width per attention head of every released CLIP ViT (B/32 768/12, B/16, L/14 1024/16).
pub const HEAD_WIDTH: usize = 64;
const P: &str = "vision_model.";

/// Sizes of a CLIP vision transformer, inferred from a checkpoint's tensor shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClipArch {
    /// Transformer layers (12 for ViT-B/32).
    pub depth: usize,
    /// Token width, also the feature width (768 for ViT-B/32).
    pub width: usize,
    /// MLP hidden width (3072 for ViT-B/32).
    pub intermediate: usize,
    /// Attention heads.
    pub heads: usize,
    /// Patch side in pixels (32 for ViT-B/32).
    pub patch: usize,
    /// Input side in pixels (224 for ViT-B/32).
    pub image_size: usize,
}

/// Settings of a CLIP encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ClipOptions {
    /// Attention heads; `None`: `width / 64`.
    pub heads: Option<usize>,
    /// Input side; `None`: the checkpoint's. Any other value than the checkpoint's is refused
    /// ([`EncoderError::ImageSize`]): the position embeddings fix it.
    pub side: Option<usize>,
}

/// Every tensor the model reads, with its shape, for `a`'s sizes (under `vision_model.`).
pub fn expected_tensors(a: &ClipArch) -> Vec<(String, Vec<usize>)> {
    tensors_under(a, P)
}

/// [`expected_tensors`] under the prefix `P` (`vision_model.` or nothing).
fn tensors_under(a: &ClipArch, p: &str) -> Vec<(String, Vec<usize>)> {
    let (d, i) = (a.width, a.intermediate);
    let grid = a.image_size / a.patch;
    let mut out = vec![
        (format!("{p}embeddings.class_embedding"), vec![d]),
        (
            format!("{p}embeddings.patch_embedding.weight"),
            vec![d, 3, a.patch, a.patch],
        ),
        (
            format!("{p}embeddings.position_embedding.weight"),
            vec![grid * grid + 1, d],
        ),
        (format!("{p}pre_layrnorm.weight"), vec![d]),
        (format!("{p}pre_layrnorm.bias"), vec![d]),
    ];
    for l in 0..a.depth {
        let b = |s: &str| format!("{p}encoder.layers.{l}.{s}");
        for proj in ["q_proj", "k_proj", "v_proj", "out_proj"] {
            out.push((b(&format!("self_attn.{proj}.weight")), vec![d, d]));
            out.push((b(&format!("self_attn.{proj}.bias")), vec![d]));
        }
        out.extend([
            (b("layer_norm1.weight"), vec![d]),
            (b("layer_norm1.bias"), vec![d]),
            (b("mlp.fc1.weight"), vec![i, d]),
            (b("mlp.fc1.bias"), vec![i]),
            (b("mlp.fc2.weight"), vec![d, i]),
            (b("mlp.fc2.bias"), vec![d]),
            (b("layer_norm2.weight"), vec![d]),
            (b("layer_norm2.bias"), vec![d]),
        ]);
    }
    out.push((format!("{p}post_layernorm.weight"), vec![d]));
    out.push((format!("{p}post_layernorm.bias"), vec![d]));
    out
}

/// Tensors of a full `CLIPModel` that the image tower does not read.
fn ignored(name: &str) -> bool {
    name.starts_with("text_model.")
        || matches!(
            name,
            "text_projection.weight"
                | "visual_projection.weight"
                | "logit_scale"
                | "vision_model.embeddings.position_ids"
                | "embeddings.position_ids"
        )
}

/// The prefix of the tower's tensors: `vision_model.` (a `CLIPModel` file, transformers 4's
/// `CLIPVisionModel`) or nothing (transformers 5's bare `CLIPVisionModel`).
fn prefix(shapes: &std::collections::HashMap<String, Vec<usize>>) -> Option<&'static str> {
    if shapes.contains_key("vision_model.embeddings.class_embedding") {
        Some(P)
    } else if shapes.contains_key("embeddings.class_embedding")
        && shapes.contains_key("pre_layrnorm.weight")
    {
        Some("")
    } else {
        None
    }
}

/// The sizes of the checkpoint whose shapes are `shapes`.
fn infer_arch(
    path: &Path,
    shapes: &std::collections::HashMap<String, Vec<usize>>,
    heads: Option<usize>,
    p: &str,
) -> Result<ClipArch, EncoderError> {
    let shape_err =
        |name: &str, expected: Vec<usize>, layout: &'static str| EncoderError::TensorShape {
            path: path.to_path_buf(),
            tensor: name.to_owned(),
            shape: shapes.get(name).cloned().unwrap_or_default(),
            expected,
            layout,
        };
    let missing = |name: &str| EncoderError::MissingTensor {
        path: path.to_path_buf(),
        tensor: name.to_owned(),
        architecture: ARCHITECTURE.to_owned(),
    };
    let cls = format!("{p}embeddings.class_embedding");
    let width = match shapes.get(&cls).map(Vec::as_slice) {
        Some(&[d]) if d > 0 => d,
        _ => return Err(shape_err(&cls, vec![0], "[width]")),
    };
    let patch_name = format!("{p}embeddings.patch_embedding.weight");
    let patch = match shapes.get(&patch_name).map(Vec::as_slice) {
        Some(&[d, 3, p, q]) if d == width && p == q && p > 0 => p,
        Some(_) => {
            return Err(shape_err(
                &patch_name,
                vec![width, 3, 0, 0],
                "[width, 3, patch, patch]",
            ));
        }
        None => return Err(missing(&patch_name)),
    };
    let pos_name = format!("{p}embeddings.position_embedding.weight");
    let grid = match shapes.get(&pos_name).map(Vec::as_slice) {
        Some(&[n, d]) if d == width && n >= 2 => {
            let g = ((n - 1) as f64).sqrt().round() as usize;
            if g * g + 1 != n {
                return Err(shape_err(
                    &pos_name,
                    vec![g * g + 1, width],
                    "[grid² + 1, width]: one class token and a square grid of patches",
                ));
            }
            g
        }
        Some(_) => return Err(shape_err(&pos_name, vec![0, width], "[grid² + 1, width]")),
        None => return Err(missing(&pos_name)),
    };
    let layers: BTreeSet<usize> = shapes
        .keys()
        .filter_map(|n| n.strip_prefix(&format!("{p}encoder.layers.")))
        .filter_map(|rest| rest.split('.').next()?.parse().ok())
        .collect();
    let depth = layers.last().map_or(0, |l| l + 1);
    if depth == 0 {
        return Err(missing(&format!("{p}encoder.layers.0.mlp.fc1.weight")));
    }
    let fc1 = format!("{p}encoder.layers.0.mlp.fc1.weight");
    let intermediate = match shapes.get(&fc1).map(Vec::as_slice) {
        Some(&[i, d]) if d == width && i > 0 => i,
        Some(_) => return Err(shape_err(&fc1, vec![0, width], "[mlp width, width]")),
        None => return Err(missing(&fc1)),
    };
    let heads = match heads {
        Some(h) if h >= 1 && width.is_multiple_of(h) => h,
        Some(h) => {
            return Err(EncoderError::InvalidConfig(format!(
                "clip heads={h} does not divide the token width {width} of {}",
                path.display()
            )));
        }
        None if width.is_multiple_of(HEAD_WIDTH) => width / HEAD_WIDTH,
        None => {
            return Err(EncoderError::InvalidConfig(format!(
                "clip: the token width {width} of {} is not a multiple of {HEAD_WIDTH}, so the \
                 head count cannot be inferred; pass heads=N",
                path.display()
            )));
        }
    };
    Ok(ClipArch {
        depth,
        width,
        intermediate,
        heads,
        patch,
        image_size: grid * patch,
    })
}

/// A loaded, frozen CLIP image tower: id `clip-<file stem>-<input side>`, with `-h<heads>` when
/// the heads are not `width / 64`; input side the checkpoint's `image_size`; its feature is the
/// pooled output, `width` finite `f32` values.
pub type ClipEncoder = Frozen<Clip>;

/// candle-transformers' CLIP vision transformer and the sizes read from its checkpoint.
pub struct Clip {
    arch: ClipArch,
    transformer: ClipVisionTransformer,
}

impl Backbone for Clip {
    const LABEL: &'static str = "";

    fn dim(&self) -> usize {
        self.arch.width
    }

    fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
        preprocess(image, side)
    }

    fn forward(&self, x: &Tensor) -> Result<Vec<f32>, EncoderError> {
        Ok(self
            .transformer
            .forward(x)?
            .flatten_all()?
            .to_vec1::<f32>()?)
    }
}

impl ClipEncoder {
    /// Loads the checkpoint at `path` (read once, hashed, checked, converted to `f32`).
    ///
    /// # Errors
    /// [`EncoderError::InvalidConfig`] for zero heads (before the file is read) or heads that do
    /// not divide the width; [`EncoderError::Io`]; [`EncoderError::NotSafetensors`];
    /// [`EncoderError::WrongArchitecture`] without `vision_model.embeddings.class_embedding` (or
    /// `embeddings.class_embedding` and `pre_layrnorm.weight`);
    /// [`EncoderError::MissingTensor`], [`EncoderError::TensorShape`],
    /// [`EncoderError::TensorType`], [`EncoderError::UnexpectedTensor`], each naming the file and
    /// tensor; [`EncoderError::ImageSize`] when `options.side` is not the checkpoint's input
    /// size; [`EncoderError::Candle`].
    pub fn load(path: impl AsRef<Path>, options: &ClipOptions) -> Result<Self, EncoderError> {
        if options.heads == Some(0) {
            return Err(EncoderError::InvalidConfig(
                "clip heads=0: give at least one attention head".into(),
            ));
        }
        let path = path.as_ref();
        let file = weights::read(path)?;
        let st = weights::parse(path, &file.bytes)?;
        let shapes = weights::shapes(&st);
        let Some(prefix) = prefix(&shapes) else {
            return Err(EncoderError::WrongArchitecture {
                path: path.to_path_buf(),
                expected: ARCHITECTURE,
                found: weights::guess_architecture(shapes.keys().map(String::as_str)),
                missing: format!("{P}embeddings.class_embedding"),
            });
        };
        let arch = infer_arch(path, &shapes, options.heads, prefix)?;
        let sizes = format!(
            "depth {}, width {}, MLP width {}, patch {}, input {}",
            arch.depth, arch.width, arch.intermediate, arch.patch, arch.image_size
        );
        let tensors = check_and_load(
            path,
            &st,
            &tensors_under(&arch, prefix),
            &ignored,
            ARCHITECTURE,
            &sizes,
        )?;
        let id = format!(
            "clip-{}-{}{}",
            weights::stem(path),
            arch.image_size,
            if arch.heads == arch.width / HEAD_WIDTH && arch.width.is_multiple_of(HEAD_WIDTH) {
                String::new()
            } else {
                format!("-h{}", arch.heads)
            }
        );
        if let Some(side) = options.side.filter(|s| *s != arch.image_size) {
            return Err(EncoderError::ImageSize {
                encoder: format!("clip {}", path.display()),
                message: format!(
                    "side={side} asked for, but the checkpoint's position embeddings ({g} × {g} \
                     patches of {p} pixels) take {s} × {s} inputs only",
                    g = arch.image_size / arch.patch,
                    p = arch.patch,
                    s = arch.image_size
                ),
            });
        }
        let config = ClipVisionConfig {
            embed_dim: arch.width,
            activation: Activation::QuickGelu,
            intermediate_size: arch.intermediate,
            num_hidden_layers: arch.depth,
            num_attention_heads: arch.heads,
            projection_dim: arch.width,
            num_channels: 3,
            image_size: arch.image_size,
            patch_size: arch.patch,
        };
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let vb = if prefix.is_empty() {
            vb
        } else {
            vb.pp("vision_model")
        };
        let transformer = ClipVisionTransformer::new(vb, &config)?;
        Ok(Frozen {
            path: path.to_path_buf(),
            side: arch.image_size,
            weights_hash: file.hash,
            id,
            model: Clip { arch, transformer },
        })
    }

    /// The sizes read from the checkpoint.
    pub fn arch(&self) -> ClipArch {
        self.model.arch
    }
}

/// The CLIP input of `image`: area-resampled to `side × side`, CLIP-normalized, CHW.
///
/// # Errors
/// [`EncoderError::InvalidImage`] for an empty image or a zero side.
pub fn preprocess(image: &Rgb8Image, side: usize) -> Result<Vec<f32>, EncoderError> {
    normalized_chw(image, side, CLIP_MEAN, CLIP_STD)
}

/// Sizes and seed of a random CLIP vision checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomClip {
    /// Layers (≥ 1).
    pub depth: usize,
    /// Token width (≥ 1).
    pub width: usize,
    /// Patch side in pixels (≥ 1).
    pub patch: usize,
    /// Input side: a multiple of `patch`.
    pub image_size: usize,
    /// Seed of every value.
    pub seed: u64,
}

impl RandomClip {
    /// A tiny model: depth 2, width 64 (use 2 heads), 8-pixel patches, 32-pixel input.
    pub fn tiny(seed: u64) -> Self {
        Self {
            depth: 2,
            width: 64,
            patch: 8,
            image_size: 32,
            seed,
        }
    }
}

/// Writes a random CLIP vision checkpoint (`CLIPVisionModel` layout, MLP width `4 · width`,
/// `f32`) to `path`. Same spec ⇒ same bytes. Values: matrices and the patch convolution uniform
/// with variance `1 / fan_in`; LayerNorm scales `0.8..1.2`; biases `± 0.1`; class and position
/// embeddings `± 1`.
///
/// # Errors
/// [`EncoderError::InvalidConfig`] for a zero size or an input side that is not a multiple of the
/// patch; [`EncoderError::Weights`] naming the file when it cannot be written.
pub fn write_random_clip(path: &Path, spec: &RandomClip) -> Result<(), EncoderError> {
    if spec.depth == 0
        || spec.width == 0
        || spec.patch == 0
        || spec.image_size == 0
        || !spec.image_size.is_multiple_of(spec.patch)
    {
        return Err(EncoderError::InvalidConfig(format!(
            "a random CLIP needs sizes ≥ 1 and an input side that is a multiple of the patch, got {spec:?}"
        )));
    }
    let arch = ClipArch {
        depth: spec.depth,
        width: spec.width,
        intermediate: 4 * spec.width,
        heads: 1,
        patch: spec.patch,
        image_size: spec.image_size,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut tensors = std::collections::HashMap::new();
    for (name, shape) in expected_tensors(&arch) {
        let n: usize = shape.iter().product();
        let (lo, hi) = if shape.len() >= 2 && !name.ends_with("position_embedding.weight") {
            let fan_in: usize = shape[1..].iter().product();
            let a = (3.0 / fan_in as f32).sqrt();
            (-a, a)
        } else if name.contains("layernorm")
            || name.contains("layrnorm")
            || name.contains("layer_norm")
        {
            if name.ends_with("weight") {
                (0.8, 1.2)
            } else {
                (-0.1, 0.1)
            }
        } else if name.ends_with("bias") {
            (-0.1, 0.1)
        } else {
            (-1.0, 1.0)
        };
        let v: Vec<f32> = (0..n)
            .map(|_| lo + (hi - lo) * rng.random::<f32>())
            .collect();
        tensors.insert(name, Tensor::from_vec(v, shape, &Device::Cpu)?);
    }
    weights::save(path, &tensors)
}
