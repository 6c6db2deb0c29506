//! A collection stopped by a failing served policy resumes from its kept dataset stage only
//! while the stage's files are the bytes it wrote: a file damaged in between makes the stage run
//! again, and the finished dataset equals an uninterrupted run's byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_fqe_collect::served::ServedTarget;
use roboaudit_fqe_collect::*;
use roboaudit_policy_client::server::{Answer, TestServer, metadata_with};
use roboaudit_policy_client::{ClientConfig, PolicyClient};
use std::path::Path;
use std::time::Duration;

mod common;
use common::files;

/// A served target whose server answers every request with an error.
fn failing_target(server: &TestServer) -> ServedTarget {
    ServedTarget {
        name: "down".into(),
        client: PolicyClient::connect(
            &server.url(),
            ClientConfig {
                timeout: Duration::from_secs(30),
                allow_remote: false,
            },
        )
        .unwrap(),
    }
}

#[test]
fn a_kept_dataset_stage_is_reused_only_while_its_files_are_intact() {
    let mut cfg = CollectConfig {
        rollouts: 1,
        ..CollectConfig::small()
    }
    .check()
    .unwrap();
    cfg.targets.retain(|t| t.name == "expert");
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("fresh");
    collect(&cfg, &fresh, &|_, _, _| {}).unwrap();

    let server = TestServer::start(
        metadata_with(&["reset"]),
        Box::new(|_| Answer::Error("the policy server is down".into())),
    )
    .unwrap();
    let interrupted = |out: &Path| {
        let e = collect_with(&cfg, &mut [failing_target(&server)], out, &|_, _, _| {}).unwrap_err();
        assert!(matches!(e, CollectError::Served { .. }), "{e}");
        assert!(out.join(".resume/dataset.json").is_file());
    };

    // Intact: the rerun keeps the stage.
    let kept = tmp.path().join("kept");
    interrupted(&kept);
    let summary = collect(&cfg, &kept, &|_, _, _| {}).unwrap();
    assert!(summary.resumed.dataset);
    assert_eq!(files(&kept), files(&fresh));

    // A data file truncated, then one edited in place: the rerun writes the stage again.
    for damage in [
        (|f: &Path| {
            let b = std::fs::read(f).unwrap();
            std::fs::write(f, &b[..b.len() / 2]).unwrap();
        }) as fn(&Path),
        |f: &Path| {
            let mut b = std::fs::read(f).unwrap();
            let last = b.len() - 1;
            b[last] ^= 0xff;
            std::fs::write(f, b).unwrap();
        },
    ] {
        let out = tmp.path().join("damaged");
        let _ = std::fs::remove_dir_all(&out);
        interrupted(&out);
        let data = out.join("dataset/data/chunk-000/file-000.parquet");
        damage(&data);
        let summary = collect(&cfg, &out, &|_, _, _| {}).unwrap();
        assert!(!summary.resumed.dataset, "a damaged stage is not reused");
        assert_eq!(files(&out), files(&fresh));
    }
}
