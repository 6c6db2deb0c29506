//! `fqe actions` checks the features it is told to send against the dataset before it contacts
//! the policy: a wrong name is a usage error (exit code 2) naming the feature, not a connection
//! error or a run that stops after the first episode.
#![allow(clippy::unwrap_used)]

mod common;

use common::{roboaudit, text};

#[test]
fn a_feature_the_dataset_lacks_is_refused_before_connecting() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real/pusht_v30");
    let out = tmp.path().join("actions.parquet");
    // Nothing listens on port 9 (discard): a connection attempt would fail with another message.
    for (flag, name, says) in [
        (
            "--image-feature",
            "observation.images.nope",
            "no image or video feature",
        ),
        (
            "--image-feature",
            "observation.state",
            "no image or video feature",
        ),
        (
            "--state-feature",
            "observation.image",
            "no numeric state feature",
        ),
        (
            "--action-feature",
            "observation.image",
            "no numeric action feature",
        ),
    ] {
        let o = roboaudit(&[
            "fqe",
            "actions",
            "--dataset",
            dataset,
            "--policy",
            "p=ws://127.0.0.1:9",
            flag,
            name,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag} {name}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains(says) && t.contains(name), "{flag} {name}: {t}");
        assert!(!out.exists());
    }
}
