//! Weights files that are not what the encoder needs, and input sizes the weights cannot take:
//! typed errors naming the file (and the tensor), before any image is encoded.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use common::reference::{image, write_checkpoints};
use roboaudit_encoders::clip::{RandomClip, write_random_clip};
use roboaudit_encoders::resnet::write_random_resnet18;
use roboaudit_encoders::{
    ClipEncoder, ClipOptions, Dinov2Encoder, Dinov2Options, EncoderError, Resnet18Encoder,
    ResnetOptions,
};

fn clip_opts() -> ClipOptions {
    ClipOptions {
        heads: Some(2),
        side: None,
    }
}

fn dino_opts() -> Dinov2Options {
    Dinov2Options {
        side: 28,
        heads: Some(2),
    }
}

/// Rewrites `src` to `dst` after `edit` changes its tensors.
fn rewrite(src: &Path, dst: &Path, edit: impl FnOnce(&mut HashMap<String, Tensor>)) {
    let mut t = candle_core::safetensors::load(src, &Device::Cpu).unwrap();
    edit(&mut t);
    candle_core::safetensors::save(&t, dst).unwrap();
}

/// The message names the file (last) and the tensor (quoted).
fn names(e: &EncoderError, path: &Path, tensor: &str) {
    let text = e.to_string();
    assert!(text.ends_with(&path.display().to_string()), "{text}");
    assert!(text.contains(&format!("\"{tensor}\"")), "{text}");
    assert_eq!(e.weights_fault(), Some((path, Some(tensor))), "{text}");
    assert!(e.is_invalid_input());
}

#[test]
fn a_file_of_another_architecture_is_named_as_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let [resnet, dinov2, clip] = write_checkpoints(dir.path()).unwrap();
    let e = Resnet18Encoder::load(&clip, &ResnetOptions::default()).unwrap_err();
    names(&e, &clip, "layer1.0.conv1.weight");
    assert!(
        matches!(&e, EncoderError::WrongArchitecture { found: Some(f), .. } if f.starts_with("CLIP")),
        "{e}"
    );
    let e = ClipEncoder::load(&dinov2, &clip_opts()).unwrap_err();
    names(&e, &dinov2, "vision_model.embeddings.class_embedding");
    assert!(e.to_string().contains("DINOv2 (torch-hub layout)"), "{e}");
    let e = Dinov2Encoder::load(&resnet, &dino_opts()).unwrap_err();
    names(&e, &resnet, "cls_token");
    assert!(
        matches!(&e, EncoderError::WrongArchitecture { found: Some(f), .. } if f.contains("ResNet")),
        "{e}"
    );
    // A bottleneck ResNet (ResNet-50's layer1.0.conv3) is not a ResNet-18.
    let r50 = dir.path().join("r50.safetensors");
    rewrite(&resnet, &r50, |t| {
        t.insert(
            "layer1.0.conv3.weight".into(),
            Tensor::zeros((256, 64, 1, 1), DType::F32, &Device::Cpu).unwrap(),
        );
    });
    let e = Resnet18Encoder::load(&r50, &ResnetOptions::default()).unwrap_err();
    assert!(
        matches!(&e, EncoderError::WrongArchitecture { found: Some(f), .. } if f.contains("bottleneck")),
        "{e}"
    );
    // Not safetensors at all.
    let text = dir.path().join("notes.safetensors");
    std::fs::write(&text, b"hello").unwrap();
    let e = ClipEncoder::load(&text, &clip_opts()).unwrap_err();
    assert!(
        matches!(&e, EncoderError::NotSafetensors { path, .. } if path == &text),
        "{e}"
    );
    let missing = dir.path().join("absent.safetensors");
    let e = Resnet18Encoder::load(&missing, &ResnetOptions::default()).unwrap_err();
    assert!(
        matches!(&e, EncoderError::Io { path, .. } if path == &missing),
        "{e}"
    );
    assert!(e.is_invalid_input());
}

#[test]
fn a_missing_tensor_a_wrong_shape_or_type_and_a_foreign_tensor_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let resnet = dir.path().join("resnet18.safetensors");
    write_random_resnet18(&resnet, 1).unwrap();
    let clip = dir.path().join("clip.safetensors");
    write_random_clip(&clip, &RandomClip::tiny(2)).unwrap();
    let bad = |name: &str| -> PathBuf { dir.path().join(format!("{name}.safetensors")) };

    let p = bad("r_missing");
    rewrite(&resnet, &p, |t| {
        t.remove("layer3.1.bn2.running_var");
    });
    let e = Resnet18Encoder::load(&p, &ResnetOptions::default()).unwrap_err();
    assert!(matches!(e, EncoderError::MissingTensor { .. }), "{e}");
    names(&e, &p, "layer3.1.bn2.running_var");

    // A ResNet-34 has three blocks in layer1.
    let p = bad("r34");
    rewrite(&resnet, &p, |t| {
        t.insert(
            "layer1.2.conv1.weight".into(),
            Tensor::zeros((64, 64, 3, 3), DType::F32, &Device::Cpu).unwrap(),
        );
    });
    let e = Resnet18Encoder::load(&p, &ResnetOptions::default()).unwrap_err();
    assert!(matches!(e, EncoderError::UnexpectedTensor { .. }), "{e}");
    names(&e, &p, "layer1.2.conv1.weight");

    let p = bad("c_missing");
    rewrite(&clip, &p, |t| {
        t.remove("vision_model.encoder.layers.1.mlp.fc2.bias");
    });
    let e = ClipEncoder::load(&p, &clip_opts()).unwrap_err();
    assert!(matches!(e, EncoderError::MissingTensor { .. }), "{e}");
    names(&e, &p, "vision_model.encoder.layers.1.mlp.fc2.bias");

    let p = bad("c_shape");
    rewrite(&clip, &p, |t| {
        t.insert(
            "vision_model.encoder.layers.0.self_attn.k_proj.weight".into(),
            Tensor::zeros((64, 32), DType::F32, &Device::Cpu).unwrap(),
        );
    });
    let e = ClipEncoder::load(&p, &clip_opts()).unwrap_err();
    assert!(
        matches!(&e, EncoderError::TensorShape { shape, expected, .. } if shape == &[64, 32] && expected == &[64, 64]),
        "{e}"
    );
    names(
        &e,
        &p,
        "vision_model.encoder.layers.0.self_attn.k_proj.weight",
    );

    let p = bad("c_type");
    rewrite(&clip, &p, |t| {
        t.insert(
            "vision_model.post_layernorm.bias".into(),
            Tensor::zeros(64, DType::I64, &Device::Cpu).unwrap(),
        );
    });
    let e = ClipEncoder::load(&p, &clip_opts()).unwrap_err();
    assert!(matches!(e, EncoderError::TensorType { .. }), "{e}");
    names(&e, &p, "vision_model.post_layernorm.bias");

    // A full CLIPModel's other tensors are accepted and not read: same features.
    let p = bad("c_full");
    rewrite(&clip, &p, |t| {
        for (name, shape) in [
            ("visual_projection.weight", vec![16, 64]),
            ("text_model.final_layer_norm.weight", vec![64]),
            ("logit_scale", vec![]),
        ] {
            t.insert(
                name.into(),
                Tensor::zeros(shape, DType::F32, &Device::Cpu).unwrap(),
            );
        }
    });
    // transformers 5's bare CLIPVisionModel saves the tower without the `vision_model.` prefix.
    let bare = bad("c_bare");
    rewrite(&clip, &bare, |t| {
        *t = std::mem::take(t)
            .into_iter()
            .map(|(k, v)| (k.trim_start_matches("vision_model.").to_owned(), v))
            .collect();
    });
    let img = image();
    let a = ClipEncoder::load(&clip, &clip_opts()).unwrap();
    let want = a.encode(&img).unwrap();
    for other in [&p, &bare] {
        let b = ClipEncoder::load(other, &clip_opts()).unwrap();
        assert_eq!(b.encode(&img).unwrap(), want);
        assert_ne!(a.weights_hash(), b.weights_hash());
    }
}

#[test]
fn an_input_size_the_weights_cannot_take_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.safetensors");
    write_random_clip(&clip, &RandomClip::tiny(2)).unwrap();
    // The position embeddings hold 4 × 4 patches of 8 pixels: 32 × 32 only.
    let e = ClipEncoder::load(
        &clip,
        &ClipOptions {
            heads: Some(2),
            side: Some(64),
        },
    )
    .unwrap_err();
    assert!(matches!(e, EncoderError::ImageSize { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("side=64") && text.contains("32 × 32"),
        "{text}"
    );
    assert!(e.is_invalid_input());
    let enc = ClipEncoder::load(
        &clip,
        &ClipOptions {
            heads: Some(2),
            side: Some(32),
        },
    )
    .unwrap();
    assert_eq!(enc.arch().image_size, 32);
    let e = enc.encode_preprocessed(vec![0.0; 3 * 28 * 28]).unwrap_err();
    assert!(matches!(e, EncoderError::ImageSize { .. }), "{e}");
    // Options out of range are usage errors, found before the file is read.
    let e = Resnet18Encoder::load(&clip, &ResnetOptions { side: 16 }).unwrap_err();
    assert!(
        matches!(e, EncoderError::InvalidConfig(_)) && !e.is_invalid_input(),
        "{e}"
    );
    // An empty image.
    let empty = roboaudit_data::lerobot::Rgb8Image {
        width: 0,
        height: 0,
        pixels: vec![],
    };
    assert!(matches!(
        enc.encode(&empty).unwrap_err(),
        EncoderError::InvalidImage(_)
    ));
}

#[test]
fn random_checkpoints_are_deterministic_and_features_batch_independent() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("c{i}.safetensors")))
        .collect();
    write_random_clip(&paths[0], &RandomClip::tiny(5)).unwrap();
    write_random_clip(&paths[1], &RandomClip::tiny(5)).unwrap();
    write_random_clip(&paths[2], &RandomClip::tiny(6)).unwrap();
    let bytes: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert_eq!(bytes[0], bytes[1]);
    assert_ne!(bytes[0], bytes[2]);
    let enc = ClipEncoder::load(&paths[0], &clip_opts()).unwrap();
    let img = image();
    let mut other = img.clone();
    other.pixels.reverse();
    let batch = enc
        .encode_batch(&[other.clone(), img.clone(), other])
        .unwrap();
    assert_eq!(batch[1], enc.encode(&img).unwrap());
    assert_ne!(batch[0], batch[1]);
}
