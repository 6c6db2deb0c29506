//! Recorded episodes as a LeRobot v3.0 dataset, through the workspace's one writer
//! ([`roboaudit_data::lerobot::write`]): the testbed's columns and features, cameras stored as
//! PNG bytes (`image` dtype: a struct of `bytes` and `path`, as Hugging Face `datasets.Image`)
//! or, with [`WriteOptions::video`], encoded here as MP4 video (`video` dtype) under
//! `videos/<key>/chunk-000/file-000.mp4`, all episodes back to back, as LeRobot v3.0 stores cameras.

use super::EpisodeRecord;
use crate::error::{Result, TestbedError};
use arrow_array::{ArrayRef, BooleanArray, Float32Array, Float64Array, Int64Array, StringArray};
use roboaudit_data::lerobot::write as w;
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
    let frames: Vec<&super::Frame> = episodes.iter().flat_map(|ep| &ep.frames).collect();
    let Some(first) = frames.first() else {
        return Err(TestbedError::InvalidParameter("no frames to write".into()));
    };
    let (ds, de, da) = (first.state.len(), first.env_state.len(), first.action.len());
    if frames
        .iter()
        .any(|f| f.state.len() != ds || f.env_state.len() != de || f.action.len() != da)
    {
        return Err(TestbedError::InvalidParameter(
            "frames differ in state, env_state or action width".into(),
        ));
    }
    let wrist = frames.iter().all(|f| f.wrist_png.is_some());
    let mut cameras: Vec<&str> = vec!["observation.images.scene"];
    if wrist {
        cameras.push("observation.images.wrist");
    }
    let png_of = |key: &str| -> fn(&super::Frame) -> &[u8] {
        if key == "observation.images.wrist" {
            |f| f.wrist_png.as_deref().unwrap_or(&[])
        } else {
            |f| f.image_png.as_slice()
        }
    };
    let (w, h) = png_side(first.image_png.as_slice()).unwrap_or((128, 128));
    let image = w::image_feature(h, w);

    let data_file = root.join("data/chunk-000/file-000.parquet");
    let mut data = Vec::new();
    let mut video_features = Vec::new();
    let mut episode_columns: Vec<(String, ArrayRef)> = vec![
        (
            "success".into(),
            Arc::new(BooleanArray::from(
                episodes
                    .iter()
                    .map(EpisodeRecord::success)
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            "seed".into(),
            Arc::new(Int64Array::from_iter_values(
                episodes.iter().map(|e| e.seed as i64),
            )),
        ),
        (
            "scene_id".into(),
            Arc::new(StringArray::from(
                episodes
                    .iter()
                    .map(|e| e.scene_id.clone())
                    .collect::<Vec<_>>(),
            )),
        ),
    ];
    for key in &cameras {
        let pixels = png_of(key);
        if options.video {
            let (spans, info) = write_camera_video(root, key, episodes, &pixels)?;
            let zeros = || Arc::new(Int64Array::from(vec![0i64; episodes.len()])) as ArrayRef;
            episode_columns.push((format!("videos/{key}/chunk_index"), zeros()));
            episode_columns.push((format!("videos/{key}/file_index"), zeros()));
            episode_columns.push((
                format!("videos/{key}/from_timestamp"),
                Arc::new(Float64Array::from_iter_values(spans.iter().map(|s| s.0))),
            ));
            episode_columns.push((
                format!("videos/{key}/to_timestamp"),
                Arc::new(Float64Array::from_iter_values(spans.iter().map(|s| s.1))),
            ));
            let feature = serde_json::json!({
                "dtype": "video",
                "shape": image["shape"],
                "names": ["height", "width", "channels"],
                "info": info,
            });
            video_features.push(((*key).to_owned(), feature));
        } else {
            let pngs: Vec<&[u8]> = frames.iter().map(|f| pixels(f)).collect();
            data.push(w::DataColumn::new(
                key,
                w::image_column(&pngs),
                image.clone(),
            ));
        }
    }
    let flat = |g: fn(&super::Frame) -> &Vec<f32>| -> Vec<f32> {
        frames.iter().flat_map(|f| g(f).iter().copied()).collect()
    };
    let joint_names: Vec<String> = (1..=7)
        .map(|j| format!("j{j}"))
        .chain(["x", "y", "z", "qw", "qx", "qy", "qz", "gripper"].map(String::from))
        .collect();
    let joint_names: Vec<&str> = joint_names.iter().map(String::as_str).collect();
    let action_names = ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"];
    data.extend([
        w::DataColumn::new(
            "observation.state",
            w::fixed_list_column(&data_file, flat(|f| &f.state), ds)?,
            w::vector_feature(ds, Some(&joint_names)),
        ),
        w::DataColumn::new(
            "observation.environment_state",
            w::fixed_list_column(&data_file, flat(|f| &f.env_state), de)?,
            w::vector_feature(de, None),
        ),
        w::DataColumn::new(
            "action",
            w::fixed_list_column(&data_file, flat(|f| &f.action), da)?,
            w::vector_feature(da, Some(&action_names)),
        ),
        w::DataColumn::new(
            "next.reward",
            Arc::new(Float32Array::from_iter_values(
                frames.iter().map(|f| f.reward),
            )),
            w::scalar_feature("float32"),
        ),
        w::DataColumn::new(
            "next.success",
            Arc::new(BooleanArray::from(
                frames.iter().map(|f| f.success).collect::<Vec<_>>(),
            )),
            w::scalar_feature("bool"),
        ),
        w::DataColumn::new(
            "next.done",
            Arc::new(BooleanArray::from(
                frames.iter().map(|f| f.done).collect::<Vec<_>>(),
            )),
            w::scalar_feature("bool"),
        ),
    ]);
    let rows = |g: fn(&super::Frame) -> &[f32]| frames.iter().map(|f| g(f)).collect::<Vec<_>>();
    let stats = serde_json::json!({
        "observation.state": w::vector_stats(&rows(|f| &f.state)),
        "observation.environment_state": w::vector_stats(&rows(|f| &f.env_state)),
        "action": w::vector_stats(&rows(|f| &f.action)),
    });
    let instructions: Vec<String> = episodes.iter().map(|e| e.task.instruction()).collect();
    let spans: Vec<w::EpisodeSpan<'_>> = episodes
        .iter()
        .zip(&instructions)
        .map(|(e, task)| w::EpisodeSpan {
            task,
            length: e.frames.len(),
        })
        .collect();
    let written = w::write_v3(
        root,
        &w::DatasetV3 {
            robot_type: "roboaudit_mujoco_arm7",
            fps: FPS,
            episodes: &spans,
            columns: data,
            episode_columns,
            other_features: video_features,
            video_path: options.video.then_some(VIDEO_PATH),
            stats: Some(stats),
        },
    )?;
    Ok(DatasetSummary {
        episodes: written.episodes,
        frames: written.frames,
        tasks: written.tasks,
    })
}

/// Width and height from a PNG header.
fn png_side(png: &[u8]) -> Option<(u32, u32)> {
    let w = u32::from_be_bytes(png.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(png.get(20..24)?.try_into().ok()?);
    Some((w, h))
}
