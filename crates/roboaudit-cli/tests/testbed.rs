//! `roboaudit testbed`: option values and output names are checked before anything is
//! simulated or created, with exit 2 naming the flag.
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

#[test]
fn an_out_file_named_for_another_format_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (jpg, parquet) = (tmp.path().join("x.jpg"), tmp.path().join("s.parquet"));
    let cases: [(Vec<&str>, &str); 2] = [
        (
            vec![
                "testbed",
                "render",
                "--task",
                "stack",
                "--out",
                jpg.to_str().unwrap(),
            ],
            "the rendered image is written as PNG; give it the extension .png",
        ),
        (
            vec![
                "testbed",
                "scenes",
                "--task",
                "stack",
                "--out",
                parquet.to_str().unwrap(),
            ],
            "the scene set is written as CSV; give it the extension .csv",
        ),
    ];
    for (args, message) in cases {
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(message), "{args:?}: {}", text(&o));
    }
    assert!(!jpg.exists() && !parquet.exists());
}

/// Counts that would exhaust memory or run for hours are refused before any allocation.
#[test]
fn counts_past_their_maximum_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("s.csv");
    let png = tmp.path().join("r.png");
    for args in [
        vec![
            "testbed",
            "scenes",
            "--task",
            "stack",
            "--n-fresh",
            "100000001",
            "--out",
        ],
        vec![
            "testbed", "scenes", "--task", "stack", "--n-base", "100001", "--out",
        ],
        vec![
            "testbed", "render", "--task", "stack", "--steps", "10001", "--out",
        ],
    ] {
        let out = if args[1] == "render" { &png } else { &csv };
        let mut args = args.clone();
        args.push(out.to_str().unwrap());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("is not in 0.."), "{args:?}: {}", text(&o));
        assert!(!out.exists());
    }
}

/// A negative number is an invalid value of the option it follows, not an unknown argument.
#[test]
fn negative_numbers_are_named_as_invalid_values() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    for (args, option) in [
        (vec!["fqe", "collect", "--seed", "-1"], "--seed <SEED>"),
        (
            vec!["memory", "collect", "--pairs", "-3"],
            "--pairs <PAIRS>",
        ),
        (
            vec!["testbed", "scenes", "--n-fresh", "-2"],
            "--n-fresh <N_FRESH>",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--out", out.to_str().unwrap()]);
        let o = roboaudit(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let want = format!("invalid value '{}' for '{option}'", args[3]);
        assert!(text(&o).contains(&want), "{args:?}: {}", text(&o));
        assert!(!out.exists());
    }
}
