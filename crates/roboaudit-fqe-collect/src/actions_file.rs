//! Policy-actions files (SPEC.md §3, read by `roboaudit_data::lerobot::read_policy_actions`): for every
//! dataset frame (`index`, the global frame index) `M` samples (`sample` 0..M−1) of the target
//! policy's `action` (list of float32, the dataset's 7-wide action space) at that frame's observation.

use crate::error::{Result, encode_err, io_err};
use crate::obs::{NoiseKey, Observation, mix};
use crate::targets::TargetPolicy;
use rayon::prelude::*;
use roboaudit_data::lerobot::policy_actions_parquet;
use roboaudit_testbed::EpisodeRecord;
use std::path::Path;

/// Noise stream of policy-actions files: frame `g` sample `s` of a policy uses `NoiseKey { stream:
/// dataset_stream(seed), frame: g, sample: s }`.
pub fn dataset_stream(seed: u64) -> u64 {
    mix(seed ^ 0x0044_4154_4153_4554)
}

/// The `samples × 7` actions of `policy` at every frame of `records`, frame-major in global index order
/// (`f32`, as stored).
pub fn policy_actions(
    policy: &TargetPolicy,
    records: &[EpisodeRecord],
    samples: usize,
    seed: u64,
    policy_seed: u64,
) -> Vec<Vec<f32>> {
    let frames: Vec<(&EpisodeRecord, usize)> = records
        .iter()
        .flat_map(|r| (0..r.frames.len()).map(move |i| (r, i)))
        .collect();
    let stream = dataset_stream(seed);
    frames
        .par_iter()
        .enumerate()
        .flat_map_iter(|(g, (r, i))| {
            let obs = Observation::of_frame(&r.frames[*i]);
            (0..samples).map(move |s| {
                let key = NoiseKey {
                    stream,
                    frame: g as u64,
                    sample: s as u64,
                };
                policy
                    .act(r.task, &obs, policy_seed, key)
                    .to_vec()
                    .into_iter()
                    .map(|x| x as f32)
                    .collect::<Vec<f32>>()
            })
        })
        .collect()
}

/// Writes actions (frame-major, `samples` per frame, as from [`policy_actions`]) to a Parquet file
/// with columns `index` (int64), `sample` (int64), `action` (list of float32).
///
/// # Errors
/// [`crate::CollectError::Io`] or [`crate::CollectError::Encode`].
pub fn write_actions_parquet(path: &Path, actions: &[Vec<f32>], samples: usize) -> Result<()> {
    let samples = samples.max(1);
    let rows = actions
        .iter()
        .enumerate()
        .map(|(r, a)| ((r / samples) as i64, (r % samples) as i64, a.as_slice()));
    let bytes = policy_actions_parquet(path, rows)
        .map_err(|e| encode_err(&path.display().to_string())(e.to_string()))?;
    std::fs::write(path, bytes).map_err(io_err(path))
}
