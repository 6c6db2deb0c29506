//! `retrieval collect --mechanism policy`: an interrupted and resumed collection equals an
//! uninterrupted one byte for byte (each thread's camera draws every episode as a fresh one
//! would), also when it stopped while training (policies/ but no collect.json yet), and so do
//! its shards once merged, policies included; a checkpoint changed after `collect.json`
//! recorded its hash is refused on resume. `--mechanism policy-dr` writes a
//! run folder the audit reads, its policies trained under domain randomization and their
//! visual feature (`policy_encoder`) among the representations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{collect_learned as collect_k, roboaudit, text, tree};
use std::path::Path;

fn collect(out: &Path, extra: &[&str]) -> std::process::Output {
    collect_k("policy", "1", out, extra)
}

#[test]
fn a_resumed_policy_collection_equals_an_uninterrupted_one_and_changed_weights_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = collect(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let resumed = tmp.path().join("resumed");
    let o = collect(&resumed, &["--max-chunks", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("rerun the same command to resume"),
        "{}",
        text(&o)
    );
    let o = collect(&resumed, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = (tree(&whole), tree(&resumed));
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{} differs after the resume", path.display());
    }
    // A run stopped while training holds policies/ and no collect.json: it resumes there.
    let stopped = tmp.path().join("stopped");
    std::fs::create_dir_all(stopped.join("policies")).unwrap();
    for e in std::fs::read_dir(whole.join("policies")).unwrap() {
        let from = e.unwrap().path();
        let to = stopped.join("policies").join(from.file_name().unwrap());
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&from).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
    let o = collect(&stopped, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        tree(&stopped) == a,
        "a run resumed from its policies differs"
    );
    // Same size, still a valid file: only the hash collect.json recorded tells it apart.
    let weights = std::fs::read_dir(whole.join("policies"))
        .unwrap()
        .map(|e| e.unwrap().path().join("model.safetensors"))
        .find(|p| p.is_file())
        .unwrap();
    let mut bytes = std::fs::read(&weights).unwrap();
    let mid = bytes.len() - 8;
    bytes[mid] ^= 0x01;
    std::fs::write(&weights, &bytes).unwrap();
    let manifest = std::fs::read(whole.join("collect.json")).unwrap();
    let o = collect(&whole, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("changed since collect.json recorded it"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(whole.join("collect.json")).unwrap(), manifest);
}

/// Each shard of a learned-policy collection trains the same policies; the merge checks that
/// they agree and keeps them (it used to drop `policies/` while `collect.json` still named the
/// checkpoints), so the merged folder is the unsharded run byte for byte.
#[test]
fn a_sharded_policy_collection_merges_into_the_unsharded_run_with_its_policies() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = collect(&whole, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let shards: Vec<_> = (0..2)
        .map(|i| tmp.path().join(format!("shard-{i}")))
        .collect();
    for (i, dir) in shards.iter().enumerate() {
        let o = collect(dir, &["--shard", &format!("{i}/2")]);
        assert!(o.status.success(), "{}", text(&o));
        // A shard is not the whole run: no appearance-caused failures from it.
        assert!(!text(&o).contains("appearance-caused"), "{}", text(&o));
    }
    let merged = tmp.path().join("merged");
    let o = roboaudit(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = (tree(&whole), tree(&merged));
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    assert!(a.iter().any(|(p, _)| p.ends_with("model.safetensors")));
    assert!(a == b, "the merged run differs from the unsharded one");

    // Shards whose policies disagree are not merged.
    let weights = std::fs::read_dir(shards[1].join("policies"))
        .unwrap()
        .map(|e| e.unwrap().path().join("model.safetensors"))
        .find(|p| p.is_file())
        .unwrap();
    let mut bytes = std::fs::read(&weights).unwrap();
    bytes[100] ^= 0x01;
    std::fs::write(&weights, &bytes).unwrap();
    let again = tmp.path().join("again");
    let o = roboaudit(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("model.safetensors differs"),
        "{}",
        text(&o)
    );
    assert!(!again.exists());
}

#[test]
fn a_policy_dr_collection_records_its_randomization_and_is_audited() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let o = collect_k("policy-dr", "2", &run, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("policy own-base check:"), "{}", text(&o));
    let o_collect = o.clone();
    // A finished learned collection states its appearance-caused failures (methods §1.8).
    assert!(
        text(&o).contains("appearance-caused failures: "),
        "{}",
        text(&o)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("collect.json")).unwrap()).unwrap();
    assert_eq!(manifest["config"]["mechanism"], "policy-dr");
    let reuse = &manifest["reuse"];
    assert_eq!(reuse["mechanism"], "policy-dr", "{reuse}");
    assert_eq!(reuse["train"]["dr"]["draws"], 4, "{reuse}");
    let policies = reuse["policies"].as_array().unwrap();
    assert!(policies.len() >= 2, "{reuse}");
    for p in policies {
        let dir = run.join(p["dir"].as_str().unwrap());
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        assert_eq!(config["train"]["dr"], reuse["train"]["dr"]);
        // The demonstration (about 70 steps on Stack) and its successful re-runs.
        assert!(p["samples"].as_u64().unwrap() > 140, "{p}");
    }
    let audit = tmp.path().join("audit");
    let o = roboaudit(&[
        "retrieval",
        "audit",
        "--run",
        run.to_str().unwrap(),
        "--structural",
        "structural",
        "--resamples",
        "100",
        "--permutations",
        "100",
        "--out",
        audit.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // The Policy+DR network's visual feature is one of the audited representations.
    let audited = std::fs::read_to_string(audit.join("audit.json")).unwrap();
    assert!(audited.contains("\"policy_encoder\""), "{audited}");
    // The audit records the run's mechanism and the appearance-caused failures the collection
    // printed.
    let audited: serde_json::Value = serde_json::from_str(&audited).unwrap();
    assert_eq!(audited["run"]["mechanism"], "policy-dr");
    let f = &audited["run"]["appearance_caused_failures"];
    let line = common::appearance_line(f);
    assert!(
        text(&o_collect).contains(&line),
        "{line}\n{}",
        text(&o_collect)
    );
}
