//! Builders of tiny synthetic LeRobot datasets (v3.0 and v2.1) for the lerobot tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, FixedSizeListBuilder, Float32Builder, ListBuilder, StringBuilder,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float32Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;

/// Writes `columns` as one Parquet file (parents created).
pub fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
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
    .unwrap();
    let mut writer = ArrowWriter::try_new(fs::File::create(path).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

pub fn ints(v: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

pub fn f32s(v: &[f32]) -> ArrayRef {
    Arc::new(Float32Array::from(v.to_vec()))
}

pub fn bools(v: &[bool]) -> ArrayRef {
    Arc::new(BooleanArray::from(v.to_vec()))
}

pub fn strings(v: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

/// `fixed_size_list<float>[n]`.
pub fn fixed_vectors(rows: &[Vec<f32>], n: i32) -> ArrayRef {
    let mut b = FixedSizeListBuilder::new(Float32Builder::new(), n);
    for r in rows {
        b.values().append_slice(r);
        b.append(true);
    }
    Arc::new(b.finish())
}

/// Variable-size `list<float>`.
pub fn list_vectors(rows: &[Vec<f32>]) -> ArrayRef {
    let mut b = ListBuilder::new(Float32Builder::new());
    for r in rows {
        b.values().append_slice(r);
        b.append(true);
    }
    Arc::new(b.finish())
}

pub fn string_lists(rows: &[&[&str]]) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for r in rows {
        for s in *r {
            b.values().append_value(s);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// LeRobot's image column: `struct<bytes: binary, path: string>`.
pub fn image_structs(images: &[Vec<u8>]) -> ArrayRef {
    let mut bytes = BinaryBuilder::new();
    for i in images {
        bytes.append_value(i);
    }
    let paths: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>; images.len()]));
    let bytes: ArrayRef = Arc::new(bytes.finish());
    let fields = Fields::from(vec![
        Field::new("bytes", DataType::Binary, true),
        Field::new("path", DataType::Utf8, true),
    ]);
    Arc::new(StructArray::new(fields, vec![bytes, paths], None))
}

/// Encodes a `w × h` PNG of `color` type whose pixel (x, y) has samples from `sample(x, y)`.
pub fn png_bytes(
    w: u32,
    h: u32,
    color: png::ColorType,
    sample: &dyn Fn(u32, u32) -> Vec<u8>,
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().unwrap();
        let mut data = Vec::new();
        for y in 0..h {
            for x in 0..w {
                data.extend(sample(x, y));
            }
        }
        writer.write_image_data(&data).unwrap();
    }
    out
}

/// The RGB value the synthetic v3.0 images hold at (x, y) of frame `t` of episode `e`.
pub fn rgb_at(e: i64, t: i64, x: u32, y: u32) -> [u8; 3] {
    [
        u8::try_from(x * 40).unwrap(),
        u8::try_from(y * 50).unwrap(),
        u8::try_from(e * 100 + t * 10).unwrap(),
    ]
}

pub const V3_FPS: f64 = 12.5;

/// Episode lengths of the synthetic v3.0 dataset.
pub const V3_LENGTHS: [i64; 2] = [3, 2];

/// `observation.state` of frame t of episode e.
pub fn state(e: i64, t: i64) -> Vec<f32> {
    vec![e as f32 + 0.5, t as f32 * 0.25]
}

/// `action` of frame t of episode e (three values).
pub fn action(e: i64, t: i64) -> Vec<f32> {
    vec![t as f32, -(e as f32), 1.5]
}

pub fn v3_info() -> serde_json::Value {
    serde_json::json!({
        "codebase_version": "v3.0",
        "robot_type": "toy_arm",
        "total_episodes": 2,
        "total_frames": 5,
        "total_tasks": 2,
        "chunks_size": 1000,
        "fps": V3_FPS,
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
        "features": {
            "observation.state": {"dtype": "float32", "shape": [2], "names": {"motors": ["x", "y"]}},
            "action": {"dtype": "float32", "shape": [3], "names": ["a", "b", "c"]},
            "observation.image": {"dtype": "image", "shape": [3, 4, 5], "names": ["channels", "height", "width"]},
            "observation.images.wrist": {"dtype": "video", "shape": [96, 96, 3], "names": ["height", "width", "channels"],
                "video_info": {"video.fps": V3_FPS, "video.codec": "av1"}},
            "next.reward": {"dtype": "float32", "shape": [1], "names": null},
            "next.success": {"dtype": "bool", "shape": [1], "names": null},
            "next.done": {"dtype": "bool", "shape": [1], "names": null},
            "timestamp": {"dtype": "float32", "shape": [1], "names": null},
            "frame_index": {"dtype": "int64", "shape": [1], "names": null},
            "episode_index": {"dtype": "int64", "shape": [1], "names": null},
            "index": {"dtype": "int64", "shape": [1], "names": null},
            "task_index": {"dtype": "int64", "shape": [1], "names": null}
        }
    })
}

/// The per-frame values of the synthetic v3.0 dataset's one data file, in row order, for tests
/// that damage some before writing ([`write_v3_data`]).
pub struct V3Frames {
    pub states: Vec<Vec<f32>>,
    pub actions: Vec<Vec<f32>>,
    pub images: Vec<Vec<u8>>,
    pub rewards: Vec<f32>,
    pub success: Vec<bool>,
    pub done: Vec<bool>,
    pub timestamps: Vec<f32>,
    pub frame_index: Vec<i64>,
    pub episode_index: Vec<i64>,
    pub index: Vec<i64>,
    pub tasks: Vec<i64>,
}

/// The frames [`write_v3`] writes.
pub fn v3_frames() -> V3Frames {
    let mut f = V3Frames {
        states: vec![],
        actions: vec![],
        images: vec![],
        rewards: vec![],
        success: vec![],
        done: vec![],
        timestamps: vec![],
        frame_index: vec![],
        episode_index: vec![],
        index: vec![],
        tasks: vec![],
    };
    let mut index = 0;
    for (e, &len) in V3_LENGTHS.iter().enumerate() {
        let e = e as i64;
        for t in 0..len {
            f.episode_index.push(e);
            f.frame_index.push(t);
            f.index.push(index);
            f.timestamps.push((t as f64 / V3_FPS) as f32);
            f.states.push(state(e, t));
            f.actions.push(action(e, t));
            f.images.push(png_bytes(5, 4, png::ColorType::Rgb, &|x, y| {
                rgb_at(e, t, x, y).to_vec()
            }));
            let last = t == len - 1;
            f.rewards.push(if e == 1 && last { 1.0 } else { 0.0 });
            f.success.push(e == 1 && last);
            f.done.push(last);
            f.tasks.push(e);
            index += 1;
        }
    }
    f
}

/// Writes `frames` as the v3.0 dataset's data file, leaving out the columns named in `without`.
pub fn write_v3_data(root: &Path, frames: &V3Frames, without: &[&str]) {
    write_v3_data_replacing(root, frames, without, Vec::new());
}

/// [`write_v3_data`] with some columns replaced by the arrays given (e.g. one holding nulls).
pub fn write_v3_data_replacing(
    root: &Path,
    frames: &V3Frames,
    without: &[&str],
    mut replace: Vec<(&str, ArrayRef)>,
) {
    let columns = vec![
        ("observation.state", fixed_vectors(&frames.states, 2)),
        ("action", list_vectors(&frames.actions)),
        ("observation.image", image_structs(&frames.images)),
        ("next.reward", f32s(&frames.rewards)),
        ("next.success", bools(&frames.success)),
        ("next.done", bools(&frames.done)),
        ("timestamp", f32s(&frames.timestamps)),
        ("frame_index", ints(&frames.frame_index)),
        ("episode_index", ints(&frames.episode_index)),
        ("index", ints(&frames.index)),
        ("task_index", ints(&frames.tasks)),
    ];
    write_parquet(
        &root.join("data/chunk-000/file-000.parquet"),
        columns
            .into_iter()
            .filter(|(name, _)| !without.contains(name))
            .map(
                |(name, array)| match replace.iter().position(|(n, _)| *n == name) {
                    Some(k) => replace.swap_remove(k),
                    None => (name, array),
                },
            )
            .collect(),
    );
}

/// Writes a consistent v3.0 dataset: 2 episodes (3 + 2 frames) in one data file, an RGB
/// `image` feature of 5×4 PNGs (shape declared CHW), a video feature without its MP4, episode 1
/// succeeds (`next.success` on its last frame, last reward 1.0), episode 0 fails;
/// `next.done` is true on the last frame of each episode.
pub fn write_v3(root: &Path) {
    fs::create_dir_all(root.join("meta")).unwrap();
    fs::write(
        root.join("meta/info.json"),
        serde_json::to_string_pretty(&v3_info()).unwrap(),
    )
    .unwrap();
    write_v3_data(root, &v3_frames(), &[]);
    let dur: Vec<f64> = V3_LENGTHS.iter().map(|l| *l as f64 / V3_FPS).collect();
    write_parquet(
        &root.join("meta/episodes/chunk-000/file-000.parquet"),
        vec![
            ("episode_index", ints(&[0, 1])),
            ("tasks", string_lists(&[&["pick"], &["place"]])),
            ("length", ints(&V3_LENGTHS)),
            ("data/chunk_index", ints(&[0, 0])),
            ("data/file_index", ints(&[0, 0])),
            ("dataset_from_index", ints(&[0, 3])),
            ("dataset_to_index", ints(&[3, 5])),
            ("videos/observation.images.wrist/chunk_index", ints(&[0, 0])),
            ("videos/observation.images.wrist/file_index", ints(&[0, 0])),
            (
                "videos/observation.images.wrist/from_timestamp",
                Arc::new(arrow_array::Float64Array::from(vec![0.0, dur[0]])),
            ),
            (
                "videos/observation.images.wrist/to_timestamp",
                Arc::new(arrow_array::Float64Array::from(vec![
                    dur[0],
                    dur[0] + dur[1],
                ])),
            ),
            (
                "stats/action/mean",
                list_vectors(&[vec![0.0; 3], vec![0.0; 3]]),
            ),
        ],
    );
    // pandas writes the task text as its index column.
    write_parquet(
        &root.join("meta/tasks.parquet"),
        vec![
            ("task_index", ints(&[0, 1])),
            ("__index_level_0__", strings(&["pick", "place"])),
        ],
    );
}

/// Writes a consistent v2.1 dataset: 2 episodes (2 + 3 frames), one file each, names as a
/// nested list, 30 fps, a video feature whose MP4 files are absent.
pub fn write_v21(root: &Path) {
    fs::create_dir_all(root.join("meta")).unwrap();
    let names = serde_json::json!([["j0", "j1", "j2", "j3"]]);
    let info = serde_json::json!({
        "codebase_version": "v2.1",
        "robot_type": "biped",
        "total_episodes": 2,
        "total_frames": 5,
        "total_tasks": 1,
        "total_videos": 2,
        "chunks_size": 1000,
        "fps": 30,
        "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
        "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
        "features": {
            "observation.state": {"dtype": "float32", "shape": [4], "names": names},
            "action": {"dtype": "float32", "shape": [4], "names": names},
            "observation.images.cam": {"dtype": "video", "shape": [480, 640, 3], "names": ["height", "width", "channel"],
                "info": {"video.fps": 30, "video.codec": "av1"}},
            "timestamp": {"dtype": "float32", "shape": [1], "names": null},
            "frame_index": {"dtype": "int64", "shape": [1], "names": null},
            "episode_index": {"dtype": "int64", "shape": [1], "names": null},
            "index": {"dtype": "int64", "shape": [1], "names": null},
            "task_index": {"dtype": "int64", "shape": [1], "names": null}
        }
    });
    fs::write(
        root.join("meta/info.json"),
        serde_json::to_string_pretty(&info).unwrap(),
    )
    .unwrap();
    let lengths = [2_i64, 3];
    let mut index = 0;
    let mut episodes = String::new();
    for (e, &len) in lengths.iter().enumerate() {
        let e = e as i64;
        let t: Vec<i64> = (0..len).collect();
        let rows: Vec<Vec<f32>> = t
            .iter()
            .map(|t| vec![e as f32, *t as f32, 0.5, -1.0])
            .collect();
        write_parquet(
            &root.join(format!("data/chunk-000/episode_{e:06}.parquet")),
            vec![
                ("observation.state", fixed_vectors(&rows, 4)),
                ("action", fixed_vectors(&rows, 4)),
                (
                    "timestamp",
                    f32s(&t.iter().map(|t| *t as f32 / 30.0).collect::<Vec<_>>()),
                ),
                ("frame_index", ints(&t)),
                ("episode_index", ints(&vec![e; t.len()])),
                ("index", ints(&(index..index + len).collect::<Vec<_>>())),
                ("task_index", ints(&vec![0; t.len()])),
            ],
        );
        index += len;
        episodes.push_str(&format!(
            "{{\"episode_index\": {e}, \"tasks\": [\"walk\"], \"length\": {len}}}\n"
        ));
    }
    fs::write(root.join("meta/episodes.jsonl"), episodes).unwrap();
    fs::write(
        root.join("meta/tasks.jsonl"),
        "{\"task_index\": 0, \"task\": \"walk\"}\n",
    )
    .unwrap();
}

/// Reads a JSON file, edits it, writes it back.
pub fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}
