//! LeRobot end to end: a synthetic chain run (LeRobot v3.0 dataset with PNG images,
//! policy-actions files, exact ground truth) is loaded, encoded through the feature cache,
//! fitted and scored.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_data::lerobot::{LeRobotDataset, read_policy_actions};
use roboaudit_fqe::notes::{reliability_notes, truth_notes};
use roboaudit_fqe::report::SeedSpread;
use roboaudit_fqe::synthetic::{ChainRun, chain_truth, write_chain_run};
use roboaudit_fqe::{CurvePoint, NeuralFqeConfig};
use roboaudit_fqe::{
    FitConfig, FrameFeatures, LinearFqeConfig, LoadOptions, TargetPolicy, align_target_actions,
    behaviour_actions, fit_all, load_lerobot, read_ground_truth, score,
};
use serde_json::Value;

fn run() -> (tempfile::TempDir, ChainRun) {
    let dir = tempfile::tempdir().unwrap();
    let run = ChainRun {
        episodes: 120,
        ..ChainRun::default()
    };
    write_chain_run(dir.path(), &run).unwrap();
    (dir, run)
}

/// The run's target policies (from its ground truth), aligned with `loaded`.
fn chain_policies(
    dir: &std::path::Path,
    loaded: &roboaudit_fqe::LoadedDataset,
    truth: &roboaudit_fqe::GroundTruth,
) -> Vec<TargetPolicy> {
    truth
        .policies
        .iter()
        .map(|p| TargetPolicy {
            name: p.policy.clone(),
            actions: align_target_actions(
                loaded,
                &read_policy_actions(dir.join(p.actions_file.as_ref().unwrap())).unwrap(),
            )
            .unwrap(),
        })
        .collect()
}

/// Linear FQE alone (LSTD defaults) at discount `gamma`.
fn linear_only(gamma: f64) -> FitConfig {
    FitConfig {
        neural: None,
        linear: LinearFqeConfig {
            gamma,
            ..LinearFqeConfig::default()
        },
        seeds: vec![],
        bootstrap: 0,
        coverage_threshold: 1.0,
    }
}

#[test]
fn loads_frames_labels_tasks_and_reuses_the_feature_cache() {
    let (dir, _) = run();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    let cache = dir.path().join("cache");
    let opts = LoadOptions {
        cache_dir: Some(cache.clone()),
        ..LoadOptions::push_defaults()
    };
    let first = load_lerobot(&ds, &opts).unwrap();
    let inputs = &first.inputs;
    assert_eq!(inputs.episodes.len(), 120);
    assert_eq!(inputs.tasks, vec!["push right", "push left"]);
    assert_eq!(inputs.episodes[1].task, 1);
    // Six distinct images: the components keep at most 5 directions (rank after centering).
    assert!(
        inputs.parts[0].width <= 5 && inputs.parts[0].width >= 1,
        "{}",
        inputs.parts[0].width
    );
    assert_eq!(inputs.parts[1].name, "observation.state");
    // The time input: each frame's position in its episode, the last part.
    assert_eq!((inputs.parts.len(), inputs.parts[2].width), (3, 1));
    assert_eq!(inputs.parts[2].name, roboaudit_fqe::load::TIME_PART);
    for e in [&inputs.episodes[0], &inputs.episodes[119]] {
        let t = &inputs.parts[2].values[e.start..e.start + e.len];
        assert!(t.iter().enumerate().all(|(k, v)| *v == k as f32), "{t:?}");
    }
    let untimed = load_lerobot(
        &ds,
        &LoadOptions {
            time_input: false,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_eq!(untimed.inputs.parts[..], inputs.parts[..2]);
    // Labels: an episode succeeds iff its last action pushes off the goal edge.
    let e = &inputs.episodes[0];
    let last = e.start + e.len - 1;
    let pos = inputs.parts[1].values[last];
    assert_eq!(e.success, pos == 1.0 && inputs.actions[last] == 1.0);
    assert_eq!(
        first.summary.encoded + first.summary.cache_hits,
        inputs.n_frames()
    );
    // Only six distinct PNGs: every other frame is a cache hit, even on the first pass.
    assert_eq!(first.summary.encoded, 6);
    let second = load_lerobot(&ds, &opts).unwrap();
    assert_eq!(second.summary.encoded, 0);
    assert_eq!(second.inputs, first.inputs);
    assert!(
        std::fs::read_dir(&cache)
            .unwrap()
            .any(|f| { f.unwrap().file_name().to_string_lossy() == "raw32-none.fqecache" })
    );
}

#[test]
fn linear_fqe_ranks_the_chain_policies_and_beats_the_naive_average() {
    let (dir, run) = run();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    let loaded = load_lerobot(&ds, &LoadOptions::push_defaults()).unwrap();
    let truth = read_ground_truth(&dir.path().join("ground_truth.json")).unwrap();
    let policies: Vec<TargetPolicy> = truth
        .policies
        .iter()
        .map(|p| {
            let file = dir.path().join(p.actions_file.as_ref().unwrap());
            let actions = read_policy_actions(&file).unwrap();
            TargetPolicy {
                name: p.policy.clone(),
                actions: align_target_actions(&loaded, &actions).unwrap(),
            }
        })
        .collect();
    let config = FitConfig {
        neural: None,
        linear: LinearFqeConfig {
            gamma: run.gamma,
            ridge: 1e-6,
            ..LinearFqeConfig::default()
        },
        seeds: vec![],
        bootstrap: 0,
        coverage_threshold: 1.0,
    };
    let mut report = fit_all(
        &loaded.inputs,
        &policies,
        &config,
        serde_json::Value::Null,
        &mut |_, _| {},
    )
    .unwrap();
    score(&mut report, &truth).unwrap();
    let linear = report
        .metrics
        .iter()
        .find(|m| m.estimator == "linear")
        .unwrap();
    let naive = report
        .metrics
        .iter()
        .find(|m| m.estimator == "naive")
        .unwrap();
    assert!((linear.suite.spearman_v.unwrap() - 1.0).abs() < 1e-12);
    assert_eq!(linear.suite.regret_at_1_v, Some(0.0));
    // The start positions of 60 episodes per task are a sample of the uniform start the truth
    // averages over, so the estimate carries that sampling error, not more.
    assert!(
        linear.suite.median_are.unwrap() < 0.15,
        "{:?}",
        linear.suite
    );
    assert!(
        naive.suite.spearman_v.is_none(),
        "the naive estimate is the same for every policy"
    );
    assert!(naive.suite.median_are.unwrap() > linear.suite.median_are.unwrap());
    // The worst policy pushes away from the goal: its actions are far from a random behaviour's
    // only half of the time, the mirror of the best one; neither is flagged at threshold 1.
    let (v_best, _) = chain_truth(6, 0.9, run.gamma);
    let best = &report.policies[0].tasks[0];
    assert!((best.truth.as_ref().unwrap().v_pi - v_best).abs() < 1e-12);
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.contains("\"schema\":\"roboaudit.fqe.v1\""));

    // No policy flagged: no in-support row. Flag one task of the best policy: the in-support
    // metrics are the suite metrics of the other policies alone (no cell of the flagged policy
    // in the ARE either).
    assert!(linear.suite_in_support.is_none());
    let mut flagged = report.clone();
    flagged.policies[0].tasks[1].coverage.out_of_support = true;
    score(&mut flagged, &truth).unwrap();
    let lin = flagged
        .metrics
        .iter()
        .find(|m| m.estimator == "linear")
        .unwrap();
    assert_eq!(lin.suite, linear.suite);
    let ins = lin.suite_in_support.as_ref().unwrap();
    assert_eq!(ins.excluded, vec![report.policies[0].policy.clone()]);
    let rest: Vec<roboaudit_fqe::metrics::Scored> = report.policies[1..]
        .iter()
        .map(|p| {
            let n = p.tasks.len() as f64;
            let mean = |f: &dyn Fn(&roboaudit_fqe::report::Cell) -> f64| {
                p.tasks.iter().map(f).sum::<f64>() / n
            };
            roboaudit_fqe::metrics::Scored {
                estimate: mean(&|c| c.linear.unwrap()),
                v_pi: mean(&|c| c.truth.as_ref().unwrap().v_pi),
                success_rate: mean(&|c| c.truth.as_ref().unwrap().success_rate),
            }
        })
        .collect();
    let cells: Vec<roboaudit_fqe::metrics::Scored> = report.policies[1..]
        .iter()
        .flat_map(|p| &p.tasks)
        .map(|c| roboaudit_fqe::metrics::Scored {
            estimate: c.linear.unwrap(),
            v_pi: c.truth.as_ref().unwrap().v_pi,
            success_rate: c.truth.as_ref().unwrap().success_rate,
        })
        .collect();
    assert_eq!(
        ins.metrics,
        roboaudit_fqe::metrics::metrics(&rest, &cells).unwrap()
    );
    assert_eq!(ins.metrics.policies, report.policies.len() - 1);

    // Rescored against ground truth of other policies (`fqe evaluate` with another file), no
    // cell keeps the truth or ARE of the first scoring, and no metrics are left.
    let mut renamed = truth.clone();
    for p in &mut renamed.policies {
        p.policy = format!("other_{}", p.policy);
    }
    let mut rescored = report.clone();
    score(&mut rescored, &renamed).unwrap();
    let cells = rescored.policies.iter().flat_map(|p| &p.tasks);
    assert!(cells.clone().all(|c| c.truth.is_none() && c.are.is_none()));
    assert!(rescored.metrics.is_empty(), "{:?}", rescored.metrics);
    // The notes of a scored report say that nothing matched.
    assert!(truth_notes(&rescored).is_empty(), "not scored: no note");
    rescored.ground_truth = Some("0123456789abcdef".into());
    let cells = rescored
        .policies
        .iter()
        .map(|p| p.tasks.len())
        .sum::<usize>();
    assert_eq!(
        truth_notes(&rescored),
        vec![format!(
            "ground truth: it matched none of the {cells} policy × task cells (policies by name, \
             tasks by text or task_index): nothing is scored"
        )]
    );
    // A row of the first task's text carrying the second task's index (whose own row is gone)
    // scores only its own task's cells: no row scores two cells.
    let mut moved = truth.clone();
    let (first, second) = (report.tasks[0].clone(), report.tasks[1].clone());
    for p in &mut moved.policies {
        p.tasks.retain(|t| t.task != second);
        for t in p.tasks.iter_mut().filter(|t| t.task == first) {
            t.task_index = Some(1);
        }
    }
    let mut rescored = report.clone();
    score(&mut rescored, &moved).unwrap();
    for p in &rescored.policies {
        for c in &p.tasks {
            assert_eq!(
                c.truth.is_some(),
                c.task != second,
                "{} / {}",
                p.policy,
                c.task
            );
        }
    }
    // One policy without truth on its first task, one without any: both named.
    let mut partial = truth.clone();
    let first = report.policies[0].tasks[0].task.clone();
    partial.policies[0].tasks.retain(|t| t.task != first);
    partial.policies[0]
        .tasks
        .iter_mut()
        .for_each(|t| t.task_index = None);
    partial.policies.remove(1);
    let mut rescored = report.clone();
    score(&mut rescored, &partial).unwrap();
    rescored.ground_truth = Some("0123456789abcdef".into());
    let notes = truth_notes(&rescored);
    let n = report.policies.len();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(
        notes[0],
        format!(
            "ground truth: none for 1 of {n} policies ({}): left out of the metrics",
            report.policies[1].policy
        )
    );
    assert!(
        notes[1].starts_with(&format!(
            "ground truth: 1 of {n} policies have it for only some tasks: {} (none for \"{first}\");",
            report.policies[0].policy
        )),
        "{}",
        notes[1]
    );

    // A converged linear fit inside [0, 1] carries no warning; values outside it do.
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    report.policies[1].tasks[0].linear = Some(-15.2);
    let notes = reliability_notes(&report);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("linear FQE: 1 estimates outside [0, 1]"));
    assert!(notes[0].contains("-15.200"), "{}", notes[0]);
    // A neural fit whose value still climbs over the last quarter of its curve, and an
    // estimate of 420: two neural warnings, before the linear one.
    report.neural_config = Some(NeuralFqeConfig::default());
    report.seeds = vec![0];
    let climbing: Vec<CurvePoint> = (0u32..=6)
        .map(|k| CurvePoint {
            step: 100 * usize::try_from(k).unwrap(),
            loss: 0.01,
            mean_value: 0.1 * f64::from(k),
        })
        .collect();
    report.policies[0].curves = vec![climbing];
    report.policies[0].tasks[0].neural = SeedSpread::of(&[420.0]);
    let notes = reliability_notes(&report);
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].contains("1 seed: the learning curve has not flattened for 1 of"));
    assert!(notes[1].starts_with("neural FQE: 1 estimates outside [0, 1]"));
    assert!(notes[1].contains("420.000"), "{}", notes[1]);
    // 600 steps with a copy every 100 are 6 backups: too few for 40-frame episodes (the
    // default 20,000 steps above, 200 backups, were enough), and 39 backups are still one short.
    report.median_episode_frames = Some(40);
    assert_eq!(reliability_notes(&report).len(), 3);
    for (steps, warned) in [(600, true), (3900, true), (4000, false)] {
        report.neural_config = Some(NeuralFqeConfig {
            steps,
            ..NeuralFqeConfig::default()
        });
        let notes = reliability_notes(&report);
        let hit = notes.iter().find(|n| n.contains("Bellman backups"));
        assert_eq!(hit.is_some(), warned, "{steps}: {notes:?}");
        if steps == 600 {
            assert!(
                hit.unwrap()
                    .contains("about 6 Bellman backups, fewer than the 40 frames")
            );
        }
    }
}

#[test]
fn streamed_images_decode_to_the_pixels_written_and_agree_with_read_image() {
    let (dir, run) = run();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    // The chain image lights pixel columns 2s and 2s+1 at position s = state · (S − 1).
    let mut position = std::collections::HashMap::new();
    for ep in ds.read_frames(&["observation.state"]).unwrap() {
        for (idx, v) in ep.index.iter().zip(ep.column("observation.state").unwrap()) {
            let s = (v[0] * (run.positions - 1) as f32).round() as u32;
            position.insert(*idx, (ep.episode_index, s));
        }
    }
    let mut seen = 0;
    ds.for_each_image::<roboaudit_data::DataError>("observation.image", &mut |f| {
        let img = f.decode()?;
        let (episode, s) = position[&f.index];
        assert_eq!(f.episode_index, episode);
        assert_eq!((img.width, img.height), (2 * run.positions as u32, 4));
        for x in 0..img.width {
            let lit = x / 2 == s;
            let want = if lit { [250, 240, 230] } else { [20, 30, 40] };
            assert_eq!(img.pixel(x, 3), Some(want), "frame {} x {x}", f.index);
        }
        if f.index % 97 == 0 {
            assert_eq!(
                ds.read_image(f.episode_index, f.frame_index, f.feature)?,
                img
            );
        }
        seen += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, position.len());
}

#[test]
fn a_state_vector_can_be_the_frame_features() {
    let (dir, run) = run();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    let opts = LoadOptions {
        features: FrameFeatures::Vector("observation.state".into()),
        time_input: false,
        ..LoadOptions::push_defaults()
    };
    let loaded = load_lerobot(&ds, &opts).unwrap();
    // The state is the frame feature (standardized, one component) and is not added twice.
    let parts = &loaded.inputs.parts;
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].name, "observation.state:std-pca1");
    assert_eq!(loaded.summary.features, "state:observation.state");
    assert_eq!(loaded.summary.encoder, None);
    // Standardized: mean 0, population variance 1 (the sign of the component is arbitrary).
    let v = &parts[0].values;
    let n = v.len() as f64;
    let mean = v.iter().map(|x| f64::from(*x)).sum::<f64>() / n;
    let var = v
        .iter()
        .map(|x| (f64::from(*x) - mean).powi(2))
        .sum::<f64>()
        / n;
    assert!(
        mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-4,
        "{mean} {var}"
    );
    // The position alone is the chain's state: linear FQE still ranks the policies exactly.
    let truth = read_ground_truth(&dir.path().join("ground_truth.json")).unwrap();
    let policies = chain_policies(dir.path(), &loaded, &truth);
    let config = linear_only(run.gamma);
    let mut report = fit_all(
        &loaded.inputs,
        &policies,
        &config,
        Value::Null,
        &mut |_, _| {},
    )
    .unwrap();
    score(&mut report, &truth).unwrap();
    let linear = report
        .metrics
        .iter()
        .find(|m| m.estimator == "linear")
        .unwrap();
    assert!((linear.suite.spearman_v.unwrap() - 1.0).abs() < 1e-12);
    // The behaviour policy (the dataset's own actions) is accepted as a target.
    let behaviour = behaviour_actions(&loaded.inputs);
    assert_eq!(behaviour.samples, 1);
    assert_eq!(behaviour.values, loaded.inputs.actions);
}

#[test]
fn unknown_or_video_feature_columns_are_named_with_the_declared_ones() {
    let (dir, _) = run();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    let opts = LoadOptions {
        features: FrameFeatures::Vector("observation.velocity".into()),
        ..LoadOptions::push_defaults()
    };
    let msg = load_lerobot(&ds, &opts).unwrap_err().to_string();
    assert!(
        msg.contains("\"observation.velocity\" is not declared")
            && msg.contains("observation.state (float32[1])")
            && msg.contains("observation.image (image)"),
        "{msg}"
    );
    let opts = LoadOptions {
        features: FrameFeatures::Image("observation.state".into()),
        ..LoadOptions::push_defaults()
    };
    let msg = load_lerobot(&ds, &opts).unwrap_err().to_string();
    assert!(msg.contains("cannot be read as an image"), "{msg}");
}

/// A policy-actions file written for a larger recording covers every frame of a smaller one
/// (the indices start at 0 in both) but also frames it lacks: refused, naming how many, rather
/// than used for the frames whose indices happen to match.
#[test]
fn actions_written_for_another_dataset_are_refused() {
    let (big, _) = run();
    let small = tempfile::tempdir().unwrap();
    let run = ChainRun {
        episodes: 10,
        ..ChainRun::default()
    };
    write_chain_run(small.path(), &run).unwrap();
    let ds = LeRobotDataset::open(small.path().join("dataset")).unwrap();
    let loaded = load_lerobot(&ds, &LoadOptions::push_defaults()).unwrap();
    let truth = read_ground_truth(&big.path().join("ground_truth.json")).unwrap();
    let file = big
        .path()
        .join(truth.policies[0].actions_file.as_ref().unwrap());
    let actions = read_policy_actions(&file).unwrap();
    let frames = loaded.inputs.n_frames();
    assert!(actions.index.len() > frames);
    let err = align_target_actions(&loaded, &actions)
        .unwrap_err()
        .to_string();
    let want = format!(
        "{} of its {} frames are not in the dataset of {frames} frames",
        actions.index.len() - frames,
        actions.index.len()
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("written for another dataset"), "{err}");
    // Its own dataset's file still aligns.
    let own = read_ground_truth(&small.path().join("ground_truth.json")).unwrap();
    let own_file = small
        .path()
        .join(own.policies[0].actions_file.as_ref().unwrap());
    align_target_actions(&loaded, &read_policy_actions(&own_file).unwrap()).unwrap();
}

/// A policy whose linear solve diverged on one task is left out of the suite metrics (its other
/// tasks would compare it over another set of tasks than the rest) and named in a note; its
/// estimated cells still count per task.
#[test]
fn a_policy_missing_a_task_estimate_leaves_the_suite_metrics_and_is_noted() {
    let (dir, run) = run();
    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    let loaded = load_lerobot(&ds, &LoadOptions::push_defaults()).unwrap();
    let truth = read_ground_truth(&dir.path().join("ground_truth.json")).unwrap();
    let policies = chain_policies(dir.path(), &loaded, &truth);
    let config = linear_only(run.gamma);
    let mut report = fit_all(
        &loaded.inputs,
        &policies,
        &config,
        Value::Null,
        &mut |_, _| {},
    )
    .unwrap();
    assert!(
        !reliability_notes(&report)
            .iter()
            .any(|n| n.contains("did not converge"))
    );
    let n = report.policies.len();
    // As a diverged solve leaves it: no estimate on the second task.
    report.policies[0].tasks[1].linear = None;
    report.policies[0].linear_converged = false;
    score(&mut report, &truth).unwrap();
    let linear = report
        .metrics
        .iter()
        .find(|m| m.estimator == "linear")
        .unwrap();
    assert_eq!(linear.suite.policies, n - 1);
    assert_eq!(linear.tasks[0].policies, n);
    assert_eq!(linear.tasks[1].policies, n - 1);
    let notes = reliability_notes(&report);
    let note = notes
        .iter()
        .find(|n| n.contains("did not converge"))
        .unwrap();
    let name = &report.policies[0].policy;
    assert!(
        note.contains(&format!(
            "the lstd solve did not converge for 1 of {n} policies ({name})"
        )),
        "{note}"
    );
}

/// Frames, the feature cache and policy-actions files are matched by the global `index`: a
/// repeated one is refused, naming both frames and the file, before anything is encoded.
#[test]
fn a_repeated_global_index_is_refused_naming_both_frames() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let dir = tempfile::tempdir().unwrap();
    let run = ChainRun {
        episodes: 4,
        ..ChainRun::default()
    };
    write_chain_run(dir.path(), &run).unwrap();
    let file = dir.path().join("dataset/data/chunk-000/file-000.parquet");
    let batches: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap())
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    assert_eq!(batches.len(), 1, "a small file is one batch");
    let batch = &batches[0];
    let schema = batch.schema();
    let column = schema.index_of("index").unwrap();
    let mut index: Vec<i64> = batch
        .column(column)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .values()
        .to_vec();
    index[3] = index[2];
    let mut columns = batch.columns().to_vec();
    columns[column] = Arc::new(Int64Array::from(index.clone())) as ArrayRef;
    let edited = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(&file).unwrap(), schema, None).unwrap();
    writer.write(&edited).unwrap();
    writer.close().unwrap();

    let ds = LeRobotDataset::open(dir.path().join("dataset")).unwrap();
    let err = load_lerobot(&ds, &LoadOptions::push_defaults())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "the global index {} repeats: episode 0 frame_index 2 and episode 0 frame_index 3 (in {})",
            index[2],
            file.display()
        )),
        "{err}"
    );
}
