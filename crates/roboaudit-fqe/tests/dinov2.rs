//! The DINOv2 encoder on small random checkpoints that the tests write themselves (nothing is
//! downloaded): sizes inferred from the file, a known answer against an independent `f64`
//! re-implementation of the forward pass, determinism, the weights hash as a cache key, and
//! typed errors for bad files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, Tensor};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_data::lerobot::{LeRobotDataset, Rgb8Image};
use roboaudit_fqe::dinov2::random::{RandomDinov2, write_random_dinov2};
use roboaudit_fqe::dinov2::{Dinov2Arch, IMAGENET_MEAN, IMAGENET_STD};
use roboaudit_fqe::synthetic::{ChainRun, write_chain_run};
use roboaudit_fqe::{Dinov2Options, Encoder, FqeError, LoadOptions, load_lerobot};
use sha2::{Digest, Sha256};

/// Writes the tiny random checkpoint (depth 2, width 32) of `seed` as `dir/tiny.safetensors`.
fn tiny(dir: &Path, seed: u64) -> PathBuf {
    let path = dir.join("tiny.safetensors");
    write_random_dinov2(&path, &RandomDinov2::tiny(seed)).unwrap();
    path
}

fn options(side: usize) -> Dinov2Options {
    Dinov2Options {
        side,
        heads: Some(2),
    }
}

fn random_image(width: u32, height: u32, seed: u64) -> Rgb8Image {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pixels = (0..width * height * 3)
        .map(|_| rng.random::<u8>())
        .collect();
    Rgb8Image {
        width,
        height,
        pixels,
    }
}

#[test]
fn loads_a_tiny_checkpoint_infers_its_sizes_and_gives_finite_features() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path(), 1);
    let enc = Encoder::dinov2(&path, &options(28)).unwrap();
    let Encoder::Dinov2(d) = &enc else {
        panic!("not a DINOv2 encoder")
    };
    assert_eq!(
        d.arch(),
        Dinov2Arch {
            depth: 2,
            width: 32,
            heads: 2,
            patch: 14
        }
    );
    assert_eq!(enc.dim(), 32);
    // Heads other than width/64 are part of the id (they change the features).
    assert_eq!(enc.id(), "dinov2-tiny-28-h2");
    assert_eq!(enc.weights_hash().len(), 16);
    // A non-square frame of another size is resampled to 28 × 28.
    let images = [random_image(40, 24, 0), random_image(5, 9, 1)];
    let feats = enc.encode_batch(&images).unwrap();
    assert_eq!(feats.len(), 2);
    for f in &feats {
        assert_eq!(f.len(), 32);
        assert!(f.iter().all(|v| v.is_finite()));
    }
    // A final-LayerNorm output: not constant, order-1 values.
    assert!(feats[0].iter().any(|v| (v - feats[0][0]).abs() > 1e-3));
    assert!(feats[0].iter().all(|v| v.abs() < 10.0));
    assert_ne!(feats[0], feats[1]);

    // A width that is a multiple of 64 takes width/64 heads by default, and the id no suffix.
    let wide = dir.path().join("wide.safetensors");
    let spec = RandomDinov2 {
        depth: 1,
        width: 128,
        seed: 3,
    };
    write_random_dinov2(&wide, &spec).unwrap();
    let enc = Encoder::dinov2(&wide, &Dinov2Options::default()).unwrap();
    let Encoder::Dinov2(d) = &enc else {
        panic!("not a DINOv2 encoder")
    };
    assert_eq!((d.arch().depth, d.arch().heads, enc.dim()), (1, 2, 128));
    assert_eq!(enc.id(), "dinov2-wide-224");
    assert_eq!(enc.encode(&images[0]).unwrap().len(), 128);
}

// ---- Known answer: an independent f64 forward pass ------------------------------------------

/// The checkpoint's tensors as flat `f64` vectors, read back from the file.
fn read_weights(path: &Path) -> HashMap<String, Vec<f64>> {
    candle_core::safetensors::load(path, &Device::Cpu)
        .unwrap()
        .into_iter()
        .map(|(k, t)| {
            let v = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            (k, v.into_iter().map(f64::from).collect())
        })
        .collect()
}

fn layer_norm(x: &[f64], w: &[f64], b: &[f64]) -> Vec<f64> {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let inv = 1.0 / (var + 1e-5).sqrt();
    x.iter()
        .zip(w.iter().zip(b))
        .map(|(v, (w, b))| (v - mean) * inv * w + b)
        .collect()
}

/// `x · Wᵀ + b` for one token; `w` is `[out, in]` row-major.
fn linear(x: &[f64], w: &[f64], b: &[f64]) -> Vec<f64> {
    let inp = x.len();
    b.iter()
        .enumerate()
        .map(|(o, b)| {
            b + w[o * inp..(o + 1) * inp]
                .iter()
                .zip(x)
                .map(|(w, x)| w * x)
                .sum::<f64>()
        })
        .collect()
}

/// GELU, tanh approximation (what candle's `gelu` computes).
fn gelu(v: f64) -> f64 {
    0.5 * v * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v.powi(3))).tanh())
}

/// The final-norm class token of a DINOv2 ViT/14 on `x` (`[3, side, side]`, normalized), written
/// out from the architecture's definition: patch embedding, class token, position embeddings
/// (the 37 × 37 grid sampled at `floor(i · 37 / g)` for `g` patches a side: candle's nearest
/// resampling; the identity at 518), then per block `x += ls1·attn(norm1(x))`,
/// `x += ls2·mlp(norm2(x))`, then `norm`.
fn reference_cls(
    w: &HashMap<String, Vec<f64>>,
    arch: Dinov2Arch,
    x: &[f64],
    side: usize,
) -> Vec<f64> {
    let (d, p, heads) = (arch.width, arch.patch, arch.heads);
    let g = side / p;
    let get = |n: &str| w.get(n).unwrap_or_else(|| panic!("no {n}")).as_slice();
    let (pw, pb, pos) = (
        get("patch_embed.proj.weight"),
        get("patch_embed.proj.bias"),
        get("pos_embed"),
    );
    let near = |i: usize| ((i as f64 * 37.0 / g as f64) as usize).min(36);
    let mut tokens: Vec<Vec<f64>> = vec![
        get("cls_token")
            .iter()
            .zip(&pos[..d])
            .map(|(c, p)| c + p)
            .collect(),
    ];
    for r in 0..g {
        for c in 0..g {
            let pt = 1 + near(r) * 37 + near(c);
            let t: Vec<f64> = (0..d)
                .map(|o| {
                    let mut acc = pb[o];
                    for ch in 0..3 {
                        for i in 0..p {
                            for j in 0..p {
                                acc += pw[((o * 3 + ch) * p + i) * p + j]
                                    * x[ch * side * side + (r * p + i) * side + (c * p + j)];
                            }
                        }
                    }
                    acc + pos[pt * d + o]
                })
                .collect();
            tokens.push(t);
        }
    }
    let n = tokens.len();
    let hd = d / heads;
    let scale = 1.0 / (hd as f64).sqrt();
    for b in 0..arch.depth {
        let bw = |s: &str| get(&format!("blocks.{b}.{s}"));
        let qkv: Vec<Vec<f64>> = tokens
            .iter()
            .map(|t| {
                linear(
                    &layer_norm(t, bw("norm1.weight"), bw("norm1.bias")),
                    bw("attn.qkv.weight"),
                    bw("attn.qkv.bias"),
                )
            })
            .collect();
        let mut attended = vec![vec![0.0; d]; n];
        for h in 0..heads {
            for (t, out) in attended.iter_mut().enumerate() {
                let q = &qkv[t][h * hd..(h + 1) * hd];
                let logits: Vec<f64> = (0..n)
                    .map(|s| {
                        scale
                            * q.iter()
                                .zip(&qkv[s][d + h * hd..d + (h + 1) * hd])
                                .map(|(a, b)| a * b)
                                .sum::<f64>()
                    })
                    .collect();
                let max = logits.iter().copied().fold(f64::MIN, f64::max);
                let e: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
                let z: f64 = e.iter().sum();
                for (s, es) in e.iter().enumerate() {
                    for k in 0..hd {
                        out[h * hd + k] += es / z * qkv[s][2 * d + h * hd + k];
                    }
                }
            }
        }
        for (t, a) in tokens.iter_mut().zip(&attended) {
            let proj = linear(a, bw("attn.proj.weight"), bw("attn.proj.bias"));
            for ((v, p), g) in t.iter_mut().zip(&proj).zip(bw("ls1.gamma")) {
                *v += g * p;
            }
            let hidden: Vec<f64> = linear(
                &layer_norm(t, bw("norm2.weight"), bw("norm2.bias")),
                bw("mlp.fc1.weight"),
                bw("mlp.fc1.bias"),
            )
            .into_iter()
            .map(gelu)
            .collect();
            let m = linear(&hidden, bw("mlp.fc2.weight"), bw("mlp.fc2.bias"));
            for ((v, m), g) in t.iter_mut().zip(&m).zip(bw("ls2.gamma")) {
                *v += g * m;
            }
        }
    }
    layer_norm(&tokens[0], get("norm.weight"), get("norm.bias"))
}

#[test]
fn features_match_an_independent_forward_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path(), 7);
    let weights = read_weights(&path);
    // 42: 3 × 3 patches, position embeddings resampled; 518: the native 37 × 37 grid.
    for side in [42, 518] {
        let enc = Encoder::dinov2(&path, &options(side)).unwrap();
        let Encoder::Dinov2(d) = &enc else {
            panic!("not a DINOv2 encoder")
        };
        // An image of exactly side × side: the resampling is the identity, so the reference
        // input is the normalized bytes themselves.
        let side32 = u32::try_from(side).unwrap();
        let img = random_image(side32, side32, side as u64);
        let plane = side * side;
        let mut x = vec![0.0; 3 * plane];
        for (i, px) in img.pixels.chunks_exact(3).enumerate() {
            for c in 0..3 {
                x[c * plane + i] = (f64::from(px[c]) / 255.0 - f64::from(IMAGENET_MEAN[c]))
                    / f64::from(IMAGENET_STD[c]);
            }
        }
        let want = reference_cls(&weights, d.arch(), &x, side);
        let got = enc.encode(&img).unwrap();
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (f64::from(*g) - w).abs())
            .fold(0.0, f64::max);
        eprintln!("side {side}: max |candle f32 - reference f64| = {worst:e}");
        // f32 forward against f64 on order-1 values: measured ~1e-6, required 1e-5.
        assert!(worst < 1e-5, "side {side}: max |Δ| = {worst:e}");
        assert!(want.iter().any(|v| v.abs() > 0.5), "side {side}: {want:?}");
    }
}

// ---- Determinism and the cache key ---------------------------------------------------------

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn same_image_gives_the_same_bytes_in_any_batch_and_the_writer_is_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path(), 2);
    let enc = Encoder::dinov2(&path, &options(28)).unwrap();
    let img = random_image(30, 20, 5);
    let alone = enc.encode(&img).unwrap();
    assert_eq!(bits(&enc.encode(&img).unwrap()), bits(&alone));
    let batch = [random_image(8, 8, 6), img.clone(), random_image(50, 50, 7)];
    let feats = enc.encode_batch(&batch).unwrap();
    assert_eq!(bits(&feats[1]), bits(&alone));
    // The same spec writes the same bytes (so the same hash); a reloaded encoder is equal.
    let again = dir.path().join("again.safetensors");
    write_random_dinov2(&again, &RandomDinov2::tiny(2)).unwrap();
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&path).unwrap()
    );
    assert_eq!(Encoder::dinov2(&again, &options(28)).unwrap(), enc);
}

#[test]
fn other_weights_change_the_hash_and_miss_the_cache_a_rerun_hits_it() {
    let dir = tempfile::tempdir().unwrap();
    write_chain_run(
        &dir.path().join("run"),
        &ChainRun {
            episodes: 40,
            ..ChainRun::default()
        },
    )
    .unwrap();
    let ds = LeRobotDataset::open(dir.path().join("run/dataset")).unwrap();
    let cache = dir.path().join("cache");
    let a_dir = dir.path().join("a");
    let b_dir = dir.path().join("b");
    std::fs::create_dir_all(&a_dir).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    let a = Encoder::dinov2(tiny(&a_dir, 1), &options(28)).unwrap();
    let b = Encoder::dinov2(tiny(&b_dir, 2), &options(28)).unwrap();
    // The hash is the SHA-256 prefix of the file's bytes.
    let bytes = std::fs::read(a_dir.join("tiny.safetensors")).unwrap();
    let sha = format!("{:x}", Sha256::digest(&bytes));
    assert_eq!(a.weights_hash(), &sha[..16]);
    assert_eq!(a.id(), b.id());
    assert_ne!(a.weights_hash(), b.weights_hash());
    let load = |enc: &Encoder| {
        let opts = LoadOptions {
            encoder: enc.clone(),
            cache_dir: Some(cache.clone()),
            components: 4,
            ..LoadOptions::push_defaults()
        };
        load_lerobot(&ds, &opts).unwrap()
    };
    let first = load(&a);
    // Six distinct PNGs in the chain world: six forwards, every other frame a hit.
    assert_eq!(first.summary.encoded, 6);
    assert_eq!(
        first.summary.encoder.as_deref(),
        Some(format!("dinov2-tiny-28-h2:{}", a.weights_hash()).as_str())
    );
    let second = load(&a);
    assert_eq!(second.summary.encoded, 0, "a rerun must not recompute");
    assert_eq!(second.summary.cache_hits, first.inputs.n_frames());
    assert_eq!(second.inputs.parts[0].values, first.inputs.parts[0].values);
    let other = load(&b);
    assert_eq!(
        other.summary.encoded, 6,
        "other weights must miss the cache"
    );
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(files.len(), 2);
    // One changed byte of one weight changes the hash too.
    let mut edited = bytes.clone();
    let last = edited.len() - 1;
    edited[last] ^= 0x01;
    let c_path = dir.path().join("tiny.safetensors");
    std::fs::write(&c_path, &edited).unwrap();
    let c = Encoder::dinov2(&c_path, &options(28)).unwrap();
    assert_ne!(c.weights_hash(), a.weights_hash());
    assert_eq!(load(&c).summary.encoded, 6);
}

// ---- Typed errors naming the file and the tensor --------------------------------------------

/// A change to a checkpoint's tensors.
type Edit = dyn FnOnce(&mut HashMap<String, Tensor>);

/// Rewrites the checkpoint at `src` to `dst` after `edit` changes its tensors.
fn rewrite(src: &Path, dst: &Path, edit: Box<Edit>) {
    let mut t = candle_core::safetensors::load(src, &Device::Cpu).unwrap();
    edit(&mut t);
    candle_core::safetensors::save(&t, dst).unwrap();
}

/// The file and tensor of a [`FqeError::Weights`], checking the message names both.
fn weights_error(e: FqeError) -> (PathBuf, Option<String>) {
    let text = e.to_string();
    match e {
        FqeError::Weights { path, tensor, .. } => {
            assert!(text.ends_with(&path.display().to_string()), "{text}");
            if let Some(t) = &tensor {
                assert!(text.contains(&format!("\"{t}\"")), "{text}");
            }
            (path, tensor)
        }
        other => panic!("not a weights error: {other}"),
    }
}

#[test]
fn bad_checkpoints_give_typed_errors_naming_the_file_and_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let good = tiny(dir.path(), 4);
    let load = |p: &Path| Encoder::dinov2(p, &options(28)).unwrap_err();

    let missing = dir.path().join("missing.safetensors");
    match load(&missing) {
        FqeError::Io { path, .. } => assert_eq!(path, missing),
        other => panic!("{other}"),
    }

    let garbage = dir.path().join("garbage.safetensors");
    std::fs::write(&garbage, b"this is not a safetensors file").unwrap();
    assert_eq!(weights_error(load(&garbage)), (garbage.clone(), None));

    let truncated = dir.path().join("truncated.safetensors");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(weights_error(load(&truncated)), (truncated.clone(), None));

    let cases: [(&str, &str, Box<Edit>); 5] = [
        (
            "shape",
            "blocks.1.mlp.fc1.weight",
            Box::new(|t| {
                t.insert(
                    "blocks.1.mlp.fc1.weight".into(),
                    Tensor::zeros((100, 32), DType::F32, &Device::Cpu).unwrap(),
                );
            }),
        ),
        (
            "missing",
            "blocks.0.ls1.gamma",
            Box::new(|t| {
                t.remove("blocks.0.ls1.gamma");
            }),
        ),
        (
            "registers",
            "register_tokens",
            Box::new(|t| {
                t.insert(
                    "register_tokens".into(),
                    Tensor::zeros((1, 4, 32), DType::F32, &Device::Cpu).unwrap(),
                );
            }),
        ),
        (
            "integer",
            "norm.bias",
            Box::new(|t| {
                t.insert(
                    "norm.bias".into(),
                    Tensor::zeros(32, DType::I64, &Device::Cpu).unwrap(),
                );
            }),
        ),
        (
            "unexpected",
            "blocks.0.mlp.w12.weight",
            Box::new(|t| {
                t.insert(
                    "blocks.0.mlp.w12.weight".into(),
                    Tensor::zeros((8, 32), DType::F32, &Device::Cpu).unwrap(),
                );
            }),
        ),
    ];
    for (what, tensor, edit) in cases {
        let bad = dir.path().join(format!("{what}.safetensors"));
        rewrite(&good, &bad, edit);
        assert_eq!(
            weights_error(load(&bad)),
            (bad.clone(), Some(tensor.to_owned())),
            "{what}"
        );
    }

    // Wider than candle-transformers' 1000-output head, through which the class token is read.
    let wide = dir.path().join("wide.safetensors");
    let mut t = HashMap::new();
    t.insert(
        "cls_token".to_owned(),
        Tensor::zeros((1, 1, 1024), DType::F32, &Device::Cpu).unwrap(),
    );
    candle_core::safetensors::save(&t, &wide).unwrap();
    assert_eq!(
        weights_error(load(&wide)),
        (wide.clone(), Some("cls_token".into()))
    );

    // Heads that do not divide the width are a configuration error naming the file.
    let e = Encoder::dinov2(
        &good,
        &Dinov2Options {
            side: 28,
            heads: Some(3),
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, FqeError::InvalidConfig(m) if m.contains(&good.display().to_string())),
        "{e}"
    );
    let e = Encoder::dinov2(
        &good,
        &Dinov2Options {
            side: 28,
            heads: None,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("heads=N"), "{e}");
}

/// candle-transformers 0.11.1's DINOv2 forward takes one image at a time (its class token and
/// position embedding are not broadcast over the batch), which is why the encoder runs one
/// forward per frame. If this starts to pass, an upgrade lifted the limit: batch the forward.
#[test]
fn candle_transformers_dinov2_still_refuses_a_batch_of_two() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path(), 9);
    let mut t = candle_core::safetensors::load(&path, &Device::Cpu).unwrap();
    t.insert(
        "head.weight".into(),
        Tensor::zeros((1000, 64), DType::F32, &Device::Cpu).unwrap(),
    );
    t.insert(
        "head.bias".into(),
        Tensor::zeros(1000, DType::F32, &Device::Cpu).unwrap(),
    );
    let vb = candle_nn::VarBuilder::from_tensors(t, DType::F32, &Device::Cpu);
    let model =
        candle_transformers::models::dinov2::DinoVisionTransformer::new(vb, 2, 32, 2).unwrap();
    let one = Tensor::zeros((1, 3, 28, 28), DType::F32, &Device::Cpu).unwrap();
    assert!(model.forward(&one).is_ok());
    let two = Tensor::zeros((2, 3, 28, 28), DType::F32, &Device::Cpu).unwrap();
    assert!(model.forward(&two).is_err());
}
