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
    ] {
        let mut args = vec![
            "data", "detect", &dataset, "--labels", &labels, "--out", &out,
        ];
        args.extend(extra.iter().copied());
        let o = roboaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{extra:?}: {}", text(&o));
        assert!(!Path::new(&out).exists(), "{extra:?} wrote output");
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
