//! `roboaudit embed -r policy_encoder:DIR` on a Policy+DR checkpoint of a small `retrieval
//! collect --mechanism policy-dr` run: on the run's first images (rebuilt as 64 × 64 PNG files,
//! the harness's render size, from the `pixels32` rows it wrote) it gives, bit for bit, the
//! `policy_encoder` rows the collector wrote. A folder without the checkpoint's files, a config
//! that is not a policy's, weights of another architecture, a missing tensor, weights of other
//! sizes than the config declares and an image of another size exit 3 naming the file, and write
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::path::{Path, PathBuf};

use roboaudit_encoders::clip::{RandomClip, write_random_clip};
use roboaudit_types::{EmbeddingKind, EmbeddingRecord};

/// A Policy+DR collection of one experience and three query scenes (the fewest it takes).
fn collect(run: &Path) {
    let o = common::collect_learned("policy-dr", "1", run, &[]);
    assert!(o.status.success(), "{}", text(&o));
}

/// Writes an RGB PNG of `side × side` pixels.
fn png(path: &Path, side: u32, pixels: &[u8]) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(file, side, side);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .unwrap()
        .write_image_data(pixels)
        .unwrap();
}

/// A 64 × 64 image whose 2 × 2 average pooling is the `pixels32` vector `v` (32 × 32 × 3 values,
/// each the sum of four bytes over 1020): each 2 × 2 block's four bytes add up to that sum.
fn unpooled(v: &[f32]) -> Vec<u8> {
    assert_eq!(v.len(), 32 * 32 * 3);
    let mut out = vec![0u8; 64 * 64 * 3];
    for (i, &x) in v.iter().enumerate() {
        let (y, col, c) = (i / (32 * 3), (i / 3) % 32, i % 3);
        let s = (x * 1020.0).round() as u32;
        assert_eq!((s as f32 / 1020.0).to_bits(), x.to_bits(), "value {x}");
        for (k, (dy, dx)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
            let b = s / 4 + u32::from((k as u32) < s % 4);
            out[((2 * y + dy) * 64 + 2 * col + dx) * 3 + c] = u8::try_from(b).unwrap();
        }
    }
    out
}

fn rows<'a>(
    records: &'a [EmbeddingRecord],
    name: &str,
) -> Vec<(EmbeddingKind, &'a str, &'a [f32])> {
    let mut r: Vec<_> = records
        .iter()
        .filter(|r| r.representation == name)
        .map(|r| (r.kind, r.id.as_str(), r.vector.as_slice()))
        .collect();
    r.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    r
}

fn embed(images: &Path, rep: &str, out: &Path) -> std::process::Output {
    roboaudit(&[
        "embed",
        "--images",
        images.to_str().unwrap(),
        "-r",
        rep,
        "--out",
        out.to_str().unwrap(),
    ])
}

/// The checkpoint folder of experience `e00`, as `collect.json` records it.
fn e00_checkpoint(run: &Path) -> PathBuf {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("collect.json")).unwrap()).unwrap();
    let p = manifest["reuse"]["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["experience_id"] == "e00")
        .expect("a policy of e00");
    run.join(p["dir"].as_str().unwrap())
}

/// A copy of checkpoint folder `from` at `to`.
fn copy_checkpoint(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["model.safetensors", "config.json"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}

/// Removes the tensor whose data ends the safetensors file `path` (header edited, data cut).
fn drop_last_tensor(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let n = usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap();
    let mut header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let end = |v: &serde_json::Value| v["data_offsets"][1].as_u64().unwrap_or(0);
    let last = header
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .max_by_key(|(_, v)| end(v))
        .map(|(k, _)| k.clone())
        .unwrap();
    header.remove(&last);
    let keep = header.values().map(end).max().unwrap();
    let mut h = serde_json::to_vec(&header).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&bytes[8 + n..8 + n + usize::try_from(keep).unwrap()]);
    std::fs::write(path, out).unwrap();
    last
}

#[test]
fn embed_gives_the_collectors_policy_encoder_and_refuses_bad_checkpoints() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    collect(&run);
    let collected = roboaudit_data::read_embeddings(run.join("embeddings.parquet")).unwrap();

    // The first images the collector embedded, as the harness rendered them (64 × 64).
    let images = tmp.path().join("images");
    for (kind, id, v) in rows(&collected, "pixels32") {
        let sub = match kind {
            EmbeddingKind::Experience => "experiences",
            EmbeddingKind::Scene => "scenes",
        };
        std::fs::create_dir_all(images.join(sub)).unwrap();
        png(
            &images.join(sub).join(format!("{id}.png")),
            64,
            &unpooled(v),
        );
    }

    let checkpoint = e00_checkpoint(&run);
    let rep = format!("policy_encoder:{}", checkpoint.display());
    let out = tmp.path().join("policy.parquet");
    let o = embed(&images, &rep, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let embedded = roboaudit_data::read_embeddings(&out).unwrap();
    let (want, got) = (
        rows(&collected, "policy_encoder"),
        rows(&embedded, "policy_encoder"),
    );
    assert_eq!(want.len(), 4, "one experience and three scenes");
    assert_eq!(
        want.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(),
        got.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>()
    );
    for ((kind, id, w), (_, _, g)) in want.iter().zip(&got) {
        assert_eq!(g.len(), 64, "{kind:?} {id}");
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(g), bits(w), "{kind:?} {id}");
    }
    // Same inputs, same bytes; ,name= renames the representation.
    let again = tmp.path().join("again.parquet");
    assert_eq!(embed(&images, &rep, &again).status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
    let named = tmp.path().join("named.parquet");
    let o = embed(&images, &format!("{rep},name=e00_policy"), &named);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let named = roboaudit_data::read_embeddings(&named).unwrap();
    assert_eq!(rows(&named, "e00_policy").len(), 4);

    // Bad input: exit 3, the message names the file, nothing written.
    let out = tmp.path().join("bad.parquet");
    let refused = |dir: &Path, images: &Path, file: &Path, says: &str| {
        let o = embed(images, &format!("policy_encoder:{}", dir.display()), &out);
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        assert!(
            text(&o).contains(&file.display().to_string()),
            "{}",
            text(&o)
        );
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
        assert!(!out.exists());
    };
    // A folder without the checkpoint's files.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(&empty, &images, &empty.join("config.json"), "cannot read");
    // A config that is not a policy's.
    let other = tmp.path().join("other");
    copy_checkpoint(&checkpoint, &other);
    let config = other.join("config.json");
    std::fs::write(&config, br#"{"schema": "roboaudit.learned_memory.v1"}"#).unwrap();
    refused(&other, &images, &config, "not a retrieval policy config");
    // Weights of another architecture (a CLIP vision tower) beside a policy's config.
    let clip = tmp.path().join("clip");
    copy_checkpoint(&checkpoint, &clip);
    let weights = clip.join("model.safetensors");
    write_random_clip(&weights, &RandomClip::tiny(1)).unwrap();
    refused(&clip, &images, &weights, "CLIP");
    // A missing tensor.
    let cut = tmp.path().join("cut");
    copy_checkpoint(&checkpoint, &cut);
    let weights = cut.join("model.safetensors");
    let dropped = drop_last_tensor(&weights);
    refused(&cut, &images, &weights, &format!("no tensor \"{dropped}\""));
    // A config that declares other sizes than the weights have.
    let wide = tmp.path().join("wide");
    copy_checkpoint(&checkpoint, &wide);
    let cpath = wide.join("config.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&cpath).unwrap()).unwrap();
    v["train"]["channels"] = serde_json::json!([8, 8]);
    std::fs::write(&cpath, serde_json::to_vec(&v).unwrap()).unwrap();
    refused(
        &wide,
        &images,
        &wide.join("model.safetensors"),
        "\"conv1.weight\" has shape [16, 3, 4, 4], expected [8, 3, 4, 4]",
    );
    // An image that is not a square multiple of the policy's 32 × 32 input.
    let odd = tmp.path().join("odd");
    std::fs::create_dir_all(&odd).unwrap();
    png(&odd.join("s0.png"), 48, &[90; 48 * 48 * 3]);
    let o = roboaudit(&[
        "embed",
        "--images",
        odd.to_str().unwrap(),
        "--kind",
        "scene",
        "-r",
        &rep,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("wrong image size"), "{}", text(&o));
    assert!(text(&o).contains("48×48"), "{}", text(&o));
    // Which of the images is wrong: named by its id.
    assert!(text(&o).contains("(the scene image `s0`)"), "{}", text(&o));
    assert!(!out.exists());
}
