//! Builds [`FqeInputs`] from a LeRobot dataset: numeric columns through the data crate, images
//! streamed, encoded by a frozen [`Encoder`], cached on disk ([`FeatureCache`]) and reduced to
//! principal components; target actions from policy-actions files aligned on the global `index`.

use std::collections::HashMap;
use std::path::PathBuf;

use roboaudit_data::lerobot::{LeRobotDataset, PolicyActions, SuccessSource};
use serde::Serialize;

use crate::FqeError;
use crate::cache::{FeatureCache, fnv1a64};
use crate::encoder::Encoder;
use crate::images::{decode_png, for_each_image};
use crate::inputs::{EpisodeSpan, FqeInputs, InputPart, TargetActions};
use crate::pca::CovarianceAccumulator;

/// Subspace iterations of the component fit: the projection only needs the leading subspace
/// roughly, not converged eigenvectors.
const PCA_ITERATIONS: usize = 10;

/// How to read a LeRobot dataset into FQE inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    /// `image` feature to encode (`None`: no image part).
    pub image_feature: Option<String>,
    /// Numeric proprioception feature (`None`: none).
    pub state_feature: Option<String>,
    /// Action feature.
    pub action_feature: String,
    /// Where the terminal labels come from.
    pub labels: SuccessSource,
    /// Frozen encoder for the image feature.
    pub encoder: Encoder,
    /// Principal components kept of the encoder output.
    pub components: usize,
    /// Most frames used to fit the components (every `n/limit`-th frame).
    pub component_frames: usize,
    /// Feature cache folder (`None`: a temporary cache that is deleted afterwards).
    pub cache_dir: Option<PathBuf>,
    /// Seed of the component fit.
    pub seed: u64,
}

impl LoadOptions {
    /// Defaults for the testbed push suite: `observation.image`, `observation.state`, `action`,
    /// `next.success`, raw 32×32 pixels, 64 components fitted on up to 20,000 frames.
    pub fn push_defaults() -> Self {
        Self {
            image_feature: Some("observation.image".into()),
            state_feature: Some("observation.state".into()),
            action_feature: "action".into(),
            labels: SuccessSource::Column("next.success".into()),
            encoder: Encoder::raw32(),
            components: 64,
            component_frames: 20_000,
            cache_dir: None,
            seed: 0,
        }
    }
}

/// What loading did, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadSummary {
    /// Dataset folder.
    pub dataset: PathBuf,
    /// Episodes and frames read.
    pub episodes: usize,
    /// Frames.
    pub frames: usize,
    /// Encoder id and weights hash.
    pub encoder: Option<String>,
    /// Frames found in the feature cache / encoded now.
    pub cache_hits: usize,
    /// Frames encoded in this run.
    pub encoded: usize,
    /// Principal components kept and frames they were fitted on.
    pub components: Option<(usize, usize)>,
    /// Successful episodes.
    pub successes: usize,
}

/// A loaded dataset.
#[derive(Debug, Clone)]
pub struct LoadedDataset {
    /// The estimators' inputs.
    pub inputs: FqeInputs,
    /// Global frame index → row of `inputs`.
    pub rows: HashMap<i64, usize>,
    /// What happened.
    pub summary: LoadSummary,
}

/// Reads `ds` into FQE inputs.
///
/// # Errors
/// [`FqeError::Data`] from the reader (unknown features, video features, bad labels);
/// [`FqeError::InvalidInputs`] for frames without an image or an episode without a task;
/// cache and PNG errors.
pub fn load_lerobot(ds: &LeRobotDataset, opts: &LoadOptions) -> Result<LoadedDataset, FqeError> {
    let mut cols: Vec<&str> = vec![opts.action_feature.as_str()];
    if let Some(s) = &opts.state_feature {
        cols.push(s.as_str());
    }
    let frames = ds.read_frames(&cols)?;
    let labels = ds.success_labels(&opts.labels)?;
    let success: HashMap<i64, bool> = labels
        .iter()
        .map(|l| (l.episode_index, l.success))
        .collect();
    let tasks: Vec<String> = {
        let mut t = ds.tasks().to_vec();
        t.sort_by_key(|t| t.index);
        t.into_iter().map(|t| t.task).collect()
    };
    let mut episodes = Vec::new();
    let mut frame_index = Vec::new();
    let mut actions = Vec::new();
    let mut state = Vec::new();
    let mut action_dim = 0;
    let mut state_dim = 0;
    for (ep, meta) in frames.iter().zip(ds.episodes()) {
        let task_text = meta.tasks.first().ok_or_else(|| {
            FqeError::InvalidInputs(format!("episode {} has no task", ep.episode_index))
        })?;
        let task = tasks.iter().position(|t| t == task_text).ok_or_else(|| {
            FqeError::InvalidInputs(format!(
                "episode {} has task \"{task_text}\" missing from meta/tasks",
                ep.episode_index
            ))
        })?;
        episodes.push(EpisodeSpan {
            episode_index: ep.episode_index,
            start: frame_index.len(),
            len: ep.len(),
            task,
            success: success.get(&ep.episode_index).copied().unwrap_or(false),
        });
        frame_index.extend_from_slice(&ep.index);
        for v in ep.column(&opts.action_feature).unwrap_or_default() {
            action_dim = v.len();
            actions.extend_from_slice(v);
        }
        if let Some(s) = &opts.state_feature {
            for v in ep.column(s).unwrap_or_default() {
                state_dim = v.len();
                state.extend_from_slice(v);
            }
        }
    }
    let rows: HashMap<i64, usize> = frame_index
        .iter()
        .enumerate()
        .map(|(r, i)| (*i, r))
        .collect();
    let mut parts = Vec::new();
    let mut summary = LoadSummary {
        dataset: ds.root().to_path_buf(),
        episodes: episodes.len(),
        frames: frame_index.len(),
        encoder: None,
        cache_hits: 0,
        encoded: 0,
        components: None,
        successes: episodes.iter().filter(|e| e.success).count(),
    };
    if let Some(feature) = &opts.image_feature {
        let (part, hits, encoded, fitted) = image_part(ds, feature, opts, &rows)?;
        summary.encoder = Some(format!(
            "{}:{}",
            opts.encoder.id(),
            opts.encoder.weights_hash()
        ));
        summary.cache_hits = hits;
        summary.encoded = encoded;
        summary.components = Some((part.width, fitted));
        parts.push(part);
    }
    if let Some(s) = &opts.state_feature {
        parts.push(InputPart {
            name: s.clone(),
            width: state_dim,
            values: state,
        });
    }
    let inputs = FqeInputs {
        parts,
        action_dim,
        actions,
        episodes,
        tasks,
        frame_index,
    };
    inputs.validate()?;
    Ok(LoadedDataset {
        inputs,
        rows,
        summary,
    })
}

/// Encodes every frame (through the cache), fits the components on a strided subset, projects.
fn image_part(
    ds: &LeRobotDataset,
    feature: &str,
    opts: &LoadOptions,
    rows: &HashMap<i64, usize>,
) -> Result<(InputPart, usize, usize, usize), FqeError> {
    let tmp;
    let dir = match &opts.cache_dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::tempdir()
                .map_err(|e| FqeError::io("create", &std::env::temp_dir(), e))?;
            tmp.path().to_path_buf()
        }
    };
    let enc = &opts.encoder;
    let mut cache = FeatureCache::open(&dir, &enc.id(), &enc.weights_hash(), enc.dim())?;
    let mut key_of_row = vec![None; rows.len()];
    let (mut hits, mut encoded) = (0, 0);
    for_each_image(ds, feature, &mut |f| {
        let Some(&row) = rows.get(&f.index) else {
            return Ok(());
        };
        let key = fnv1a64(f.bytes);
        if cache.contains(key) {
            hits += 1;
        } else {
            let img = decode_png(f.bytes, f.file, f.index)?;
            cache.put(key, &enc.encode(&img)?)?;
            encoded += 1;
        }
        key_of_row[row] = Some(key);
        Ok(())
    })?;
    cache.flush()?;
    let keys: Vec<u64> = key_of_row
        .iter()
        .enumerate()
        .map(|(r, k)| {
            k.ok_or_else(|| {
                FqeError::InvalidInputs(format!("frame row {r} has no \"{feature}\" image"))
            })
        })
        .collect::<Result<_, _>>()?;
    let stride = keys.len().div_ceil(opts.component_frames.max(1)).max(1);
    let mut acc = CovarianceAccumulator::new(enc.dim());
    let mut fitted = 0;
    for key in keys.iter().step_by(stride) {
        let x = cache
            .get(*key)?
            .ok_or_else(|| FqeError::bad_file(cache.path(), "cached frame vanished"))?;
        acc.add(&x)?;
        fitted += 1;
    }
    let pca = acc.fit(opts.components, PCA_ITERATIONS, opts.seed)?;
    let mut values = Vec::with_capacity(keys.len() * pca.k);
    for key in &keys {
        let x = cache
            .get(*key)?
            .ok_or_else(|| FqeError::bad_file(cache.path(), "cached frame vanished"))?;
        values.extend(pca.project(&x));
    }
    Ok((
        InputPart {
            name: format!("{feature}:{}-pca{}", enc.id(), pca.k),
            width: pca.k,
            values,
        },
        hits,
        encoded,
        fitted,
    ))
}

/// Aligns a policy-actions file with the loaded frames.
///
/// # Errors
/// [`FqeError::InvalidInputs`] when the action width differs or a frame has no actions (naming
/// how many and the first).
pub fn align_target_actions(
    loaded: &LoadedDataset,
    actions: &PolicyActions,
) -> Result<TargetActions, FqeError> {
    let inputs = &loaded.inputs;
    if actions.action_dim != inputs.action_dim {
        return Err(FqeError::InvalidInputs(format!(
            "{}: actions have {} values, the dataset's have {}",
            actions.file.display(),
            actions.action_dim,
            inputs.action_dim
        )));
    }
    let mut values = Vec::with_capacity(inputs.n_frames() * actions.samples * actions.action_dim);
    let mut missing = Vec::new();
    for idx in &inputs.frame_index {
        match actions.frame(*idx) {
            Some(block) => values.extend_from_slice(block),
            None => missing.push(*idx),
        }
    }
    if let Some(first) = missing.first() {
        return Err(FqeError::InvalidInputs(format!(
            "{}: {} of {} dataset frames have no target actions (first: index {first})",
            actions.file.display(),
            missing.len(),
            inputs.n_frames()
        )));
    }
    Ok(TargetActions {
        samples: actions.samples,
        action_dim: actions.action_dim,
        values,
    })
}
