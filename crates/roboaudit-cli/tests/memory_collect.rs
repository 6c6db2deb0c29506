//! `roboaudit memory collect`: records the audit reads, exclusion counts, plan hash, refusals.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{collect_one_faithful_pair, roboaudit, text};

#[test]
fn collect_then_audit_recovers_the_faithful_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--task",
        "put_back",
        "--policy",
        "faithful",
        "--pairs",
        "3",
        "--seeds",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("3 pairs × 2 seeds, 0 excluded"),
        "{}",
        text(&o)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["schema"], "roboaudit.memory_collect.v1");
    assert_eq!(manifest["policy"], "faithful");
    assert_eq!(manifest["memory_spec"]["components"][0]["name"], "anchor");
    let records = roboaudit_data::read_memory_records(out.join("records.parquet")).unwrap();
    assert_eq!(records.len(), 3 * 2 * 2 * 2);

    let audit_dir = tmp.path().join("audit");
    let a = roboaudit(&[
        "memory",
        "audit",
        "--records",
        out.join("records.parquet").to_str().unwrap(),
        "--out",
        audit_dir.to_str().unwrap(),
    ]);
    assert!(a.status.success(), "{}", text(&a));
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(audit_dir.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["faithfulness"]["value"], 1.0);
    assert_eq!(audit["reliable_pairs"]["bidirectional"], 3);

    // Collected outcomes are never overwritten.
    let again = roboaudit(&[
        "memory",
        "collect",
        "--policy",
        "faithful",
        "--pairs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again).contains("already exists"), "{}", text(&again));
}

#[test]
fn a_zero_tolerance_excludes_every_pair_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--policy",
        "bank",
        "--pairs",
        "2",
        "--seeds",
        "1",
        "--tol-position",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 excluded"), "{}", text(&o));
    assert!(
        text(&o).contains("excluded p000: hidden physics"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_plan_supplies_seeds_and_its_hash_reaches_the_records() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(&plan, "seeds = [4, 7]\n").unwrap();
    let out = tmp.path().join("run");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--policy",
        "random",
        "--pairs",
        "1",
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let records = roboaudit_data::read_memory_records(out.join("records.parquet")).unwrap();
    let mut seeds: Vec<i64> = records.iter().map(|r| r.action_seed).collect();
    seeds.dedup();
    assert_eq!(seeds, vec![4, 7]);
    let hash = roboaudit_memory::Plan::load(&plan).unwrap().hash();
    assert!(
        records
            .iter()
            .all(|r| r.plan_hash.as_deref() == Some(hash.as_str()))
    );
    // The audit under another plan is refused.
    let other = tmp.path().join("other.toml");
    std::fs::write(&other, "seeds = [4, 7]\ndelta = 0.1\n").unwrap();
    let a = roboaudit(&[
        "memory",
        "audit",
        "--records",
        out.join("records.parquet").to_str().unwrap(),
        "--plan",
        other.to_str().unwrap(),
        "--out",
        tmp.path().join("a").to_str().unwrap(),
    ]);
    assert_eq!(a.status.code(), Some(3), "{}", text(&a));
}

#[test]
fn unsupported_tasks_and_policies_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    for args in [
        vec!["--task", "stack"],
        vec!["--policy", "oracle"],
        vec!["--task", "fly"],
    ] {
        let mut all = vec![
            "memory",
            "collect",
            "--pairs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        all.extend(args.iter().copied());
        let o = roboaudit(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
    assert!(!out.exists());
}

#[test]
fn routed_collection_feeds_the_irrelevant_history_control() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--policy",
        "faithful",
        "--pairs",
        "4",
        "--seeds",
        "1",
        "--routes",
        "left,right",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("8 pairs × 1 seeds"), "{}", text(&o));
    let c = roboaudit(&[
        "memory",
        "control",
        "--records",
        out.join("records.parquet").to_str().unwrap(),
        "--out",
        tmp.path().join("control").to_str().unwrap(),
    ]);
    assert!(c.status.success(), "{}", text(&c));
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(tmp.path().join("control").join("control.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["semantic_passed"], true);
    assert_eq!(report["nuisance"]["estimate"], 0.0);
    assert_eq!(report["passed"], true);
    // Unrouted records have no control.
    let plain = tmp.path().join("plain");
    let p = collect_one_faithful_pair(&plain, &[]);
    assert!(p.status.success(), "{}", text(&p));
    let bad = roboaudit(&[
        "memory",
        "control",
        "--records",
        plain.join("records.parquet").to_str().unwrap(),
        "--out",
        tmp.path().join("c2").to_str().unwrap(),
    ]);
    // Records without routes are the input's fault, not the options'.
    assert_eq!(bad.status.code(), Some(3), "{}", text(&bad));
}

#[test]
fn interventions_write_their_study() {
    let tmp = tempfile::tempdir().unwrap();
    let o = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "replacement",
        "--policy",
        "faithful",
        "--episodes",
        "3",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("interventions.json")).unwrap())
            .unwrap();
    assert_eq!(s["study"], "replacement");
    assert_eq!(s["own_reproduces_native"], true);
    assert_eq!(s["summary"][2]["condition"], "donor_opposite");
    assert_eq!(s["summary"][2]["committed_donor"], 3);
    let bad = roboaudit(&[
        "memory",
        "intervene",
        "--study",
        "surgery",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

#[test]
fn swap_is_crossed_and_the_faithful_answer_is_recovered() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("swap");
    let o = roboaudit(&[
        "memory",
        "collect",
        "--task",
        "swap",
        "--policy",
        "faithful",
        "--pairs",
        "2",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let a = roboaudit(&[
        "memory",
        "audit",
        "--records",
        out.join("records.parquet").to_str().unwrap(),
        "--out",
        out.join("audit").to_str().unwrap(),
    ]);
    assert!(a.status.success(), "{}", text(&a));
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("audit/audit.json")).unwrap()).unwrap();
    assert_eq!(audit["faithfulness"]["value"], 1.0, "{audit}");
    assert_eq!(audit["n_excluded"], 0);
}

/// Counts past their documented maximum exit 2 naming the flag (a huge --pairs used to panic
/// with a multiplication overflow, a huge --seeds to allocate the whole range).
#[test]
fn counts_past_their_maximum_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--pairs", "18446744073709551615", "--routes", "left,right"],
            "--pairs must be in 1..=100000",
        ),
        (&["--pairs", "0"], "--pairs must be in 1..=100000"),
        (
            &["--seeds", "18446744073709551615"],
            "--seeds must be in 1..=1000",
        ),
        (
            &["--chunk-len", "18446744073709551615"],
            "chunk_len must be in 1..=1000",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec!["memory", "collect", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(message), "{extra:?}: {}", text(&o));
        assert!(!out.exists(), "{extra:?}");
    }
}

/// records.parquet and manifest.json land together: when the manifest cannot be written,
/// no records are left behind to block the rerun; the finished pairs stay in records.partial
/// and the rerun takes them.
#[test]
fn records_are_not_left_without_their_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    std::fs::create_dir_all(out.join("manifest.json")).unwrap();
    let o = collect_one_faithful_pair(&out, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("manifest.json"), "{}", text(&o));
    let mut left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["manifest.json", "records.partial"],
        "the folder in the way and the kept pairs"
    );
    std::fs::remove_dir(out.join("manifest.json")).unwrap();
    let o = collect_one_faithful_pair(&out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resumed 1 of 1 pairs"), "{}", text(&o));
    assert!(!out.join("records.partial").exists());
    assert!(out.join("manifest.json").is_file());
    let records = roboaudit_data::read_memory_records(out.join("records.parquet")).unwrap();
    assert_eq!(records.len(), 2 * 2);
}

/// An --out that is a file is a usage error before any collection.
#[test]
fn an_out_file_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, "x").unwrap();
    let o = roboaudit(&[
        "memory",
        "collect",
        "--pairs",
        "1",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a file, not a folder"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// An --out holding another kind of audit is the wrong folder: exit 2, and it survives.
#[test]
fn an_out_holding_another_audit_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("m");
    let o = collect_one_faithful_pair(&run, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let other = tmp.path().join("retrieval-audit");
    std::fs::create_dir(&other).unwrap();
    let body = "{\"schema\": \"roboaudit.retrieval_audit.v1\"}";
    std::fs::write(other.join("audit.json"), body).unwrap();
    let o = roboaudit(&[
        "memory",
        "audit",
        "--records",
        run.join("records.parquet").to_str().unwrap(),
        "--out",
        other.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not a memory audit"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(other.join("audit.json")).unwrap(),
        body
    );
}

/// Pairs kept from another configuration are the wrong input for this run: exit 3 (as for a
/// retrieval run's parts), and they survive for the run they belong to.
#[test]
fn kept_pairs_of_another_configuration_are_invalid_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    std::fs::create_dir_all(out.join("manifest.json")).unwrap();
    let o = collect_one_faithful_pair(&out, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    std::fs::remove_dir(out.join("manifest.json")).unwrap();
    let o = collect_one_faithful_pair(&out, &["--seed", "7"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("another configuration"), "{}", text(&o));
    assert!(out.join("records.partial").join("run.json").is_file());
    let o = collect_one_faithful_pair(&out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resumed 1 of 1 pairs"), "{}", text(&o));
}
