//! `roboaudit embed` end to end: a folder of PNG images (the committed example run's experience
//! and scene ids) into an embeddings file with pixels32 and random CLIP and DINOv2 checkpoints,
//! which `retrieval audit` then reads; bad input is refused with exit code 3 naming the file,
//! and nothing is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::path::{Path, PathBuf};

use roboaudit_encoders::clip::{RandomClip, write_random_clip};
use roboaudit_encoders::dinov2::random::{RandomDinov2, write_random_dinov2};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/retrieval")
}

/// The first column of a CSV file after its header.
fn ids(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect()
}

/// A 24 × 16 PNG whose colours depend on `k`.
fn png(path: &Path, k: usize) {
    let (w, h) = (24u32, 16u32);
    let mut pixels = Vec::new();
    for y in 0..h as usize {
        for x in 0..w as usize {
            pixels.extend_from_slice(&[
                ((x * 9 + k * 31) % 256) as u8,
                ((y * 13 + k * 57) % 256) as u8,
                ((x * y + k * 11) % 256) as u8,
            ]);
        }
    }
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(file, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .unwrap()
        .write_image_data(&pixels)
        .unwrap();
}

/// A run folder (the example's executions, scenes and experiences) and an image folder with one
/// PNG per experience and scene.
fn setup(tmp: &Path) -> (PathBuf, PathBuf) {
    let run = tmp.join("run");
    let images = tmp.join("images");
    std::fs::create_dir_all(&run).unwrap();
    for f in ["executions.csv", "scenes.csv", "experiences.csv"] {
        std::fs::copy(example().join(f), run.join(f)).unwrap();
    }
    let mut k = 0;
    for (sub, file) in [("experiences", "experiences.csv"), ("scenes", "scenes.csv")] {
        std::fs::create_dir_all(images.join(sub)).unwrap();
        for id in ids(&run.join(file)) {
            png(&images.join(sub).join(format!("{id}.png")), k);
            k += 1;
        }
    }
    (run, images)
}

fn embed(images: &Path, reps: &[String], out: &Path) -> std::process::Output {
    let mut args = vec![
        "embed".to_owned(),
        "--images".to_owned(),
        images.display().to_string(),
        "--out".to_owned(),
        out.display().to_string(),
    ];
    for r in reps {
        args.extend(["-r".to_owned(), r.clone()]);
    }
    roboaudit(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn embeds_a_folder_of_images_and_the_retrieval_audit_reads_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, images) = setup(tmp.path());
    let clip = tmp.path().join("clip.safetensors");
    write_random_clip(&clip, &RandomClip::tiny(1)).unwrap();
    let dino = tmp.path().join("dino.safetensors");
    write_random_dinov2(&dino, &RandomDinov2::tiny(2)).unwrap();
    let out = run.join("embeddings.parquet");
    let reps = [
        "pixels32".to_owned(),
        format!("clip:{},heads=2", clip.display()),
        format!("dinov2:{},heads=2,side=28,name=dino_tiny", dino.display()),
    ];
    let o = embed(&images, &reps, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("108 rows (12 experiences, 24 scenes)"),
        "{stdout}"
    );
    let records = roboaudit_data::read_embeddings(&out).unwrap();
    let dim = |name: &str| {
        let r: Vec<_> = records
            .iter()
            .filter(|r| r.representation == name)
            .collect();
        assert_eq!(r.len(), 36, "{name}");
        r[0].vector.len()
    };
    assert_eq!(
        (dim("pixels32"), dim("clip"), dim("dino_tiny")),
        (3072, 64, 32)
    );
    // The same inputs give the same bytes.
    let again = tmp.path().join("again.parquet");
    assert_eq!(embed(&images, &reps, &again).status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());

    let audit_out = tmp.path().join("audit");
    let o = roboaudit(&[
        "retrieval",
        "audit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        audit_out.to_str().unwrap(),
        "--resamples",
        "100",
        "--permutations",
        "100",
        "--subsets",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let audit = std::fs::read_to_string(audit_out.join("audit.json")).unwrap();
    for name in ["\"pixels32\"", "\"clip\"", "\"dino_tiny\""] {
        assert!(audit.contains(name), "{name} not in audit.json");
    }
}

/// An existing `--out` that is not an embeddings file, or that is a run's input, is refused
/// (exit 2) and left as it was.
#[test]
fn an_out_that_is_someone_elses_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, images) = setup(tmp.path());
    let reps = ["pixels32".to_owned()];
    let experiences = std::fs::read(run.join("experiences.csv")).unwrap();
    let other = tmp.path().join("experiences.csv");
    std::fs::write(&other, &experiences).unwrap();
    let o = embed(&images, &reps, &other);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("exists and is not an embeddings file"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&other).unwrap(), experiences);

    // A missing output folder is created (it used to fail with exit 1, naming a temporary).
    let nested = tmp.path().join("new/sub/e.csv");
    let o = embed(&images, &reps, &nested);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let items = ids(&run.join("experiences.csv")).len() + ids(&run.join("scenes.csv")).len();
    assert_eq!(ids(&nested).len(), items);

    // An embeddings file is replaced; one in a run folder is that run's input.
    let own = tmp.path().join("e.parquet");
    assert_eq!(embed(&images, &reps, &own).status.code(), Some(0));
    assert_eq!(embed(&images, &reps, &own).status.code(), Some(0));
    std::fs::write(run.join("manifest.json"), "{}").unwrap();
    std::fs::copy(&own, run.join("embeddings.parquet")).unwrap();
    let o = embed(&images, &reps, &run.join("embeddings.parquet"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("(it holds manifest.json)"),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_input_exits_3_naming_the_file_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, images) = setup(tmp.path());
    let clip = tmp.path().join("clip.safetensors");
    write_random_clip(&clip, &RandomClip::tiny(1)).unwrap();
    let out = tmp.path().join("embeddings.parquet");

    // A CLIP file given as a ResNet-18: wrong architecture.
    let o = embed(&images, &[format!("resnet18:{}", clip.display())], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(&clip.display().to_string()),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("CLIP"), "{}", text(&o));
    assert!(!out.exists());

    // A size the CLIP checkpoint cannot take (its position embeddings fix 32 × 32).
    let o = embed(
        &images,
        &[format!("clip:{},heads=2,side=64", clip.display())],
        &out,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("wrong image size"), "{}", text(&o));

    // A missing weights file, and a corrupt image, with an existing output kept as it was.
    roboaudit_data::write_embeddings(
        &out,
        &[roboaudit_types::EmbeddingRecord {
            representation: "previous".into(),
            kind: roboaudit_types::EmbeddingKind::Scene,
            id: "s0".into(),
            vector: vec![1.0],
        }],
    )
    .unwrap();
    let previous = std::fs::read(&out).unwrap();
    let missing = tmp.path().join("absent.safetensors");
    let o = embed(&images, &[format!("dinov2:{}", missing.display())], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(&missing.display().to_string()),
        "{}",
        text(&o)
    );
    let broken = images.join("scenes/scene_a00.png");
    std::fs::write(&broken, b"not a png").unwrap();
    let o = embed(&images, &["pixels32".to_owned()], &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(&broken.display().to_string()),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&out).unwrap(), previous);

    // Usage errors (exit 2): an unknown representation, structural (not from images), a flat
    // folder without --kind.
    for rep in ["resnet50:x.safetensors", "structural"] {
        let o = embed(&images, &[rep.to_owned()], &out);
        assert_eq!(o.status.code(), Some(2), "{rep}: {}", text(&o));
    }
    let o = embed(&images.join("experiences"), &["pixels32".to_owned()], &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--kind"), "{}", text(&o));
    assert_eq!(std::fs::read(&out).unwrap(), previous);
}
