//! The one LeRobot v3.0 writer of the workspace: a dataset in one data file and one episodes
//! file (`chunk-000/file-000`), as LeRobot v3.0 lays it out —
//! `data/chunk-000/file-000.parquet`, `meta/episodes/chunk-000/file-000.parquet`,
//! `meta/tasks.parquet` (the task string as pandas' index, the way LeRobot looks tasks up),
//! `meta/info.json` and, when given, `meta/stats.json`. The testbed's recordings and the FQE
//! crate's synthetic datasets both go through [`write_v3`]; the reader in this module's parent
//! reads what it writes. Cameras stored as MP4 are written by their producer (the testbed
//! encodes them) and declared here through their `info.json` feature, `video_path` and
//! per-episode columns.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use serde_json::{Value, json};

use crate::DataError;

/// The columns every LeRobot v3.0 data file ends with, derived by [`write_v3`] from the
/// episodes: `timestamp` (s), `frame_index`, `episode_index`, `index`, `task_index`.
pub const BOOKKEEPING_COLUMNS: [&str; 5] = [
    "timestamp",
    "frame_index",
    "episode_index",
    "index",
    "task_index",
];

/// One episode of a dataset being written: its task (the instruction string) and its number of
/// frames (≥ 1). Episodes are stored in the order given, their frames back to back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeSpan<'a> {
    /// The task instruction; tasks are indexed in order of first appearance.
    pub task: &'a str,
    /// Frames of the episode.
    pub length: usize,
}

/// One of the dataset's own data columns: one value per frame, all episodes back to back, and
/// its `info.json` feature entry (`dtype`, `shape`, `names`, …).
#[derive(Debug, Clone)]
pub struct DataColumn {
    /// Column name, e.g. `observation.state`.
    pub name: String,
    /// One row per frame.
    pub values: ArrayRef,
    /// The feature's `info.json` entry.
    pub feature: Value,
}

impl DataColumn {
    /// A column with its feature entry.
    pub fn new(name: &str, values: ArrayRef, feature: Value) -> Self {
        Self {
            name: name.to_owned(),
            values,
            feature,
        }
    }
}

/// Everything [`write_v3`] writes, but the bookkeeping it derives.
#[derive(Debug, Clone)]
pub struct DatasetV3<'a> {
    /// `robot_type` in `info.json`.
    pub robot_type: &'a str,
    /// Frames per second (≥ 1): `timestamp` = `frame_index / fps`.
    pub fps: u32,
    /// The episodes, in order.
    pub episodes: &'a [EpisodeSpan<'a>],
    /// The dataset's own data columns, in order; the bookkeeping columns follow them.
    pub columns: Vec<DataColumn>,
    /// Extra per-episode columns of the episodes file (one row per episode), after LeRobot's
    /// own (e.g. `success`, or `videos/<key>/from_timestamp` for MP4 cameras).
    pub episode_columns: Vec<(String, ArrayRef)>,
    /// `info.json` entries of features stored outside the data file (MP4 cameras, `dtype:
    /// video`), by key.
    pub other_features: Vec<(String, Value)>,
    /// `video_path` template when cameras are MP4 files, else `null`.
    pub video_path: Option<&'a str>,
    /// `meta/stats.json` (per feature: `mean`, `std`, `min`, `max`, `count`; see
    /// [`vector_stats`]), or none.
    pub stats: Option<Value>,
}

/// Counts of what [`write_v3`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenDataset {
    /// Episodes.
    pub episodes: usize,
    /// Frames (rows of the data file).
    pub frames: usize,
    /// Distinct tasks.
    pub tasks: usize,
}

/// Writes `dataset` under `root` as LeRobot v3.0 (folders created, existing files replaced).
/// All files are encoded first and then staged and renamed together
/// ([`crate::atomic::write_all_atomic`]), so a failure leaves none of them half-written.
///
/// # Errors
/// [`DataError::Invalid`] naming the data or episodes file when there are no episodes, an
/// episode has no frames, `fps` is 0, a column's row count is not the number of frames (or of
/// episodes), or a column takes a bookkeeping name; [`DataError::Parquet`] when encoding fails;
/// [`DataError::Write`] when a file cannot be written.
pub fn write_v3(root: &Path, dataset: &DatasetV3<'_>) -> Result<WrittenDataset, DataError> {
    let data_file = root.join("data/chunk-000/file-000.parquet");
    let episodes_file = root.join("meta/episodes/chunk-000/file-000.parquet");
    let episodes = dataset.episodes;
    let bad = |file: &Path, column: Option<&str>, message: String| {
        DataError::invalid(file, None, column, message)
    };
    if episodes.is_empty() || dataset.fps == 0 {
        return Err(bad(&data_file, None, "no episodes, or fps 0".into()));
    }
    if let Some(e) = episodes.iter().position(|e| e.length == 0) {
        return Err(bad(&data_file, None, format!("episode {e} has no frames")));
    }
    let frames: usize = episodes.iter().map(|e| e.length).sum();
    for c in &dataset.columns {
        if BOOKKEEPING_COLUMNS.contains(&c.name.as_str()) {
            return Err(bad(
                &data_file,
                Some(&c.name),
                "a bookkeeping column is derived from the episodes, not given".into(),
            ));
        }
        if c.values.len() != frames {
            let message = format!("{} rows for {frames} frames", c.values.len());
            return Err(bad(&data_file, Some(&c.name), message));
        }
    }
    for (name, values) in &dataset.episode_columns {
        if values.len() != episodes.len() {
            let message = format!("{} rows for {} episodes", values.len(), episodes.len());
            return Err(bad(&episodes_file, Some(name), message));
        }
    }

    let mut tasks: Vec<&str> = Vec::new();
    let mut task_of: HashMap<&str, i64> = HashMap::new();
    for e in episodes {
        task_of.entry(e.task).or_insert_with(|| {
            tasks.push(e.task);
            tasks.len() as i64 - 1
        });
    }
    let data = data_bytes(&data_file, dataset, &task_of, frames)?;
    let tasks_file = root.join("meta/tasks.parquet");
    let tasks_bytes = tasks_bytes(&tasks_file, &tasks)?;
    let episodes_bytes = episodes_bytes(&episodes_file, dataset)?;
    let info_file = root.join("meta/info.json");
    let info = info_json(dataset, frames, tasks.len());
    let stats_file = root.join("meta/stats.json");
    let stats = dataset.stats.as_ref().map(pretty);
    let mut files: Vec<(&Path, &[u8])> = vec![
        (&data_file, &data),
        (&tasks_file, &tasks_bytes),
        (&episodes_file, &episodes_bytes),
        (&info_file, info.as_bytes()),
    ];
    if let Some(stats) = &stats {
        files.push((&stats_file, stats.as_bytes()));
    }
    crate::atomic::write_all_atomic(&files)?;
    Ok(WrittenDataset {
        episodes: episodes.len(),
        frames,
        tasks: tasks.len(),
    })
}

fn pretty(v: &Value) -> String {
    // A `Value` always serializes (its map keys are strings).
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn data_bytes(
    file: &Path,
    dataset: &DatasetV3<'_>,
    task_of: &HashMap<&str, i64>,
    frames: usize,
) -> Result<Vec<u8>, DataError> {
    let mut cols: Vec<(&str, ArrayRef)> = dataset
        .columns
        .iter()
        .map(|c| (c.name.as_str(), Arc::clone(&c.values)))
        .collect();
    let spans = || {
        dataset
            .episodes
            .iter()
            .enumerate()
            .flat_map(|(e, ep)| (0..ep.length).map(move |i| (e, i, ep)))
    };
    let fps = dataset.fps as f32;
    cols.push((
        "timestamp",
        Arc::new(Float32Array::from_iter_values(
            spans().map(|(_, i, _)| i as f32 / fps),
        )),
    ));
    cols.push((
        "frame_index",
        Arc::new(Int64Array::from_iter_values(
            spans().map(|(_, i, _)| i as i64),
        )),
    ));
    cols.push((
        "episode_index",
        Arc::new(Int64Array::from_iter_values(
            spans().map(|(e, _, _)| e as i64),
        )),
    ));
    cols.push((
        "index",
        Arc::new(Int64Array::from_iter_values(0..frames as i64)),
    ));
    cols.push((
        "task_index",
        Arc::new(Int64Array::from_iter_values(
            spans().map(|(_, _, ep)| task_of.get(ep.task).copied().unwrap_or(0)),
        )),
    ));
    parquet_bytes(file, &cols, HashMap::new())
}

fn tasks_bytes(file: &Path, tasks: &[&str]) -> Result<Vec<u8>, DataError> {
    let pandas = json!({
        "index_columns": ["task"],
        "column_indexes": [{"name": null, "field_name": null, "pandas_type": "unicode", "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64", "numpy_type": "int64", "metadata": null},
            {"name": "task", "field_name": "task", "pandas_type": "unicode", "numpy_type": "object", "metadata": null}
        ],
        "creator": {"library": "pyarrow", "version": "19.0.1"},
        "pandas_version": "2.2.3"
    });
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "task_index",
            Arc::new(Int64Array::from_iter_values(0..tasks.len() as i64)),
        ),
        ("task", Arc::new(StringArray::from(tasks.to_vec()))),
    ];
    let metadata = HashMap::from([("pandas".to_owned(), pandas.to_string())]);
    parquet_bytes(file, &cols, metadata)
}

fn episodes_bytes(file: &Path, dataset: &DatasetV3<'_>) -> Result<Vec<u8>, DataError> {
    let episodes = dataset.episodes;
    let mut task_lists = ListBuilder::new(StringBuilder::new());
    for e in episodes {
        task_lists.values().append_value(e.task);
        task_lists.append(true);
    }
    let ints = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
    let zeros = || ints(vec![0; episodes.len()]);
    let (mut from, mut to) = (Vec::new(), Vec::new());
    let mut start = 0i64;
    for e in episodes {
        from.push(start);
        start += e.length as i64;
        to.push(start);
    }
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        ("episode_index", ints((0..episodes.len() as i64).collect())),
        ("tasks", Arc::new(task_lists.finish())),
        (
            "length",
            ints(episodes.iter().map(|e| e.length as i64).collect()),
        ),
        ("data/chunk_index", zeros()),
        ("data/file_index", zeros()),
        ("dataset_from_index", ints(from)),
        ("dataset_to_index", ints(to)),
        ("meta/episodes/chunk_index", zeros()),
        ("meta/episodes/file_index", zeros()),
    ];
    cols.extend(
        dataset
            .episode_columns
            .iter()
            .map(|(name, values)| (name.as_str(), Arc::clone(values))),
    );
    parquet_bytes(file, &cols, HashMap::new())
}

fn info_json(dataset: &DatasetV3<'_>, frames: usize, tasks: usize) -> String {
    let scalar = |dtype: &str| json!({ "dtype": dtype, "shape": [1], "names": null });
    let mut features = serde_json::Map::new();
    for c in &dataset.columns {
        features.insert(c.name.clone(), c.feature.clone());
    }
    for (key, feature) in &dataset.other_features {
        features.insert(key.clone(), feature.clone());
    }
    features.insert("timestamp".into(), scalar("float32"));
    for k in ["frame_index", "episode_index", "index", "task_index"] {
        features.insert(k.into(), scalar("int64"));
    }
    let episodes = dataset.episodes.len();
    pretty(&json!({
        "codebase_version": "v3.0",
        "robot_type": dataset.robot_type,
        "total_episodes": episodes,
        "total_frames": frames,
        "total_tasks": tasks,
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200,
        "fps": dataset.fps,
        "splits": { "train": format!("0:{episodes}") },
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": dataset.video_path,
        "features": features,
    }))
}

/// One Parquet file's bytes (every field nullable, as pandas writes them).
fn parquet_bytes(
    file: &Path,
    cols: &[(&str, ArrayRef)],
    metadata: HashMap<String, String>,
) -> Result<Vec<u8>, DataError> {
    let schema = Schema::new(
        cols.iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    )
    .with_metadata(metadata);
    let arrow = |e: arrow_schema::ArrowError| DataError::invalid(file, None, None, e.to_string());
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        cols.iter().map(|(_, a)| Arc::clone(a)).collect(),
    )
    .map_err(arrow)?;
    let parquet = |source| DataError::Parquet {
        file: PathBuf::from(file),
        row: None,
        action: "write",
        source,
    };
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), None).map_err(parquet)?;
    w.write(&batch).map_err(parquet)?;
    w.close().map_err(parquet)?;
    Ok(buf)
}

/// A LeRobot `image` column: one `{bytes, path}` struct per frame (Hugging Face
/// `datasets.Image`), the PNG bytes inline and `path` null.
pub fn image_column(pngs: &[&[u8]]) -> ArrayRef {
    let mut bytes = BinaryBuilder::new();
    let mut paths = StringBuilder::new();
    for p in pngs {
        bytes.append_value(p);
        paths.append_null();
    }
    let fields = Fields::from(vec![
        Field::new("bytes", DataType::Binary, true),
        Field::new("path", DataType::Utf8, true),
    ]);
    Arc::new(StructArray::new(
        fields,
        vec![Arc::new(bytes.finish()), Arc::new(paths.finish())],
        None,
    ))
}

/// A fixed-size `float32` list column of `values.len() / width` rows (row-major).
///
/// # Errors
/// [`DataError::Invalid`] naming `file` when `width` is 0, too large for Arrow, or does not
/// divide `values.len()`.
pub fn fixed_list_column(
    file: &Path,
    values: Vec<f32>,
    width: usize,
) -> Result<ArrayRef, DataError> {
    let bad = |m: String| DataError::invalid(file, None, None, m);
    let n = i32::try_from(width)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| bad(format!("vector width {width}")))?;
    let field = Arc::new(Field::new("item", DataType::Float32, true));
    let array = FixedSizeListArray::try_new(field, n, Arc::new(Float32Array::from(values)), None)
        .map_err(|e| bad(e.to_string()))?;
    Ok(Arc::new(array))
}

/// The `info.json` entry of a `float32` vector feature of width `n`, with optional names.
pub fn vector_feature(n: usize, names: Option<&[&str]>) -> Value {
    json!({ "dtype": "float32", "shape": [n], "names": names })
}

/// The `info.json` entry of a scalar feature of `dtype` (`bool`, `float32`, `int64`).
pub fn scalar_feature(dtype: &str) -> Value {
    json!({ "dtype": dtype, "shape": [1], "names": null })
}

/// The `info.json` entry of an `image` feature of `height × width` RGB pixels.
pub fn image_feature(height: u32, width: u32) -> Value {
    json!({ "dtype": "image", "shape": [height, width, 3], "names": ["height", "width", "channel"] })
}

/// LeRobot's `stats.json` entry of a vector feature over `rows` (each of the first row's
/// width): per dimension `mean`, `std` (population, ddof 0), `min`, `max`, and `count` = [rows].
/// No rows gives empty vectors and count 0.
pub fn vector_stats(rows: &[&[f32]]) -> Value {
    let d = rows.first().map_or(0, |r| r.len());
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0.0f64; d];
    let mut min = vec![f64::INFINITY; d];
    let mut max = vec![f64::NEG_INFINITY; d];
    for r in rows {
        for (k, &v) in r.iter().enumerate().take(d) {
            let v = f64::from(v);
            mean[k] += v / n;
            min[k] = min[k].min(v);
            max[k] = max[k].max(v);
        }
    }
    let mut var = vec![0.0f64; d];
    for r in rows {
        for (k, &v) in r.iter().enumerate().take(d) {
            var[k] += (f64::from(v) - mean[k]).powi(2) / n;
        }
    }
    json!({
        "mean": mean, "std": var.iter().map(|v| v.sqrt()).collect::<Vec<_>>(),
        "min": min, "max": max, "count": [rows.len()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lerobot::LeRobotDataset;
    use arrow_array::BooleanArray;

    fn dataset<'a>(spans: &'a [EpisodeSpan<'a>], file: &Path) -> DatasetV3<'a> {
        let frames: usize = spans.iter().map(|s| s.length).sum();
        let state: Vec<f32> = (0..2 * frames).map(|k| k as f32 / 4.0).collect();
        DatasetV3 {
            robot_type: "test_arm",
            fps: 4,
            episodes: spans,
            columns: vec![
                DataColumn::new(
                    "observation.state",
                    fixed_list_column(file, state, 2).unwrap(),
                    vector_feature(2, Some(&["x", "y"])),
                ),
                DataColumn::new(
                    "next.success",
                    Arc::new(BooleanArray::from(vec![false; frames])),
                    scalar_feature("bool"),
                ),
            ],
            episode_columns: vec![(
                "seed".into(),
                Arc::new(Int64Array::from_iter_values(0..spans.len() as i64)),
            )],
            other_features: Vec::new(),
            video_path: None,
            stats: Some(json!({ "observation.state": vector_stats(&[&[1.0, 2.0], &[3.0, 6.0]]) })),
        }
    }

    /// What the writer writes, the reader reads back: episode ranges, tasks by first
    /// appearance, derived bookkeeping (`timestamp` = frame / fps), values in order, and an
    /// inspection with no blocking problem.
    #[test]
    fn a_written_dataset_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let spans = [
            EpisodeSpan {
                task: "push left",
                length: 3,
            },
            EpisodeSpan {
                task: "push right",
                length: 2,
            },
            EpisodeSpan {
                task: "push left",
                length: 1,
            },
        ];
        let file = dir.path().join("data");
        let written = write_v3(dir.path(), &dataset(&spans, &file)).unwrap();
        assert_eq!(
            written,
            WrittenDataset {
                episodes: 3,
                frames: 6,
                tasks: 2
            }
        );
        let ds = LeRobotDataset::open(dir.path()).unwrap();
        assert_eq!(ds.fps(), 4.0);
        assert_eq!(ds.robot_type(), Some("test_arm"));
        let tasks: Vec<(i64, &str)> = ds
            .tasks()
            .iter()
            .map(|t| (t.index, t.task.as_str()))
            .collect();
        assert_eq!(tasks, [(0, "push left"), (1, "push right")]);
        let ranges: Vec<_> = ds
            .episodes()
            .iter()
            .map(|e| (e.index, e.length, e.from_index, e.to_index, e.tasks.clone()))
            .collect();
        assert_eq!(
            ranges[1],
            (1, Some(2), Some(3), Some(5), vec!["push right".to_owned()])
        );
        assert_eq!(
            ranges[2],
            (2, Some(1), Some(5), Some(6), vec!["push left".to_owned()])
        );
        let frames = ds.read_frames(&["observation.state", "timestamp"]).unwrap();
        assert_eq!(frames[1].index, [3, 4]);
        assert_eq!(frames[1].frame_index, [0, 1]);
        assert_eq!(
            frames[1].columns[0].values,
            [vec![1.5, 1.75], vec![2.0, 2.25]]
        );
        assert_eq!(
            frames[0].columns[1].values,
            [vec![0.0], vec![0.25], vec![0.5]]
        );
        assert!(ds.inspect().unwrap().problems.iter().all(|p| !p.blocking));
        let stats: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("meta/stats.json")).unwrap())
                .unwrap();
        // Population std of [2, 6] is 2.
        assert_eq!(stats["observation.state"]["std"], json!([1.0, 2.0]));
        assert_eq!(stats["observation.state"]["count"], json!([2]));
    }

    /// A column of the wrong length, or one that takes a bookkeeping name, is refused by name
    /// before any file is written.
    #[test]
    fn columns_that_do_not_fit_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let spans = [EpisodeSpan {
            task: "t",
            length: 2,
        }];
        let file = dir.path().join("data");
        let mut d = dataset(&spans, &file);
        d.columns.push(DataColumn::new(
            "next.done",
            Arc::new(BooleanArray::from(vec![false; 3])),
            scalar_feature("bool"),
        ));
        let err = write_v3(dir.path(), &d).unwrap_err().to_string();
        assert!(
            err.contains("column \"next.done\"") && err.contains("3 rows for 2 frames"),
            "{err}"
        );
        d.columns.pop();
        d.columns.push(DataColumn::new(
            "timestamp",
            Arc::new(Float32Array::from(vec![0.0; 2])),
            scalar_feature("float32"),
        ));
        let err = write_v3(dir.path(), &d).unwrap_err().to_string();
        assert!(err.contains("column \"timestamp\""), "{err}");
        d.columns.pop();
        d.episode_columns[0].1 = Arc::new(Int64Array::from(vec![0, 1]));
        let err = write_v3(dir.path(), &d).unwrap_err().to_string();
        assert!(
            err.contains("2 rows for 1 episodes") && err.contains("meta/episodes"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
