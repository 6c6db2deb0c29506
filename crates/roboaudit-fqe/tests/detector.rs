//! The success detector end to end (SPEC §3, seed 003 §3): on a synthetic LeRobot dataset
//! whose success is visible in the last frame it recovers the labels of the unlabelled
//! episodes, its held-out split is seeded and reproducible, its output feeds the FQE labels
//! reader, and unusable labels or features fail with typed errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use roboaudit_data::lerobot::{LeRobotDataset, SuccessSource, read_labels_file};
use roboaudit_fqe::detector::synthetic::{GoalRun, write_goal_dataset};
use roboaudit_fqe::detector::{
    Detection, DetectorConfig, DetectorError, LabelOrigin, Validation, detect,
};
use roboaudit_fqe::{FqeError, FrameFeatures, Setting};

/// Held-out and unlabelled accuracy the detector must reach on the goal dataset. Success and
/// failure end positions are separated by two pixels and the block's red channel in the goal
/// zone is a linear function of the pixels, so the classes are linearly separable in pixel
/// space; what can cost an episode is the 32-component projection mixing in the nuisances
/// (table brightness, the distractor, pixel noise). 0.9 allows one or two of the ~15
/// held-out episodes to be missed, and sits far above the 0.6 that ignoring the image (always
/// predicting the majority class, failure, at a 40% success rate) would score.
const MIN_ACCURACY: f64 = 0.9;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    truth: Vec<bool>,
}

fn fixture(run: &GoalRun) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let truth = write_goal_dataset(dir.path(), run).unwrap();
    Fixture {
        root: dir.path().to_path_buf(),
        _dir: dir,
        truth,
    }
}

/// A labels file labelling the episodes `which` picks with their true label.
fn partial_labels(f: &Fixture, name: &str, which: impl Fn(usize) -> bool) -> PathBuf {
    let mut text = String::from("episode_index,success\n");
    for (e, ok) in f.truth.iter().enumerate() {
        if which(e) {
            let _ = writeln!(text, "{e},{}", u8::from(*ok));
        }
    }
    let path = f.root.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn dataset(f: &Fixture) -> LeRobotDataset {
    LeRobotDataset::open(f.root.join("dataset")).unwrap()
}

fn image_config() -> DetectorConfig {
    DetectorConfig::new(FrameFeatures::Image("observation.image".into()))
}

fn unlabelled_accuracy(d: &Detection, truth: &[bool]) -> f64 {
    let predicted: Vec<_> = d
        .episodes
        .iter()
        .filter(|e| e.source == LabelOrigin::Detector)
        .collect();
    let right = predicted
        .iter()
        .filter(|e| e.success == truth[usize::try_from(e.episode_index).unwrap()])
        .count();
    right as f64 / predicted.len() as f64
}

#[test]
fn recovers_visible_success_from_terminal_frames_with_a_seeded_holdout() {
    let f = fixture(&GoalRun::default());
    let ds = dataset(&f);
    // Half the episodes labelled (every other one).
    let labels = partial_labels(&f, "partial.csv", |e| e % 2 == 0);
    let cache = f.root.join("cache");
    let config = DetectorConfig {
        cache_dir: Some(cache.clone()),
        validation: Validation::Holdout { fraction: 0.25 },
        ..image_config()
    };
    let d = detect(&ds, &labels, &config).unwrap();
    let r = &d.report;
    assert_eq!((r.episodes, r.labelled.total()), (120, 60));
    assert_eq!(r.encoder.as_deref(), Some("raw32:none"));
    assert_eq!(d.encoded, 120, "one terminal frame per episode encoded");
    let s = &r.validation.scores;
    let fold = &r.validation.folds[0];
    assert_eq!(fold.n_train + fold.n_heldout, 60);
    assert_eq!(s.n_heldout, fold.n_heldout);
    assert!((14..=16).contains(&s.n_heldout), "{}", s.n_heldout);
    let acc = s.accuracy.unwrap();
    assert!(
        acc >= MIN_ACCURACY,
        "held-out accuracy {acc}\n{}",
        r.summary()
    );
    let truth_acc = unlabelled_accuracy(&d, &f.truth);
    assert!(
        truth_acc >= MIN_ACCURACY,
        "accuracy on the unlabelled {truth_acc}"
    );
    assert!(s.balanced_accuracy.unwrap() >= MIN_ACCURACY);
    let c = s.confusion;
    assert_eq!(
        c.true_positive + c.false_positive + c.true_negative + c.false_negative,
        s.n_heldout
    );
    assert_eq!(r.final_fit.n_train, 60);
    assert!(r.final_fit.converged);
    assert_eq!(r.predicted.total(), 60);
    // Labelled episodes keep their label; every probability is a probability.
    for e in &d.episodes {
        assert!((0.0..=1.0).contains(&e.probability));
        if e.episode_index % 2 == 0 {
            assert_eq!(e.source, LabelOrigin::Label);
            assert_eq!(
                e.success,
                f.truth[usize::try_from(e.episode_index).unwrap()]
            );
        }
    }

    // Same inputs and seed: the same bytes, with the cache now warm.
    let again = detect(&ds, &labels, &config).unwrap();
    assert_eq!((again.cache_hits, again.encoded), (120, 0));
    assert_eq!(
        serde_json::to_vec(&again.report).unwrap(),
        serde_json::to_vec(&d.report).unwrap()
    );
    assert_eq!(again.labels_csv(), d.labels_csv());
    // Another seed draws another held-out set.
    let other = detect(&ds, &labels, &DetectorConfig { seed: 1, ..config }).unwrap();
    assert_ne!(
        other.report.validation.folds[0].heldout_episodes,
        fold.heldout_episodes
    );
}

#[test]
fn output_is_a_full_labels_file_that_fqe_reads_and_keeps_given_labels() {
    let f = fixture(&GoalRun {
        episodes: 60,
        ..GoalRun::default()
    });
    let ds = dataset(&f);
    // One given label is deliberately wrong: the output keeps what the user said.
    let mut text = String::from("episode_index,success\n");
    for (e, ok) in f.truth.iter().enumerate().filter(|(e, _)| e % 3 != 0) {
        let given = if e == 1 { !ok } else { *ok };
        let _ = writeln!(text, "{e},{}", u8::from(given));
    }
    let labels = f.root.join("partial.csv");
    std::fs::write(&labels, text).unwrap();
    let d = detect(&ds, &labels, &image_config()).unwrap();
    assert_eq!(d.episodes[1].success, !f.truth[1]);
    assert_eq!(d.episodes[1].source, LabelOrigin::Label);
    let csv = d.labels_csv();
    assert!(csv.starts_with("episode_index,success,source,probability\n"));
    assert!(csv.lines().nth(1).unwrap().starts_with("0,"));
    assert!(csv.contains(",detector,") && csv.contains(",label,"));
    let out = f.root.join("labels.csv");
    std::fs::write(&out, &csv).unwrap();
    // The labels reader ignores the extra columns; FQE's labels source accepts the full file.
    assert_eq!(read_labels_file(&out).unwrap().len(), 60);
    let full = ds
        .success_labels(&SuccessSource::File(out.clone()))
        .unwrap();
    for (l, e) in full.iter().zip(&d.episodes) {
        assert_eq!((l.episode_index, l.success), (e.episode_index, e.success));
    }
    // And the full file can be given back as a partial one: every episode labelled.
    let back = detect(&ds, &out, &image_config()).unwrap();
    assert_eq!(back.report.predicted.total(), 0);
    assert!(
        back.report
            .warnings
            .iter()
            .any(|w| w.contains("predicted nothing"))
    );
}

#[test]
fn k_fold_by_default_and_a_state_vector_source_work_too() {
    let f = fixture(&GoalRun::default());
    let ds = dataset(&f);
    let labels = partial_labels(&f, "partial.csv", |e| e % 4 != 3);
    assert_eq!(image_config().validation, Validation::KFold { folds: 5 });
    let d = detect(&ds, &labels, &image_config()).unwrap();
    let v = &d.report.validation;
    assert_eq!(v.folds.len(), 5);
    // Each labelled episode is held out exactly once.
    assert_eq!(v.scores.n_heldout, 90);
    let mut held: Vec<i64> = v
        .folds
        .iter()
        .flat_map(|f| f.heldout_episodes.clone())
        .collect();
    held.sort_unstable();
    held.dedup();
    assert_eq!(held.len(), 90);
    assert!(v.scores.accuracy.unwrap() >= MIN_ACCURACY);
    let json = serde_json::to_value(&d.report).unwrap();
    assert_eq!(json["validation"]["method"], "k-fold");
    assert_eq!(json["validation"]["folds"].as_array().unwrap().len(), 5);
    assert_eq!(json["schema"], "roboaudit.detector.v1");

    // The block's final [x, y] separates the classes exactly.
    let state = DetectorConfig::new(FrameFeatures::Vector("observation.state".into()));
    let d = detect(&ds, &labels, &state).unwrap();
    assert!(d.report.features.starts_with("observation.state:std-pca"));
    assert!(d.report.encoder.is_none());
    assert!(d.report.validation.scores.accuracy.unwrap() >= 0.95);
    assert!(unlabelled_accuracy(&d, &f.truth) >= 0.95);
}

fn write(root: &Path, name: &str, text: &str) -> PathBuf {
    let p = root.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn unusable_labels_and_features_are_typed_errors() {
    let f = fixture(&GoalRun {
        episodes: 30,
        ..GoalRun::default()
    });
    let ds = dataset(&f);
    let config = image_config();

    let unknown = write(
        &f.root,
        "unknown.csv",
        "episode_index,success\n0,1\n1,0\n999,1\n",
    );
    match detect(&ds, &unknown, &config) {
        Err(DetectorError::UnknownEpisode {
            row, episode_index, ..
        }) => assert_eq!((row, episode_index), (3, 999)),
        other => panic!("{other:?}"),
    }
    let e = detect(&ds, &unknown, &config).unwrap_err();
    assert!(e.is_invalid_input() && !e.is_usage());
    let text = e.to_string();
    assert!(
        text.contains("row 3") && text.ends_with("unknown.csv"),
        "{text}"
    );

    let one = write(&f.root, "one.csv", "episode_index,success\n0,1\n1,1\n2,1\n");
    assert!(matches!(
        detect(&ds, &one, &config),
        Err(DetectorError::SingleClass {
            class: "successes",
            count: 3,
            ..
        })
    ));

    let none = write(&f.root, "none.csv", "episode_index,success\n");
    let e = detect(&ds, &none, &config).unwrap_err();
    assert!(matches!(e, DetectorError::NoLabels { .. }), "{e:?}");
    assert!(e.to_string().contains("no labelled episodes"));

    let few = write(&f.root, "few.csv", "episode_index,success\n0,1\n1,0\n2,0\n");
    let kfold = DetectorConfig {
        validation: Validation::KFold { folds: 3 },
        ..image_config()
    };
    assert!(matches!(
        detect(&ds, &few, &kfold),
        Err(DetectorError::TooFewExamples {
            class: "successes",
            count: 1,
            needed: 2,
            ..
        })
    ));

    // The feature and setting checks, with labels that are fine.
    let all = partial_labels(&f, "all.csv", |_| true);
    let missing = DetectorConfig::new(FrameFeatures::Image("observation.images.wrist".into()));
    let e = detect(&ds, &all, &missing).unwrap_err();
    match &e {
        DetectorError::MissingFeature {
            feature, declared, ..
        } => {
            assert_eq!(feature, "observation.images.wrist");
            assert!(declared.contains("observation.image (image)"), "{declared}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.is_usage());
    // A numeric column read as an image: the reader names the feature.
    let numeric = DetectorConfig::new(FrameFeatures::Image("observation.state".into()));
    let e = detect(&ds, &all, &numeric).unwrap_err();
    assert!(matches!(e, DetectorError::Data(_)), "{e:?}");
    assert!(e.is_invalid_input());

    let bad_c = DetectorConfig {
        c: 0.0,
        ..image_config()
    };
    let e = detect(&ds, &all, &bad_c).unwrap_err();
    assert!(
        matches!(
            e,
            DetectorError::Fqe(FqeError::Setting {
                setting: Setting::C,
                ..
            })
        ) && e.is_usage()
    );
    let bad_holdout = DetectorConfig {
        validation: Validation::Holdout { fraction: 1.0 },
        ..image_config()
    };
    assert!(matches!(
        detect(&ds, &all, &bad_holdout),
        Err(DetectorError::Fqe(FqeError::Setting {
            setting: Setting::Holdout,
            ..
        }))
    ));
}

#[test]
fn warns_about_rare_classes_and_tiny_held_out_sets() {
    let f = fixture(&GoalRun {
        episodes: 40,
        ..GoalRun::default()
    });
    let ds = dataset(&f);
    // Three successes and the failures of the first 20 episodes.
    let mut seen = 0;
    let mut text = String::from("episode_index,success\n");
    for (e, ok) in f.truth.iter().enumerate().take(20) {
        if *ok {
            seen += 1;
            if seen > 3 {
                continue;
            }
        }
        let _ = writeln!(text, "{e},{}", u8::from(*ok));
    }
    let labels = write(&f.root, "rare.csv", &text);
    let d = detect(&ds, &labels, &image_config()).unwrap();
    let w = d.report.warnings.join("\n");
    assert!(w.contains("only 3 labelled successes"), "{w}");
    assert!(
        w.contains("held-out episodes: the accuracy is imprecise"),
        "{w}"
    );
}
