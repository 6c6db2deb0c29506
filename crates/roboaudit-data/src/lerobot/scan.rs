//! The data pass of `inspect`: reads every data file once and checks rows against metadata.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use arrow_schema::DataType;

use super::LeRobotDataset;
use super::image::decode_png;
use super::info::{FeatureKind, ImageLayout, STANDARD_COLUMNS};
use super::inspect::{EpisodeScan, Problems};
use super::meta::parquet_files;
use super::table::ParquetTable;

/// Largest accepted |timestamp − frame_index / fps|, seconds (LeRobot's own tolerance).
const TIMESTAMP_TOLERANCE_S: f64 = 1e-4;

/// Whether `fqe fit` and `data detect` read column `name` with their default options (the
/// action, the proprioception, an image feature), so that a bad value there stops them.
fn read_by_default(ds: &LeRobotDataset, name: &str) -> bool {
    name == "action"
        || name == "observation.state"
        || ds
            .feature(name)
            .is_some_and(|f| f.kind == FeatureKind::Image)
}

#[derive(Debug, Default)]
pub(crate) struct Scanned {
    pub rows: usize,
    pub files: usize,
    pub unreadable_files: usize,
    /// Data files (relative) that exist but cannot be read at all: their episodes are not
    /// checked one by one (one problem per file says how many episodes it holds).
    pub unreadable: HashSet<std::path::PathBuf>,
    /// Data files whose scan stopped at a value it could not read (a null, a wrong type): one
    /// problem names it, and their episodes are not reported as empty.
    pub unscanned: HashSet<std::path::PathBuf>,
    pub episodes: BTreeMap<i64, EpisodeScan>,
    pub storage: HashMap<String, String>,
    pub notes: HashMap<String, String>,
    /// Every column name seen in a readable data file.
    pub columns_seen: HashSet<String>,
    pub(super) reward: Option<RewardStats>,
    pub(super) done_column: Option<String>,
    pub(super) success_columns: Vec<String>,
}

#[derive(Debug)]
pub(super) struct RewardStats {
    pub(super) column: String,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) sum: f64,
    pub(super) count: usize,
    pub(super) nonzero: usize,
    pub(super) binary: bool,
}

fn storage_name(t: &DataType) -> String {
    match t {
        DataType::FixedSizeList(f, n) => format!("fixed_size_list<{}>[{n}]", f.data_type()),
        DataType::List(f) => format!("list<{}>", f.data_type()),
        DataType::LargeList(f) => format!("large_list<{}>", f.data_type()),
        other => other.to_string().to_ascii_lowercase(),
    }
}

/// Reads every data file the episodes metadata points to, records per-episode facts and
/// pushes problems for what disagrees.
pub(crate) fn scan_data(ds: &LeRobotDataset, problems: &mut Problems) -> Scanned {
    let declared = |name: &str| ds.feature(name).is_some();
    let mut out = Scanned {
        success_columns: ds
            .features()
            .iter()
            .filter(|f| f.kind == FeatureKind::Numeric && f.name.ends_with("success"))
            .map(|f| f.name.clone())
            .collect(),
        done_column: ["next.done", "done"]
            .into_iter()
            .find(|c| declared(c))
            .map(str::to_owned),
        ..Scanned::default()
    };
    let reward_column = ["next.reward", "reward"].into_iter().find(|c| declared(c));
    let mut files: BTreeMap<&Path, HashSet<i64>> = BTreeMap::new();
    for ep in ds.episodes() {
        files
            .entry(ep.data_file.as_path())
            .or_default()
            .insert(ep.index);
    }
    out.files = files.len();
    report_unreferenced(ds, &files, problems);
    let mut all_index: Vec<i64> = Vec::new();
    for (rel, eps) in &files {
        let full = ds.root().join(rel);
        if !full.is_file() {
            out.unreadable_files += 1;
            let mut list: Vec<i64> = eps.iter().copied().collect();
            list.sort_unstable();
            problems.push_blocking(
                "missing data file",
                rel,
                list.first().copied(),
                None,
                format!("data file is missing; it holds episodes {list:?}"),
            );
            continue;
        }
        let table = match ParquetTable::read(&full, &|_| true) {
            Ok(t) => t,
            Err(e) => {
                out.unreadable_files += 1;
                out.unreadable.insert(rel.to_path_buf());
                // The reader's reason sits in the source chain ("Corrupt footer", ...).
                let reason = roboaudit_types::error_chain(&e);
                problems.push_blocking(
                    "unreadable data file",
                    rel,
                    None,
                    None,
                    format!(
                        "cannot read: {reason}; its {} episode(s) cannot be checked",
                        eps.len()
                    ),
                );
                continue;
            }
        };
        if let Err(e) = scan_file(
            ds,
            rel,
            &table,
            eps,
            reward_column,
            &mut out,
            &mut all_index,
            problems,
        ) {
            out.unreadable_files += 1;
            out.unscanned.insert(rel.to_path_buf());
            problems.push_blocking(
                "bad column",
                rel,
                None,
                e.row(),
                format!(
                    "{}; its {} episode(s) are not checked further",
                    roboaudit_types::error_chain(&e),
                    eps.len()
                ),
            );
        }
    }
    check_index(&mut all_index, problems);
    check_episodes(ds, &out, &files, problems);
    out
}

fn report_unreferenced(
    ds: &LeRobotDataset,
    files: &BTreeMap<&Path, HashSet<i64>>,
    problems: &mut Problems,
) {
    let data_dir = ds.root().join("data");
    let Ok(on_disk) = parquet_files(&data_dir) else {
        return;
    };
    for file in on_disk {
        let rel = file.strip_prefix(ds.root()).unwrap_or(&file);
        if !files.contains_key(rel) {
            problems.push(
                "unreferenced data file",
                rel,
                None,
                None,
                "data file is not referenced by any episode in the metadata (not read)",
            );
        }
    }
}

#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
fn scan_file(
    ds: &LeRobotDataset,
    rel: &Path,
    table: &ParquetTable,
    eps: &HashSet<i64>,
    reward_column: Option<&str>,
    out: &mut Scanned,
    all_index: &mut Vec<i64>,
    problems: &mut Problems,
) -> Result<(), crate::DataError> {
    out.columns_seen.extend(table.all_names.iter().cloned());
    for f in ds.features() {
        if f.kind != FeatureKind::Video && !table.all_names.contains(&f.name) {
            let message = format!(
                "declared feature \"{}\" has no column in the data file",
                f.name
            );
            if read_by_default(ds, &f.name) {
                problems.push_blocking("missing column", rel, None, None, message);
            } else {
                problems.push("missing column", rel, None, None, message);
            }
        }
    }
    for name in &table.all_names {
        if ds.feature(name).is_none() && !STANDARD_COLUMNS.contains(&name.as_str()) {
            problems.push(
                "undeclared column",
                rel,
                None,
                None,
                format!("column \"{name}\" is not declared in meta/info.json"),
            );
        }
    }
    let episodes = table.ints("episode_index")?;
    let frames = table.ints("frame_index")?;
    let index = table.ints("index")?;
    let timestamps = if table.has("timestamp") {
        Some(table.numbers("timestamp")?)
    } else {
        None
    };
    for f in ds
        .features()
        .iter()
        .filter(|f| f.kind == FeatureKind::Numeric)
    {
        if !table.has(&f.name) {
            continue;
        }
        if let Some(t) = table.data_type(&f.name) {
            out.storage
                .entry(f.name.clone())
                .or_insert_with(|| storage_name(&t));
        }
        let values = table.vectors(&f.name)?;
        let width = f.width();
        let blocking = read_by_default(ds, &f.name);
        if let Some(k) = values.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
            let bad = values
                .iter()
                .filter(|v| v.iter().any(|x| !x.is_finite()))
                .count();
            let message = format!(
                "column \"{}\": {bad} rows hold NaN or infinite values (first: row {}, episode {}, frame_index {}: {:?})",
                f.name,
                k + 1,
                episodes[k],
                frames[k],
                values[k]
            );
            let (episode, row) = (Some(episodes[k]), Some(k + 1));
            if blocking {
                problems.push_blocking("non-finite", rel, episode, row, message);
            } else {
                problems.push("non-finite", rel, episode, row, message);
            }
        }
        if let Some(k) = values.iter().position(|v| v.len() != width) {
            let bad = values.iter().filter(|v| v.len() != width).count();
            let message = format!(
                "column \"{}\": {bad} rows do not have the {width} values of the declared shape (row {} has {})",
                f.name,
                k + 1,
                values[k].len()
            );
            if blocking {
                problems.push_blocking(
                    "width",
                    rel,
                    episodes.get(k).copied(),
                    Some(k + 1),
                    message,
                );
            } else {
                problems.push("width", rel, episodes.get(k).copied(), Some(k + 1), message);
            }
        } else if matches!(
            table.data_type(&f.name),
            Some(DataType::List(_) | DataType::LargeList(_))
        ) && width > 1
        {
            out.notes.entry(f.name.clone()).or_insert_with(|| {
                format!("variable-size list; every row read has {width} values")
            });
        }
    }
    for f in ds
        .features()
        .iter()
        .filter(|f| f.kind == FeatureKind::Image)
    {
        if let Some(t) = table.data_type(&f.name) {
            if !out.storage.contains_key(&f.name) && table.rows > 0 {
                check_first_image(ds, rel, table, f, problems);
            }
            check_image_sample(ds, rel, table, &f.name, &episodes, &frames, problems);
            out.storage
                .entry(f.name.clone())
                .or_insert_with(|| storage_name(&t));
        }
    }
    let success: Vec<(String, Vec<Option<f64>>)> = out
        .success_columns
        .iter()
        .filter(|c| table.has(c))
        .map(|c| table.numbers(c).map(|v| (c.clone(), v)))
        .collect::<Result<_, _>>()?;
    let rewards = match reward_column {
        Some(c) if table.has(c) => Some(table.numbers(c)?),
        _ => None,
    };
    let done = match &out.done_column {
        Some(c) if table.has(c) => Some(table.numbers(c)?),
        _ => None,
    };
    let task_ids: HashSet<i64> = ds.tasks().iter().map(|t| t.index).collect();
    let tasks = if table.has("task_index") {
        Some(table.ints("task_index")?)
    } else {
        None
    };
    let fps = ds.fps();
    for k in 0..table.rows {
        let (ep, frame, row) = (episodes[k], frames[k], k + 1);
        if !eps.contains(&ep) {
            let told = ds.episode(ep).map_or_else(
                || "the episodes metadata does not describe it".to_owned(),
                |e| format!("the metadata points it to {}", e.data_file.display()),
            );
            problems.push(
                "stray rows",
                rel,
                Some(ep),
                Some(row),
                format!("row of episode {ep} found in this file, but {told}"),
            );
        }
        let scan = out.episodes.entry(ep).or_default();
        let expected = scan.max_frame.map_or(0, |f| f + 1);
        if frame != expected {
            problems.push("frame_index", rel, Some(ep), Some(row),
                format!("frame_index is {frame}, expected {expected} (episodes must count frames 0, 1, 2, ...)"));
        }
        scan.max_frame = Some(scan.max_frame.map_or(frame, |f| f.max(frame)));
        scan.rows += 1;
        scan.min_index = Some(scan.min_index.map_or(index[k], |i| i.min(index[k])));
        scan.max_index = Some(scan.max_index.map_or(index[k], |i| i.max(index[k])));
        if let Some(ts) = timestamps.as_ref().and_then(|t| t[k]) {
            let expected = frame as f64 / fps;
            if (ts - expected).abs() > TIMESTAMP_TOLERANCE_S {
                problems.push(
                    "timestamp",
                    rel,
                    Some(ep),
                    Some(row),
                    format!("timestamp is {ts} s, frame_index/fps = {frame}/{fps} = {expected} s"),
                );
            }
        }
        for (name, values) in &success {
            let hit = values[k].is_some_and(|v| v != 0.0);
            *scan.success.entry(name.clone()).or_insert(false) |= hit;
        }
        if let Some(r) = rewards.as_ref().and_then(|r| r[k]) {
            if scan.last_reward.is_none_or(|(f, _)| frame >= f) {
                scan.last_reward = Some((frame, r));
            }
            let stats = out.reward.get_or_insert_with(|| RewardStats {
                column: reward_column.unwrap_or_default().to_owned(),
                min: r,
                max: r,
                sum: 0.0,
                count: 0,
                nonzero: 0,
                binary: true,
            });
            stats.min = stats.min.min(r);
            stats.max = stats.max.max(r);
            stats.sum += r;
            stats.count += 1;
            stats.nonzero += usize::from(r != 0.0);
            stats.binary &= r == 0.0 || r == 1.0;
        }
        if done.as_ref().and_then(|d| d[k]).is_some_and(|d| d != 0.0) {
            scan.done_frames.push(frame);
        }
        if let Some(t) = tasks.as_ref().map(|t| t[k])
            && !task_ids.contains(&t)
        {
            problems.push(
                "task_index",
                rel,
                Some(ep),
                Some(row),
                format!("task_index {t} is not in the tasks metadata"),
            );
        }
    }
    out.rows += table.rows;
    all_index.extend_from_slice(&index);
    Ok(())
}

/// Decodes the image of row `k` (0-based) of column `name`.
fn decode_cell(
    ds: &LeRobotDataset,
    table: &ParquetTable,
    name: &str,
    k: usize,
) -> Result<super::Rgb8Image, String> {
    let cell = table
        .image_cell(name, k)
        .map_err(|e| roboaudit_types::error_chain(&e))?;
    let bytes = match (cell.bytes, cell.path) {
        (Some(b), _) => b,
        (None, Some(p)) => std::fs::read(ds.root().join(&p))
            .map_err(|e| format!("cannot read image file {p}: {e}"))?,
        (None, None) => return Err("image has neither bytes nor a path".to_owned()),
    };
    decode_png(&bytes)
}

/// Decodes the first and last frame (by `frame_index`) of every episode in the file: the
/// terminal frame is the one the success detector reads, and a damaged file usually shows at
/// its ends; every frame would cost a full decoding pass.
fn check_image_sample(
    ds: &LeRobotDataset,
    rel: &Path,
    table: &ParquetTable,
    name: &str,
    episodes: &[i64],
    frames: &[i64],
    problems: &mut Problems,
) {
    // episode -> (row of its first frame, row of its last frame)
    let mut ends: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
    for (k, (ep, frame)) in episodes.iter().zip(frames).enumerate() {
        let e = ends.entry(*ep).or_insert((k, k));
        if *frame < frames[e.0] {
            e.0 = k;
        }
        if *frame > frames[e.1] {
            e.1 = k;
        }
    }
    for (ep, (first, last)) in ends {
        let rows = if first == last {
            vec![first]
        } else {
            vec![first, last]
        };
        for k in rows {
            if let Err(message) = decode_cell(ds, table, name, k) {
                problems.push_blocking(
                    "undecodable image",
                    rel,
                    Some(ep),
                    Some(k + 1),
                    format!(
                        "image feature \"{name}\", episode {ep}, frame_index {}: {message}",
                        frames[k]
                    ),
                );
            }
        }
    }
}

/// Decodes the first image of an `image` feature and compares its size with the declared
/// shape (read as HWC or CHW, see [`super::ImageLayout`]). An undecodable one is left to
/// [`check_image_sample`], which decodes it too.
fn check_first_image(
    ds: &LeRobotDataset,
    rel: &Path,
    table: &ParquetTable,
    feature: &super::Feature,
    problems: &mut Problems,
) {
    let name = &feature.name;
    match decode_cell(ds, table, name, 0) {
        Err(_) => {}
        Ok(img) => {
            let (h, w) = match (feature.layout, feature.shape.as_slice()) {
                (Some(ImageLayout::Chw), [_, h, w]) | (Some(ImageLayout::Hwc), [h, w, _]) => {
                    (*h, *w)
                }
                _ => return,
            };
            if (img.width as usize, img.height as usize) != (w, h) {
                problems.push("image", rel, None, Some(1), format!(
                    "image feature \"{name}\": the first image is {}×{} (width×height), the declared shape {:?} says {w}×{h}",
                    img.width, img.height, feature.shape));
            }
        }
    }
}

/// The global `index` over all files must be exactly 0..N−1; a repeat blocks.
fn check_index(all: &mut [i64], problems: &mut Problems) {
    all.sort_unstable();
    for (k, &i) in all.iter().enumerate() {
        let expected = i64::try_from(k).unwrap_or(i64::MAX);
        if i != expected {
            let repeats = k > 0 && all[k - 1] == i;
            let what = if repeats { "repeats" } else { "skips to" };
            let message = format!(
                "the global index over all data files is not 0..{}: at position {k} it {what} {i}",
                all.len().saturating_sub(1)
            );
            // Frames and policy-actions files are matched by the index: a gap is harmless, a
            // repeat makes two frames indistinguishable, and `fqe fit` refuses it.
            if repeats {
                problems.push_blocking("index", Path::new("data"), None, None, message);
            } else {
                problems.push("index", Path::new("data"), None, None, message);
            }
            return;
        }
    }
}

fn check_episodes(
    ds: &LeRobotDataset,
    scanned: &Scanned,
    files: &BTreeMap<&Path, HashSet<i64>>,
    problems: &mut Problems,
) {
    let readable: HashSet<&Path> = files
        .keys()
        .copied()
        .filter(|f| ds.root().join(f).is_file() && !scanned.unreadable.contains(*f))
        .collect();
    for ep in ds.episodes() {
        if scanned.unscanned.contains(ep.data_file.as_path()) {
            continue;
        }
        let Some(scan) = scanned.episodes.get(&ep.index) else {
            if readable.contains(ep.data_file.as_path()) {
                problems.push_blocking(
                    "empty episode",
                    &ep.data_file,
                    Some(ep.index),
                    None,
                    format!("episode {} has no rows in its data file", ep.index),
                );
            }
            continue;
        };
        if let Some(length) = ep.length
            && length != scan.rows as u64
        {
            problems.push(
                "episode length",
                &ep.meta_file,
                Some(ep.index),
                Some(ep.meta_row),
                format!(
                    "episode {} has length {length} in the metadata, {} rows in {}",
                    ep.index,
                    scan.rows,
                    ep.data_file.display()
                ),
            );
        }
        if let (Some(from), Some(to), Some(lo), Some(hi)) =
            (ep.from_index, ep.to_index, scan.min_index, scan.max_index)
            && (from != lo || to != hi + 1)
        {
            problems.push("index range", &ep.meta_file, Some(ep.index), Some(ep.meta_row), format!(
                "episode {}: dataset_from_index..dataset_to_index is {from}..{to}, its rows have index {lo}..{}",
                ep.index, hi + 1));
        }
    }
}
