//! Training determinism, the fit, the checkpoint round trip and the typed loading errors, on
//! small synthetic demonstrations (no simulator: seconds on one core).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_retrieval_learned::checkpoint::{file_sha256, load, save};
use roboaudit_retrieval_learned::config::{
    CONFIG_FILE, LOW_DIM, TARGET_DIM, WEIGHTS_FILE, dr_for_task,
};
use roboaudit_retrieval_learned::{
    ImagePolicy, Observation, PolicyError, Provenance, Sample, TrainConfig, Trained, train,
};

/// `n` samples whose target is a fixed function of the clock and the image's mean, as a
/// demonstration's commanded pose is a function of what the policy sees.
fn samples(n: usize) -> Vec<Sample> {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    (0..n)
        .map(|i| {
            let t = i as f32 / n as f32;
            let shade = rng.random::<f32>();
            let image = vec![shade; 3 * 32 * 32];
            let mut low = [0.0f32; LOW_DIM];
            for v in low.iter_mut() {
                *v = rng.random::<f32>();
            }
            low[LOW_DIM - 1] = t;
            let target = [
                0.4 + 0.1 * t,
                -0.05 * t,
                0.2 * shade,
                0.0,
                if t > 0.5 { 1.0 } else { -1.0 },
            ];
            Sample {
                obs: Observation { image, low },
                target,
            }
        })
        .collect()
}

fn cfg(seed: u64, steps: usize) -> TrainConfig {
    TrainConfig {
        steps,
        seed,
        channels: [4, 8],
        feature: 16,
        hidden: 32,
        ..TrainConfig::default()
    }
}

fn prov() -> Provenance {
    Provenance {
        task: "stack".into(),
        base_scene_id: "b00".into(),
        recording_seed: 9,
    }
}

fn trained(seed: u64, steps: usize) -> Trained {
    train(&samples(24), &cfg(seed, steps), &prov(), &mut |_, _| {}).unwrap()
}

fn bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join(WEIGHTS_FILE)).unwrap()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    save(&a, &trained(7, 30)).unwrap();
    save(&b, &trained(7, 30)).unwrap();
    save(&c, &trained(8, 30)).unwrap();
    assert_eq!(bytes(&a), bytes(&b));
    assert_eq!(
        file_sha256(&a, CONFIG_FILE).unwrap(),
        file_sha256(&b, CONFIG_FILE).unwrap()
    );
    assert_ne!(bytes(&a), bytes(&c));
    // The recorded hash is the SHA-256 of the file (64 hex digits).
    let h = file_sha256(&a, WEIGHTS_FILE).unwrap();
    assert_eq!(h.len(), 64);
    assert_ne!(h, file_sha256(&c, WEIGHTS_FILE).unwrap());
}

#[test]
fn training_fits_the_demonstration() {
    let mut losses = Vec::new();
    let t = train(&samples(24), &cfg(1, 400), &prov(), &mut |_, l| {
        losses.push(l)
    })
    .unwrap();
    assert_eq!(losses.len(), 400);
    // Normalized targets: the untrained network's error is of order 1; the fit is near zero.
    assert!(losses[0] > 0.3, "initial loss {}", losses[0]);
    assert!(
        t.config.final_loss < 0.01,
        "final loss {}",
        t.config.final_loss
    );
    assert_eq!(t.config.samples, 24);
    // The policy's prediction is the demonstration's target (denormalized).
    let s = &samples(24)[20];
    let p = ImagePolicy::new(t).predict(&s.obs).unwrap();
    assert_eq!(p.len(), TARGET_DIM);
    assert!((p[0] - s.target[0]).abs() < 0.01, "{p:?} vs {:?}", s.target);
    assert!((p[4] - s.target[4]).abs() < 0.2, "{p:?} vs {:?}", s.target);
}

/// The checkpoint's files carry the mode of a file the user creates in the same folder (not
/// the owner-only mode of a temporary file).
fn assert_shared_like_a_created_file(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let probe = dir.join("probe");
    std::fs::File::create(&probe).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for name in [WEIGHTS_FILE, CONFIG_FILE] {
        assert_eq!(mode(&dir.join(name)), mode(&probe), "{name}");
    }
}

#[test]
fn round_trip_gives_the_same_predictions() {
    let tmp = tempfile::tempdir().unwrap();
    let t = trained(3, 10);
    save(tmp.path(), &t).unwrap();
    assert_shared_like_a_created_file(tmp.path());
    let back = load(tmp.path()).unwrap();
    assert_eq!(back.config, t.config);
    let s = &samples(24)[3];
    let (x, y) = (
        ImagePolicy::new(t).predict(&s.obs).unwrap(),
        ImagePolicy::new(back).predict(&s.obs).unwrap(),
    );
    assert!(x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()));
}

fn checkpoint_message(e: PolicyError) -> String {
    assert!(e.is_invalid_input(), "{e}");
    match e {
        PolicyError::Load(e) => e.to_string(),
        other => panic!("not a checkpoint error: {other}"),
    }
}

#[test]
fn missing_tensor_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    save(tmp.path(), &trained(3, 1)).unwrap();
    let path = tmp.path().join(WEIGHTS_FILE);
    let mut map = candle_core::safetensors::load(&path, &candle_core::Device::Cpu).unwrap();
    map.remove("fc2.weight");
    candle_core::safetensors::save(&map, &path).unwrap();
    let m = checkpoint_message(load(tmp.path()).unwrap_err());
    assert!(m.contains("no tensor \"fc2.weight\""), "{m}");
}

#[test]
fn another_architecture_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    save(tmp.path(), &trained(3, 1)).unwrap();
    // The config declares wider convolutions than the weights have.
    let cpath = tmp.path().join(CONFIG_FILE);
    let text = std::fs::read_to_string(&cpath).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["train"]["channels"] = serde_json::json!([8, 8]);
    std::fs::write(&cpath, serde_json::to_vec(&v).unwrap()).unwrap();
    let m = checkpoint_message(load(tmp.path()).unwrap_err());
    assert!(
        m.contains("\"conv1.weight\" has shape [4, 3, 4, 4], expected [8, 3, 4, 4]"),
        "{m}"
    );
    // Another schema, and a file that is not a config at all.
    v["schema"] = serde_json::json!("roboaudit.learned_memory.v1");
    std::fs::write(&cpath, serde_json::to_vec(&v).unwrap()).unwrap();
    let m = checkpoint_message(load(tmp.path()).unwrap_err());
    assert!(m.contains("schema `roboaudit.learned_memory.v1`"), "{m}");
    std::fs::write(&cpath, b"[1, 2]").unwrap();
    let m = checkpoint_message(load(tmp.path()).unwrap_err());
    assert!(m.contains("not a retrieval policy config"), "{m}");
    // No weights file.
    let empty = tempfile::tempdir().unwrap();
    let e = load(empty.path()).unwrap_err();
    assert!(e.is_invalid_input());
}

#[test]
fn settings_out_of_range_are_refused() {
    let e = train(&samples(4), &cfg(1, 0), &prov(), &mut |_, _| {}).unwrap_err();
    assert!(
        matches!(&e, PolicyError::InvalidConfig(m) if m.contains("steps")),
        "{e}"
    );
    let e = train(&[], &cfg(1, 5), &prov(), &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, PolicyError::InvalidConfig(_)));
}

#[test]
fn mini_batches_are_seeded_and_recorded_in_the_config() {
    let dr = |seed| TrainConfig {
        batch: Some(8),
        dr: Some(dr_for_task("stack")),
        ..cfg(seed, 20)
    };
    let run = |c: &TrainConfig| train(&samples(24), c, &prov(), &mut |_, _| {}).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dirs = ["a", "b", "c", "full"].map(|d| tmp.path().join(d));
    save(&dirs[0], &run(&dr(7))).unwrap();
    save(&dirs[1], &run(&dr(7))).unwrap();
    save(&dirs[2], &run(&dr(8))).unwrap();
    save(&dirs[3], &run(&cfg(7, 20))).unwrap();
    assert_eq!(bytes(&dirs[0]), bytes(&dirs[1]));
    assert_ne!(bytes(&dirs[0]), bytes(&dirs[2]));
    // Mini-batches are another training than the full batch of the same seed.
    assert_ne!(bytes(&dirs[0]), bytes(&dirs[3]));
    let back = load(&dirs[0]).unwrap();
    assert_eq!(back.config.train, dr(7));
    // A Policy checkpoint's config names neither setting.
    let text = std::fs::read_to_string(dirs[3].join(CONFIG_FILE)).unwrap();
    assert!(
        !text.contains("\"dr\"") && !text.contains("\"batch\""),
        "{text}"
    );
    let text = std::fs::read_to_string(dirs[0].join(CONFIG_FILE)).unwrap();
    assert!(text.contains("\"layout_jitter\": 0.01"), "{text}");
    let e = train(
        &samples(4),
        &TrainConfig {
            batch: Some(0),
            ..cfg(1, 1)
        },
        &prov(),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(
        matches!(&e, PolicyError::InvalidConfig(m) if m.contains("batch")),
        "{e}"
    );
}
