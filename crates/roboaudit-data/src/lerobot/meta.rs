//! Episodes and tasks metadata: `meta/episodes/**.parquet` + `meta/tasks.parquet` (v3.0) or
//! `meta/episodes.jsonl` + `meta/tasks.jsonl` (v2.1).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::info::{Info, LeRobotVersion, TemplateValue, fill_template};
use super::table::ParquetTable;
use crate::DataError;

/// One task (a language instruction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    /// `task_index`, as stored in the data's `task_index` column.
    pub index: i64,
    /// The instruction text.
    pub task: String,
}

/// Where an episode's video frames for one video feature live.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VideoLocation {
    /// The video feature key.
    pub feature: String,
    /// MP4 file, relative to the dataset root.
    pub file: PathBuf,
    /// Start of the episode in the file, seconds (v3.0; 0 for v2.1's one file per episode).
    pub from_timestamp: Option<f64>,
    /// End of the episode in the file, seconds (v3.0 only).
    pub to_timestamp: Option<f64>,
}

/// One episode as the metadata describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Episode {
    /// `episode_index`.
    pub index: i64,
    /// Number of frames claimed by the metadata, when given.
    pub length: Option<u64>,
    /// Task instructions of the episode.
    pub tasks: Vec<String>,
    /// Parquet file holding the episode's rows, relative to the dataset root.
    pub data_file: PathBuf,
    /// v3.0: first global `index` of the episode (`dataset_from_index`).
    pub from_index: Option<i64>,
    /// v3.0: one past the last global `index` (`dataset_to_index`).
    pub to_index: Option<i64>,
    /// One entry per video feature.
    pub videos: Vec<VideoLocation>,
    /// Metadata file that describes the episode, relative to the dataset root.
    pub meta_file: PathBuf,
    /// 1-based row of that file.
    pub meta_row: usize,
}

/// Reads the episodes metadata of either version, sorted by episode index.
///
/// # Errors
/// [`DataError`] when the metadata is missing or unreadable, lacks `episode_index`, or
/// repeats an episode index (naming both places).
pub(crate) fn read_episodes(root: &Path, info: &Info) -> Result<Vec<Episode>, DataError> {
    let video_keys: Vec<&str> = info
        .features
        .iter()
        .filter(|f| f.kind == super::FeatureKind::Video)
        .map(|f| f.name.as_str())
        .collect();
    let mut episodes = match info.version {
        LeRobotVersion::V2_1 => read_v21(root, info, &video_keys)?,
        LeRobotVersion::V3_0 => read_v30(root, info, &video_keys)?,
    };
    episodes.sort_by_key(|e| e.index);
    for pair in episodes.windows(2) {
        if pair[0].index == pair[1].index {
            return Err(DataError::invalid(
                &root.join(&pair[1].meta_file),
                Some(pair[1].meta_row),
                Some("episode_index"),
                format!(
                    "episode {} is described twice (also row {} of {})",
                    pair[1].index,
                    pair[0].meta_row,
                    pair[0].meta_file.display()
                ),
            ));
        }
    }
    Ok(episodes)
}

fn read_v21(root: &Path, info: &Info, video_keys: &[&str]) -> Result<Vec<Episode>, DataError> {
    let rel = PathBuf::from("meta/episodes.jsonl");
    let file = root.join(&rel);
    let mut out = Vec::new();
    for (row, object) in jsonl_objects(&file)? {
        let index = object
            .get("episode_index")
            .and_then(Value::as_i64)
            .ok_or_else(|| {
                DataError::invalid(
                    &file,
                    Some(row),
                    Some("episode_index"),
                    "missing or non-integer episode_index",
                )
            })?;
        let length = match object.get("length") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                DataError::invalid(
                    &file,
                    Some(row),
                    Some("length"),
                    format!("expected a non-negative integer, got {v}"),
                )
            })?),
        };
        let tasks = match object.get("tasks") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        let chunk = index.div_euclid(i64::try_from(info.chunks_size).unwrap_or(1000));
        let data_file = PathBuf::from(fill_template(
            &info.data_path,
            &[
                ("episode_chunk", TemplateValue::Int(chunk)),
                ("episode_index", TemplateValue::Int(index)),
            ],
        ));
        let videos = info
            .video_path
            .as_deref()
            .map(|template| {
                video_keys
                    .iter()
                    .map(|key| VideoLocation {
                        feature: (*key).to_owned(),
                        file: PathBuf::from(fill_template(
                            template,
                            &[
                                ("episode_chunk", TemplateValue::Int(chunk)),
                                ("episode_index", TemplateValue::Int(index)),
                                ("video_key", TemplateValue::Str(key)),
                            ],
                        )),
                        from_timestamp: Some(0.0),
                        to_timestamp: None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(Episode {
            index,
            length,
            tasks,
            data_file,
            from_index: None,
            to_index: None,
            videos,
            meta_file: rel.clone(),
            meta_row: row,
        });
    }
    Ok(out)
}

/// A JSON object of a JSONL line.
type JsonObject = serde_json::Map<String, Value>;

/// Non-blank lines of a JSONL file as objects, with 1-based row numbers.
pub(crate) fn jsonl_objects(file: &Path) -> Result<Vec<(usize, JsonObject)>, DataError> {
    let handle = std::fs::File::open(file).map_err(|e| DataError::io(file, "open", e))?;
    let mut out = Vec::new();
    let mut row = 0;
    for line in std::io::BufReader::new(handle).lines() {
        let line = line.map_err(|e| DataError::io(file, "read", e))?;
        if line.trim().is_empty() {
            continue;
        }
        row += 1;
        let object = serde_json::from_str(&line).map_err(|e| DataError::Json {
            file: file.to_path_buf(),
            row,
            message: format!("expected a JSON object: {e}"),
        })?;
        out.push((row, object));
    }
    Ok(out)
}

/// Every `.parquet` file under `dir`, sorted by path (chunk, then file order).
pub(crate) fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| DataError::io(&d, "list", e))?;
        for entry in entries {
            let path = entry.map_err(|e| DataError::io(&d, "list", e))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read_v30(root: &Path, info: &Info, video_keys: &[&str]) -> Result<Vec<Episode>, DataError> {
    let dir = root.join("meta/episodes");
    let files = if dir.is_dir() {
        parquet_files(&dir)?
    } else {
        Vec::new()
    };
    if files.is_empty() {
        return Err(DataError::invalid(
            &dir,
            None,
            None,
            "no episodes metadata (a v3.0 dataset needs meta/episodes/chunk-*/file-*.parquet)",
        ));
    }
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        let table = ParquetTable::read(&file, &|n| !n.starts_with("stats/"))?;
        let indices = table.ints("episode_index")?;
        let optional_ints = |name: &str| -> Result<Option<Vec<i64>>, DataError> {
            if table.has(name) {
                table.ints(name).map(Some)
            } else {
                Ok(None)
            }
        };
        let optional_floats = |name: &str| -> Result<Option<Vec<Option<f64>>>, DataError> {
            if table.has(name) {
                table.numbers(name).map(Some)
            } else {
                Ok(None)
            }
        };
        let lengths = optional_ints("length")?;
        let tasks = if table.has("tasks") {
            Some(table.string_lists("tasks")?)
        } else {
            None
        };
        let chunk = optional_ints("data/chunk_index")?;
        let file_index = optional_ints("data/file_index")?;
        let from = optional_ints("dataset_from_index")?;
        let to = optional_ints("dataset_to_index")?;
        let mut video_columns = Vec::new();
        for key in video_keys {
            let col = |suffix: &str| format!("videos/{key}/{suffix}");
            video_columns.push((
                *key,
                optional_ints(&col("chunk_index"))?,
                optional_ints(&col("file_index"))?,
                optional_floats(&col("from_timestamp"))?,
                optional_floats(&col("to_timestamp"))?,
            ));
        }
        for (k, &index) in indices.iter().enumerate() {
            let row = k + 1;
            let length = match lengths.as_ref().map(|l| l[k]) {
                Some(l) => Some(u64::try_from(l).map_err(|_| {
                    DataError::invalid(
                        &file,
                        Some(row),
                        Some("length"),
                        format!("negative length {l}"),
                    )
                })?),
                None => None,
            };
            let chunk_index = chunk.as_ref().map_or(0, |c| c[k]);
            let data_index = file_index.as_ref().map_or(0, |f| f[k]);
            let data_file = PathBuf::from(fill_template(
                &info.data_path,
                &[
                    ("chunk_index", TemplateValue::Int(chunk_index)),
                    ("file_index", TemplateValue::Int(data_index)),
                    ("episode_index", TemplateValue::Int(index)),
                ],
            ));
            let mut videos = Vec::new();
            if let Some(template) = info.video_path.as_deref() {
                for (key, vc, vf, vfrom, vto) in &video_columns {
                    videos.push(VideoLocation {
                        feature: (*key).to_owned(),
                        file: PathBuf::from(fill_template(
                            template,
                            &[
                                ("video_key", TemplateValue::Str(key)),
                                (
                                    "chunk_index",
                                    TemplateValue::Int(vc.as_ref().map_or(0, |c| c[k])),
                                ),
                                (
                                    "file_index",
                                    TemplateValue::Int(vf.as_ref().map_or(0, |f| f[k])),
                                ),
                                ("episode_index", TemplateValue::Int(index)),
                            ],
                        )),
                        from_timestamp: vfrom.as_ref().and_then(|v| v[k]),
                        to_timestamp: vto.as_ref().and_then(|v| v[k]),
                    });
                }
            }
            out.push(Episode {
                index,
                length,
                tasks: tasks.as_ref().map(|t| t[k].clone()).unwrap_or_default(),
                data_file,
                from_index: from.as_ref().map(|f| f[k]),
                to_index: to.as_ref().map(|t| t[k]),
                videos,
                meta_file: rel.clone(),
                meta_row: row,
            });
        }
    }
    Ok(out)
}

/// Reads the tasks of either version, sorted by task index. v3.0 files written by pandas may
/// keep the task text in the index column `__index_level_0__` instead of `task`.
///
/// # Errors
/// [`DataError`] when the file is unreadable or has neither a `task` nor an index column.
pub(crate) fn read_tasks(root: &Path, version: LeRobotVersion) -> Result<Vec<Task>, DataError> {
    let mut tasks = match version {
        LeRobotVersion::V2_1 => {
            let file = root.join("meta/tasks.jsonl");
            let mut out = Vec::new();
            for (row, object) in jsonl_objects(&file)? {
                let index = object
                    .get("task_index")
                    .and_then(Value::as_i64)
                    .ok_or_else(|| {
                        DataError::invalid(
                            &file,
                            Some(row),
                            Some("task_index"),
                            "missing or non-integer task_index",
                        )
                    })?;
                let task = object.get("task").and_then(Value::as_str).ok_or_else(|| {
                    DataError::invalid(&file, Some(row), Some("task"), "missing or non-string task")
                })?;
                out.push(Task {
                    index,
                    task: task.to_owned(),
                });
            }
            out
        }
        LeRobotVersion::V3_0 => {
            let file = root.join("meta/tasks.parquet");
            let table = ParquetTable::read(&file, &|_| true)?;
            let column = ["task", "__index_level_0__"]
                .into_iter()
                .find(|c| table.has(c))
                .ok_or_else(|| DataError::MissingColumn {
                    file: file.clone(),
                    column: "task".to_owned(),
                })?;
            let indices = table.ints("task_index")?;
            let texts = table.strings(column)?;
            indices
                .into_iter()
                .zip(texts)
                .enumerate()
                .map(|(k, (index, text))| {
                    text.map(|task| Task { index, task }).ok_or_else(|| {
                        DataError::invalid(&file, Some(k + 1), Some(column), "missing task text")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    tasks.sort_by_key(|t| t.index);
    Ok(tasks)
}
