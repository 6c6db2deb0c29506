//! `meta/info.json`: version, fps, robot, totals, path templates and features, read tolerantly
//! (the variants real files show: names as a list, a nested list or a dict; integer or float fps;
//! per-feature `fps`; `info` or the older `video_info`; keys in any order).

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::DataError;

/// LeRobot dataset format version (`codebase_version` in `meta/info.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LeRobotVersion {
    /// v2.1: one Parquet file per episode, `meta/episodes.jsonl`, `meta/tasks.jsonl`.
    #[serde(rename = "v2.1")]
    V2_1,
    /// v3.0: many episodes per Parquet file, `meta/episodes/**.parquet`, `meta/tasks.parquet`.
    #[serde(rename = "v3.0")]
    V3_0,
}

impl LeRobotVersion {
    /// The version as written in `codebase_version` (`v2.1` or `v3.0`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2_1 => "v2.1",
            Self::V3_0 => "v3.0",
        }
    }
}

/// What a feature holds, which decides how it can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureKind {
    /// Numbers (float, int or bool dtype): a Parquet column of scalars or lists.
    Numeric,
    /// `dtype: image`: a Parquet struct column `{bytes, path}` holding encoded (PNG) images.
    Image,
    /// `dtype: video`: frames live in MP4 files, not in Parquet; read through the video frame
    /// source (`roboaudit-video`).
    Video,
    /// Anything else (strings, unknown dtypes): listed, never read as numbers.
    Other,
}

/// Axis order of an image or video feature's `shape`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageLayout {
    /// `[height, width, channels]`.
    Hwc,
    /// `[channels, height, width]`.
    Chw,
}

/// Codec and rate of a video feature (`info` or `video_info` in `meta/info.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VideoInfo {
    /// `video.codec` as declared (e.g. `av1`, `h264`), when given.
    pub codec: Option<String>,
    /// `video.fps` in frames per second, when given.
    pub fps: Option<f64>,
}

/// One entry of `features` in `meta/info.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feature {
    /// Feature key, which is also the Parquet column name for non-video features.
    pub name: String,
    /// `dtype` as declared (`float32`, `int64`, `bool`, `image`, `video`, `string`, ...).
    pub dtype: String,
    /// `shape` as declared; `[1]` for scalars.
    pub shape: Vec<usize>,
    /// Element names, flattened from a list, a nested list, or the lists of a dict; `None`
    /// when the file gives none.
    pub names: Option<Vec<String>>,
    /// How the feature is stored.
    pub kind: FeatureKind,
    /// For image and video features with a 3-axis shape: its axis order (CHW when the first
    /// axis is 1, 3 or 4 and the last is not, HWC otherwise).
    pub layout: Option<ImageLayout>,
    /// Per-feature `fps` (older converted files), when given.
    pub fps: Option<f64>,
    /// Video codec and rate, for video features.
    pub video: Option<VideoInfo>,
}

impl Feature {
    /// Number of values per frame (product of `shape`), e.g. 6 for `[6]`, 1 for `[1]`.
    pub fn width(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the feature is a camera: an `image` feature (PNG frames) or a `video` feature
    /// (MP4 frames decoded by timestamp).
    pub fn is_camera(&self) -> bool {
        matches!(self.kind, FeatureKind::Image | FeatureKind::Video)
    }
}

/// The parsed `meta/info.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Info {
    /// Format version.
    pub version: LeRobotVersion,
    /// Frames per second (integer or float in the file).
    pub fps: f64,
    /// `robot_type`, when given and not null.
    pub robot_type: Option<String>,
    /// `total_episodes`.
    pub total_episodes: Option<u64>,
    /// `total_frames`.
    pub total_frames: Option<u64>,
    /// `total_tasks`.
    pub total_tasks: Option<u64>,
    /// `chunks_size` (episodes or files per chunk folder); 1000 when absent.
    pub chunks_size: u64,
    /// `data_path` template (LeRobot's default for the version when absent).
    pub data_path: String,
    /// `video_path` template, when the dataset has one.
    pub video_path: Option<String>,
    /// Features sorted by name, the five bookkeeping columns (`timestamp`, `frame_index`,
    /// `episode_index`, `index`, `task_index`) last.
    pub features: Vec<Feature>,
}

/// Columns every LeRobot data file has besides the features.
pub(crate) const STANDARD_COLUMNS: [&str; 5] = [
    "timestamp",
    "frame_index",
    "episode_index",
    "index",
    "task_index",
];

fn bad(file: &Path, message: impl Into<String>) -> DataError {
    DataError::invalid(file, None, None, message)
}

/// Reads and checks `meta/info.json`.
///
/// # Errors
/// [`DataError::Io`] when the file cannot be read; [`DataError::Invalid`] when it is not JSON
/// (with serde's line and column), for an unsupported `codebase_version`, a missing or non-positive
/// `fps`, or a malformed feature (naming the feature).
pub fn read_info(file: &Path) -> Result<Info, DataError> {
    let text = std::fs::read_to_string(file).map_err(|e| DataError::io(file, "read", e))?;
    // One JSON document, not JSONL: serde's own "line L column C" locates the fault, and a
    // "row" would mislead.
    let root: Value =
        serde_json::from_str(&text).map_err(|e| bad(file, format!("invalid JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(bad(file, "expected a JSON object at the top level"));
    };
    let version = match root.get("codebase_version").and_then(Value::as_str) {
        Some("v2.1") => LeRobotVersion::V2_1,
        Some("v3.0") => LeRobotVersion::V3_0,
        Some(other) => {
            return Err(bad(
                file,
                format!(
                    "codebase_version \"{other}\" is not supported (v2.1 and v3.0 are; convert with LeRobot's conversion scripts)"
                ),
            ));
        }
        None => return Err(bad(file, "missing \"codebase_version\"")),
    };
    let fps = match root.get("fps").and_then(Value::as_f64) {
        Some(f) if f.is_finite() && f > 0.0 => f,
        Some(f) => return Err(bad(file, format!("fps must be positive, got {f}"))),
        None => return Err(bad(file, "missing or non-numeric \"fps\"")),
    };
    let default_data = match version {
        LeRobotVersion::V2_1 => {
            "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
        }
        LeRobotVersion::V3_0 => "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
    };
    let Some(Value::Object(feature_map)) = root.get("features") else {
        return Err(bad(file, "missing \"features\" object"));
    };
    let features = feature_map
        .iter()
        .map(|(name, spec)| parse_feature(file, name, spec))
        .collect::<Result<Vec<Feature>, _>>()?;
    // A path template that leaves the dataset folder would read files that are not the
    // dataset's (and name them in its errors).
    for key in ["data_path", "video_path"] {
        if let Some(template) = root.get(key).and_then(Value::as_str) {
            let escapes = Path::new(template).components().any(|c| {
                !matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
            if escapes {
                return Err(bad(
                    file,
                    format!(
                        "{key} \"{template}\" leaves the dataset folder (an absolute path or \
                         \"..\"); LeRobot's templates are relative, e.g. \"{default_data}\""
                    ),
                ));
            }
        }
    }
    // serde_json sorts keys; list the dataset's own features first, the bookkeeping columns last.
    let mut features = features;
    features.sort_by_key(|f| STANDARD_COLUMNS.contains(&f.name.as_str()));
    Ok(Info {
        version,
        fps,
        robot_type: root
            .get("robot_type")
            .and_then(Value::as_str)
            .map(str::to_owned),
        total_episodes: root.get("total_episodes").and_then(Value::as_u64),
        total_frames: root.get("total_frames").and_then(Value::as_u64),
        total_tasks: root.get("total_tasks").and_then(Value::as_u64),
        chunks_size: root
            .get("chunks_size")
            .and_then(Value::as_u64)
            .filter(|c| *c > 0)
            .unwrap_or(1000),
        data_path: root
            .get("data_path")
            .and_then(Value::as_str)
            .unwrap_or(default_data)
            .to_owned(),
        video_path: root
            .get("video_path")
            .and_then(Value::as_str)
            .map(str::to_owned),
        features,
    })
}

fn parse_feature(file: &Path, name: &str, spec: &Value) -> Result<Feature, DataError> {
    let bad_feature = |message: String| {
        DataError::invalid(
            file,
            None,
            Some(name),
            format!("feature \"{name}\": {message}"),
        )
    };
    let Value::Object(spec) = spec else {
        return Err(bad_feature("expected an object".to_owned()));
    };
    let dtype = spec
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or_else(|| bad_feature("missing \"dtype\"".to_owned()))?
        .to_owned();
    let shape = match spec.get("shape") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_u64().and_then(|u| usize::try_from(u).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| {
                bad_feature(format!(
                    "shape must list non-negative integers, got {}",
                    Value::Array(items.clone())
                ))
            })?,
        Some(Value::Number(n)) => vec![
            n.as_u64()
                .and_then(|u| usize::try_from(u).ok())
                .ok_or_else(|| bad_feature(format!("bad shape {n}")))?,
        ],
        None | Some(Value::Null) => vec![1],
        Some(other) => return Err(bad_feature(format!("bad shape {other}"))),
    };
    let kind = match dtype.as_str() {
        "video" => FeatureKind::Video,
        "image" => FeatureKind::Image,
        "float16" | "float32" | "float64" | "int8" | "int16" | "int32" | "int64" | "uint8"
        | "uint16" | "uint32" | "uint64" | "bool" => FeatureKind::Numeric,
        _ => FeatureKind::Other,
    };
    let layout = matches!(kind, FeatureKind::Image | FeatureKind::Video)
        .then(|| image_layout(&shape))
        .flatten();
    let video = (kind == FeatureKind::Video).then(|| {
        let info = spec
            .get("info")
            .or_else(|| spec.get("video_info"))
            .and_then(Value::as_object);
        VideoInfo {
            codec: info
                .and_then(|i| i.get("video.codec"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            fps: info
                .and_then(|i| i.get("video.fps"))
                .and_then(Value::as_f64),
        }
    });
    Ok(Feature {
        name: name.to_owned(),
        dtype,
        shape,
        names: spec.get("names").and_then(flatten_names),
        kind,
        layout,
        fps: spec.get("fps").and_then(Value::as_f64),
        video,
    })
}

/// CHW when the first axis looks like channels and the last does not; HWC otherwise.
fn image_layout(shape: &[usize]) -> Option<ImageLayout> {
    let is_channels = |c: usize| matches!(c, 1 | 3 | 4);
    match shape {
        [c, _, last] if is_channels(*c) && !is_channels(*last) => Some(ImageLayout::Chw),
        [_, _, _] => Some(ImageLayout::Hwc),
        _ => None,
    }
}

/// Flattens `["a", "b"]`, `[["a", "b"]]` and `{"motors": ["a", "b"]}` to `["a", "b"]`.
fn flatten_names(value: &Value) -> Option<Vec<String>> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    if value.is_null() {
        return None;
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    Some(out)
}

/// Fills a LeRobot path template: `{key}` and `{key:0Nd}` placeholders, integers or strings.
pub(crate) fn fill_template(template: &str, values: &[(&str, TemplateValue<'_>)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let placeholder = &after[..close];
        let (key, spec) = placeholder
            .split_once(':')
            .map_or((placeholder, ""), |(k, s)| (k, s));
        match values.iter().find(|(k, _)| *k == key).map(|(_, v)| v) {
            Some(TemplateValue::Int(i)) => {
                let width = spec
                    .trim_start_matches('0')
                    .trim_end_matches('d')
                    .parse::<usize>()
                    .unwrap_or(0);
                out.push_str(&format!("{i:0width$}"));
            }
            Some(TemplateValue::Str(s)) => out.push_str(s),
            None => {
                out.push('{');
                out.push_str(placeholder);
                out.push('}');
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A value substituted into a path template.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TemplateValue<'a> {
    Int(i64),
    Str(&'a str),
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_truncated_info_json_is_located_by_line_and_column_not_by_row() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("info.json");
        std::fs::write(&file, "{\n  \"codebase_version\": \"v3.0\",\n  \"fps\": 3").unwrap();
        let e = read_info(&file).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("line 3 column"), "{text}");
        assert!(!text.contains("row"), "{text}");
        assert!(text.contains("info.json"), "{text}");
        assert_eq!(e.row(), None);
    }

    #[test]
    fn templates_fill_padded_integers_and_strings() {
        let path = fill_template(
            "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
            &[
                ("video_key", TemplateValue::Str("observation.image")),
                ("chunk_index", TemplateValue::Int(2)),
                ("file_index", TemplateValue::Int(45)),
            ],
        );
        assert_eq!(path, "videos/observation.image/chunk-002/file-045.mp4");
        assert_eq!(
            fill_template(
                "e_{episode_index:06d}_{x}",
                &[("episode_index", TemplateValue::Int(7))]
            ),
            "e_000007_{x}"
        );
    }

    #[test]
    fn names_flatten_from_every_variant() {
        let v: Value = serde_json::from_str(r#"{"motors": ["a", "b"]}"#).unwrap();
        assert_eq!(flatten_names(&v).unwrap(), vec!["a", "b"]);
        let v: Value = serde_json::from_str(r#"[["a", "b"]]"#).unwrap();
        assert_eq!(flatten_names(&v).unwrap(), vec!["a", "b"]);
        assert_eq!(flatten_names(&Value::Null), None);
    }

    #[test]
    fn layouts() {
        assert_eq!(image_layout(&[3, 96, 96]), Some(ImageLayout::Chw));
        assert_eq!(image_layout(&[96, 96, 3]), Some(ImageLayout::Hwc));
        assert_eq!(image_layout(&[3, 4, 3]), Some(ImageLayout::Hwc));
        assert_eq!(image_layout(&[96, 96]), None);
    }
}
