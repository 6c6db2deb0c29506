//! The FQE section's frame strip: what the evaluated dataset looks like, task by task.
//!
//! A reader of an estimate table sees policy and task names; the strip shows the scene each task
//! starts from and where its first episode ended, which is what a reader checks first when a
//! number looks wrong. Frames come from the dataset the fit recorded (`fqe.json`'s `dataset`),
//! found again by its fingerprint, through the same frame readers as the fit (PNG `image` and
//! decoded `video` features alike).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use roboaudit_data::DataError;
use roboaudit_data::lerobot::{DEFAULT_TOLERANCE_S, FeatureKind, LeRobotDataset, Rgb8Image};
use roboaudit_fqe::{DatasetIdentity, FqeReport};

use crate::model::{FrameStrip, TaskFrames, Thumbnail};

/// Height in pixels of the strip's thumbnails (smaller frames are kept at their size).
pub const THUMBNAIL_HEIGHT: u32 = 96;

/// The strip of `report` (read from `fqe_file`), or why there is none: no dataset recorded, the
/// dataset not found where the fit saw it (absolute path, or relative to the report's folder, one
/// of its parents, or the working folder) with the same fingerprint, no camera, or a frame that
/// cannot be read. A missing strip never fails the report: the estimates stand without it.
pub(crate) fn strip(report: &FqeReport, fqe_file: &Path) -> Result<FrameStrip, String> {
    let identity = report
        .dataset
        .as_ref()
        .ok_or("the fit recorded no dataset (its fqe.json has no `dataset` field)")?;
    let (root, dataset) = locate(identity, fqe_file)?;
    let camera = camera(report, &dataset)
        .ok_or_else(|| format!("dataset {} has no image or video feature", root.display()))?;
    // Per task: its first episode and the frames shown of it (first and last).
    let mut rows: Vec<(&String, i64, Vec<i64>)> = Vec::new();
    for task in &report.tasks {
        let Some(ep) = dataset
            .episodes()
            .iter()
            .filter(|e| e.tasks.iter().any(|t| t == task))
            .min_by_key(|e| e.index)
        else {
            continue;
        };
        let last = ep
            .length
            .and_then(|l| i64::try_from(l).ok())
            .filter(|l| *l > 0)
            .map_or(0, |l| l - 1);
        rows.push((
            task,
            ep.index,
            if last > 0 { vec![0, last] } else { vec![0] },
        ));
    }
    let wanted = rows
        .iter()
        .flat_map(|(_, ep, frames)| frames.iter().map(move |f| (*ep, *f)));
    let images = read_frames(&dataset, &camera, wanted).map_err(|e| {
        format!(
            "cannot read a frame for the strip: {}",
            roboaudit_types::error_chain(&e)
        )
    })?;
    let mut tasks = Vec::new();
    for (task, episode, frames) in rows {
        let frames = frames
            .iter()
            .map(|f| match images.get(&(episode, *f)) {
                Some(image) => thumbnail(image, *f),
                None => Err(format!("episode {episode} has no frame {f} in {camera}")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        tasks.push(TaskFrames {
            task: task.clone(),
            episode,
            frames,
        });
    }
    if tasks.is_empty() {
        return Err(format!(
            "no episode of dataset {} has one of the report's tasks",
            root.display()
        ));
    }
    Ok(FrameStrip {
        dataset: root,
        camera,
        tasks,
    })
}

/// The frames `wanted` ((episode, frame) pairs) of camera `camera`: an `image` feature's in
/// one pass over the data files (reading frames one by one would stream a file once per frame),
/// a `video` feature's each by its own seek (a pass would read every MP4 file whole to key it).
fn read_frames(
    dataset: &LeRobotDataset,
    camera: &str,
    wanted: impl Iterator<Item = (i64, i64)>,
) -> Result<BTreeMap<(i64, i64), Rgb8Image>, DataError> {
    let mut out: BTreeMap<(i64, i64), Option<Rgb8Image>> = wanted.map(|k| (k, None)).collect();
    if dataset.feature(camera).map(|f| f.kind) == Some(FeatureKind::Image) {
        dataset.for_each_image::<DataError>(camera, &mut |img| {
            if let Some(slot) = out.get_mut(&(img.episode_index, img.frame_index)) {
                *slot = Some(img.decode()?);
            }
            Ok(())
        })?;
    } else {
        for (&(episode, frame), slot) in &mut out {
            *slot = Some(dataset.read_frame(episode, frame, camera, DEFAULT_TOLERANCE_S)?);
        }
    }
    Ok(out
        .into_iter()
        .filter_map(|(k, image)| Some((k, image?)))
        .collect())
}

/// The dataset folder whose fingerprint is the fit's, searched where a relative path may have
/// been meant.
fn locate(
    identity: &DatasetIdentity,
    fqe_file: &Path,
) -> Result<(PathBuf, LeRobotDataset), String> {
    let recorded = &identity.path;
    let mut candidates = Vec::new();
    if recorded.is_absolute() {
        candidates.push(recorded.clone());
    } else {
        if let Some(dir) = fqe_file.parent() {
            candidates.extend(dir.ancestors().map(|a| a.join(recorded)));
        }
        candidates.push(recorded.clone());
    }
    let mut seen_other = None;
    let mut unreadable = None;
    for dir in candidates.iter().filter(|c| c.is_dir()) {
        let ds = match LeRobotDataset::open(dir) {
            Ok(ds) => ds,
            Err(e) => {
                unreadable.get_or_insert_with(|| {
                    format!("{}: {}", dir.display(), roboaudit_types::error_chain(&e))
                });
                continue;
            }
        };
        match DatasetIdentity::of(&ds) {
            Ok(found) if found.same_dataset(identity) => return Ok((dir.clone(), ds)),
            Ok(found) => seen_other = Some(found),
            Err(e) => {
                unreadable.get_or_insert_with(|| {
                    format!("{}: {}", dir.display(), roboaudit_types::error_chain(&e))
                });
            }
        }
    }
    Err(match (seen_other, unreadable) {
        (Some(other), _) => format!(
            "the dataset at {} is not the one the fit used ({} against {})",
            other.path.display(),
            other.fingerprint,
            identity.fingerprint
        ),
        (None, Some(reason)) => format!("the dataset cannot be read: {reason}"),
        (None, None) => format!(
            "dataset {} not found beside {}",
            recorded.display(),
            fqe_file.display()
        ),
    })
}

/// The fit's image feature (`image:KEY` in its load summary) when the dataset has it, else the
/// dataset's first camera in name order.
fn camera(report: &FqeReport, dataset: &LeRobotDataset) -> Option<String> {
    let is_camera = |name: &str| {
        dataset
            .feature(name)
            .is_some_and(roboaudit_data::lerobot::Feature::is_camera)
    };
    let fitted = report.image_feature().filter(|k| is_camera(k));
    if let Some(key) = fitted {
        return Some(key.to_owned());
    }
    let mut names: Vec<&str> = dataset
        .features()
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| is_camera(n))
        .collect();
    names.sort_unstable();
    names.first().map(|n| (*n).to_owned())
}

/// `image` scaled by area averaging to at most [`THUMBNAIL_HEIGHT`] rows (aspect kept, width at
/// least 1), as a base64 PNG.
fn thumbnail(image: &Rgb8Image, frame: i64) -> Result<Thumbnail, String> {
    let (w, h) = (u64::from(image.width), u64::from(image.height));
    let height = h.min(u64::from(THUMBNAIL_HEIGHT)).max(1);
    // Rounded to the nearest pixel: w · height / h.
    let width = ((w * height + h / 2) / h.max(1)).max(1);
    let (width, height) = (
        u32::try_from(width).map_err(|_| "frame too wide".to_owned())?,
        u32::try_from(height).map_err(|_| "frame too high".to_owned())?,
    );
    let small = if (width, height) == (image.width, image.height) {
        image.clone()
    } else {
        let values =
            roboaudit_fqe::encoder::area_resample_to(image, width as usize, height as usize)
                .map_err(|e| roboaudit_types::error_chain(&e))?;
        Rgb8Image {
            width,
            height,
            pixels: values
                .iter()
                .map(|v| (v * 255.0).round().clamp(0.0, 255.0) as u8)
                .collect(),
        }
    };
    let png = small.to_png()?;
    Ok(Thumbnail {
        frame,
        width,
        height,
        png_base64: base64::engine::general_purpose::STANDARD.encode(png),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn thumbnails_keep_the_aspect_and_average_blocks() {
        // 384 × 192 of two halves, black | white: 96 rows high gives 192 × 96, halves kept.
        let (w, h) = (384u32, 192u32);
        let pixels = (0..h)
            .flat_map(|_| (0..w).flat_map(|x| [if x < w / 2 { 0u8 } else { 255 }; 3]))
            .collect();
        let t = thumbnail(
            &Rgb8Image {
                width: w,
                height: h,
                pixels,
            },
            7,
        )
        .unwrap();
        assert_eq!((t.frame, t.width, t.height), (7, 192, 96));
        let png = base64::engine::general_purpose::STANDARD
            .decode(&t.png_base64)
            .unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut rgb).unwrap();
        let at = |x: usize, y: usize| &rgb[(y * 192 + x) * 3..(y * 192 + x) * 3 + 3];
        assert_eq!(at(95, 50), [0, 0, 0]);
        assert_eq!(at(96, 50), [255, 255, 255]);
        // A 3 × 1 frame is below the height: kept as it is.
        let tiny = Rgb8Image {
            width: 3,
            height: 1,
            pixels: vec![1, 2, 3, 4, 5, 6, 7, 8, 9],
        };
        let t = thumbnail(&tiny, 0).unwrap();
        assert_eq!((t.width, t.height), (3, 1));
    }
}
