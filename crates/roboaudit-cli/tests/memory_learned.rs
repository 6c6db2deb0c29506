//! `roboaudit memory train` → `memory collect --policy learned:DIR` → `memory intervene`: a tiny
//! anchor-window checkpoint goes through the CLI like a built-in policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

#[test]
fn train_then_collect_and_restore_a_learned_anchor_window_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tmp.path().join("ckpt");
    let ckpt_s = ckpt.to_str().unwrap();
    let train = |out: &str, family: &str| {
        roboaudit(&[
            "memory",
            "train",
            "--task",
            "put_back",
            "--family",
            family,
            "--demos",
            "3",
            "--steps",
            "3",
            "--hidden",
            "8",
            "--window",
            "3",
            "--qualify-episodes",
            "2",
            "--qualify-rate",
            "0",
            "--out",
            out,
        ])
    };
    let o = train(ckpt_s, "anchor-window");
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("trained anchor-window on put_back"), "{t}");
    assert!(t.contains("/2 = ") && t.contains("qualified"), "{t}");
    for f in ["model.safetensors", "config.json", "qualification.json"] {
        assert!(ckpt.join(f).is_file(), "{f} missing");
    }
    // A checkpoint is never overwritten; an unknown family is a usage error.
    assert_eq!(train(ckpt_s, "anchor-window").status.code(), Some(2));
    let other = tmp.path().join("other");
    let o = train(other.to_str().unwrap(), "transformer");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("valid: recurrent, anchor-window"));

    let policy = format!("learned:{ckpt_s}");
    let run = tmp.path().join("run");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--task",
        "put_back",
        "--policy",
        &policy,
        "--pairs",
        "2",
        "--seeds",
        "1",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("native success"), "{}", text(&o));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["policy"], "learned-anchor-window-put_back");
    let comps = &manifest["memory_spec"]["components"];
    assert_eq!(comps[0]["name"], "anchor");
    assert_eq!(comps[0]["protected"], true);
    assert_eq!(comps[1]["name"], "window");
    assert_eq!(comps[1]["shape"], serde_json::json!([3, 8]));
    let records = roboaudit_data::read_memory_records(run.join("records.parquet")).unwrap();
    assert_eq!(records.len(), 2 * 2 * 2);

    // The restoration study restores the learned policy's protected anchor.
    let int = tmp.path().join("int");
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "restoration",
        "--task",
        "put_back",
        "--policy",
        &policy,
        "--episodes",
        "1",
        "--resamples",
        "100",
        "--out",
        int.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let study: serde_json::Value =
        serde_json::from_slice(&std::fs::read(int.join("interventions.json")).unwrap()).unwrap();
    let conditions: Vec<&str> = study["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["condition"].as_str().unwrap())
        .collect();
    assert_eq!(conditions, ["none", "anchor", "full"]);
}
