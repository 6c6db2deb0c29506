#!/usr/bin/env python3
"""Reference features of roboaudit-encoders' three encoders, computed with PyTorch.

The Rust side writes three seeded random checkpoints (a ResNet-18 in torchvision's layout, a tiny
DINOv2 in the torch-hub layout, a tiny CLIP vision tower in transformers' layout) with
`cargo run -p roboaudit-encoders --example write_reference_checkpoints -- DIR`; their bytes are
deterministic and their SHA-256 is recorded here, so the Rust test checks it runs on the same
files. This script loads each file with an independent implementation

- ResNet-18: `torchvision.models.resnet18()`, `load_state_dict(strict=True)`, `fc` replaced by
  the identity (the 512-d global average pool);
- DINOv2: `transformers.Dinov2Model` (the torch-hub tensors renamed to its layout, `qkv` split),
  configured as candle-transformers runs the model: tanh-approximated GELU, LayerNorm eps 1e-5, at
  the native 518-pixel input (no position-embedding resampling); the feature is the pooled
  output (final-LayerNorm class token);
- CLIP: `transformers.CLIPVisionModel`, QuickGELU, LayerNorm eps 1e-5; the feature is
  `pooler_output` (post-LayerNorm class token, no projection);

preprocesses the fixed 40 x 24 test image with its own NumPy area resampling and the ImageNet or
CLIP normalization, and writes the features to
crates/roboaudit-encoders/tests/data/encoders_reference.json, which `tests/reference.rs` compares
with the Rust encoders to 1e-4.

Needs: torch, torchvision, transformers, safetensors, numpy (PyPI), and cargo.
Usage: python3 scripts/encoders_reference.py [--out FILE] | --bench N
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import subprocess
import tempfile

import numpy as np
import safetensors.torch
import torch
import torchvision
import transformers

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/roboaudit-encoders/tests/data/encoders_reference.json"

# Must match crates/roboaudit-encoders/tests/common/reference.rs.
RESNET_SIDE = 64
DINOV2_SIDE = 518
HEADS = 2
IMAGENET = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
OLD_ATTENTION = [
    "attention.attention.query",
    "attention.attention.key",
    "attention.attention.value",
    "attention.output.dense",
]
NEW_ATTENTION = ["attention.q_proj", "attention.k_proj", "attention.v_proj", "attention.o_proj"]
CLIP = ([0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711])


def image() -> np.ndarray:
    """The 24 x 40 x 3 uint8 test image (rows, columns, RGB)."""
    h, w = 24, 40
    out = np.zeros((h, w, 3), dtype=np.uint8)
    for y in range(h):
        for x in range(w):
            out[y, x] = [
                (x * 37 + y * 91 + x * y * 7) % 256,
                (x * x * 3 + y * 17 + 50) % 256,
                (x * y * 11 + 200 - y * 5) % 256,
            ]
    return out


def area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """[n_out, n_in] box-filter weights: output cell o covers [o, o + 1) * n_in / n_out."""
    m = np.zeros((n_out, n_in))
    scale = n_in / n_out
    for o in range(n_out):
        lo, hi = o * scale, (o + 1) * scale
        for i in range(int(np.floor(lo)), min(int(np.ceil(hi)), n_in)):
            overlap = min(hi, i + 1) - max(lo, i)
            if overlap > 0:
                m[o, i] = overlap / scale
    return m


def preprocess(img: np.ndarray, side: int, mean_std) -> torch.Tensor:
    """[1, 3, side, side] float32: area-resampled to side x side, scaled to [0, 1], normalized."""
    h, w, _ = img.shape
    wy, wx = area_matrix(h, side), area_matrix(w, side)
    planes = [wy @ img[:, :, c].astype(np.float64) @ wx.T / 255.0 for c in range(3)]
    x = np.stack(planes).astype(np.float32)
    mean = np.array(mean_std[0], dtype=np.float32)[:, None, None]
    std = np.array(mean_std[1], dtype=np.float32)[:, None, None]
    return torch.from_numpy((x - mean) / std)[None]


def resnet18(path: pathlib.Path, img: np.ndarray) -> list[float]:
    model = torchvision.models.resnet18()
    model.load_state_dict(safetensors.torch.load_file(path), strict=True)
    model.fc = torch.nn.Identity()
    model.eval()
    with torch.no_grad():
        return model(preprocess(img, RESNET_SIDE, IMAGENET))[0].tolist()


def dinov2(path: pathlib.Path, img: np.ndarray) -> list[float]:
    sd = safetensors.torch.load_file(path)
    width = sd["cls_token"].shape[-1]
    new_names = "encoder.layer.0.attention.q_proj.weight" in transformers.Dinov2Model(
        transformers.Dinov2Config(hidden_size=8, num_hidden_layers=1, num_attention_heads=1)
    ).state_dict()
    depth = 1 + max(int(k.split(".")[1]) for k in sd if k.startswith("blocks."))
    hf = {
        "embeddings.cls_token": sd["cls_token"],
        "embeddings.mask_token": sd["mask_token"],
        "embeddings.position_embeddings": sd["pos_embed"],
        "embeddings.patch_embeddings.projection.weight": sd["patch_embed.proj.weight"],
        "embeddings.patch_embeddings.projection.bias": sd["patch_embed.proj.bias"],
        "layernorm.weight": sd["norm.weight"],
        "layernorm.bias": sd["norm.bias"],
    }
    for i in range(depth):
        b, o = f"blocks.{i}.", f"encoder.layer.{i}."
        qw, kw, vw = sd[b + "attn.qkv.weight"].chunk(3)
        qb, kb, vb = sd[b + "attn.qkv.bias"].chunk(3)
        # transformers 5 names the projections q_proj ... o_proj; 4.x attention.query ... dense.
        names = NEW_ATTENTION if new_names else OLD_ATTENTION
        for name, w, bias in zip(names[:3], (qw, kw, vw), (qb, kb, vb)):
            hf[o + f"{name}.weight"] = w
            hf[o + f"{name}.bias"] = bias
        hf[o + f"{names[3]}.weight"] = sd[b + "attn.proj.weight"]
        hf[o + f"{names[3]}.bias"] = sd[b + "attn.proj.bias"]
        hf[o + "layer_scale1.lambda1"] = sd[b + "ls1.gamma"]
        hf[o + "layer_scale2.lambda1"] = sd[b + "ls2.gamma"]
        for part in ["norm1", "norm2", "mlp.fc1", "mlp.fc2"]:
            for p in ["weight", "bias"]:
                hf[o + f"{part}.{p}"] = sd[b + f"{part}.{p}"]
    config = transformers.Dinov2Config(
        hidden_size=width,
        num_hidden_layers=depth,
        num_attention_heads=HEADS,
        mlp_ratio=4,
        image_size=518,
        patch_size=14,
        layer_norm_eps=1e-5,
        hidden_act="gelu_pytorch_tanh",
    )
    model = transformers.Dinov2Model(config)
    model.load_state_dict(hf, strict=True)
    model.eval()
    with torch.no_grad():
        out = model(pixel_values=preprocess(img, DINOV2_SIDE, IMAGENET))
    return out.pooler_output[0].tolist()


def clip(path: pathlib.Path, img: np.ndarray) -> list[float]:
    sd = safetensors.torch.load_file(path)
    width = sd["vision_model.embeddings.class_embedding"].shape[0]
    patch = sd["vision_model.embeddings.patch_embedding.weight"].shape[-1]
    positions = sd["vision_model.embeddings.position_embedding.weight"].shape[0]
    grid = round((positions - 1) ** 0.5)
    depth = 1 + max(
        int(k.split(".")[3]) for k in sd if k.startswith("vision_model.encoder.layers.")
    )
    config = transformers.CLIPVisionConfig(
        hidden_size=width,
        intermediate_size=sd["vision_model.encoder.layers.0.mlp.fc1.weight"].shape[0],
        num_hidden_layers=depth,
        num_attention_heads=HEADS,
        image_size=grid * patch,
        patch_size=patch,
        hidden_act="quick_gelu",
        layer_norm_eps=1e-5,
        projection_dim=width,
    )
    model = transformers.CLIPVisionModel(config)
    if not any(k.startswith("vision_model.") for k in model.state_dict()):
        # transformers 5's CLIPVisionModel is the bare tower; CLIPModel files keep the prefix.
        sd = {k.removeprefix("vision_model."): v for k, v in sd.items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert {m.removeprefix("vision_model.") for m in missing} <= {"embeddings.position_ids"}, missing
    model.eval()
    with torch.no_grad():
        out = model(pixel_values=preprocess(img, grid * patch, CLIP))
    return out.pooler_output[0].tolist()


def bench(n: int) -> None:
    """Images per second of the real-size models (random weights) on n images already at the
    network's input size, one image per forward as the Rust encoders run (the side by side of
    BENCHMARKS.md; `examples/encoder_throughput.rs` is the Rust half)."""
    import time

    print(f"torch threads: {torch.get_num_threads()}")
    models = {
        "resnet18 224": (torchvision.models.resnet18(), 224, lambda m, x: m(x)),
        "dinov2 vits14 224": (
            transformers.Dinov2Model(transformers.Dinov2Config(
                hidden_size=384, num_hidden_layers=12, num_attention_heads=6,
                image_size=518, patch_size=14)),
            224,
            lambda m, x: m(pixel_values=x).pooler_output,
        ),
        "clip vitb32 224": (
            transformers.CLIPVisionModel(transformers.CLIPVisionConfig(
                hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                num_attention_heads=12, image_size=224, patch_size=32)),
            224,
            lambda m, x: m(pixel_values=x).pooler_output,
        ),
    }
    for name, (model, side, run) in models.items():
        model.eval()
        xs = [torch.randn(1, 3, side, side) for _ in range(n)]
        with torch.no_grad():
            run(model, xs[0])
            start = time.perf_counter()
            for x in xs:
                run(model, x)
            seconds = time.perf_counter() - start
        print(f"{name:<20} {n / seconds:8.1f} images/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--bench", type=int, metavar="N",
                        help="only time the real-size models on N images (no JSON written)")
    args = parser.parse_args()
    if args.bench:
        bench(args.bench)
        return
    torch.manual_seed(0)
    img = image()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        subprocess.run(
            ["cargo", "run", "--quiet", "-p", "roboaudit-encoders", "--example",
             "write_reference_checkpoints", "--", str(tmp)],
            cwd=ROOT,
            check=True,
        )
        encoders = {}
        for name, fn, extra in [
            ("resnet18", resnet18, {"side": RESNET_SIDE}),
            ("dinov2", dinov2, {"side": DINOV2_SIDE, "heads": HEADS}),
            ("clip", clip, {"heads": HEADS}),
        ]:
            path = tmp / f"{name}.safetensors"
            encoders[name] = {
                "file": path.name,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                **extra,
                "output": fn(path, img),
            }
    result = {
        "generator": "scripts/encoders_reference.py",
        "versions": {
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "transformers": transformers.__version__,
        },
        "image": "40 x 24, see image() in the script",
        "encoders": encoders,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
