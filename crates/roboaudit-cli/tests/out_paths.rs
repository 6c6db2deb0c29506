//! Output paths that name the wrong kind of thing, or a place inside someone's LeRobot dataset,
//! are usage errors (exit code 2) found before any work, with nothing written.
#![allow(clippy::unwrap_used)]

mod common;

use common::{roboaudit, text, tree};
use std::path::{Path, PathBuf};

/// A folder that any reader takes for a LeRobot dataset (it holds `meta/info.json`), with one
/// file of data to show it is left alone.
fn dataset(tmp: &Path) -> PathBuf {
    let ds = tmp.join("someones-dataset");
    std::fs::create_dir_all(ds.join("meta")).unwrap();
    std::fs::write(
        ds.join("meta/info.json"),
        b"{\"codebase_version\": \"v3.0\"}",
    )
    .unwrap();
    ds
}

fn assert_usage(o: &std::process::Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    assert!(text(o).contains(says), "wanted {says:?} in {}", text(o));
}

/// `testbed render --task stack --out OUT`: the quickest one-file output.
fn render(out: &Path) -> std::process::Output {
    roboaudit(&[
        "testbed",
        "render",
        "--task",
        "stack",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn outputs_inside_a_lerobot_dataset_are_refused_by_commands_without_a_dataset_input() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path());
    let before = tree(&ds);
    let inside = |rel: &str| ds.join(rel).to_str().unwrap().to_owned();
    let runs: [Vec<String>; 4] = [
        ["testbed", "scenes", "--task", "stack", "--out"]
            .map(String::from)
            .into_iter()
            .chain([inside("data/scenes.csv")])
            .collect(),
        ["testbed", "rollout", "--task", "stack", "--episodes", "1"]
            .map(String::from)
            .into_iter()
            .chain(["--no-record".into(), "--out".into(), inside("rollouts")])
            .collect(),
        [
            "memory", "collect", "--policy", "faithful", "--pairs", "1", "--seeds", "1",
        ]
        .map(String::from)
        .into_iter()
        .chain(["--out".into(), inside("meta/memory")])
        .collect(),
        ["report", tmp.path().to_str().unwrap(), "--out"]
            .map(String::from)
            .into_iter()
            .chain([inside("report")])
            .collect(),
    ];
    for args in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = roboaudit(&args);
        assert_usage(&o, "is inside the dataset folder");
        assert_eq!(tree(&ds), before, "{args:?} wrote into the dataset");
    }
    // The dataset folder itself, as a folder output.
    let root = ds.to_str().unwrap();
    let runs: [&[&str]; 3] = [
        &[
            "memory", "collect", "--policy", "faithful", "--pairs", "1", "--seeds", "1", "--out",
            root,
        ],
        &["memory", "calibrate", "--out", root],
        &["report", tmp.path().to_str().unwrap(), "--out", root],
    ];
    for args in runs {
        let o = roboaudit(args);
        assert_usage(&o, "is a LeRobot dataset folder");
        assert_eq!(tree(&ds), before, "{args:?} wrote into the dataset");
    }
    let images = ds.join("frames");
    let o = roboaudit(&[
        "testbed",
        "scenes",
        "--task",
        "stack",
        "--images",
        images.to_str().unwrap(),
        "--out",
        tmp.path().join("scenes.csv").to_str().unwrap(),
    ]);
    assert_usage(&o, "--images");
    assert!(!tmp.path().join("scenes.csv").exists());
}

#[test]
fn a_folder_where_a_file_goes_and_a_file_where_a_folder_goes_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let png_dir = tmp.path().join("frame.png");
    std::fs::create_dir_all(&png_dir).unwrap();
    let o = render(&png_dir);
    assert_usage(&o, "is a folder; give a file name");

    let images = tmp.path().join("images-file");
    std::fs::write(&images, b"keep").unwrap();
    let csv = tmp.path().join("scenes.csv");
    let o = roboaudit(&[
        "testbed",
        "scenes",
        "--task",
        "stack",
        "--images",
        images.to_str().unwrap(),
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert_usage(&o, "--images");
    assert_usage(&o, "is a file, not a folder");
    assert!(
        !csv.exists(),
        "the scene set was written before the refusal"
    );
    assert_eq!(std::fs::read(&images).unwrap(), b"keep");
}

/// A file standing where a missing parent of `--out` would go, a folder no file can be created
/// in, or a dangling symbolic link is found before the fit (or the collection) starts, not when
/// its results are written at the end; for a one-file output, in the folder the file goes in.
#[test]
fn an_out_that_no_folder_can_be_made_for_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let chain = common::chain_run_folder();
    let run = chain.path().join("run");
    let run_before = tree(&run);
    let blocker = tmp.path().join("afile.txt");
    std::fs::write(&blocker, b"keep").unwrap();
    let under_file = blocker.join("sub/res");
    let o = common::fqe_fit(&run, &under_file, &["--no-neural"]);
    assert_usage(
        &o,
        &format!(
            "{} is a file, so no folder can be created under it",
            blocker.display()
        ),
    );
    assert_eq!(std::fs::read(&blocker).unwrap(), b"keep");
    assert_eq!(tree(&run), run_before, "the fit wrote a feature cache");
    let o = common::collect_one_faithful_pair(&under_file, &[]);
    assert_usage(&o, "so no folder can be created under it");
    // A one-file output is checked in the folder it goes in.
    let png = blocker.join("x.png");
    let o = render(&png);
    assert_usage(&o, "so no folder can be created under it");
    // /proc takes no new files, not even root's (CI runs as root, where permissions do not
    // hold).
    if cfg!(target_os = "linux") {
        let o = common::fqe_fit(&run, Path::new("/proc/roboaudit-res"), &["--no-neural"]);
        assert_usage(&o, "cannot create a file in /proc");
        let o = render(Path::new("/proc/x.png"));
        assert_usage(&o, "cannot create a file in /proc");
    }
    // A dangling link cannot become the results folder.
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("nowhere/target"), &link).unwrap();
        let o = common::fqe_fit(&run, &link, &["--no-neural"]);
        assert_usage(&o, "which does not exist");
        std::fs::remove_file(&link).unwrap();
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "a write check was left behind"
    );
}

#[test]
fn memory_collect_does_not_write_into_an_fqe_result() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = tmp.path().join("fit");
    std::fs::create_dir_all(&fit).unwrap();
    std::fs::write(fit.join("fqe.json"), b"{\"schema\": \"roboaudit.fqe/1\"}").unwrap();
    std::fs::write(fit.join("summary.md"), b"# FQE\n").unwrap();
    let before = tree(&fit);
    let o = common::collect_one_faithful_pair(&fit, &[]);
    assert_usage(&o, "holds another kind of result (fqe.json");
    assert_eq!(tree(&fit), before);

    // Nor among someone else's files.
    let notes = tmp.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("notes.txt"), b"mine\n").unwrap();
    let o = common::collect_one_faithful_pair(&notes, &[]);
    assert_usage(&o, "is not empty and holds no memory collection");
    assert_eq!(std::fs::read_dir(&notes).unwrap().count(), 1);

    // Nor into an FQE or retrieval collection's run folder.
    for marker in ["ground_truth.json", "collect.json"] {
        let run = tmp.path().join(format!("run-{marker}"));
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join(marker), b"{}").unwrap();
        let before = tree(&run);
        let o = common::collect_one_faithful_pair(&run, &[]);
        assert_usage(
            &o,
            &format!("is another collection's run folder (it holds {marker})"),
        );
        assert_eq!(tree(&run), before);
    }
}
