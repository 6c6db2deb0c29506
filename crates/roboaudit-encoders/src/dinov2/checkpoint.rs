//! DINOv2 checkpoints in safetensors (SPEC.md §3, seed 003 §3.4: a frozen pretrained encoder
//! loaded from a local file): the tensor names and shapes candle-transformers' `dinov2` model
//! reads, the sizes inferred from them, and the checks that turn a wrong file into an error that
//! names the file and the tensor.
//!
//! The layout is the torch-hub one (`torch.hub.load("facebookresearch/dinov2", "dinov2_vits14")`
//! with its `state_dict()` saved by `safetensors.torch.save_file`): `cls_token` `[1, 1, D]`,
//! `pos_embed` `[1, 1370, D]`, `patch_embed.proj.{weight [D, 3, 14, 14], bias [D]}`,
//! `blocks.{i}.{norm1, attn.qkv, attn.proj, ls1, norm2, mlp.fc1, mlp.fc2, ls2}.…`, `norm.…`.
//! `mask_token` (unused at inference) and a classifier `head.{weight, bias}` (present in the
//! checkpoints of candle's own DINOv2 example) are accepted and ignored.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use candle_core::Tensor;
use serde::Serialize;

use crate::EncoderError;
pub use crate::weights::weights_hash;
use crate::weights::{self, check_and_load, require_marker};

/// Patch side in pixels. candle-transformers 0.11.1 fixes it (`PATCH_SIZE = 14`), so only /14
/// checkpoints load.
pub const PATCH: usize = 14;
/// Position-embedding tokens: candle-transformers 0.11.1 fixes the native input at 518 pixels,
/// so `pos_embed` holds `(518 / 14)² + 1 = 1370` tokens (the class token first), as in every
/// released DINOv2 checkpoint.
pub const POS_TOKENS: usize = 1370;
/// Outputs of candle-transformers' classifier head (`NUM_CLASSES`). The encoder reads the class
/// token through that head (see [`super`]), so the width may not exceed it: ViT-S/14 (384) and
/// ViT-B/14 (768) fit, ViT-L/14 (1024) does not.
pub const MAX_WIDTH: usize = 1000;
/// Width per attention head in every released DINOv2 model (ViT-S 384/6, ViT-B 768/12, ViT-L
/// 1024/16, ViT-g 1536/24): the rule that gives the head count when it is not set explicitly.
pub const HEAD_WIDTH: usize = 64;

/// Sizes of a DINOv2 vision transformer, inferred from a checkpoint's tensor shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dinov2Arch {
    /// Transformer blocks: the number of distinct `blocks.{i}` (12 for ViT-S/14 and ViT-B/14).
    pub depth: usize,
    /// Token width `D`: the last dimension of `cls_token` (384 for ViT-S, 768 for ViT-B). It is
    /// also the width of the encoder's feature.
    pub width: usize,
    /// Attention heads: explicit, else `width / 64` ([`HEAD_WIDTH`]); they must divide `width`.
    pub heads: usize,
    /// Patch side in pixels (always [`PATCH`]).
    pub patch: usize,
}

/// A checked checkpoint: the architecture, the tensors as `f32` under the names the model reads,
/// and the hash of the file's bytes.
pub(crate) struct Checkpoint {
    pub arch: Dinov2Arch,
    pub tensors: HashMap<String, Tensor>,
    pub weights_hash: String,
}

/// Every tensor the model reads, with its shape, for `depth` blocks of width `width` (MLP
/// hidden width `4·width`, fixed by candle-transformers). The writer of random checkpoints uses
/// the same list.
pub(crate) fn expected_tensors(depth: usize, width: usize) -> Vec<(String, Vec<usize>)> {
    let d = width;
    let mut out = vec![
        ("cls_token".to_owned(), vec![1, 1, d]),
        ("pos_embed".to_owned(), vec![1, POS_TOKENS, d]),
        (
            "patch_embed.proj.weight".to_owned(),
            vec![d, 3, PATCH, PATCH],
        ),
        ("patch_embed.proj.bias".to_owned(), vec![d]),
    ];
    for i in 0..depth {
        let b = |s: &str| format!("blocks.{i}.{s}");
        out.extend([
            (b("norm1.weight"), vec![d]),
            (b("norm1.bias"), vec![d]),
            (b("attn.qkv.weight"), vec![3 * d, d]),
            (b("attn.qkv.bias"), vec![3 * d]),
            (b("attn.proj.weight"), vec![d, d]),
            (b("attn.proj.bias"), vec![d]),
            (b("ls1.gamma"), vec![d]),
            (b("norm2.weight"), vec![d]),
            (b("norm2.bias"), vec![d]),
            (b("mlp.fc1.weight"), vec![4 * d, d]),
            (b("mlp.fc1.bias"), vec![4 * d]),
            (b("mlp.fc2.weight"), vec![d, 4 * d]),
            (b("mlp.fc2.bias"), vec![d]),
            (b("ls2.gamma"), vec![d]),
        ]);
    }
    out.push(("norm.weight".to_owned(), vec![d]));
    out.push(("norm.bias".to_owned(), vec![d]));
    out
}

/// The architecture's name in errors.
const ARCHITECTURE: &str = "DINOv2 ViT/14 (torch-hub layout)";

/// Tensors that may be present and are not read.
const IGNORED: [&str; 3] = ["mask_token", "head.weight", "head.bias"];

fn weights_error(path: &Path, tensor: Option<&str>, message: String) -> EncoderError {
    EncoderError::Weights {
        path: path.to_path_buf(),
        tensor: tensor.map(str::to_owned),
        message,
    }
}

/// The block indices named by `blocks.{i}.…` tensors, or the name of one in another layout.
fn block_indices<'a>(names: impl Iterator<Item = &'a str>) -> Result<BTreeSet<usize>, String> {
    let mut blocks = BTreeSet::new();
    for name in names {
        let Some(rest) = name.strip_prefix("blocks.") else {
            continue;
        };
        let mut parts = rest.split('.');
        let index = parts.next().and_then(|p| p.parse::<usize>().ok());
        let chunked = parts.next().is_some_and(|p| p.parse::<usize>().is_ok());
        match index {
            Some(i) if !chunked => {
                blocks.insert(i);
            }
            _ => return Err(name.to_owned()),
        }
    }
    Ok(blocks)
}

/// The head count: `explicit`, else `width / 64`.
///
/// # Errors
/// [`EncoderError::InvalidConfig`] when the heads do not divide the width, or when no count is
/// given and the width is not a multiple of 64.
pub(crate) fn resolve_heads(
    path: &Path,
    width: usize,
    explicit: Option<usize>,
) -> Result<usize, EncoderError> {
    match explicit {
        Some(h) if h >= 1 && width.is_multiple_of(h) => Ok(h),
        Some(h) => Err(EncoderError::InvalidConfig(format!(
            "dinov2 heads={h} does not divide the token width {width} of {}",
            path.display()
        ))),
        None if width.is_multiple_of(HEAD_WIDTH) => Ok(width / HEAD_WIDTH),
        None => Err(EncoderError::InvalidConfig(format!(
            "dinov2: the token width {width} of {} is not a multiple of {HEAD_WIDTH}, so the \
             head count cannot be inferred; pass heads=N",
            path.display()
        ))),
    }
}

/// Reads and checks the checkpoint at `path`.
///
/// # Errors
/// [`EncoderError::Io`] when the file cannot be read (missing, a folder, no permission);
/// a weights-file error ([`EncoderError::weights_fault`]) naming the file — and the tensor where
/// one is at fault — when it is not
/// safetensors, lacks a tensor, has one of the wrong shape or of a non-float type, holds a tensor
/// of another layout (registers, chunked blocks, SwiGLU), or is wider than [`MAX_WIDTH`];
/// [`EncoderError::InvalidConfig`] from the head count ([`resolve_heads`]).
pub(crate) fn read_checkpoint(
    path: &Path,
    heads: Option<usize>,
) -> Result<Checkpoint, EncoderError> {
    let file = weights::read(path)?;
    let st = weights::parse(path, &file.bytes)?;
    let shapes = weights::shapes(&st);
    if shapes.contains_key("register_tokens") {
        return Err(weights_error(
            path,
            Some("register_tokens"),
            "a DINOv2 checkpoint with registers (tensor \"register_tokens\"): only the plain \
             DINOv2 layout is supported"
                .to_owned(),
        ));
    }
    require_marker(path, &shapes, "cls_token", ARCHITECTURE)?;
    let width = match shapes.get("cls_token") {
        Some(s) if s.len() == 3 && s[0] == 1 && s[1] == 1 && s[2] > 0 => s[2],
        s => {
            return Err(weights_error(
                path,
                Some("cls_token"),
                format!("tensor \"cls_token\" has shape {s:?}, expected [1, 1, width]"),
            ));
        }
    };
    if width > MAX_WIDTH {
        return Err(weights_error(
            path,
            Some("cls_token"),
            format!(
                "tensor \"cls_token\" gives a token width of {width}, above {MAX_WIDTH}, the most the encoder can read through \
                 candle-transformers' DINOv2 head (ViT-S/14 and ViT-B/14 fit; ViT-L and ViT-g do not)"
            ),
        ));
    }
    let blocks = block_indices(shapes.keys().map(String::as_str)).map_err(|name| {
        weights_error(
            path,
            Some(&name),
            format!("tensor \"{name}\" is not in the layout blocks.<i>.<name> (chunked blocks are not supported)"),
        )
    })?;
    let depth = blocks.last().map_or(0, |b| b + 1);
    if depth == 0 {
        return Err(weights_error(
            path,
            None,
            "no tensor \"blocks.0.…\": the checkpoint has no transformer block".to_owned(),
        ));
    }
    let expected = expected_tensors(depth, width);
    let sizes = format!(
        "depth {depth}, width {width}, patch {PATCH}, {POS_TOKENS} position tokens, MLP width {}",
        4 * width
    );
    let ignored = |n: &str| IGNORED.contains(&n);
    let tensors = check_and_load(path, &st, &expected, &ignored, ARCHITECTURE, &sizes)?;
    let heads = resolve_heads(path, width, heads)?;
    Ok(Checkpoint {
        arch: Dinov2Arch {
            depth,
            width,
            heads,
            patch: PATCH,
        },
        tensors,
        weights_hash: file.hash,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hash_is_the_sha256_prefix_and_blocks_are_counted() {
        let names = ["blocks.0.norm1.weight", "blocks.1.ls1.gamma", "cls_token"];
        assert_eq!(
            block_indices(names.into_iter()).unwrap(),
            BTreeSet::from([0, 1])
        );
        assert_eq!(
            block_indices(["blocks.0.3.norm1.weight"].into_iter()).unwrap_err(),
            "blocks.0.3.norm1.weight"
        );
        let p = Path::new("w.safetensors");
        assert_eq!(resolve_heads(p, 384, None).unwrap(), 6);
        assert_eq!(resolve_heads(p, 32, Some(2)).unwrap(), 2);
        assert!(resolve_heads(p, 32, None).is_err());
        assert!(resolve_heads(p, 32, Some(3)).is_err());
        assert!(resolve_heads(p, 32, Some(0)).is_err());
    }
}
