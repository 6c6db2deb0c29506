//! The detector's input (SPEC.md §3, seed 003 §3 "success detector"): one feature row per
//! episode from its terminal (last) frame. An `image` feature goes through the frozen
//! [`Encoder`] and the on-disk [`FeatureCache`] that FQE uses (so any encoder FQE gains works
//! here unchanged, and frames encoded once are reused by both); a numeric vector column is
//! standardized per column first, as FQE does. Both are reduced to principal components fitted
//! on the terminal frames of every episode, then each component is standardized (mean 0,
//! population deviation 1) over the same episodes.
//!
//! The components and the standardization never see a label, so fitting them on every episode
//! (labelled, held-out and unlabelled alike) leaks nothing into the held-out scores, and the
//! detector scored on held-out episodes is the one that labels the rest.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::Path;

use roboaudit_data::lerobot::LeRobotDataset;

use super::DetectorError;
use crate::FqeError;
use crate::cache::FeatureCache;
use crate::camera::for_each_camera_frame;
use crate::encoder::Encoder;
use crate::load::{FrameFeatures, PCA_ITERATIONS};
use crate::pca::CovarianceAccumulator;
use crate::vector::vector_part;

/// Standardized terminal-frame features of every episode of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalFeatures {
    /// `episode_index` of each row, in the dataset's episode order.
    pub episode_index: Vec<i64>,
    /// Global `index` of each episode's last frame (largest `frame_index`).
    pub terminal_index: Vec<i64>,
    /// Components per row (at most the requested number: directions without variance among
    /// the terminal frames are dropped).
    pub width: usize,
    /// `episodes × width`, row-major; each column has mean 0 and deviation 1 (or 0 if constant).
    pub values: Vec<f64>,
    /// Where the features came from, e.g. `observation.image:raw32-pca32`.
    pub name: String,
    /// Encoder id and weights hash (`raw32:none`) for an image feature.
    pub encoder: Option<String>,
    /// Terminal frames found in the feature cache.
    pub cache_hits: usize,
    /// Terminal frames encoded now.
    pub encoded: usize,
}

/// Reads, encodes and reduces the terminal frame of every episode of `ds`; `progress(done,
/// total)` is called after each terminal image is encoded or found in the cache.
///
/// # Errors
/// [`DetectorError::MissingFeature`] when `features` names an undeclared feature;
/// [`DetectorError::InvalidConfig`] for [`FrameFeatures::None`] or zero components;
/// [`DetectorError::Data`] from the reader (a non-camera feature read as an image, a
/// non-numeric vector column, an undecodable PNG — naming file, row and column; a `video`
/// feature's missing, truncated or undecodable MP4 or a timestamp outside it — naming file,
/// episode and frame);
/// [`DetectorError::InvalidFeature`] for a terminal frame without an image or value, or with a
/// non-finite value (naming column, episode, frame and data file); [`DetectorError::Fqe`] for
/// cache and component errors.
pub fn terminal_features(
    ds: &LeRobotDataset,
    features: &FrameFeatures,
    encoder: &Encoder,
    components: usize,
    cache_dir: Option<&Path>,
    seed: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<TerminalFeatures, DetectorError> {
    if components == 0 {
        return Err(DetectorError::InvalidConfig(
            "components must be at least 1".into(),
        ));
    }
    let key = match features {
        FrameFeatures::Image(k) | FrameFeatures::Vector(k) => k,
        FrameFeatures::None => {
            return Err(DetectorError::InvalidConfig(
                "the detector needs an image feature or a vector column, not none".into(),
            ));
        }
    };
    if ds.feature(key).is_none() {
        return Err(DetectorError::MissingFeature {
            feature: key.clone(),
            declared: ds.describe_features(),
            info: ds.root().join("meta/info.json"),
        });
    }
    let mut out = match features {
        FrameFeatures::Vector(column) => vector_features(ds, column, components, seed)?,
        _ => image_features(ds, key, encoder, components, cache_dir, seed, progress)?,
    };
    let (mean, std) = standardize_scores(&out.values, out.width);
    for row in out.values.chunks_exact_mut(out.width.max(1)) {
        for ((v, m), s) in row.iter_mut().zip(&mean).zip(&std) {
            *v = (*v - m) / s;
        }
    }
    Ok(out)
}

/// Per-column mean and population deviation of the component scores; a column whose
/// deviation is round-off (≤ 1e-9 · (1 + |mean|), as FQE's vector columns) keeps deviation 1,
/// so it maps to ≈ 0 instead of blowing noise up to unit scale.
fn standardize_scores(values: &[f64], width: usize) -> (Vec<f64>, Vec<f64>) {
    let n = values.len() / width.max(1);
    let mut mean = vec![0.0; width];
    let mut var = vec![0.0; width];
    let nf = n.max(1) as f64;
    for row in values.chunks_exact(width.max(1)) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v / nf;
        }
    }
    for row in values.chunks_exact(width.max(1)) {
        for ((s, v), m) in var.iter_mut().zip(row).zip(&mean) {
            *s += (v - m).powi(2) / nf;
        }
    }
    let std = var
        .iter()
        .zip(&mean)
        .map(|(v, m)| {
            let sd = v.sqrt();
            if sd <= 1e-9 * (1.0 + m.abs()) {
                1.0
            } else {
                sd
            }
        })
        .collect();
    (mean, std)
}

/// Last-frame values of a numeric column, standardized per column and reduced to components.
fn vector_features(
    ds: &LeRobotDataset,
    column: &str,
    components: usize,
    seed: u64,
) -> Result<TerminalFeatures, DetectorError> {
    let frames = ds.read_frames(&[column])?;
    let (mut episode_index, mut terminal_index, mut values) = (vec![], vec![], vec![]);
    let mut width = 0;
    for ep in &frames {
        let last = ep.column(column).and_then(<[Vec<f32>]>::last);
        let (Some(v), Some(index), Some(frame)) = (last, ep.index.last(), ep.frame_index.last())
        else {
            return Err(DetectorError::InvalidFeature {
                message: format!(
                    "episode {} has no \"{column}\" value for its terminal frame",
                    ep.episode_index
                ),
                file: data_file(ds, ep.episode_index),
            });
        };
        if v.iter().any(|x| !x.is_finite()) {
            return Err(DetectorError::InvalidFeature {
                message: format!(
                    "column \"{column}\", episode {}, terminal frame (frame_index {frame}, index {index}): non-finite value {v:?}; the detector cannot learn from NaN or infinite features",
                    ep.episode_index
                ),
                file: data_file(ds, ep.episode_index),
            });
        }
        width = v.len();
        episode_index.push(ep.episode_index);
        terminal_index.push(*index);
        values.extend_from_slice(v);
    }
    let n = episode_index.len();
    let (part, _) = vector_part(column, &values, width, components, n, seed)?;
    Ok(TerminalFeatures {
        episode_index,
        terminal_index,
        width: part.width,
        values: part.values.iter().map(|v| f64::from(*v)).collect(),
        name: part.name,
        encoder: None,
        cache_hits: 0,
        encoded: 0,
    })
}

/// Terminal images through the encoder and the cache, then principal components.
fn image_features(
    ds: &LeRobotDataset,
    feature: &str,
    encoder: &Encoder,
    components: usize,
    cache_dir: Option<&Path>,
    seed: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<TerminalFeatures, DetectorError> {
    // The bookkeeping columns alone: each episode's frames ordered by frame_index.
    let frames = ds.read_frames(&[])?;
    let mut episode_index = Vec::with_capacity(frames.len());
    let mut terminal_index = Vec::with_capacity(frames.len());
    for ep in &frames {
        if let Some(last) = ep.index.last() {
            episode_index.push(ep.episode_index);
            terminal_index.push(*last);
        }
    }
    let row_of: HashMap<i64, usize> = terminal_index
        .iter()
        .enumerate()
        .map(|(r, i)| (*i, r))
        .collect();
    let tmp;
    let dir = match cache_dir {
        Some(d) => d.to_path_buf(),
        None => {
            tmp = tempfile::tempdir()
                .map_err(|e| FqeError::io("create", &std::env::temp_dir(), e))?;
            tmp.path().to_path_buf()
        }
    };
    let cache = FeatureCache::open(&dir, &encoder.id(), &encoder.weights_hash(), encoder.dim())?;
    let total = terminal_index.len();
    let keys: RefCell<Vec<Option<u64>>> = RefCell::new(vec![None; total]);
    let (hits, encoded, done) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let cache = RefCell::new(cache);
    let progress = RefCell::new(progress);
    let step = || {
        done.set(done.get() + 1);
        (progress.borrow_mut())(done.get(), total);
    };
    // Only terminal frames are decoded and encoded (a PNG dataset's data files are streamed
    // once; a video file is decoded only around its terminal times, seeking across gaps
    // longer than `roboaudit_video::SEEK_GAP_S` rather than decoding every frame).
    for_each_camera_frame(
        ds,
        feature,
        &mut |r| {
            let Some(&row) = row_of.get(&r.index) else {
                return false;
            };
            if r.episode_index != episode_index[row] {
                return false;
            }
            keys.borrow_mut()[row] = Some(r.key);
            if cache.borrow().contains(r.key) {
                hits.set(hits.get() + 1);
                step();
                return false;
            }
            true
        },
        &mut |r, image| {
            let mut cache = cache.borrow_mut();
            // Two terminal frames of one content: encoded once.
            if !cache.contains(r.key) {
                cache.put(r.key, &encoder.encode(&image)?)?;
                encoded.set(encoded.get() + 1);
            } else {
                hits.set(hits.get() + 1);
            }
            step();
            Ok(())
        },
    )?;
    let mut cache = cache.into_inner();
    let (keys, hits, encoded) = (keys.into_inner(), hits.get(), encoded.get());
    cache.commit()?;
    let keys: Vec<u64> = keys
        .iter()
        .enumerate()
        .map(|(r, key)| {
            key.ok_or_else(|| DetectorError::InvalidFeature {
                message: format!(
                    "episode {}: its terminal frame (index {}) has no \"{feature}\" image",
                    episode_index[r], terminal_index[r]
                ),
                file: data_file(ds, episode_index[r]),
            })
        })
        .collect::<Result<_, _>>()?;
    // Two passes over the cache rather than holding every encoded frame: a pretrained encoder's
    // features of many episodes would not fit in memory twice.
    let mut acc = CovarianceAccumulator::new(encoder.dim());
    for key in &keys {
        acc.add(&cached(&mut cache, *key)?)?;
    }
    let pca = acc.fit(components, PCA_ITERATIONS, seed)?;
    let mut values = Vec::with_capacity(keys.len() * pca.k);
    for key in &keys {
        values.extend(
            pca.project(&cached(&mut cache, *key)?)
                .into_iter()
                .map(f64::from),
        );
    }
    Ok(TerminalFeatures {
        episode_index,
        terminal_index,
        width: pca.k,
        values,
        name: format!("{feature}:{}-pca{}", encoder.id(), pca.k),
        encoder: Some(format!("{}:{}", encoder.id(), encoder.weights_hash())),
        cache_hits: hits,
        encoded,
    })
}

/// The data file holding `episode`'s frames (the dataset folder when the metadata has no such
/// episode, which the reader has already ruled out).
fn data_file(ds: &LeRobotDataset, episode: i64) -> std::path::PathBuf {
    ds.episode(episode)
        .map_or_else(|| ds.root().to_path_buf(), |e| ds.root().join(&e.data_file))
}

fn cached(cache: &mut FeatureCache, key: u64) -> Result<Vec<f32>, FqeError> {
    cache
        .get(key)?
        .ok_or_else(|| FqeError::bad_file(cache.path(), "cached frame vanished"))
}
