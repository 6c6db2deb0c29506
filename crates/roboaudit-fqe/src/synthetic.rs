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

use arrow_array::builder::{
    BinaryBuilder, FixedSizeListBuilder, Float32Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
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

/// One Parquet file of `columns` (shared with `detector::synthetic`).
pub(crate) fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>) -> Result<(), FqeError> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let pq = |e: parquet::errors::ParquetError| FqeError::bad_file(path, format!("Parquet: {e}"));
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .map_err(|e| FqeError::bad_file(path, format!("Arrow: {e}")))?;
    let file = fs::File::create(path).map_err(io(path))?;
    let mut writer = ArrowWriter::try_new(file, schema, None).map_err(pq)?;
    writer.write(&batch).map_err(pq)?;
    writer.close().map_err(pq)?;
    Ok(())
}

/// A list column of `rows` (fixed-size when `fixed` gives the width).
pub(crate) fn vectors(rows: &[Vec<f32>], fixed: Option<i32>) -> ArrayRef {
    if let Some(n) = fixed {
        let mut b = FixedSizeListBuilder::new(Float32Builder::new(), n);
        for r in rows {
            b.values().append_slice(r);
            b.append(true);
        }
        Arc::new(b.finish())
    } else {
        let mut b = ListBuilder::new(Float32Builder::new());
        for r in rows {
            b.values().append_slice(r);
            b.append(true);
        }
        Arc::new(b.finish())
    }
}

/// `root/meta/info.json` of a LeRobot v3.0 dataset at 10 fps in one data file: `counts` are
/// (episodes, frames, tasks); `features` (a JSON object) are the dataset's own features, followed
/// by `next.success` and the bookkeeping columns every such dataset carries.
pub(crate) fn write_v3_info(
    root: &Path,
    robot: &str,
    (episodes, frames, tasks): (usize, i64, usize),
    mut features: serde_json::Value,
) -> Result<(), FqeError> {
    let scalar = |dtype: &str| serde_json::json!({"dtype": dtype, "shape": [1], "names": null});
    if let Some(map) = features.as_object_mut() {
        map.insert("next.success".into(), scalar("bool"));
        map.insert("timestamp".into(), scalar("float32"));
        for column in ["frame_index", "episode_index", "index", "task_index"] {
            map.insert(column.into(), scalar("int64"));
        }
    }
    let info = serde_json::json!({
        "codebase_version": "v3.0", "robot_type": robot, "total_episodes": episodes,
        "total_frames": frames, "total_tasks": tasks, "chunks_size": 1000, "fps": 10,
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "features": features,
    });
    let info_file = root.join("meta/info.json");
    fs::create_dir_all(root.join("meta")).map_err(io(root))?;
    fs::write(
        &info_file,
        serde_json::to_vec_pretty(&info).map_err(|e| FqeError::InvalidInputs(e.to_string()))?,
    )
    .map_err(io(&info_file))
}

/// An `int64` column.
pub(crate) fn ints(v: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

/// A LeRobot `image` column: one `{bytes, path}` struct per frame, the PNG bytes inline.
pub(crate) fn image_column(images: &[Vec<u8>]) -> ArrayRef {
    let mut bytes = BinaryBuilder::new();
    for i in images {
        bytes.append_value(i);
    }
    let bytes: ArrayRef = Arc::new(bytes.finish());
    let paths: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>; images.len()]));
    let fields = Fields::from(vec![
        Field::new("bytes", DataType::Binary, true),
        Field::new("path", DataType::Utf8, true),
    ]);
    Arc::new(StructArray::new(fields, vec![bytes, paths], None))
}

/// LeRobot v3.0 episode and task metadata under `root/meta`: episode `i` has task
/// `episode_tasks[i]`, `lengths[i]` frames and global rows `from[i]..to[i]` of the one data
/// file; `tasks` lists the task strings by `task_index`.
pub(crate) fn write_v3_meta(
    root: &Path,
    episode_tasks: &[&str],
    lengths: &[i64],
    from: &[i64],
    to: &[i64],
    tasks: &[&str],
) -> Result<(), FqeError> {
    let episodes = episode_tasks.len();
    let mut task_lists = ListBuilder::new(StringBuilder::new());
    for t in episode_tasks {
        task_lists.values().append_value(t);
        task_lists.append(true);
    }
    let n_ep: Vec<i64> = (0..episodes as i64).collect();
    write_parquet(
        &root.join("meta/episodes/chunk-000/file-000.parquet"),
        vec![
            ("episode_index", ints(&n_ep)),
            ("tasks", Arc::new(task_lists.finish())),
            ("length", ints(lengths)),
            ("data/chunk_index", ints(&vec![0; episodes])),
            ("data/file_index", ints(&vec![0; episodes])),
            ("dataset_from_index", ints(from)),
            ("dataset_to_index", ints(to)),
        ],
    )?;
    let task_index: Vec<i64> = (0..tasks.len() as i64).collect();
    write_parquet(
        &root.join("meta/tasks.parquet"),
        vec![
            ("task_index", ints(&task_index)),
            (
                "__index_level_0__",
                Arc::new(StringArray::from(tasks.to_vec())),
            ),
        ],
    )
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
    let (mut ep_col, mut frame_col, mut index_col, mut task_col) = (vec![], vec![], vec![], vec![]);
    let (mut ts, mut states, mut actions, mut images, mut success) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut ep_tasks, mut lengths, mut from, mut to) = (vec![], vec![], vec![], vec![]);
    let pngs: Vec<Vec<u8>> = (0..s_max)
        .map(|s| png(s_max, s))
        .collect::<Result<_, _>>()?;
    let mut index = 0i64;
    for e in 0..run.episodes {
        let task = e % 2;
        let mut s = rng.random_range(0..s_max);
        let start = index;
        let mut t = 0i64;
        loop {
            let right = rng.random::<f64>() < 0.5;
            // Task 1 mirrors task 0: "toward the goal" is left.
            let toward = right == (task == 0);
            let at_goal_edge = if task == 0 { s + 1 == s_max } else { s == 0 };
            let at_fail_edge = if task == 0 { s == 0 } else { s + 1 == s_max };
            let ends_ok = toward && at_goal_edge;
            let ends_bad = !toward && at_fail_edge;
            ep_col.push(e as i64);
            frame_col.push(t);
            index_col.push(index);
            task_col.push(task as i64);
            ts.push(t as f32 / 10.0);
            states.push(vec![s as f32 / (s_max - 1) as f32]);
            actions.push(vec![if right { 1.0 } else { -1.0 }]);
            images.push(pngs[s].clone());
            success.push(ends_ok);
            index += 1;
            t += 1;
            if ends_ok || ends_bad {
                break;
            }
            if right { s += 1 } else { s -= 1 }
        }
        ep_tasks.push(CHAIN_TASKS[task]);
        lengths.push(index - start);
        from.push(start);
        to.push(index);
    }
    let root = dir.join("dataset");
    write_v3_info(
        &root,
        "chain",
        (run.episodes, index, 2),
        serde_json::json!({
            "observation.image": {"dtype": "image", "shape": [4, 2 * s_max, 3], "names": ["height", "width", "channels"]},
            "observation.state": {"dtype": "float32", "shape": [1], "names": ["position"]},
            "action": {"dtype": "float32", "shape": [1], "names": ["push"]},
        }),
    )?;
    let image_col = image_column(&images);
    write_parquet(
        &root.join("data/chunk-000/file-000.parquet"),
        vec![
            ("observation.image", image_col),
            ("observation.state", vectors(&states, Some(1))),
            ("action", vectors(&actions, Some(1))),
            (
                "next.success",
                Arc::new(BooleanArray::from(success.clone())),
            ),
            ("timestamp", Arc::new(arrow_array::Float32Array::from(ts))),
            ("frame_index", ints(&frame_col)),
            ("episode_index", ints(&ep_col)),
            ("index", ints(&index_col)),
            ("task_index", ints(&task_col)),
        ],
    )?;
    write_v3_meta(&root, &ep_tasks, &lengths, &from, &to, &CHAIN_TASKS)?;
    let mut gt_policies = Vec::new();
    for (k, q) in run.quality.iter().enumerate() {
        let name = format!("pi{k}");
        let toward_samples = (q * run.samples as f64).round() as usize;
        let p = toward_samples as f64 / run.samples as f64;
        let (mut idx, mut smp, mut act) = (vec![], vec![], vec![]);
        for (i, task) in index_col.iter().zip(&task_col) {
            for j in 0..run.samples {
                let toward = j < toward_samples;
                let right = toward == (*task == 0);
                idx.push(*i);
                smp.push(j as i64);
                act.push(vec![if right { 1.0f32 } else { -1.0 }]);
            }
        }
        let file = format!("policies/{name}.parquet");
        write_parquet(
            &dir.join(&file),
            vec![
                ("index", ints(&idx)),
                ("sample", ints(&smp)),
                ("action", vectors(&act, None)),
            ],
        )?;
        let (v, sr) = chain_truth(s_max, p, run.gamma);
        let tasks: Vec<serde_json::Value> = CHAIN_TASKS
            .iter()
            .enumerate()
            .map(|(l, t)| serde_json::json!({"task": t, "task_index": l, "v_pi": v, "success_rate": sr, "n_episodes": null}))
            .collect();
        gt_policies.push(serde_json::json!({"policy": name, "actions_file": file, "tasks": tasks}));
    }
    let gt = serde_json::json!({"schema": crate::evaluate::GROUND_TRUTH_SCHEMA, "gamma": run.gamma, "policies": gt_policies});
    let gt_file = dir.join("ground_truth.json");
    fs::write(
        &gt_file,
        serde_json::to_vec_pretty(&gt).map_err(|e| FqeError::InvalidInputs(e.to_string()))?,
    )
    .map_err(io(&gt_file))?;
    Ok(())
}
