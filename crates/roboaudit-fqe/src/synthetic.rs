//! A synthetic FQE run folder with exact ground truth, for tests, examples and benchmarks: the
//! same layout as `roboaudit fqe collect` writes (`dataset/` LeRobot v3.0, `policies/<name>.parquet`,
//! `ground_truth.json`), on a chain world whose `V^π` and SR are known by dynamic programming.
//!
//! World: positions `0..S`, action `+1` (right) or `−1` (left). Task 0 ("push right") succeeds
//! when the agent pushes right at `S−1` and fails when it pushes left at `0`; task 1 ("push left")
//! is the mirror image. The image shows the position as a lit column; `observation.state` is
//! `[s / (S−1)]`. Behaviour episodes start uniformly and push either way with probability ½.
//! Target policy `k` pushes towards its task's goal with probability `quality[k]`, represented
//! exactly by `samples` action samples per frame.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow_array::BooleanArray;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::FqeError;

/// Settings of a synthetic chain run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainRun {
    /// Positions `S` (≥ 2).
    pub positions: usize,
    /// Dataset episodes (tasks alternate).
    pub episodes: usize,
    /// Target policies' probability of pushing towards the goal, each in `[0, 1]`.
    pub quality: Vec<f64>,
    /// Action samples per frame (qualities are rounded to multiples of `1/samples`).
    pub samples: usize,
    /// Discount.
    pub gamma: f64,
    /// Seed of the behaviour episodes.
    pub seed: u64,
}

impl Default for ChainRun {
    fn default() -> Self {
        Self {
            positions: 6,
            episodes: 200,
            quality: vec![0.9, 0.7, 0.5, 0.3, 0.1],
            samples: 10,
            gamma: 0.9,
            seed: 0,
        }
    }
}

/// The task texts of the chain world.
pub const CHAIN_TASKS: [&str; 2] = ["push right", "push left"];

/// Exact `(V^π, SR)` of a policy pushing towards the goal with probability `p`, averaged over
/// uniform start positions, by value iteration to round-off.
pub fn chain_truth(positions: usize, p: f64, gamma: f64) -> (f64, f64) {
    let solve = |g: f64| {
        let mut v = vec![0.0; positions];
        for _ in 0..100_000 {
            let next: Vec<f64> = (0..positions)
                .map(|s| {
                    let toward = if s + 1 == positions {
                        1.0
                    } else {
                        g * v[s + 1]
                    };
                    let away = if s == 0 { 0.0 } else { g * v[s - 1] };
                    p * toward + (1.0 - p) * away
                })
                .collect();
            let change = next
                .iter()
                .zip(&v)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            v = next;
            if change < 1e-15 {
                break;
            }
        }
        v.iter().sum::<f64>() / positions as f64
    };
    (solve(gamma), solve(1.0))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> FqeError + '_ {
    move |e| FqeError::io("write", path, e)
}

/// The LeRobot v3.0 dataset of a synthetic run under `root` (shared with
/// `detector::synthetic`): an `observation.image` of `side` (height, width) PNG frames, the
/// `observation.state` and `action` vectors (one name per dimension), `next.success`, at 10
/// fps, episode `i` of task `episode_tasks[i]` and `lengths[i]` frames.
pub(crate) struct SyntheticDataset<'a> {
    pub(crate) robot: &'a str,
    pub(crate) side: (usize, usize),
    pub(crate) images: &'a [Vec<u8>],
    pub(crate) states: (&'a [Vec<f32>], &'a [&'a str]),
    pub(crate) actions: (&'a [Vec<f32>], &'a [&'a str]),
    pub(crate) success: Vec<bool>,
    pub(crate) episode_tasks: &'a [&'a str],
    pub(crate) lengths: &'a [usize],
}

/// Writes `d` with the workspace's LeRobot writer.
pub(crate) fn write_dataset(root: &Path, d: &SyntheticDataset<'_>) -> Result<(), FqeError> {
    use roboaudit_data::lerobot::write as w;
    let data_file = root.join("data/chunk-000/file-000.parquet");
    let vectors = |(rows, names): (&[Vec<f32>], &[&str])| -> Result<_, FqeError> {
        let width = names.len();
        let values = w::fixed_list_column(&data_file, rows.concat(), width)?;
        Ok((values, w::vector_feature(width, Some(names))))
    };
    let (states, state_feature) = vectors(d.states)?;
    let (actions, action_feature) = vectors(d.actions)?;
    let pngs: Vec<&[u8]> = d.images.iter().map(Vec::as_slice).collect();
    let (h, wd) = d.side;
    let side = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let spans: Vec<w::EpisodeSpan<'_>> = d
        .episode_tasks
        .iter()
        .zip(d.lengths)
        .map(|(task, &length)| w::EpisodeSpan { task, length })
        .collect();
    w::write_v3(
        root,
        &w::DatasetV3 {
            robot_type: d.robot,
            fps: 10,
            episodes: &spans,
            columns: vec![
                w::DataColumn::new(
                    "observation.image",
                    w::image_column(&pngs),
                    w::image_feature(side(h), side(wd)),
                ),
                w::DataColumn::new("observation.state", states, state_feature),
                w::DataColumn::new("action", actions, action_feature),
                w::DataColumn::new(
                    "next.success",
                    Arc::new(BooleanArray::from(d.success.clone())),
                    w::scalar_feature("bool"),
                ),
            ],
            episode_columns: Vec::new(),
            other_features: Vec::new(),
            video_path: None,
            stats: None,
        },
    )?;
    Ok(())
}

fn png(positions: usize, s: usize) -> Result<Vec<u8>, FqeError> {
    let (w, h) = (2 * positions, 4);
    let mut data = Vec::with_capacity(w * h * 3);
    for _ in 0..h {
        for x in 0..w {
            let lit = x / 2 == s;
            data.extend_from_slice(if lit { &[250, 240, 230] } else { &[20, 30, 40] });
        }
    }
    let mut out = Vec::new();
    let bad = |e: png::EncodingError| FqeError::InvalidInputs(format!("PNG encoding: {e}"));
    {
        let (w32, h32) = (u32::try_from(w).unwrap_or(u32::MAX), 4);
        let mut enc = png::Encoder::new(&mut out, w32, h32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(bad)?;
        writer.write_image_data(&data).map_err(bad)?;
    }
    Ok(out)
}

/// Writes the run into `dir` (created): `dataset/`, `policies/pi<k>.parquet`, `ground_truth.json`.
///
/// # Errors
/// [`FqeError::InvalidConfig`] for fewer than 2 positions, no episodes, no samples or a quality
/// outside `[0, 1]`; I/O and Parquet errors.
#[allow(clippy::too_many_lines)]
pub fn write_chain_run(dir: &Path, run: &ChainRun) -> Result<(), FqeError> {
    if run.positions < 2
        || run.episodes == 0
        || run.samples == 0
        || run.quality.iter().any(|q| !(0.0..=1.0).contains(q))
    {
        return Err(FqeError::InvalidConfig(
            "chain run needs ≥ 2 positions, episodes, samples and qualities in [0, 1]".into(),
        ));
    }
    let s_max = run.positions;
    let mut rng = ChaCha8Rng::seed_from_u64(run.seed);
    let (mut states, mut actions, mut images, mut success) = (vec![], vec![], vec![], vec![]);
    let (mut ep_tasks, mut lengths, mut frame_tasks) = (vec![], vec![], vec![]);
    let pngs: Vec<Vec<u8>> = (0..s_max)
        .map(|s| png(s_max, s))
        .collect::<Result<_, _>>()?;
    for e in 0..run.episodes {
        let task = e % 2;
        let mut s = rng.random_range(0..s_max);
        let mut length = 0;
        loop {
            let right = rng.random::<f64>() < 0.5;
            // Task 1 mirrors task 0: "toward the goal" is left.
            let toward = right == (task == 0);
            let at_goal_edge = if task == 0 { s + 1 == s_max } else { s == 0 };
            let at_fail_edge = if task == 0 { s == 0 } else { s + 1 == s_max };
            let ends_ok = toward && at_goal_edge;
            let ends_bad = !toward && at_fail_edge;
            frame_tasks.push(task);
            states.push(vec![s as f32 / (s_max - 1) as f32]);
            actions.push(vec![if right { 1.0 } else { -1.0 }]);
            images.push(pngs[s].clone());
            success.push(ends_ok);
            length += 1;
            if ends_ok || ends_bad {
                break;
            }
            if right { s += 1 } else { s -= 1 }
        }
        ep_tasks.push(CHAIN_TASKS[task]);
        lengths.push(length);
    }
    write_dataset(
        &dir.join("dataset"),
        &SyntheticDataset {
            robot: "chain",
            side: (4, 2 * s_max),
            images: &images,
            states: (&states, &["position"]),
            actions: (&actions, &["push"]),
            success,
            episode_tasks: &ep_tasks,
            lengths: &lengths,
        },
    )?;
    let mut gt_policies = Vec::new();
    for (k, q) in run.quality.iter().enumerate() {
        let name = format!("pi{k}");
        let toward_samples = (q * run.samples as f64).round() as usize;
        let p = toward_samples as f64 / run.samples as f64;
        let mut rows = Vec::new();
        for (i, task) in frame_tasks.iter().enumerate() {
            for j in 0..run.samples {
                let toward = j < toward_samples;
                let right = toward == (*task == 0);
                rows.push((i as i64, j as i64, if right { 1.0f32 } else { -1.0 }));
            }
        }
        let file = format!("policies/{name}.parquet");
        let path = dir.join(&file);
        let bytes = roboaudit_data::lerobot::policy_actions_parquet(
            &path,
            rows.iter()
                .map(|(i, j, a)| (*i, *j, std::slice::from_ref(a))),
        )?;
        roboaudit_data::atomic::write_atomic(&path, &bytes)
            .map_err(roboaudit_data::DataError::from)?;
        let (v, sr) = chain_truth(s_max, p, run.gamma);
        let tasks: Vec<serde_json::Value> = CHAIN_TASKS
            .iter()
            .enumerate()
            .map(|(l, t)| serde_json::json!({"task": t, "task_index": l, "v_pi": v, "success_rate": sr, "n_episodes": null}))
            .collect();
        gt_policies.push(serde_json::json!({"policy": name, "actions_file": file, "tasks": tasks}));
    }
    let gt = serde_json::json!({"schema": crate::ground_truth::GROUND_TRUTH_SCHEMA, "gamma": run.gamma, "policies": gt_policies});
    let gt_file = dir.join("ground_truth.json");
    fs::write(
        &gt_file,
        serde_json::to_vec_pretty(&gt).map_err(|e| FqeError::InvalidInputs(e.to_string()))?,
    )
    .map_err(io(&gt_file))?;
    Ok(())
}
