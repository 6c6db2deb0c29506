//! The collection read back with the data crate, its determinism, and the designed quality of the
//! target policies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_data::lerobot::{LeRobotDataset, SuccessSource, read_policy_actions};
use roboaudit_fqe_collect::actions_file::dataset_stream;
use roboaudit_fqe_collect::ground_truth::{ground_truth, policy_seed};
use roboaudit_fqe_collect::scenes::push_tasks;
use roboaudit_fqe_collect::*;
use roboaudit_testbed::{Action, SceneRenderer, record_episode};

mod common;
use common::files;

#[test]
fn small_collection_reads_back_and_is_byte_deterministic() {
    let cfg = CollectConfig::small().check().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let sa = collect(&cfg, &a, &|_, _, _| {}).unwrap();
    collect(&cfg, &b, &|_, _, _| {}).unwrap();
    let (fa, fb) = (files(&a), files(&b));
    assert!(
        fa.len() >= 4 + 7 + 2,
        "{:?}",
        fa.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(fa, fb, "same seed, different bytes");

    let truth = &sa.truth;
    let on_disk: GroundTruthFile =
        serde_json::from_slice(&std::fs::read(a.join("ground_truth.json")).unwrap()).unwrap();
    assert_eq!(&on_disk, truth);
    assert_eq!(truth.schema, "roboaudit.fqe.ground_truth.v1");
    assert_eq!(truth.policies.len(), 7);

    // The dataset: episodes, tasks in push-task order, frames, terminal labels, images.
    let ds = LeRobotDataset::open(a.join("dataset")).unwrap();
    assert_eq!(ds.episodes().len(), 8);
    let tasks = push_tasks();
    assert_eq!(ds.tasks().len(), 4);
    for (k, t) in ds.tasks().iter().enumerate() {
        assert_eq!(t.task, tasks[k].instruction());
    }
    let frames = ds
        .read_frames(&[
            "observation.state",
            "observation.environment_state",
            "action",
            "next.success",
        ])
        .unwrap();
    let n_frames: usize = frames.iter().map(|e| e.len()).sum();
    assert_eq!(n_frames, truth.dataset.n_dataset_frames);
    let labels = ds
        .success_labels(&SuccessSource::Column("next.success".into()))
        .unwrap();
    let successes: usize = truth.dataset.behaviour.iter().map(|b| b.successes).sum();
    assert_eq!(labels.iter().filter(|l| l.success).count(), successes);
    for ep in &frames {
        let s = ep.column("next.success").unwrap();
        // Success ends an episode: only the last frame can carry it.
        assert!(s[..s.len() - 1].iter().all(|v| v[0] == 0.0));
        assert!(
            s.len() == 160 || s[s.len() - 1][0] == 1.0,
            "short episode without success"
        );
    }
    let img = ds.read_image(0, 0, &truth.run.image_key).unwrap();
    assert_eq!((img.width, img.height), (32, 32));

    // Policy actions: every frame, M samples, equal to the policy queried at the read-back state.
    let targets = standard_targets();
    for (p, t) in truth.policies.iter().zip(&targets) {
        let acts = read_policy_actions(a.join(p.actions_path())).unwrap();
        assert_eq!(acts.samples, p.values.samples);
        assert_eq!(acts.samples, if t.is_stochastic() { 2 } else { 1 });
        assert_eq!(acts.index, (0..n_frames as i64).collect::<Vec<_>>());
        assert_eq!(ds.check_policy_actions(&acts, "action").unwrap(), 0);
        for ep in &frames {
            let task = tasks[(ep.episode_index % 4) as usize];
            let st = ep.column("observation.state").unwrap();
            let env = ep.column("observation.environment_state").unwrap();
            for (i, &g) in ep.index.iter().enumerate() {
                let obs = Observation {
                    state: st[i].clone(),
                    env: env[i].clone(),
                };
                for s in 0..acts.samples {
                    let key = NoiseKey {
                        stream: dataset_stream(0),
                        frame: g as u64,
                        sample: s as u64,
                    };
                    let want: Vec<f32> = t
                        .act(task, &obs, policy_seed(0, &t.name), key)
                        .to_vec()
                        .into_iter()
                        .map(|x| x as f32)
                        .collect();
                    assert_eq!(
                        acts.sample(g, s).unwrap(),
                        want.as_slice(),
                        "{} frame {g}",
                        t.name
                    );
                }
            }
        }
    }
    // Stochastic samples differ; deterministic ones are the recorded behaviour's space (clipped).
    let noisy = read_policy_actions(a.join("policies/noisy_high.parquet")).unwrap();
    assert_ne!(noisy.sample(0, 0).unwrap(), noisy.sample(0, 1).unwrap());
    assert!(noisy.actions.iter().all(|v| v.abs() <= 1.0));

    // Ground truth: one row per task, dataset task indices, V ≤ SR.
    for p in &truth.policies {
        assert_eq!(p.tasks.len(), 4);
        for (k, t) in p.tasks.iter().enumerate() {
            assert_eq!(t.task_index, Some(k));
            assert_eq!(t.task, ds.tasks()[k].task);
            assert_eq!(t.n_episodes, Some(3));
            assert!(t.v_pi <= t.success_rate + 1e-12 && t.v_pi >= 0.0);
        }
    }

    // Another seed gives another dataset.
    let other = CollectConfig {
        seed: 1,
        ..CollectConfig::small()
    }
    .check()
    .unwrap();
    let c = tmp.path().join("c");
    collect(&other, &c, &|_, _, _| {}).unwrap();
    assert_ne!(
        std::fs::read(c.join("dataset/data/chunk-000/file-000.parquet")).unwrap(),
        std::fs::read(a.join("dataset/data/chunk-000/file-000.parquet")).unwrap()
    );
}

#[test]
fn target_policy_queried_at_recorded_frames_acts_as_when_driving() {
    let targets = standard_targets();
    let tasks = push_tasks();
    for name in ["noisy_high", "far_from_data", "offset"] {
        let t = targets.iter().find(|t| t.name == name).unwrap();
        let task = tasks[1];
        let init = scenes::InitialState::draw(5, 1, scenes::Stream::Dataset(3)).unwrap();
        let mut ep = init.start(task, 32).unwrap();
        let mut r = SceneRenderer::new(&ep, 32).unwrap();
        let seed = 99;
        let rec = record_episode(
            &mut ep,
            |e| {
                let key = NoiseKey {
                    stream: 7,
                    frame: e.steps() as u64,
                    sample: 0,
                };
                t.act(task, &Observation::of_episode(e), seed, key)
            },
            &mut r,
            false,
            0,
        )
        .unwrap();
        assert!(rec.frames.len() > 5);
        for (i, f) in rec.frames.iter().enumerate() {
            let key = NoiseKey {
                stream: 7,
                frame: i as u64,
                sample: 0,
            };
            let a: Action = t.act(task, &Observation::of_frame(f), seed, key);
            let a32: Vec<f32> = a.to_vec().into_iter().map(|x| x as f32).collect();
            assert_eq!(a32, f.action, "{name} frame {i}");
        }
    }
}

#[test]
fn target_policies_rank_as_designed() {
    let cfg = CollectConfig {
        rollouts: 12,
        ..CollectConfig::default()
    }
    .check()
    .unwrap();
    let truth = ground_truth(&cfg, &|_, _| {}).unwrap();
    let get = |n: &str| truth.iter().find(|p| p.policy == n).unwrap();
    let (expert, noisy_high, slow) = (get("expert"), get("noisy_high"), get("slow"));
    let (offset, far, reversed) = (get("offset"), get("far_from_data"), get("reversed"));
    assert!(
        expert.values.suite_success_rate >= 0.95,
        "{}",
        expert.values.suite_success_rate
    );
    assert!(expert.values.suite_v_pi > noisy_high.values.suite_v_pi);
    assert!(noisy_high.values.suite_v_pi > slow.values.suite_v_pi);
    // Slow succeeds about as often as the expert but late: V and SR order it differently.
    assert!(
        slow.values.suite_success_rate >= 0.9,
        "{}",
        slow.values.suite_success_rate
    );
    assert!(slow.values.suite_success_rate > noisy_high.values.suite_success_rate - 0.05);
    assert!(expert.values.suite_v_pi > slow.values.suite_v_pi + 0.15);
    assert!(offset.values.suite_success_rate < expert.values.suite_success_rate - 0.2);
    assert_eq!(reversed.values.suite_success_rate, 0.0);
    // Far from the data: the half-open gripper pushes sideways but lets a block slip through its
    // fingers when pushing forward or backward.
    for t in &far.tasks {
        if t.name.task_name.ends_with("forward") || t.name.task_name.ends_with("backward") {
            assert_eq!(t.success_rate, 0.0, "{}", t.name.task_name);
        } else {
            assert!(
                t.success_rate >= 0.5,
                "{} {}",
                t.name.task_name,
                t.success_rate
            );
        }
    }
}

/// An interrupted run's work folder is continued by the same settings, refused (and kept) by
/// others, and replaced only when it never recorded its settings.
#[test]
fn a_work_folder_of_other_settings_is_kept_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join(".fqe-collect-gt.partial");
    let small = CollectConfig::small().check().unwrap();
    let other = CollectConfig {
        seed: 5,
        ..CollectConfig::small()
    }
    .check()
    .unwrap();
    let id = RunIdentity::of(&small, &[]);
    assert_eq!(open_work(&work, &id).unwrap(), WorkState::Fresh);
    std::fs::write(work.join("kept.txt"), "rollouts").unwrap();
    assert_eq!(open_work(&work, &id).unwrap(), WorkState::Resumed);
    let e = open_work(&work, &RunIdentity::of(&other, &[])).unwrap_err();
    assert!(matches!(e, CollectError::OtherRun { .. }), "{e}");
    assert!(e.to_string().starts_with(&format!(
        "{} holds an interrupted run with other settings",
        work.display()
    )));
    assert!(work.join("kept.txt").is_file(), "refusing removes nothing");
    std::fs::remove_file(work.join(".resume/run.json")).unwrap();
    assert_eq!(open_work(&work, &id).unwrap(), WorkState::Replaced);
    assert!(!work.join("kept.txt").exists());
}
