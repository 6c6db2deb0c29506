//! `roboaudit fqe fit --encoder dinov2:…` on a synthetic chain run with a tiny random DINOv2
//! checkpoint that the test writes itself (nothing is downloaded), and the exit codes of bad
//! `--encoder` values (2) and bad weights files (3).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{roboaudit, text};
use roboaudit_fqe::dinov2::random::{RandomDinov2, write_random_dinov2};
use roboaudit_fqe::synthetic::{ChainRun, write_chain_run};

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = ChainRun {
        episodes: 40,
        quality: vec![0.9, 0.2],
        samples: 4,
        ..ChainRun::default()
    };
    write_chain_run(&dir.path().join("run"), &run).unwrap();
    write_random_dinov2(&dir.path().join("tiny.safetensors"), &RandomDinov2::tiny(0)).unwrap();
    dir
}

fn fit(run: &Path, out: &Path, encoder: &str) -> std::process::Output {
    roboaudit(&[
        "fqe",
        "fit",
        "--run",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-neural",
        "--components",
        "4",
        "--encoder",
        encoder,
    ])
}

fn report(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("fqe.json")).unwrap()).unwrap()
}

#[test]
fn fit_with_a_dinov2_checkpoint_writes_a_report_and_reuses_the_cache() {
    let dir = setup();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let spec = format!(
        "dinov2:{},side=28,heads=2",
        dir.path().join("tiny.safetensors").display()
    );
    let o = fit(&run, &out, &spec);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&out);
    assert_eq!(r["schema"], "roboaudit.fqe.v1");
    let load = &r["inputs"]["load"];
    let encoder = load["encoder"].as_str().unwrap();
    assert!(encoder.starts_with("dinov2-tiny-28-h2:"), "{encoder}");
    assert_eq!(encoder.len(), "dinov2-tiny-28-h2:".len() + 16);
    // Six distinct frames in the chain world: six forwards; its other 430 frames repeat them.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(": 6 encoded, 430 found in the feature cache "),
        "{stderr}"
    );
    let part = r["inputs"]["parts"][0][0].as_str().unwrap();
    assert!(part.contains("dinov2-tiny-28-h2-pca"), "{part}");
    assert!(r["policies"][0]["tasks"][0]["linear"].is_f64());
    assert!(
        dir.path()
            .join(format!(
                "res/feature-cache/{}.fqecache",
                encoder.replace(':', "-")
            ))
            .exists()
    );

    // A second run finds every frame in the feature cache, and writes the same report.
    let o = fit(&run, &out, &spec);
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(": 0 encoded, 436 found in the feature cache "),
        "{stderr}"
    );
    assert_eq!(report(&out), r);
}

#[test]
fn bad_encoder_values_exit_2_before_any_file_is_read_and_bad_weights_exit_3() {
    let dir = setup();
    let run = dir.path().join("run");
    let out = dir.path().join("res");
    let weights = dir.path().join("tiny.safetensors");
    let w = weights.display();
    // Usage errors: found before the (here missing) run folder, weights file or dataset is read.
    let nowhere = dir.path().join("no-such-run");
    for spec in [
        "dino".to_owned(),
        "dinov2:".to_owned(),
        format!("dinov2:{w},side=15"),
        format!("dinov2:{w},side=0"),
        format!("dinov2:{w},size=28"),
        format!("dinov2:{w},heads=0"),
        format!("dinov2:{w},heads=two"),
        format!("dinov2:{w},side=28,side=42"),
        "dinov2:/no/such/weights.safetensors,side=13".to_owned(),
    ] {
        let o = fit(&nowhere, &out, &spec);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", text(&o));
        assert!(text(&o).contains("--encoder"), "{spec}: {}", text(&o));
    }
    // Heads that do not divide the width: a usage error once the file's width is known.
    let o = fit(&run, &out, &format!("dinov2:{w},side=28,heads=3"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    // A missing or invalid weights file: invalid input naming the file, nothing written.
    let missing = dir.path().join("missing.safetensors");
    let o = fit(&run, &out, &format!("dinov2:{}", missing.display()));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(&missing.display().to_string()),
        "{}",
        text(&o)
    );
    let garbage = dir.path().join("garbage.safetensors");
    std::fs::write(&garbage, b"not safetensors").unwrap();
    let o = fit(&run, &out, &format!("dinov2:{},heads=2", garbage.display()));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains(&garbage.display().to_string()),
        "{}",
        text(&o)
    );
    assert!(!out.exists(), "nothing may be written on an input error");

    // The syntax is documented in --help.
    let o = roboaudit(&["fqe", "fit", "--help"]);
    assert!(
        text(&o).contains("dinov2:PATH[,side=N][,heads=N]"),
        "{}",
        text(&o)
    );
}

#[test]
fn features_do_not_depend_on_the_thread_count() {
    let dir = setup();
    let run = dir.path().join("run");
    let weights = dir.path().join("w128.safetensors");
    // Width 128 (2 heads by the default rule) at side 224: matrices large enough to be split
    // across threads.
    let spec = RandomDinov2 {
        depth: 1,
        width: 128,
        seed: 5,
    };
    write_random_dinov2(&weights, &spec).unwrap();
    let encoder = format!("dinov2:{},side=224", weights.display());
    let mut caches = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("res{threads}"));
        let o = Command::new(env!("CARGO_BIN_EXE_roboaudit"))
            .args(["fqe", "fit", "--run", run.to_str().unwrap()])
            .args(["--out", out.to_str().unwrap(), "--no-neural"])
            .args(["--components", "4", "--encoder", &encoder])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let cache: Vec<_> = std::fs::read_dir(out.join("feature-cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(cache.len(), 1);
        let id = report(&out)["inputs"]["load"]["encoder"]
            .as_str()
            .unwrap()
            .replace(':', "-");
        assert!(id.starts_with("dinov2-w128-224-"), "{id}");
        assert!(cache[0].ends_with(format!("{id}.fqecache")), "{cache:?}");
        caches.push(std::fs::read(&cache[0]).unwrap());
    }
    assert_eq!(
        caches[0], caches[1],
        "features differ between 1 and 2 threads"
    );
}
