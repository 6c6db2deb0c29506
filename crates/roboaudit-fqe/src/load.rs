//! Builds [`FqeInputs`] from a LeRobot dataset: numeric columns through the data crate; frame
//! features either from a camera, an `image` or `video` feature (streamed, encoded by a frozen
//! [`Encoder`], cached on disk ([`FeatureCache`])) or from a numeric vector column
//! (standardized), reduced to principal components in both cases; target actions from
//! policy-actions files aligned on the global `index`, or the dataset's own actions (the
//! behaviour policy, on-policy evaluation).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use roboaudit_data::lerobot::{LeRobotDataset, PolicyActions, Rgb8Image, SuccessSource};
use serde::Serialize;

use crate::FqeError;
use crate::cache::FeatureCache;
use crate::camera::for_each_camera_frame;
use crate::encoder::Encoder;
use crate::inputs::{EpisodeSpan, FqeInputs, InputPart, TargetActions};
use crate::pca::CovarianceAccumulator;

/// Subspace iterations of the component fit: the projection only needs the leading subspace
/// roughly, not converged eigenvectors.
pub(crate) const PCA_ITERATIONS: usize = 10;

/// The component fit sees every `component_stride`-th of `frames` rows, so that at most
/// `component_frames` of them are fitted.
pub(crate) fn component_stride(frames: usize, component_frames: usize) -> usize {
    frames.div_ceil(component_frames.max(1)).max(1)
}

/// How many of `frames` rows the component fit sees (see [`LoadOptions::component_frames`]):
/// a caller can bound the components ([`crate::pca::max_components`]) from it before reading
/// any frame.
pub fn component_rows(frames: usize, component_frames: usize) -> usize {
    frames.div_ceil(component_stride(frames, component_frames))
}

/// Where the frame features — the first part of the policy input `x_t` — come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameFeatures {
    /// A camera: an `image` feature (PNG in Parquet) or a `video` feature (MP4 frames picked
    /// for each frame's timestamp with LeRobot's rule and tolerance), encoded by
    /// [`LoadOptions::encoder`] through the feature cache, then reduced to principal components.
    Image(String),
    /// A numeric vector column (e.g. `observation.state` of a dataset without a usable
    /// camera), standardized per column, then reduced to principal components.
    /// A [`LoadOptions::state_feature`] naming the same column is not added a second time.
    Vector(String),
    /// No frame-feature part: the input is the state feature alone.
    None,
}

impl FrameFeatures {
    /// `image:KEY`, `state:COLUMN` or `none`, as the CLI spells it.
    pub fn describe(&self) -> String {
        match self {
            Self::Image(k) => format!("image:{k}"),
            Self::Vector(c) => format!("state:{c}"),
            Self::None => "none".to_owned(),
        }
    }

    /// The numeric column of [`Self::Vector`]; `None` for a camera or no frame features.
    pub fn column(&self) -> Option<&str> {
        match self {
            Self::Vector(c) => Some(c),
            _ => None,
        }
    }
}

/// How to read a LeRobot dataset into FQE inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    /// Source of the frame features.
    pub features: FrameFeatures,
    /// Numeric proprioception feature (`None`: none).
    pub state_feature: Option<String>,
    /// Action feature.
    pub action_feature: String,
    /// Where the terminal labels come from.
    pub labels: SuccessSource,
    /// Frozen encoder for an image feature (unused for a vector feature).
    pub encoder: Encoder,
    /// Principal components kept of the encoder output or of the standardized vector column
    /// (at most its width).
    pub components: usize,
    /// Most frames used to fit the components (every `n/limit`-th frame).
    pub component_frames: usize,
    /// Feature cache folder (`None`: a temporary cache that is deleted afterwards).
    pub cache_dir: Option<PathBuf>,
    /// Seed of the component fit.
    pub seed: u64,
    /// Adds the time input: each frame's position `t` in its episode (0 at the first frame;
    /// SPEC §3's `t`) as the last input part, named [`TIME_PART`], one value wide. Terminal labels
    /// make an episode that ends at the collection's horizon terminal with reward 0 at its last
    /// frame, so without `t` the same state is terminal in one episode and far from it in
    /// another: fitted Q evaluation then averages a kill rate over every visit to such states and
    /// underestimates the policies that pass them early (Pardo et al., "Time Limits in
    /// Reinforcement Learning", ICML 2018). The estimate reads `Q` at `t = 0`.
    pub time_input: bool,
}

/// Name of the time input part ([`LoadOptions::time_input`]).
pub const TIME_PART: &str = "t";

impl LoadOptions {
    /// Defaults for the testbed push suite: `observation.image`, `observation.state`, `action`,
    /// `next.success`, raw 32×32 pixels, 64 components fitted on up to 20,000 frames, the time
    /// input on.
    pub fn push_defaults() -> Self {
        Self {
            features: FrameFeatures::Image("observation.image".into()),
            state_feature: Some("observation.state".into()),
            action_feature: "action".into(),
            labels: SuccessSource::Column("next.success".into()),
            encoder: Encoder::raw32(),
            components: 64,
            component_frames: 20_000,
            cache_dir: None,
            seed: 0,
            time_input: true,
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
    /// Frame-feature source (`image:KEY`, `state:COLUMN`, `none`).
    pub features: String,
    /// Encoder id and weights hash (image features only).
    pub encoder: Option<String>,
    /// Frames found in the feature cache. Not serialized: the report's bytes depend on the
    /// inputs and the seed, not on what an earlier run cached.
    #[serde(skip)]
    pub cache_hits: usize,
    /// Frames encoded in this run (not serialized, as `cache_hits`).
    #[serde(skip)]
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
/// [`FqeError::Data`] from the reader naming file, row and column (unknown features — the
/// message lists the declared ones —, a vector of the wrong width, bad labels) and, for a
/// `video` feature, [`roboaudit_data::DataError::Video`] naming the MP4 file, episode and frame
/// (a missing, truncated or undecodable file, a timestamp with no frame within the tolerance);
/// [`FqeError::InvalidInputs`] for frames without an image, an episode without a task, or a
/// non-finite value (naming data file, episode, frame and column); cache and PNG errors.
pub fn load_lerobot(ds: &LeRobotDataset, opts: &LoadOptions) -> Result<LoadedDataset, FqeError> {
    load_lerobot_with_progress(ds, opts, &mut |_, _| {})
}

/// [`load_lerobot`], calling `progress(done, total)` after each image frame found in the cache
/// and after each batch of up to 32 newly encoded frames (`total` = frames; not called for vector
/// features, which load in one pass).
///
/// # Errors
/// As [`load_lerobot`].
pub fn load_lerobot_with_progress(
    ds: &LeRobotDataset,
    opts: &LoadOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<LoadedDataset, FqeError> {
    let vector = opts.features.column();
    // The vector feature already carries the state column: adding it raw too would feed the
    // estimators the same numbers twice.
    let state_feature = opts.state_feature.as_deref().filter(|s| Some(*s) != vector);
    let mut cols: Vec<&str> = vec![opts.action_feature.as_str()];
    cols.extend(state_feature);
    cols.extend(vector.filter(|v| !cols.contains(v)));
    let frames = ds.read_frames(&cols)?;
    check_finite(ds, &frames, &cols)?;
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
    let mut vector_values = Vec::new();
    let mut vector_dim = 0;
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
        if let Some(s) = state_feature {
            for v in ep.column(s).unwrap_or_default() {
                state_dim = v.len();
                state.extend_from_slice(v);
            }
        }
        if let Some(c) = vector {
            for v in ep.column(c).unwrap_or_default() {
                vector_dim = v.len();
                vector_values.extend_from_slice(v);
            }
        }
    }
    let rows = rows_by_index(ds, &frames)?;
    let mut parts = Vec::new();
    let mut summary = LoadSummary {
        dataset: ds.root().to_path_buf(),
        episodes: episodes.len(),
        frames: frame_index.len(),
        features: opts.features.describe(),
        encoder: None,
        cache_hits: 0,
        encoded: 0,
        components: None,
        successes: episodes.iter().filter(|e| e.success).count(),
    };
    if let Some(column) = vector {
        let (part, fitted) = crate::vector::vector_part(
            column,
            &vector_values,
            vector_dim,
            opts.components,
            opts.component_frames,
            opts.seed,
        )?;
        summary.components = Some((part.width, fitted));
        parts.push(part);
    }
    if let FrameFeatures::Image(feature) = &opts.features {
        let (part, hits, encoded, fitted) = image_part(ds, feature, opts, &rows, progress)?;
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
    if let Some(s) = state_feature {
        parts.push(InputPart {
            name: s.to_owned(),
            width: state_dim,
            values: state,
        });
    }
    if opts.time_input {
        parts.push(time_part(&episodes, frame_index.len()));
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

/// The [`TIME_PART`] of `frames` rows laid out as `episodes`: each frame's position in its
/// episode.
fn time_part(episodes: &[EpisodeSpan], frames: usize) -> InputPart {
    let mut values = vec![0.0f32; frames];
    for e in episodes {
        for (t, v) in values[e.start..e.start + e.len].iter_mut().enumerate() {
            *v = t as f32;
        }
    }
    InputPart {
        name: TIME_PART.to_owned(),
        width: 1,
        values,
    }
}

/// Rejects a non-finite value in any column read, naming the data file, episode, frame and
/// column (the estimators would otherwise fail later without saying where).
fn check_finite(
    ds: &LeRobotDataset,
    frames: &[roboaudit_data::lerobot::EpisodeFrames],
    cols: &[&str],
) -> Result<(), FqeError> {
    for ep in frames {
        for col in cols {
            let values = ep.column(col).unwrap_or_default();
            if let Some((t, v)) = values
                .iter()
                .enumerate()
                .find(|(_, v)| v.iter().any(|x| !x.is_finite()))
            {
                let file = ds
                    .episode(ep.episode_index)
                    .map(|e| ds.root().join(&e.data_file).display().to_string())
                    .unwrap_or_default();
                return Err(FqeError::InvalidInputs(format!(
                    "column \"{col}\", episode {}, frame_index {} (index {}): non-finite value {v:?}, in {file}",
                    ep.episode_index, ep.frame_index[t], ep.index[t]
                )));
            }
        }
    }
    Ok(())
}

/// Each frame's row in load order, by its global `index`.
///
/// # Errors
/// [`FqeError::InvalidInputs`] when an `index` repeats, naming both frames and the data file:
/// the index keys the feature cache's rows and every policy-actions file, so two frames with one
/// index would read each other's features and target actions.
fn rows_by_index(
    ds: &LeRobotDataset,
    frames: &[roboaudit_data::lerobot::EpisodeFrames],
) -> Result<HashMap<i64, usize>, FqeError> {
    // (episode, index, frame_index) of every frame in load order.
    let flat = || {
        frames.iter().flat_map(|e| {
            e.index
                .iter()
                .zip(&e.frame_index)
                .map(move |(&i, &f)| (e.episode_index, i, f))
        })
    };
    let mut rows: HashMap<i64, usize> = HashMap::new();
    for (row, (episode, index, frame)) in flat().enumerate() {
        if let Some(&first) = rows.get(&index) {
            let (first_ep, _, first_frame) = flat().nth(first).unwrap_or_default();
            let file = ds
                .episode(episode)
                .map(|e| ds.root().join(&e.data_file).display().to_string())
                .unwrap_or_default();
            return Err(FqeError::InvalidInputs(format!(
                "the global index {index} repeats: episode {first_ep} frame_index \
                 {first_frame} and episode {episode} frame_index {frame} (in {file}); frames \
                 and policy-actions files are matched by it, so it must be unique \
                 (`roboaudit data inspect` lists the dataset's index problems)"
            )));
        }
        rows.insert(index, row);
    }
    Ok(rows)
}

/// The behaviour policy as a target: the dataset's own action at every frame (one sample).
/// FQE with it is on-policy evaluation — its estimate should sit near the dataset's discounted
/// return (the naive average), which is what makes it a check on datasets without ground truth.
pub fn behaviour_actions(inputs: &FqeInputs) -> TargetActions {
    TargetActions {
        samples: 1,
        action_dim: inputs.action_dim,
        values: inputs.actions.clone(),
    }
}

/// Frames gathered before one [`Encoder::encode_batch`] call: enough to keep both cores busy
/// with DINOv2, a few MB of decoded images.
const ENCODE_BATCH: usize = 32;

/// Decoded frames not yet in the cache, with their keys.
#[derive(Default)]
struct Pending {
    /// Decoded, not yet encoded.
    frames: Vec<(u64, Rgb8Image)>,
    /// Keys of the frames wanted and not yet encoded (decoded or still to be decoded).
    keys: HashSet<u64>,
}

impl Pending {
    /// Encodes the waiting frames into `cache`; returns how many there were.
    fn encode_into(&mut self, enc: &Encoder, cache: &mut FeatureCache) -> Result<usize, FqeError> {
        let (keys, images): (Vec<u64>, Vec<Rgb8Image>) = self.frames.drain(..).unzip();
        // Only the encoded keys leave: a video pass marks a whole file's frames waiting before
        // the first is decoded, and those still undecoded must keep counting as waiting.
        for key in &keys {
            self.keys.remove(key);
        }
        for (key, values) in keys.iter().zip(enc.encode_batch(&images)?) {
            cache.put(*key, &values)?;
        }
        Ok(keys.len())
    }
}

/// Encodes every frame (through the cache), fits the components on a strided subset, projects.
fn image_part(
    ds: &LeRobotDataset,
    feature: &str,
    opts: &LoadOptions,
    rows: &HashMap<i64, usize>,
    progress: &mut dyn FnMut(usize, usize),
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
    let cache = FeatureCache::open(&dir, &enc.id(), &enc.weights_hash(), enc.dim())?;
    let key_of_row = RefCell::new(vec![None; rows.len()]);
    let (hits, encoded, done) = (Cell::new(0), Cell::new(0), Cell::new(0));
    // Frames missing from the cache wait here and are encoded ENCODE_BATCH at a time; a frame
    // whose content is already waiting counts as a hit, as it would once cached. `wanted` and
    // the frame callback share the cache, the queue and the progress (RefCell: the video path
    // calls them in turns, never nested).
    let cache = RefCell::new(cache);
    let pending = RefCell::new(Pending::default());
    let progress = RefCell::new(progress);
    let step = |n: usize| {
        done.set(done.get() + n);
        (progress.borrow_mut())(done.get(), rows.len());
    };
    for_each_camera_frame(
        ds,
        feature,
        &mut |r| {
            let Some(&row) = rows.get(&r.index) else {
                return false;
            };
            key_of_row.borrow_mut()[row] = Some(r.key);
            if cache.borrow().contains(r.key) || !pending.borrow_mut().keys.insert(r.key) {
                hits.set(hits.get() + 1);
                step(1);
                return false;
            }
            true
        },
        &mut |r, image| {
            let mut queue = pending.borrow_mut();
            queue.frames.push((r.key, image));
            if queue.frames.len() >= ENCODE_BATCH {
                let n = queue.encode_into(enc, &mut cache.borrow_mut())?;
                encoded.set(encoded.get() + n);
                step(n);
            }
            Ok(())
        },
    )?;
    let n = pending
        .borrow_mut()
        .encode_into(enc, &mut cache.borrow_mut())?;
    encoded.set(encoded.get() + n);
    if n > 0 {
        step(n);
    }
    let mut cache = cache.into_inner();
    let (key_of_row, hits, encoded) = (key_of_row.into_inner(), hits.get(), encoded.get());
    cache.commit()?;
    let keys: Vec<u64> = key_of_row
        .iter()
        .enumerate()
        .map(|(r, k)| {
            k.ok_or_else(|| {
                FqeError::InvalidInputs(format!("frame row {r} has no \"{feature}\" image"))
            })
        })
        .collect::<Result<_, _>>()?;
    let stride = component_stride(keys.len(), opts.component_frames);
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

/// Checks a policy-actions file against a dataset's frames (global `index` of each, in load
/// order) and action width, before anything is encoded: `fqe fit` calls it on the dataset's
/// rows so that a wrong file stops the run before the encoding pass.
///
/// # Errors
/// [`FqeError::InvalidInputs`] when the action width differs, a frame has no actions, or the
/// file has actions for frames the dataset lacks (written for another dataset), naming how many
/// and the first.
pub fn check_target_actions(
    frame_index: &[i64],
    action_dim: usize,
    actions: &PolicyActions,
) -> Result<(), FqeError> {
    if actions.action_dim != action_dim {
        return Err(FqeError::InvalidInputs(format!(
            "{}: actions have {} values, the dataset's have {action_dim}",
            actions.file.display(),
            actions.action_dim,
        )));
    }
    let missing: Vec<i64> = frame_index
        .iter()
        .copied()
        .filter(|i| actions.frame(*i).is_none())
        .collect();
    if let Some(first) = missing.first() {
        return Err(FqeError::InvalidInputs(format!(
            "{}: {} of {} dataset frames have no target actions (first: index {first})",
            actions.file.display(),
            missing.len(),
            frame_index.len()
        )));
    }
    // Actions for frames the dataset does not have mean the file was written for another
    // dataset (a larger recording whose first frames happen to share indices): its actions
    // for the frames that do match are another recording's, so nothing of it can be used.
    let frames: HashSet<i64> = frame_index.iter().copied().collect();
    let foreign: Vec<i64> = actions
        .index
        .iter()
        .copied()
        .filter(|i| !frames.contains(i))
        .collect();
    if let Some(first) = foreign.first() {
        return Err(FqeError::InvalidInputs(format!(
            "{}: {} of its {} frames are not in the dataset of {} frames (first: index {first}): the actions were written for another dataset",
            actions.file.display(),
            foreign.len(),
            actions.index.len(),
            frame_index.len()
        )));
    }
    Ok(())
}

/// Aligns a policy-actions file with the loaded frames.
///
/// # Errors
/// As [`check_target_actions`].
pub fn align_target_actions(
    loaded: &LoadedDataset,
    actions: &PolicyActions,
) -> Result<TargetActions, FqeError> {
    let inputs = &loaded.inputs;
    check_target_actions(&inputs.frame_index, inputs.action_dim, actions)?;
    let mut values = Vec::with_capacity(inputs.n_frames() * actions.samples * actions.action_dim);
    for idx in &inputs.frame_index {
        values.extend_from_slice(actions.frame(*idx).unwrap_or_default());
    }
    Ok(TargetActions {
        samples: actions.samples,
        action_dim: actions.action_dim,
        values,
    })
}
