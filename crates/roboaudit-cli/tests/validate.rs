//! `roboaudit validate`: a value outside what the audits can use is bad input (exit 3) naming the
//! file, row and column.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

/// A negative layout level is refused where it is, not passed to the audit; a level beyond the
/// testbed's 0..=3 is another harness's and is kept.
#[test]
fn a_scenes_file_with_a_negative_layout_level_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("scenes.csv");
    std::fs::write(
        &file,
        "scene_id,perturbation,layout_level,appearance_draw\n\
         q00,layout,9,0\n\
         q01,layout,-1,0\n",
    )
    .unwrap();
    let o = roboaudit(&["validate", "scenes", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in [
        "row 2, column \"layout_level\"",
        "layout level -1 is negative",
        file.to_str().unwrap(),
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    // The levels the testbed draws, and higher ones, are accepted.
    std::fs::write(
        &file,
        "scene_id,perturbation,layout_level,appearance_draw\nq00,appearance,0,1\nq01,fresh,3,2\nq02,layout,9,0\n",
    )
    .unwrap();
    let o = roboaudit(&["validate", "scenes", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}
