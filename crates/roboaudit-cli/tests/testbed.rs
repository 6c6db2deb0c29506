//! `roboaudit testbed rollout`: option values are checked before anything is simulated or
//! created, with exit 2 naming the flag.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

#[test]
fn bad_rollout_options_are_usage_errors_and_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let cases: [(&[&str], &str); 5] = [
        (&["--policy", "random"], "unknown --policy `random`"),
        (&["--skill", "5"], "--skill must be in [0, 1], got 5"),
        (&["--skill", "nan"], "--skill must be in [0, 1], got NaN"),
        (&["--noise", "nan"], "--noise must be finite and ≥ 0"),
        (
            &["--noise=-1"],
            "--noise must be finite and ≥ 0 (m), got -1",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec![
            "testbed",
            "rollout",
            "--task",
            "stack",
            "--episodes",
            "1",
            "--no-record",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(message), "{extra:?}: {}", text(&o));
        assert!(!out.exists(), "{extra:?} created --out");
    }
}
