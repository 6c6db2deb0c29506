//! LeRobot v3.0 writer: `meta/info.json`, `meta/stats.json`, `meta/tasks.parquet`,
//! `meta/episodes/chunk-000/file-000.parquet` and `data/chunk-000/file-000.parquet` with images stored
//! as PNG bytes (`image` dtype: a struct of `bytes` and `path`, as Hugging Face `datasets.Image`),
//! or, with [`WriteOptions::video`], as MP4 video (`video` dtype) under
//! `videos/<key>/chunk-000/file-000.mp4`, all episodes back to back, as LeRobot v3.0 stores cameras.

use super::EpisodeRecord;
use crate::error::{Result, TestbedError};
use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, FixedSizeListArray, Float32Array, Float64Array, Int64Array,
    RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Frames per second: one action lasts 20 ms.
pub const FPS: u32 = 50;

/// `video_path` template of the datasets written with [`WriteOptions::video`] (LeRobot v3.0's).
pub const VIDEO_PATH: &str = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";

/// How [`write_lerobot_v3_with`] stores the cameras.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Cameras as MP4 video (LeRobot's encoder settings: `yuv420p`, GOP 2, CRF 30, AV1 when
    /// `libsvtav1` is linked and the images are at least 64 px, else H.264) instead of PNG bytes
    /// in the data file.
    pub video: bool,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetSummary {
    /// Episodes written.
    pub episodes: usize,
    /// Frames written.
    pub frames: usize,
    /// Distinct tasks.
    pub tasks: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TestbedError + '_ {
    move |source| TestbedError::Io {
        source,
        path: path.display().to_string(),
    }
}

fn pq_err(e: impl std::fmt::Display) -> TestbedError {
    TestbedError::InvalidParameter(format!("parquet: {e}"))
}

fn write_parquet(path: &Path, batch: &RecordBatch) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let tmp = tmp_path(path);
    let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    let mut w = ArrowWriter::try_new(file, batch.schema(), None).map_err(pq_err)?;
    w.write(batch).map_err(pq_err)?;
    w.close().map_err(pq_err)?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// `<path>.tmp`: files are written there and renamed into place, so a reader never sees a
/// partial file.
fn tmp_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    name.into()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = tmp_path(path);
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// RGB24 pixels and size of a PNG.
fn png_rgb(png: &[u8]) -> Result<(u32, u32, Vec<u8>)> {
    use mujoco_rs::renderer::png as p;
    let err = |e: p::DecodingError| TestbedError::Png(format!("decoding a recorded frame: {e}"));
    let mut dec = p::Decoder::new(std::io::Cursor::new(png));
    dec.set_transformations(p::Transformations::EXPAND | p::Transformations::STRIP_16);
    let mut reader = dec.read_info().map_err(err)?;
    let mut buf = vec![0u8; reader.output_buffer_size().unwrap_or(0)];
    let out = reader.next_frame(&mut buf).map_err(err)?;
    buf.truncate(out.buffer_size());
    let rgb = match out.color_type {
        p::ColorType::Rgb => buf,
        p::ColorType::Rgba => buf
            .chunks_exact(4)
            .flat_map(|c| [c[0], c[1], c[2]])
            .collect(),
        p::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g]).collect(),
        p::ColorType::GrayscaleAlpha => buf.chunks_exact(2).flat_map(|c| [c[0]; 3]).collect(),
        p::ColorType::Indexed => {
            return Err(TestbedError::Png("indexed PNG left unexpanded".into()));
        }
    };
    Ok((out.width, out.height, rgb))
}

/// Encodes one camera of every episode, back to back, into `videos/<key>/chunk-000/file-000.mp4`;
/// returns each episode's `(from_timestamp, to_timestamp)` in the file and the `info` block of
/// the feature.
fn write_camera_video(
    root: &Path,
    key: &str,
    episodes: &[EpisodeRecord],
    png_of: &dyn Fn(&super::Frame) -> &[u8],
) -> Result<(Vec<(f64, f64)>, serde_json::Value)> {
    let mut settings = None;
    let file = root.join(format!("videos/{key}/chunk-000/file-000.mp4"));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let mut writer: Option<roboaudit_video::VideoWriter> = None;
    let mut spans = Vec::with_capacity(episodes.len());
    let mut start = 0u64;
    let (mut width, mut height) = (0, 0);
    for ep in episodes {
        for f in &ep.frames {
            let (w, h, rgb) = png_rgb(png_of(f))?;
            let wr = match writer.as_mut() {
                Some(wr) => wr,
                None => {
                    (width, height) = (w, h);
                    let s =
                        settings.insert(roboaudit_video::EncodeSettings::lerobot_for(FPS, w, h)?);
                    writer.insert(roboaudit_video::VideoWriter::create(&file, w, h, s)?)
                }
            };
            wr.push(&rgb)?;
        }
        let end = start + ep.frames.len() as u64;
        spans.push((start as f64 / f64::from(FPS), end as f64 / f64::from(FPS)));
        start = end;
    }
    let (Some(writer), Some(settings)) = (writer, settings) else {
        return Err(TestbedError::InvalidParameter("no frames to write".into()));
    };
    writer.finish()?;
    let info = serde_json::json!({
        "video.height": height,
        "video.width": width,
        "video.codec": settings.codec.codec_name(),
        "video.pix_fmt": roboaudit_video::PIX_FMT,
        "video.is_depth_map": false,
        "video.fps": FPS,
        "video.channels": 3,
        "video.g": settings.gop,
        "video.crf": settings.crf,
        "has_audio": false,
    });
    Ok((spans, info))
}

fn fixed_list(values: Vec<f32>, n: usize) -> Result<ArrayRef> {
    let n32 = i32::try_from(n).map_err(pq_err)?;
    let field = Arc::new(Field::new("item", DataType::Float32, true));
    let arr = FixedSizeListArray::try_new(field, n32, Arc::new(Float32Array::from(values)), None)
        .map_err(pq_err)?;
    Ok(Arc::new(arr))
}

fn image_column(pngs: &[&[u8]]) -> ArrayRef {
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

fn vec_feature(n: usize, names: Option<Vec<String>>) -> serde_json::Value {
    serde_json::json!({ "dtype": "float32", "shape": [n], "names": names })
}

fn stats_of(rows: &[&[f32]]) -> serde_json::Value {
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
    serde_json::json!({
        "mean": mean, "std": var.iter().map(|v| v.sqrt()).collect::<Vec<_>>(),
        "min": min, "max": max, "count": [rows.len()],
    })
}

/// Writes `episodes` as a LeRobot v3.0 dataset under `root` (created; existing files are overwritten).
/// Columns of the data file: `observation.images.scene` (and `observation.images.wrist` when every
/// frame has one), `observation.state` (15), `observation.environment_state` (privileged), `action`
/// (7), `next.reward`, `next.success`, `next.done`, `timestamp`, `frame_index`, `episode_index`,
/// `index`, `task_index`. Tasks are the instructions of the episodes' tasks.
///
/// # Errors
/// [`TestbedError::InvalidParameter`] when there are no frames or frames of different widths;
/// [`TestbedError::Io`] and Parquet errors.
pub fn write_lerobot_v3(root: &Path, episodes: &[EpisodeRecord]) -> Result<DatasetSummary> {
    write_lerobot_v3_with(root, episodes, &WriteOptions::default())
}

/// [`write_lerobot_v3`] with cameras stored as `options` says. With [`WriteOptions::video`], the
/// data file has no image columns; each camera is one MP4 (`videos/<key>/chunk-000/file-000.mp4`,
/// frame `k` of the file at `k / FPS` s, episodes in order), the episode metadata gains
/// `videos/<key>/chunk_index`, `file_index`, `from_timestamp` and `to_timestamp` (seconds in the
/// file: the episode's first frame and the end of its last), and `info.json` declares the
/// feature `dtype: video` with its encoder settings under `info`. Every file is written to
/// `<name>.tmp` and renamed into place.
///
/// # Errors
/// As [`write_lerobot_v3`]; [`TestbedError::Png`] when a recorded frame does not decode,
/// [`TestbedError::Video`] when encoding fails (no AV1 or H.264 encoder linked, frames of
/// different or odd sizes).
pub fn write_lerobot_v3_with(
    root: &Path,
    episodes: &[EpisodeRecord],
    options: &WriteOptions,
) -> Result<DatasetSummary> {
    let frames: Vec<(usize, usize, &super::Frame)> = episodes
        .iter()
        .enumerate()
        .flat_map(|(e, ep)| ep.frames.iter().enumerate().map(move |(i, f)| (e, i, f)))
        .collect();
    let Some((_, _, first)) = frames.first() else {
        return Err(TestbedError::InvalidParameter("no frames to write".into()));
    };
    let (ds, de, da) = (first.state.len(), first.env_state.len(), first.action.len());
    if frames
        .iter()
        .any(|(_, _, f)| f.state.len() != ds || f.env_state.len() != de || f.action.len() != da)
    {
        return Err(TestbedError::InvalidParameter(
            "frames differ in state, env_state or action width".into(),
        ));
    }
    let wrist = frames.iter().all(|(_, _, f)| f.wrist_png.is_some());

    // Tasks in order of first appearance.
    let mut task_index: HashMap<String, i64> = HashMap::new();
    let mut tasks: Vec<String> = Vec::new();
    for ep in episodes {
        let t = ep.task.instruction();
        if !task_index.contains_key(&t) {
            task_index.insert(t.clone(), tasks.len() as i64);
            tasks.push(t);
        }
    }
    let ep_task: Vec<i64> = episodes
        .iter()
        .map(|e| task_index.get(&e.task.instruction()).copied().unwrap_or(0))
        .collect();

    // Data file.
    let n = frames.len();
    let mut cols: Vec<(&str, ArrayRef)> = Vec::new();
    let scene: Vec<&[u8]> = frames
        .iter()
        .map(|(_, _, f)| f.image_png.as_slice())
        .collect();
    if !options.video {
        cols.push(("observation.images.scene", image_column(&scene)));
    }
    if wrist && !options.video {
        let w: Vec<&[u8]> = frames
            .iter()
            .map(|(_, _, f)| f.wrist_png.as_deref().unwrap_or(&[]))
            .collect();
        cols.push(("observation.images.wrist", image_column(&w)));
    }
    let flat = |g: &dyn Fn(&super::Frame) -> &Vec<f32>| {
        frames
            .iter()
            .flat_map(|(_, _, f)| g(f).clone())
            .collect::<Vec<f32>>()
    };
    cols.push(("observation.state", fixed_list(flat(&|f| &f.state), ds)?));
    cols.push((
        "observation.environment_state",
        fixed_list(flat(&|f| &f.env_state), de)?,
    ));
    cols.push(("action", fixed_list(flat(&|f| &f.action), da)?));
    cols.push((
        "next.reward",
        Arc::new(Float32Array::from_iter_values(
            frames.iter().map(|(_, _, f)| f.reward),
        )),
    ));
    cols.push((
        "next.success",
        Arc::new(BooleanArray::from(
            frames.iter().map(|(_, _, f)| f.success).collect::<Vec<_>>(),
        )),
    ));
    cols.push((
        "next.done",
        Arc::new(BooleanArray::from(
            frames.iter().map(|(_, _, f)| f.done).collect::<Vec<_>>(),
        )),
    ));
    cols.push((
        "timestamp",
        Arc::new(Float32Array::from_iter_values(
            frames.iter().map(|(_, i, _)| *i as f32 / FPS as f32),
        )),
    ));
    cols.push((
        "frame_index",
        Arc::new(Int64Array::from_iter_values(
            frames.iter().map(|(_, i, _)| *i as i64),
        )),
    ));
    cols.push((
        "episode_index",
        Arc::new(Int64Array::from_iter_values(
            frames.iter().map(|(e, _, _)| *e as i64),
        )),
    ));
    cols.push(("index", Arc::new(Int64Array::from_iter_values(0..n as i64))));
    cols.push((
        "task_index",
        Arc::new(Int64Array::from_iter_values(
            frames.iter().map(|(e, _, _)| ep_task[*e]),
        )),
    ));
    let schema = Schema::new(
        cols.iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        cols.iter().map(|(_, a)| a.clone()).collect(),
    )
    .map_err(pq_err)?;
    write_parquet(&root.join("data/chunk-000/file-000.parquet"), &batch)?;

    // meta/tasks.parquet: pandas reads the `task` column back as the index (LeRobot looks tasks up by it).
    let pandas_meta = serde_json::json!({
        "index_columns": ["task"],
        "column_indexes": [{"name": null, "field_name": null, "pandas_type": "unicode", "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64", "numpy_type": "int64", "metadata": null},
            {"name": "task", "field_name": "task", "pandas_type": "unicode", "numpy_type": "object", "metadata": null}
        ],
        "creator": {"library": "pyarrow", "version": "19.0.1"},
        "pandas_version": "2.2.3"
    });
    let tschema = Schema::new(vec![
        Field::new("task_index", DataType::Int64, true),
        Field::new("task", DataType::Utf8, true),
    ])
    .with_metadata(HashMap::from([(
        "pandas".to_string(),
        pandas_meta.to_string(),
    )]));
    let tbatch = RecordBatch::try_new(
        Arc::new(tschema),
        vec![
            Arc::new(Int64Array::from_iter_values(0..tasks.len() as i64)),
            Arc::new(StringArray::from(tasks.clone())),
        ],
    )
    .map_err(pq_err)?;
    write_parquet(&root.join("meta/tasks.parquet"), &tbatch)?;

    // meta/episodes.
    let mut from = 0i64;
    let mut ranges = Vec::new();
    for ep in episodes {
        let len = ep.frames.len() as i64;
        ranges.push((from, from + len));
        from += len;
    }
    let ne = episodes.len() as i64;
    let mut tl = arrow_array::builder::ListBuilder::new(StringBuilder::new());
    for ep in episodes {
        tl.values().append_value(ep.task.instruction());
        tl.append(true);
    }
    let zeros = || Arc::new(Int64Array::from(vec![0i64; episodes.len()])) as ArrayRef;
    let mut cameras: Vec<&str> = vec!["observation.images.scene"];
    if wrist {
        cameras.push("observation.images.wrist");
    }
    let mut video_info = HashMap::new();
    let mut video_cols: Vec<(String, ArrayRef)> = Vec::new();
    if options.video {
        for key in &cameras {
            let png_of: &dyn Fn(&super::Frame) -> &[u8] = if *key == "observation.images.wrist" {
                &|f| f.wrist_png.as_deref().unwrap_or(&[])
            } else {
                &|f| f.image_png.as_slice()
            };
            let (spans, info) = write_camera_video(root, key, episodes, png_of)?;
            video_info.insert(*key, info);
            video_cols.push((format!("videos/{key}/chunk_index"), zeros()));
            video_cols.push((format!("videos/{key}/file_index"), zeros()));
            video_cols.push((
                format!("videos/{key}/from_timestamp"),
                Arc::new(Float64Array::from_iter_values(spans.iter().map(|s| s.0))),
            ));
            video_cols.push((
                format!("videos/{key}/to_timestamp"),
                Arc::new(Float64Array::from_iter_values(spans.iter().map(|s| s.1))),
            ));
        }
    }
    let mut ecols: Vec<(&str, ArrayRef)> = vec![
        (
            "episode_index",
            Arc::new(Int64Array::from_iter_values(0..ne)),
        ),
        ("tasks", Arc::new(tl.finish())),
        (
            "length",
            Arc::new(Int64Array::from_iter_values(
                episodes.iter().map(|e| e.frames.len() as i64),
            )),
        ),
        ("data/chunk_index", zeros()),
        ("data/file_index", zeros()),
        (
            "dataset_from_index",
            Arc::new(Int64Array::from_iter_values(ranges.iter().map(|r| r.0))),
        ),
        (
            "dataset_to_index",
            Arc::new(Int64Array::from_iter_values(ranges.iter().map(|r| r.1))),
        ),
        ("meta/episodes/chunk_index", zeros()),
        ("meta/episodes/file_index", zeros()),
        (
            "success",
            Arc::new(BooleanArray::from(
                episodes
                    .iter()
                    .map(EpisodeRecord::success)
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            "seed",
            Arc::new(Int64Array::from_iter_values(
                episodes.iter().map(|e| e.seed as i64),
            )),
        ),
        (
            "scene_id",
            Arc::new(StringArray::from(
                episodes
                    .iter()
                    .map(|e| e.scene_id.clone())
                    .collect::<Vec<_>>(),
            )),
        ),
    ];
    ecols.extend(video_cols.iter().map(|(k, a)| (k.as_str(), a.clone())));
    let eschema = Schema::new(
        ecols
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    let ebatch = RecordBatch::try_new(
        Arc::new(eschema),
        ecols.iter().map(|(_, a)| a.clone()).collect(),
    )
    .map_err(pq_err)?;
    write_parquet(
        &root.join("meta/episodes/chunk-000/file-000.parquet"),
        &ebatch,
    )?;

    // meta/info.json and meta/stats.json.
    let img = serde_json::json!({ "dtype": "image", "shape": [128, 128, 3], "names": ["height", "width", "channel"] });
    let scalar = |dtype: &str| serde_json::json!({ "dtype": dtype, "shape": [1], "names": null });
    let mut features = serde_json::Map::new();
    let side = png_side(first.image_png.as_slice());
    let img = match side {
        Some((w, h)) => {
            serde_json::json!({ "dtype": "image", "shape": [h, w, 3], "names": ["height", "width", "channel"] })
        }
        None => img,
    };
    for key in &cameras {
        let feature = match video_info.get(key) {
            Some(info) => serde_json::json!({
                "dtype": "video",
                "shape": img["shape"],
                "names": ["height", "width", "channels"],
                "info": info,
            }),
            None => img.clone(),
        };
        features.insert((*key).into(), feature);
    }
    let joint_names: Vec<String> = (1..=7)
        .map(|j| format!("j{j}"))
        .chain(["x", "y", "z", "qw", "qx", "qy", "qz", "gripper"].map(String::from))
        .collect();
    features.insert(
        "observation.state".into(),
        vec_feature(ds, Some(joint_names)),
    );
    features.insert(
        "observation.environment_state".into(),
        vec_feature(de, None),
    );
    features.insert(
        "action".into(),
        vec_feature(
            da,
            Some(
                ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"]
                    .map(String::from)
                    .to_vec(),
            ),
        ),
    );
    features.insert("next.reward".into(), scalar("float32"));
    features.insert("next.success".into(), scalar("bool"));
    features.insert("next.done".into(), scalar("bool"));
    features.insert("timestamp".into(), scalar("float32"));
    for k in ["frame_index", "episode_index", "index", "task_index"] {
        features.insert(k.into(), scalar("int64"));
    }
    let info = serde_json::json!({
        "codebase_version": "v3.0",
        "robot_type": "roboaudit_mujoco_arm7",
        "total_episodes": episodes.len(),
        "total_frames": n,
        "total_tasks": tasks.len(),
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200,
        "fps": FPS,
        "splits": { "train": format!("0:{}", episodes.len()) },
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": if options.video { serde_json::Value::from(VIDEO_PATH) } else { serde_json::Value::Null },
        "features": features,
    });
    let meta = root.join("meta");
    std::fs::create_dir_all(&meta).map_err(io(&meta))?;
    write_atomic(
        &meta.join("info.json"),
        serde_json::to_string_pretty(&info)
            .map_err(pq_err)?
            .as_bytes(),
    )?;
    let rows = |g: &dyn Fn(&super::Frame) -> &[f32]| {
        frames.iter().map(|(_, _, f)| g(f)).collect::<Vec<_>>()
    };
    let stats = serde_json::json!({
        "observation.state": stats_of(&rows(&|f| &f.state)),
        "observation.environment_state": stats_of(&rows(&|f| &f.env_state)),
        "action": stats_of(&rows(&|f| &f.action)),
    });
    write_atomic(
        &meta.join("stats.json"),
        serde_json::to_string_pretty(&stats)
            .map_err(pq_err)?
            .as_bytes(),
    )?;
    Ok(DatasetSummary {
        episodes: episodes.len(),
        frames: n,
        tasks: tasks.len(),
    })
}

/// Width and height from a PNG header.
fn png_side(png: &[u8]) -> Option<(u32, u32)> {
    let w = u32::from_be_bytes(png.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(png.get(20..24)?.try_into().ok()?);
    Some((w, h))
}
