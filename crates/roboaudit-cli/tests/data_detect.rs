//! `roboaudit data detect`: the success detector on a synthetic dataset whose success shows in
//! the last frame — output files, byte-identical reruns, the labels file feeding `fqe fit`, and
//! the exit codes of bad options (2, nothing written) and bad inputs (3, naming file and row).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{roboaudit, text};

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roboaudit_fqe::detector::synthetic::{GoalRun, write_goal_dataset};

struct Fixture {
    dir: tempfile::TempDir,
    labels: PathBuf,
}

impl Fixture {
    fn dataset(&self) -> String {
        self.path("dataset")
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    fn write(&self, name: &str, body: &str) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_owned()
    }
}

/// 80 episodes, two in three labelled.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let truth = write_goal_dataset(
        dir.path(),
        &GoalRun {
            episodes: 80,
            ..GoalRun::default()
        },
    )
    .unwrap();
    let mut body = String::from("episode_index,success\n");
    for (e, ok) in truth.iter().enumerate().filter(|(e, _)| e % 3 != 2) {
        let _ = writeln!(body, "{e},{}", u8::from(*ok));
    }
    let labels = dir.path().join("partial.csv");
    std::fs::write(&labels, body).unwrap();
    Fixture { dir, labels }
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

/// Every path under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

fn detect_args<'a>(f: &'a Fixture, dataset: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "data",
        "detect",
        dataset,
        "--labels",
        f.labels.to_str().unwrap(),
        "--out",
        out,
    ]
}

#[test]
fn detect_writes_labels_and_report_reproducibly_and_fqe_fit_reads_them() {
    let f = fixture();
    let out = f.path("res/labels.csv");
    let args = |out: &str, extra: &[&str]| {
        let mut a = vec![
            "data",
            "detect",
            "--labels",
            f.labels.to_str().unwrap(),
            "--out",
        ];
        a.push(out);
        a.extend_from_slice(extra);
        a.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let dataset = f.dataset();
    let cache = f.path("cache");
    let mut first = args(
        &out,
        &["--holdout", "0.25", "--seed", "3", "--cache", &cache],
    );
    first.insert(2, dataset.clone());
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let o = roboaudit(&first);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("held-out accuracy"), "{stdout}");
    assert!(stdout.contains("confusion: TP"), "{stdout}");
    assert!(
        stdout.contains("predicted 26 unlabelled episodes"),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("80 encoded"));
    let labels = read(Path::new(&out));
    let csv = String::from_utf8(labels.clone()).unwrap();
    assert_eq!(csv.lines().count(), 81);
    assert!(csv.starts_with("episode_index,success,source,probability\n0,"));
    // The report goes beside OUT by default.
    let report_path = f.path("res/labels.detector.json");
    let report: serde_json::Value = serde_json::from_slice(&read(Path::new(&report_path))).unwrap();
    assert_eq!(report["schema"], "roboaudit.detector.v1");
    assert_eq!(report["validation"]["method"], "holdout");
    assert_eq!(report["validation"]["fraction"], 0.25);
    let scores = &report["validation"]["scores"];
    // Plumbing, not accuracy (tests/detector.rs in roboaudit-fqe holds the accuracy bar): 14
    // held-out episodes of a 54-episode training set, far above the 0.6 majority rate.
    assert!(scores["accuracy"].as_f64().unwrap() >= 0.75, "{scores}");
    assert!(scores["accuracy_interval"]["lo"].is_number());
    assert!(scores["confusion"]["true_positive"].is_u64());
    assert_eq!(
        report["labelled"]["successes"].as_u64().unwrap()
            + report["labelled"]["failures"].as_u64().unwrap(),
        54
    );

    // Same inputs and seed, warm cache, explicit report path: the same bytes.
    let out2 = f.path("again.csv");
    let report2 = f.path("again.json");
    let mut second = args(
        &out2,
        &[
            "--holdout",
            "0.25",
            "--seed",
            "3",
            "--cache",
            &cache,
            "--report",
            &report2,
        ],
    );
    second.insert(2, dataset.clone());
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let o = roboaudit(&second);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("80 from the feature cache"));
    assert_eq!(read(Path::new(&out2)), labels);
    assert_eq!(read(Path::new(&report2)), read(Path::new(&report_path)));

    // Without --holdout: 5-fold cross-validation, every labelled episode scored once.
    let out3 = f.path("kfold.csv");
    let mut third = args(&out3, &["--cache", &cache]);
    third.insert(2, dataset.clone());
    let third: Vec<&str> = third.iter().map(String::as_str).collect();
    let o = roboaudit(&third);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("5-fold (seed 0)"));
    let kfold: serde_json::Value =
        serde_json::from_slice(&read(Path::new(&f.path("kfold.detector.json")))).unwrap();
    assert_eq!(kfold["validation"]["method"], "k-fold");
    assert_eq!(kfold["validation"]["scores"]["n_heldout"], 54);

    // The full labels file is what `fqe fit --labels` reads.
    let res = f.path("fqe");
    let o = roboaudit(&[
        "fqe",
        "fit",
        "--dataset",
        &dataset,
        "--labels",
        &out,
        "--no-neural",
        "--components",
        "8",
        "--cache",
        &cache,
        "--out",
        &res,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let fqe: serde_json::Value =
        serde_json::from_slice(&read(&Path::new(&res).join("fqe.json"))).unwrap();
    let successes = csv
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some("1"))
        .count();
    assert_eq!(
        fqe["inputs"]["load"]["successes"].as_u64().unwrap(),
        u64::try_from(successes).unwrap()
    );
}

#[test]
fn bad_options_exit_2_before_reading_and_write_nothing() {
    let f = fixture();
    let out = f.path("labels.csv");
    let labels = f.labels.to_str().unwrap().to_owned();
    let dataset = f.dataset();
    for (extra, needle) in [
        (vec!["--holdout", "1.5"], "--holdout"),
        (vec!["--folds", "1"], "--folds"),
        (vec!["--c", "0"], "--c"),
        (vec!["--components", "0"], "--components"),
        (
            vec!["--holdout", "0.2", "--folds", "3"],
            "cannot be used with",
        ),
        (
            vec!["--features", "image:observation.images.wrist"],
            "declares no feature",
        ),
        (vec!["--features", "none"], "--features none"),
        (vec!["--report", &out], "same file"),
        // Found once the labels are read, before any frame is encoded.
        (
            vec!["--holdout", "0.0001"],
            "--holdout 0.0001 of 54 labelled episodes holds out none; need at least 1",
        ),
        // A user's value comes back compact, not as a 300-digit decimal.
        (vec!["--holdout", "1e-300"], "--holdout 1e-300 of 54"),
        (vec!["--c=-1e-300"], "--c -1e-300 must be"),
        (vec!["--cache", &labels], "--cache must be a folder"),
    ] {
        let mut args = vec![
            "data", "detect", &dataset, "--labels", &labels, "--out", &out,
        ];
        args.extend(extra.iter().copied());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{extra:?}: {}", text(&o));
        assert!(!Path::new(&out).exists(), "{extra:?} wrote output");
        assert!(!text(&o).contains("00000000"), "{extra:?}: {}", text(&o));
    }
    // No output may go into the dataset folder (writing there can corrupt it), however the
    // path is spelt; nothing is written there.
    let listing = |dir: &str| {
        let mut v: Vec<_> = walk(Path::new(dir));
        v.sort();
        v
    };
    let before_ds = listing(&dataset);
    let inside = f.path("dataset/res/labels.csv");
    let dotted = f.path("dataset/meta/../labels.csv");
    let report_inside = f.path("dataset/labels.detector.json");
    let cache_inside = f.path("dataset/cache");
    for extra in [
        vec!["--out", inside.as_str()],
        vec!["--out", dotted.as_str()],
        vec!["--out", out.as_str(), "--report", report_inside.as_str()],
        vec!["--out", out.as_str(), "--cache", cache_inside.as_str()],
    ] {
        let mut args = vec!["data", "detect", &dataset, "--labels", &labels];
        args.extend(extra.iter().copied());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(
            text(&o).contains("is inside the dataset folder"),
            "{extra:?}: {}",
            text(&o)
        );
        assert_eq!(
            listing(&dataset),
            before_ds,
            "{extra:?} wrote into the dataset"
        );
    }
    // The labels file spelt another way (with `..`, through a symbolic link) is still the
    // labels file: refused, and left as it was.
    let before = read(&f.labels);
    let dotted = f.path("dataset/../partial.csv");
    let link = f.path("link.csv");
    std::os::unix::fs::symlink(&f.labels, &link).unwrap();
    for (flag, path) in [("--out", &dotted), ("--out", &link), ("--report", &dotted)] {
        let mut args = vec!["data", "detect", &dataset, "--labels", &labels];
        if flag == "--out" {
            args.extend(["--out", path.as_str()]);
        } else {
            args.extend(["--out", &out, "--report", path.as_str()]);
        }
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{flag} {path}: {}", text(&o));
        assert!(text(&o).contains("overwritten"), "{}", text(&o));
        assert_eq!(
            read(&f.labels),
            before,
            "{flag} {path} changed the labels file"
        );
    }
    // A non-CSV output name, on a dataset that does not exist: the option is checked first.
    let o = roboaudit(&[
        "data",
        "detect",
        "/nonexistent",
        "--labels",
        &labels,
        "--out",
        &f.path("l.parquet"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(".csv"));
}

#[test]
fn unusable_inputs_exit_3_naming_file_and_row() {
    let f = fixture();
    let out = f.path("labels.csv");
    let dataset = f.dataset();
    let unknown = f.write("unknown.csv", "episode_index,success\n0,1\n1,0\n4242,1\n");
    let one = f.write("one.csv", "episode_index,success\n0,0\n1,0\n");
    let empty = f.write("empty.csv", "episode_index,success\n");
    let malformed = f.write("bad.csv", "episode_index,success\n0,1\n1,maybe\n");
    let missing = f.path("missing.csv");
    for (labels, needles) in [
        (
            &unknown,
            vec!["row 3", "episode 4242 is not in the dataset", "unknown.csv"],
        ),
        (
            &one,
            vec!["all 2 labelled episodes are failures", "one.csv"],
        ),
        (&empty, vec!["no labelled episodes", "empty.csv"]),
        (&malformed, vec!["row 2", "success", "bad.csv"]),
        (&missing, vec!["missing.csv"]),
    ] {
        let o = roboaudit(&[
            "data", "detect", &dataset, "--labels", labels, "--out", &out,
        ]);
        assert_eq!(o.status.code(), Some(3), "{labels}: {}", text(&o));
        for n in needles {
            assert!(text(&o).contains(n), "{labels}: {n} not in {}", text(&o));
        }
        assert!(!Path::new(&out).exists());
    }
    let o = roboaudit(&[
        "data",
        "detect",
        &f.path("nope"),
        "--labels",
        f.labels.to_str().unwrap(),
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

#[test]
fn components_beyond_the_episodes_are_capped_with_a_warning_once_the_detector_is_trained() {
    let f = fixture();
    let (dataset, out) = (f.dataset(), f.path("labels.csv"));
    // A labels file that does not read: its error alone, no warning about a cap never applied.
    let malformed = f.write("bad.csv", "episode_index,success\n0,1\n1,maybe\n");
    let o = roboaudit(&[
        "data",
        "detect",
        &dataset,
        "--labels",
        &malformed,
        "--out",
        &out,
        "--components",
        "1024",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("bad.csv"), "{}", text(&o));
    assert!(!text(&o).contains("capped"), "{}", text(&o));
    let mut args = detect_args(&f, &dataset, &out);
    args.extend(["--components", "1024"]);
    let o = roboaudit(&args);
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    // 80 terminal frames span at most 79 directions.
    assert!(
        stderr.contains("warning: --components 1024 capped at 79"),
        "{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&read(Path::new(&f.path("labels.detector.json")))).unwrap();
    assert_eq!(report["components_requested"], 1024);
    assert!(report["components"].as_u64().unwrap() <= 79, "{report}");
}

#[test]
fn a_detector_that_predicts_one_class_is_called_degenerate_and_c_is_echoed_compactly() {
    let f = fixture();
    let (dataset, out) = (f.dataset(), f.path("labels.csv"));
    // C = 1e-300: the coefficients stay at zero and every episode gets the same probability.
    let mut args = detect_args(&f, &dataset, &out);
    args.extend(["--c", "1e-300"]);
    let o = roboaudit(&args);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stdout.contains("C = 1e-300"), "{stdout}");
    assert!(!stdout.contains("00000000"), "{stdout}");
    assert!(stdout.contains("balanced 0.500"), "{stdout}");
    assert!(
        stderr.contains("warning: degenerate detector: it predicts"),
        "{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&read(Path::new(&f.path("labels.detector.json")))).unwrap();
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("degenerate detector"), "{warnings}");
    assert_eq!(report["c"], 1e-300);
}

/// 80 episodes of 4 frames: the state of episode 5's terminal frame (index 23) is NaN and the
/// PNG of the last episode's terminal frame (index 319) is cut in half.
fn damaged_fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let truth = write_goal_dataset(
        dir.path(),
        &GoalRun {
            episodes: 80,
            nan_state: Some(23),
            corrupt_png: Some(319),
            ..GoalRun::default()
        },
    )
    .unwrap();
    let mut body = String::from("episode_index,success\n");
    for (e, ok) in truth.iter().enumerate().filter(|(e, _)| e % 3 != 2) {
        let _ = writeln!(body, "{e},{}", u8::from(*ok));
    }
    let labels = dir.path().join("partial.csv");
    std::fs::write(&labels, body).unwrap();
    Fixture { dir, labels }
}

#[test]
fn damaged_frames_fail_naming_the_file_and_leave_no_partial_cache() {
    let f = damaged_fixture();
    let (dataset, out, cache) = (f.dataset(), f.path("labels.csv"), f.path("cache"));
    let data_file = "dataset/data/chunk-000/file-000.parquet";
    // The corrupt last terminal frame is found after 79 terminal frames were encoded: none of
    // them may be left in a half-written cache file.
    let mut args = detect_args(&f, &dataset, &out);
    args.extend(["--cache", &cache]);
    let o = roboaudit(&args);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("PNG"), "{}", text(&o));
    assert!(text(&o).contains(data_file), "{}", text(&o));
    assert!(
        !Path::new(&cache).exists() || walk(Path::new(&cache)).is_empty(),
        "left {:?}",
        walk(Path::new(&cache))
    );
    assert!(!Path::new(&out).exists());
    // The NaN state: the message names column, episode and data file, in the detector's words.
    let mut args = detect_args(&f, &dataset, &out);
    args.extend(["--features", "state:observation.state"]);
    let o = roboaudit(&args);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    for needle in [
        "unusable detector input",
        "column \"observation.state\", episode 5",
        "non-finite value",
        data_file,
    ] {
        assert!(t.contains(needle), "{needle} not in {t}");
    }
    assert!(!t.contains("invalid FQE inputs"), "{t}");
    assert!(!Path::new(&out).exists());
}

#[test]
fn a_report_that_is_not_json_or_holds_another_result_is_refused_before_any_work() {
    let f = fixture();
    let out = f.path("labels.csv");
    let labels = f.labels.to_str().unwrap().to_owned();
    let dataset = f.dataset();
    // An FQE result folder: its summary.md and fqe.json must survive a mistyped --report.
    let fit = f.dir.path().join("fit");
    std::fs::create_dir(&fit).unwrap();
    let summary = fit.join("summary.md");
    let fqe = fit.join("fqe.json");
    std::fs::write(&summary, "# FQE\n").unwrap();
    std::fs::write(&fqe, "{\"schema\": \"roboaudit.fqe.v1\"}\n").unwrap();
    let notes = f.write("notes.json", "not json at all\n");
    for (report, needles) in [
        (summary.to_str().unwrap(), vec!["--report", ".json"]),
        (
            fqe.to_str().unwrap(),
            vec!["another kind of result", "roboaudit.fqe.v1"],
        ),
        (notes.as_str(), vec!["is not a detector report"]),
    ] {
        let o = roboaudit(&[
            "data", "detect", &dataset, "--labels", &labels, "--out", &out, "--report", report,
        ]);
        assert_eq!(o.status.code(), Some(2), "{report}: {}", text(&o));
        for n in needles {
            assert!(text(&o).contains(n), "{report}: {n} not in {}", text(&o));
        }
        assert!(!Path::new(&out).exists(), "{report}: wrote --out");
    }
    assert_eq!(read(&summary), b"# FQE\n");
    assert_eq!(read(&fqe), b"{\"schema\": \"roboaudit.fqe.v1\"}\n");
    assert_eq!(read(Path::new(&notes)), b"not json at all\n");
    // An earlier detector report is this command's own result: replaced by a rerun.
    let report = f.path("det.json");
    let args = [
        "data", "detect", &dataset, "--labels", &labels, "--out", &out, "--report", &report,
    ];
    let o = roboaudit(&args);
    assert!(o.status.success(), "{}", text(&o));
    let first = read(Path::new(&report));
    let o = roboaudit(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(read(Path::new(&report)), first);
}

#[test]
fn more_folds_than_labelled_episodes_is_a_usage_error() {
    let f = fixture();
    let out = f.path("labels.csv");
    let labels = f.labels.to_str().unwrap().to_owned();
    let dataset = f.dataset();
    // 54 labelled episodes: 60 folds cannot hold one each; found once the labels are read.
    let o = roboaudit(&[
        "data", "detect", &dataset, "--labels", &labels, "--out", &out, "--folds", "60",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    for n in ["--folds 60", "labels 54", "partial.csv"] {
        assert!(text(&o).contains(n), "{n} not in {}", text(&o));
    }
    assert!(!Path::new(&out).exists());
}
