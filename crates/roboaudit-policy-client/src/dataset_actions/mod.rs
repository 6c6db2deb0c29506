//! `fqe actions`: a served policy's actions at every frame of a LeRobot dataset, written as the
//! policy-actions file `fqe fit` reads (`index`, `sample`, `action`; SPEC.md §3).
//!
//! Sent per frame: the camera image, the state, `observation.environment_state` (the object
//! state, when the dataset declares it numeric), the task text and, with `action_seed`, the seed;
//! keys as [`KeyMap`] records them.
//!
//! Episodes are played one at a time as the camera's files stream them (image rows or video
//! frames; the state alone without a camera), frames in `frame_index` order, so memory holds
//! one episode's frames. Each of the `M` samples of an episode is one pass over its frames
//! starting with a `reset` (when the server declares it), so a policy with a history sees
//! exactly the episode so far. With `action_seed`, the query of frame `index`, sample `s`
//! carries seed [`action_seed`]`(seed, s, index)`.
//!
//! Resumable: every finished episode is written to `<out>.partial/episode-NNNNNN.parquet`
//! (atomically, with its latencies beside it); a rerun with the same settings skips them; the
//! result `<out>` and `<out stem>.manifest.json` appear only when every episode is done, and
//! the partial folder is then removed. A server that dies mid-run thus loses at most the
//! episode in progress, and never leaves a half-written result.

mod files;

use roboaudit_types::seed::splitmix64;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use roboaudit_data::lerobot::{
    DEFAULT_TOLERANCE_S, Feature, FeatureKind, LeRobotDataset, Rgb8Image, read_policy_actions,
};
use serde::{Deserialize, Serialize};

use crate::client::{ACTION_SEED_KEY, CAP_ACTION_SEED, CAP_RESET, LatencySummary, PolicyClient};
use crate::error::PolicyClientError;
use crate::msgpack_numpy::{Field, NdArray};
use files::{io, part_path, prepare_partial, timing_path, write_atomic};
pub use files::{manifest_path, partial_dir, write_rows};

/// Schema tag of [`ActionsManifest`].
pub const MANIFEST_SCHEMA: &str = "roboaudit.policy_actions.v1";
/// Default observation key of the camera image (uint8 HWC).
pub const DEFAULT_IMAGE_KEY: &str = "observation/image";
/// Default observation key of the proprioceptive state (float32 vector).
pub const DEFAULT_STATE_KEY: &str = "observation/state";
/// Default observation key of the task text.
pub const DEFAULT_PROMPT_KEY: &str = "prompt";
/// Default observation key of the object state (float32 vector; role `environment_state`).
pub const DEFAULT_ENVIRONMENT_STATE_KEY: &str = "observation/environment_state";
/// The dataset feature sent as the object state when it is numeric (LeRobot's name for it).
pub const ENVIRONMENT_STATE_FEATURE: &str = "observation.environment_state";

/// Settings of an `fqe actions` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionsConfig {
    /// The policy's name (the manifest's and `fqe fit --policy-actions NAME=FILE`'s).
    pub name: String,
    /// Samples per frame (`M` ≥ 1).
    pub samples: usize,
    /// Base of the action seeds.
    pub seed: u64,
    /// The camera feature (`image`, or `video` decoded with LeRobot's frame-for-timestamp rule)
    /// sent as the image; `None`: the first image feature, else the first decodable video
    /// feature, else no image.
    pub image_feature: Option<String>,
    /// The numeric feature sent as state; `None`: `observation.state` when declared.
    pub state_feature: Option<String>,
    /// The dataset's action feature, whose width every answer must have.
    pub action_feature: String,
}

impl Default for ActionsConfig {
    /// Policy `policy`, one sample, seed 0, automatic features, action feature `action`.
    fn default() -> Self {
        ActionsConfig {
            name: "policy".into(),
            samples: 1,
            seed: 0,
            image_feature: None,
            state_feature: None,
            action_feature: "action".into(),
        }
    }
}

impl ActionsConfig {
    /// Checks the named features against the dataset before any policy is contacted: the action
    /// feature must be numeric, an `image_feature` an image or video feature, a
    /// `state_feature` numeric. Returns the action width.
    ///
    /// # Errors
    /// [`PolicyClientError::Invalid`] naming the feature, the dataset and its declared features.
    pub fn check_features(&self, dataset: &LeRobotDataset) -> Result<usize, PolicyClientError> {
        let refuse = |what: &str, name: &str| {
            PolicyClientError::Invalid(format!(
                "the dataset {} has no {what} feature \"{name}\" (declared: {})",
                dataset.root().display(),
                dataset.describe_features()
            ))
        };
        if let Some(name) = &self.image_feature
            && !dataset.feature(name).is_some_and(Feature::is_camera)
        {
            return Err(refuse("image or video", name));
        }
        if let Some(name) = &self.state_feature
            && dataset.feature(name).map(|f| f.kind) != Some(FeatureKind::Numeric)
        {
            return Err(refuse("numeric state", name));
        }
        dataset
            .feature(&self.action_feature)
            .filter(|f| f.kind == FeatureKind::Numeric)
            .map(roboaudit_data::lerobot::Feature::width)
            .ok_or_else(|| refuse("numeric action", &self.action_feature))
    }
}

/// What was sent under which key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyMap {
    /// `(dataset feature, observation key)` of the image, if one is sent.
    pub image: Option<(String, String)>,
    /// `(dataset feature, observation key)` of the state, if one is sent.
    pub state: Option<(String, String)>,
    /// Observation key of the episode's task text.
    pub prompt: String,
    /// `(dataset feature, observation key)` of the object state: `observation.environment_state`
    /// whenever the dataset declares it numeric, under the metadata's `environment_state` key
    /// (default [`DEFAULT_ENVIRONMENT_STATE_KEY`]). Absent from manifests written before it was
    /// sent, which read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_state: Option<(String, String)>,
}

/// Provenance of a policy-actions file (written as `<out stem>.manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionsManifest {
    /// [`MANIFEST_SCHEMA`].
    pub schema: String,
    /// The settings.
    pub config: ActionsConfig,
    /// The policy server's address.
    pub url: String,
    /// Its metadata (arrays summarized).
    pub metadata: serde_json::Value,
    /// The roboaudit capabilities it declared.
    pub capabilities: Vec<String>,
    /// Whether every episode pass began with a `reset` (false for a server without it: its
    /// policy carried history across episodes unless it is memoryless).
    pub reset_between_episodes: bool,
    /// Whether queries carried action seeds.
    pub action_seeds: bool,
    /// The dataset folder.
    pub dataset: PathBuf,
    /// The observation keys.
    pub keys: KeyMap,
    /// Episodes and frames covered.
    pub episodes: usize,
    /// Frames covered.
    pub frames: usize,
    /// Width of an action.
    pub action_dim: usize,
    /// Actions per answer (the first of each chunk is the frame's action).
    pub action_horizon: usize,
    /// Episodes taken from an earlier, interrupted run.
    pub resumed_episodes: usize,
    /// Reconnections during this run.
    pub reconnections: u64,
    /// Query latency over every episode (resumed ones included).
    pub latency: LatencySummary,
}

/// The action seed of frame `index`, sample `sample`: SplitMix64 of the three, in `0..=i64::MAX`.
pub fn action_seed(seed: u64, sample: usize, index: i64) -> i64 {
    let h = splitmix64(splitmix64(seed ^ splitmix64(sample as u64)) ^ index as u64);
    (h >> 1) as i64
}

/// What is resumed: settings that must agree between runs (not the address: a restarted server
/// may listen on another port).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ResumeState {
    config: ActionsConfig,
    dataset: PathBuf,
    keys: KeyMap,
}

/// Latencies of one finished episode (beside its part file).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct PartTiming {
    rtt_ms: Vec<f64>,
    server_ms: Vec<f64>,
    horizon: usize,
}

/// One episode's frames: global indices, state and object-state rows, prompt.
struct EpisodeInput {
    episode: i64,
    index: Vec<i64>,
    state: Option<Vec<Vec<f32>>>,
    environment_state: Option<Vec<Vec<f32>>>,
    prompt: Option<String>,
}

/// Runs `fqe actions` (see the module docs). `on_episode(done, total)` reports progress.
///
/// # Errors
/// [`PolicyClientError::Invalid`] for settings that disagree with the dataset or an earlier
/// partial run; dataset read errors; every client error (naming the episode and frame); an
/// answer whose action width differs from the dataset's (found on the first answer, before
/// anything is written).
pub fn collect_actions(
    dataset: &LeRobotDataset,
    client: &mut PolicyClient,
    cfg: &ActionsConfig,
    out: &Path,
    on_episode: &mut dyn FnMut(usize, usize),
) -> Result<ActionsManifest, PolicyClientError> {
    if cfg.samples == 0 {
        return Err(PolicyClientError::Invalid("samples must be ≥ 1".into()));
    }
    let action_dim = cfg.check_features(dataset)?;
    let image_feature = match &cfg.image_feature {
        Some(f) => Some(f.clone()),
        None => dataset
            .features()
            .iter()
            .find(|f| f.kind == FeatureKind::Image)
            .map(|f| f.name.clone())
            .or_else(|| dataset.decodable_video_features().into_iter().next()),
    };
    let state_feature = match &cfg.state_feature {
        Some(f) => Some(f.clone()),
        None => dataset
            .feature("observation.state")
            .filter(|f| f.kind == FeatureKind::Numeric)
            .map(|f| f.name.clone()),
    };
    let env_feature = dataset
        .feature(ENVIRONMENT_STATE_FEATURE)
        .filter(|f| f.kind == FeatureKind::Numeric)
        .map(|f| f.name.clone());
    let key = |role: &str, default: &str| {
        client
            .observation_key(role)
            .unwrap_or_else(|| default.to_owned())
    };
    let keys = KeyMap {
        image: image_feature
            .clone()
            .map(|f| (f, key("image", DEFAULT_IMAGE_KEY))),
        state: state_feature
            .clone()
            .map(|f| (f, key("state", DEFAULT_STATE_KEY))),
        prompt: key("prompt", DEFAULT_PROMPT_KEY),
        environment_state: env_feature
            .clone()
            .map(|f| (f, key("environment_state", DEFAULT_ENVIRONMENT_STATE_KEY))),
    };
    let state = ResumeState {
        config: cfg.clone(),
        dataset: dataset.root().to_path_buf(),
        keys: keys.clone(),
    };
    let partial = partial_dir(out);
    prepare_partial(&partial, &state)?;

    let mut columns: Vec<&str> = state_feature
        .iter()
        .chain(&env_feature)
        .map(String::as_str)
        .collect();
    columns.dedup();
    let frames = dataset.read_frames(&columns)?;
    let inputs: Vec<EpisodeInput> = frames
        .into_iter()
        .map(|e| {
            let prompt = dataset
                .episode(e.episode_index)
                .and_then(|m| m.tasks.first().cloned());
            EpisodeInput {
                episode: e.episode_index,
                state: state_feature
                    .as_ref()
                    .and_then(|s| e.column(s).map(<[_]>::to_vec)),
                environment_state: env_feature
                    .as_ref()
                    .and_then(|s| e.column(s).map(<[_]>::to_vec)),
                index: e.index,
                prompt,
            }
        })
        .collect();
    let total = inputs.len();
    let mut done = 0usize;
    let mut resumed = 0usize;
    let generation0 = client.generation();
    let mut runner = Runner {
        client,
        cfg,
        keys: &keys,
        action_dim,
        partial: &partial,
    };
    let mut pending: Vec<&EpisodeInput> = Vec::new();
    for e in &inputs {
        if part_path(&partial, e.episode).exists() {
            resumed += 1;
            done += 1;
            on_episode(done, total);
        } else {
            pending.push(e);
        }
    }
    match &image_feature {
        None => {
            for e in pending {
                runner.episode(e, None)?;
                done += 1;
                on_episode(done, total);
            }
        }
        Some(feature) => {
            let mut gather = Gather {
                runner: &mut runner,
                todo: pending.into_iter().map(|e| (e.episode, e)).collect(),
                current: None,
                finished: HashSet::new(),
                done,
                total,
                on_episode,
            };
            let wanted: HashSet<i64> = gather.todo.keys().copied().collect();
            if dataset.feature(feature).map(|f| f.kind) == Some(FeatureKind::Video) {
                dataset.for_each_video_frame(
                    feature,
                    DEFAULT_TOLERANCE_S,
                    &mut |id| wanted.contains(&id.episode_index),
                    &mut |id, image| -> Result<(), PolicyClientError> {
                        gather.frame(id.episode_index, id.frame_index, image, &|| {
                            format!("video feature \"{feature}\" frame {}", id.frame_index)
                        })
                    },
                )?;
            } else {
                dataset.for_each_image(feature, &mut |img| -> Result<(), PolicyClientError> {
                    if !wanted.contains(&img.episode_index) {
                        return Ok(());
                    }
                    let image = img.decode()?;
                    gather.frame(img.episode_index, img.frame_index, image, &|| {
                        format!("{} row {}", img.file.display(), img.row)
                    })
                })?;
            }
            gather.flush()?;
            if let Some(ep) = gather.todo.keys().min() {
                return Err(PolicyClientError::Invalid(format!(
                    "episode {ep} has no frames of the camera feature \"{feature}\" in {}",
                    dataset.root().display()
                )));
            }
        }
    }
    let reconnections = runner.client.generation() - generation0;
    finish(
        dataset,
        runner.client,
        cfg,
        out,
        &partial,
        &inputs,
        keys.clone(),
        action_dim,
        resumed,
        reconnections,
    )
}

/// Gathers a camera's frames (streamed file by file) into whole episodes and plays each
/// episode as soon as its last frame has arrived, so memory holds one episode's frames.
struct Gather<'g, 'a, 'e> {
    runner: &'g mut Runner<'a>,
    todo: HashMap<i64, &'e EpisodeInput>,
    current: Option<(i64, Vec<(i64, Rgb8Image)>)>,
    finished: HashSet<i64>,
    done: usize,
    total: usize,
    on_episode: &'g mut dyn FnMut(usize, usize),
}

impl Gather<'_, '_, '_> {
    /// Adds frame `frame_index` of `episode`; `place` names it for the error when the stream
    /// returns to an episode it already left (the episode would be played twice).
    fn frame(
        &mut self,
        episode: i64,
        frame_index: i64,
        image: Rgb8Image,
        place: &dyn Fn() -> String,
    ) -> Result<(), PolicyClientError> {
        if self.current.as_ref().is_some_and(|(ep, _)| *ep != episode) {
            self.flush()?;
        }
        if self.finished.contains(&episode) {
            return Err(PolicyClientError::Invalid(format!(
                "{}: episode {episode} continues after other episodes' frames; fqe actions needs each episode's frames together",
                place()
            )));
        }
        self.current
            .get_or_insert_with(|| (episode, Vec::new()))
            .1
            .push((frame_index, image));
        Ok(())
    }

    /// Plays the episode gathered so far, if any.
    fn flush(&mut self) -> Result<(), PolicyClientError> {
        let Some((ep, mut images)) = self.current.take() else {
            return Ok(());
        };
        self.finished.insert(ep);
        if let Some(e) = self.todo.remove(&ep) {
            images.sort_by_key(|(fi, _)| *fi);
            let imgs: Vec<Rgb8Image> = images.into_iter().map(|(_, i)| i).collect();
            self.runner.episode(e, Some(&imgs))?;
            self.done += 1;
            (self.on_episode)(self.done, self.total);
        }
        Ok(())
    }
}

struct Runner<'a> {
    client: &'a mut PolicyClient,
    cfg: &'a ActionsConfig,
    keys: &'a KeyMap,
    action_dim: usize,
    partial: &'a Path,
}

impl Runner<'_> {
    /// Plays every sample pass of one episode and writes its part.
    fn episode(
        &mut self,
        e: &EpisodeInput,
        images: Option<&[Rgb8Image]>,
    ) -> Result<(), PolicyClientError> {
        if let Some(imgs) = images
            && imgs.len() != e.index.len()
        {
            return Err(PolicyClientError::Invalid(format!(
                "episode {}: {} camera frames for {} frames of the data",
                e.episode,
                imgs.len(),
                e.index.len()
            )));
        }
        let mut rows: Vec<(i64, i64, Vec<f32>)> =
            Vec::with_capacity(e.index.len() * self.cfg.samples);
        let mut timing = PartTiming::default();
        for s in 0..self.cfg.samples {
            // A reconnection mid-pass loses the server's history: the pass starts over once.
            let mut attempt = 0;
            loop {
                let start_gen = self.client.generation();
                let before = rows.len();
                let t_before = (timing.rtt_ms.len(), timing.server_ms.len());
                self.pass(e, images, s, &mut rows, &mut timing)?;
                if self.client.generation() == start_gen
                    || attempt == 1
                    || !self.client.has(CAP_RESET)
                {
                    break;
                }
                rows.truncate(before);
                timing.rtt_ms.truncate(t_before.0);
                timing.server_ms.truncate(t_before.1);
                attempt += 1;
            }
        }
        write_rows(&part_path(self.partial, e.episode), &rows)?;
        let json = serde_json::to_vec(&timing)
            .map_err(|err| PolicyClientError::Invalid(err.to_string()))?;
        write_atomic(&timing_path(self.partial, e.episode), &json)
    }

    fn pass(
        &mut self,
        e: &EpisodeInput,
        images: Option<&[Rgb8Image]>,
        sample: usize,
        rows: &mut Vec<(i64, i64, Vec<f32>)>,
        timing: &mut PartTiming,
    ) -> Result<(), PolicyClientError> {
        if self.client.has(CAP_RESET) {
            self.client
                .reset(&format!("episode {} sample {sample} (reset)", e.episode))?;
        }
        let seeded = self.client.has(CAP_ACTION_SEED);
        for (t, &index) in e.index.iter().enumerate() {
            let mut obs: Vec<(String, Field)> = Vec::new();
            if let (Some(imgs), Some((_, key))) = (images, &self.keys.image) {
                let img = &imgs[t];
                obs.push((
                    key.clone(),
                    Field::Array(NdArray::from_u8(
                        vec![img.height as usize, img.width as usize, 3],
                        img.pixels.clone(),
                    )),
                ));
            }
            if let (Some(state), Some((_, key))) = (&e.state, &self.keys.state) {
                obs.push((
                    key.clone(),
                    Field::Array(NdArray::from_f32(vec![state[t].len()], &state[t])),
                ));
            }
            if let (Some(env), Some((_, key))) =
                (&e.environment_state, &self.keys.environment_state)
            {
                obs.push((
                    key.clone(),
                    Field::Array(NdArray::from_f32(vec![env[t].len()], &env[t])),
                ));
            }
            if let Some(p) = &e.prompt {
                obs.push((self.keys.prompt.clone(), Field::Text(p.clone())));
            }
            if seeded {
                obs.push((
                    ACTION_SEED_KEY.into(),
                    Field::Int(action_seed(self.cfg.seed, sample, index)),
                ));
            }
            let step = format!(
                "episode {} frame {t} (index {index}) sample {sample}",
                e.episode
            );
            let reply = self.client.infer(obs, &step)?;
            if reply.dim != self.action_dim {
                return Err(PolicyClientError::Actions {
                    url: self.client.url().to_owned(),
                    step,
                    message: format!(
                        "actions are {} wide (shape ({}, {})), the dataset's \"{}\" is {} wide",
                        reply.dim,
                        reply.horizon,
                        reply.dim,
                        self.cfg.action_feature,
                        self.action_dim
                    ),
                });
            }
            timing.horizon = reply.horizon;
            timing.rtt_ms.push(reply.round_trip_ms);
            if let Some(ms) = reply.infer_ms {
                timing.server_ms.push(ms);
            }
            rows.push((index, sample as i64, reply.first().to_vec()));
        }
        Ok(())
    }
}

/// Merges the parts into `out` and writes the manifest; removes the partial folder.
#[allow(clippy::too_many_arguments)]
fn finish(
    dataset: &LeRobotDataset,
    client: &PolicyClient,
    cfg: &ActionsConfig,
    out: &Path,
    partial: &Path,
    inputs: &[EpisodeInput],
    keys: KeyMap,
    action_dim: usize,
    resumed: usize,
    reconnections: u64,
) -> Result<ActionsManifest, PolicyClientError> {
    let mut rows = Vec::new();
    let mut rtt = Vec::new();
    let mut server = Vec::new();
    let mut horizon = 0;
    for e in inputs {
        let part = read_policy_actions(part_path(partial, e.episode))?;
        for (k, &index) in part.index.iter().enumerate() {
            for s in 0..part.samples {
                let at = (k * part.samples + s) * part.action_dim;
                rows.push((
                    index,
                    s as i64,
                    part.actions[at..at + part.action_dim].to_vec(),
                ));
            }
        }
        let tp = timing_path(partial, e.episode);
        let text = std::fs::read_to_string(&tp).map_err(io("cannot read", &tp))?;
        let t: PartTiming = serde_json::from_str(&text)
            .map_err(|err| PolicyClientError::Invalid(format!("{}: {err}", tp.display())))?;
        rtt.extend(t.rtt_ms);
        server.extend(t.server_ms);
        horizon = horizon.max(t.horizon);
    }
    rows.sort_by_key(|r| (r.0, r.1));
    let manifest = ActionsManifest {
        schema: MANIFEST_SCHEMA.into(),
        config: cfg.clone(),
        url: client.url().to_owned(),
        metadata: client.metadata().to_json(),
        capabilities: client.capabilities().to_vec(),
        reset_between_episodes: client.has(CAP_RESET),
        action_seeds: client.has(CAP_ACTION_SEED),
        dataset: dataset.root().to_path_buf(),
        keys,
        episodes: inputs.len(),
        frames: inputs.iter().map(|e| e.index.len()).sum(),
        action_dim,
        action_horizon: horizon,
        resumed_episodes: resumed,
        reconnections,
        latency: LatencySummary::of(&rtt, &server),
    };
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| PolicyClientError::Invalid(e.to_string()))?;
    write_atomic(&manifest_path(out), &json)?;
    write_rows(out, &rows)?;
    std::fs::remove_dir_all(partial).map_err(io("cannot remove", partial))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::KeyMap;

    #[test]
    fn a_key_map_without_environment_state_still_parses() {
        let old = r#"{"image": null, "state": ["observation.state", "observation/state"], "prompt": "prompt"}"#;
        let k: KeyMap = serde_json::from_str(old).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.environment_state, None);
        assert!(
            !serde_json::to_string(&k)
                .unwrap_or_default()
                .contains("environment_state")
        );
    }
}
