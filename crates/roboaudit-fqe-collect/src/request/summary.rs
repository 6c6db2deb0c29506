//! What `fqe collect` tells the user, as text (the caller prints it): the stage names of its
//! progress, the work folder's state, what a rerun resumed, and the summary of a finished run.

use std::path::Path;

use roboaudit_policy_client::summary::format_ms;

use super::CollectRun;
use crate::collect::{Stage, WorkState};
use crate::config::CollectConfig;

/// The progress label of `stage`.
#[must_use]
pub fn stage_label(stage: Stage) -> &'static str {
    match stage {
        Stage::Dataset => "recording dataset episodes",
        Stage::Writing => "writing the LeRobot dataset",
        Stage::Actions => "computing policy-actions files",
        Stage::GroundTruth => "ground-truth rollouts",
        Stage::ServedGroundTruth => "served policy rollouts",
        Stage::ServedActions => "served policy actions at dataset frames: episodes",
    }
}

/// The line saying how the work folder `work` was opened; `None` for a fresh one.
#[must_use]
pub fn work_note(state: WorkState, work: &Path) -> Option<String> {
    match state {
        WorkState::Fresh => None,
        WorkState::Resumed => Some(format!(
            "continuing the interrupted run in {} (same settings and targets)",
            work.display()
        )),
        WorkState::Replaced => Some(format!(
            "removed {}: an interrupted run cut off before it recorded its settings",
            work.display()
        )),
    }
}

/// The line saying what `run` took from an interrupted run; `None` when it redid everything.
#[must_use]
pub fn resumed_note(run: &CollectRun) -> Option<String> {
    let r = run.summary.resumed;
    let kept = |k: bool| if k { "kept" } else { "redone" };
    let dataset = if r.dataset_episodes > 0 {
        format!(
            "{} of {} episodes kept",
            r.dataset_episodes, run.summary.episodes
        )
    } else {
        kept(r.dataset).to_owned()
    };
    (r.dataset || r.dataset_episodes > 0 || r.builtin_rollouts || r.served_rollouts > 0).then(
        || {
            format!(
                "resumed from the interrupted run: dataset {dataset}, built-in rollouts {}, {} served rollouts",
                kept(r.builtin_rollouts),
                r.served_rollouts
            )
        },
    )
}

/// The summary of a finished collection `run` with settings `config` written to `out`: the
/// dataset's size and speed, the ground truth's settings, a table of each policy's suite and
/// per-task `V^π` and success rate, each served policy's query latency, and the folder
/// written; every line ends in a newline.
#[must_use]
pub fn render_summary(run: &CollectRun, config: &CollectConfig, out: &Path) -> String {
    let t = &run.summary.truth;
    let elapsed = run.elapsed_s;
    let mut s = format!(
        "dataset: {} episodes, {} frames, 4 push tasks ({}x{} images) in {:.1} s ({:.1} episodes/s incl. rollouts)\n",
        run.summary.episodes,
        t.dataset.n_dataset_frames,
        config.image_size,
        config.image_size,
        elapsed,
        run.summary.episodes as f64 / elapsed.max(1e-9)
    );
    s += &format!(
        "ground truth: {} rollouts per policy and task, gamma = {}\n",
        config.rollouts, config.gamma
    );
    s += &format!(
        "{:<14} {:>6} {:>6}  per task V^pi / SR\n",
        "policy", "V^pi", "SR"
    );
    for p in &t.policies {
        let per: Vec<String> = p
            .tasks
            .iter()
            .map(|k| format!("{:.2}/{:.2}", k.v_pi, k.success_rate))
            .collect();
        s += &format!(
            "{:<14} {:>6.3} {:>6.3}  {}\n",
            p.policy,
            p.values.suite_v_pi,
            p.values.suite_success_rate,
            per.join("  ")
        );
    }
    for p in &t.policies {
        if let Some(v) = &p.values.served {
            let l = &v.latency;
            s += &format!(
                "served policy {} at {}: rollouts {} queries (median {}, p95 {}), dataset frames {} queries (median {}, p95 {}), {} reconnections\n",
                p.policy,
                v.url,
                l.rollouts.queries,
                format_ms(l.rollouts.median_ms),
                format_ms(l.rollouts.p95_ms),
                l.actions.queries,
                format_ms(l.actions.median_ms),
                format_ms(l.actions.p95_ms),
                l.reconnections
            );
        }
    }
    s + &format!("wrote {}\n", out.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{CollectSummary, Resumed};
    use crate::ground_truth::{
        PolicyAbout, PolicyTruth, PolicyValues, TaskName, TaskSpread, TaskTruth,
    };

    fn run(resumed: Resumed) -> CollectRun {
        let truth = serde_json::json!({
            "schema": crate::collect::SCHEMA, "gamma": 0.9, "seed": 0, "dataset": "dataset",
            "image_key": "i", "state_key": "s", "action_key": "a", "success_key": "x",
            "n_dataset_episodes": 8, "n_dataset_frames": 400, "behaviour": [],
            "actions_noise_stream": 0, "policies": []
        });
        let mut truth: crate::GroundTruthFile = serde_json::from_value(truth).unwrap();
        let task = |v_pi, success_rate| TaskTruth {
            task: "push_left".into(),
            task_index: Some(0),
            name: TaskName {
                task_name: "push left".into(),
            },
            v_pi,
            success_rate,
            spread: TaskSpread {
                v_pi_se: 0.0,
                mean_steps: 10.0,
            },
            n_episodes: Some(3),
        };
        truth.policies.push(PolicyTruth {
            policy: "expert".into(),
            about: PolicyAbout {
                description: String::new(),
            },
            actions_file: Some("policies/expert.parquet".into()),
            values: PolicyValues {
                samples: 1,
                stochastic: false,
                params: None,
                served: None,
                suite_v_pi: 0.5,
                suite_success_rate: 0.75,
            },
            tasks: vec![task(0.5, 0.75), task(0.25, 1.0)],
        });
        CollectRun {
            summary: CollectSummary {
                truth,
                episodes: 8,
                resumed,
            },
            elapsed_s: 2.0,
        }
    }

    #[test]
    fn the_summary_lists_the_dataset_settings_and_each_policy() {
        let config = CollectConfig {
            image_size: 32,
            rollouts: 3,
            gamma: 0.9,
            ..CollectConfig::small()
        };
        assert_eq!(
            render_summary(&run(Resumed::default()), &config, Path::new("runs/gt")),
            "dataset: 8 episodes, 400 frames, 4 push tasks (32x32 images) in 2.0 s (4.0 episodes/s incl. rollouts)\n\
             ground truth: 3 rollouts per policy and task, gamma = 0.9\n\
             policy           V^pi     SR  per task V^pi / SR\n\
             expert          0.500  0.750  0.50/0.75  0.25/1.00\n\
             wrote runs/gt\n"
        );
    }

    #[test]
    fn only_a_resumed_run_says_what_it_kept() {
        assert_eq!(resumed_note(&run(Resumed::default())), None);
        let r = Resumed {
            dataset: true,
            builtin_rollouts: false,
            served_rollouts: 2,
            ..Resumed::default()
        };
        assert_eq!(
            resumed_note(&run(r)).unwrap(),
            "resumed from the interrupted run: dataset kept, built-in rollouts redone, 2 served rollouts"
        );
        let episodes = Resumed {
            dataset_episodes: 5,
            ..Resumed::default()
        };
        assert_eq!(
            resumed_note(&run(episodes)).unwrap(),
            "resumed from the interrupted run: dataset 5 of 8 episodes kept, built-in rollouts redone, 0 served rollouts"
        );
        assert_eq!(work_note(WorkState::Fresh, Path::new("w")), None);
    }
}
