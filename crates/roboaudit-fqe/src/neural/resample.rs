//! Episode-bootstrap replicates of neural FQE (SPEC §3: "bootstrap over episodes where refits
//! are affordable").
//!
//! Replicate `b` of a fit with seed `s` draws, within each task, as many episodes as the task has,
//! uniformly with replacement, from `ChaCha8Rng::seed_from_u64(s)` on stream `b + 1` (stream 0 is
//! never used for resampling, so a replicate's draws are not the plain fit's). Training then
//! draws mini-batch rows uniformly from the frames of the drawn episodes (an episode drawn twice
//! counts twice) and the estimate averages over the drawn episodes' first frames. The input
//! standardization stays the full dataset's: it is a fixed preprocessing, not part of the fit.
//! Stratifying by task keeps every task estimable in every replicate.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::inputs::FqeInputs;

/// The frames of one replicate.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Resample {
    /// Frame indices of the drawn episodes, with multiplicity: mini-batch rows come from here.
    pub(super) frames: Vec<usize>,
    /// Per task, the first frames of the drawn episodes, with multiplicity.
    pub(super) initial: Vec<Vec<usize>>,
}

impl Resample {
    /// Replicate `replicate` of a fit with seed `seed` on `inputs`.
    pub(super) fn draw(inputs: &FqeInputs, seed: u64, replicate: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(replicate.wrapping_add(1));
        let mut frames = Vec::with_capacity(inputs.n_frames());
        let mut initial = Vec::with_capacity(inputs.tasks.len());
        for l in 0..inputs.tasks.len() {
            let own: Vec<usize> = (0..inputs.episodes.len())
                .filter(|e| inputs.episodes[*e].task == l)
                .collect();
            let mut starts = Vec::with_capacity(own.len());
            for _ in 0..own.len() {
                let e = &inputs.episodes[own[rng.random_range(0..own.len())]];
                starts.push(e.start);
                frames.extend(e.start..e.start + e.len);
            }
            initial.push(starts);
        }
        Self { frames, initial }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::{EpisodeSpan, InputPart};

    fn inputs() -> FqeInputs {
        // Task 0: episodes 0, 2, 4 (2, 3, 4 frames); task 1: episodes 1, 3 (3, 5 frames).
        let lens = [(2, 0), (3, 1), (3, 0), (5, 1), (4, 0)];
        let mut start = 0;
        let episodes = lens
            .iter()
            .enumerate()
            .map(|(i, (len, task))| {
                let e = EpisodeSpan {
                    episode_index: i64::try_from(i).unwrap(),
                    start,
                    len: *len,
                    task: *task,
                    success: i % 2 == 0,
                };
                start += len;
                e
            })
            .collect();
        FqeInputs {
            parts: vec![InputPart {
                name: "x".into(),
                width: 1,
                values: vec![0.0; start],
            }],
            action_dim: 1,
            actions: vec![0.0; start],
            episodes,
            tasks: vec!["a".into(), "b".into()],
            frame_index: (0..i64::try_from(start).unwrap()).collect(),
        }
    }

    #[test]
    fn resamples_keep_each_tasks_episode_count_and_whole_episodes() {
        let inp = inputs();
        let r = Resample::draw(&inp, 7, 0);
        assert_eq!(r.initial[0].len(), 3);
        assert_eq!(r.initial[1].len(), 2);
        // Starts 0, 2, 5, 8, 13; every drawn episode brings all its frames.
        assert!(r.initial[0].iter().all(|s| [0, 5, 13].contains(s)));
        assert!(r.initial[1].iter().all(|s| [2, 8].contains(s)));
        let frames: usize = r
            .initial
            .iter()
            .flatten()
            .map(|s| inp.episodes.iter().find(|e| e.start == *s).unwrap().len)
            .sum();
        assert_eq!(r.frames.len(), frames);
        assert_eq!(r, Resample::draw(&inp, 7, 0));
        let others: Vec<Resample> = (1..8).map(|b| Resample::draw(&inp, 7, b)).collect();
        assert!(others.iter().any(|o| *o != r));
    }
}
