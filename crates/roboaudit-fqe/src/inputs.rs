//! The estimators' inputs (SPEC.md §3): frames with policy inputs `x_t` made of named parts,
//! dataset actions `a_t`, episodes with a task and a terminal label, and target-policy actions.

use serde::Serialize;

use crate::FqeError;

/// One part of the policy input `x_t` (frozen image features, proprioception, …), one row per frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputPart {
    /// Name (for reports), e.g. `image:raw32-pca64` or `observation.state`.
    pub name: String,
    /// Values per frame.
    pub width: usize,
    /// `n_frames × width` values, row-major.
    pub values: Vec<f32>,
}

/// One episode: a contiguous run of frames `start..start + len`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpisodeSpan {
    /// The dataset's `episode_index`.
    pub episode_index: i64,
    /// First frame row.
    pub start: usize,
    /// Number of frames `T_i` (≥ 1).
    pub len: usize,
    /// Task `l_i`, an index into [`FqeInputs::tasks`].
    pub task: usize,
    /// Terminal label `r_i` (the reward on the last frame, SPEC §3).
    pub success: bool,
}

/// The offline dataset as the estimators see it. Frame `k` of the whole set is row `k` of every
/// part and of `actions`; the transition from frame `k` goes to frame `k + 1` unless `k` is the
/// last frame of its episode, which is terminal with reward `r_i`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FqeInputs {
    /// Parts of `x_t`, concatenated in this order to form the input.
    pub parts: Vec<InputPart>,
    /// Dataset action width.
    pub action_dim: usize,
    /// `n_frames × action_dim` dataset actions `a_t`.
    pub actions: Vec<f32>,
    /// Episodes, in row order, covering every frame exactly once.
    pub episodes: Vec<EpisodeSpan>,
    /// Task texts (`tasks[l]`).
    pub tasks: Vec<String>,
    /// Global dataset `index` of each frame (the key of policy-actions files).
    pub frame_index: Vec<i64>,
}

/// Target-policy actions `a'_j ~ π(·|x_k, l)`, `samples` per frame, aligned with the frame rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetActions {
    /// Samples per frame `M` (≥ 1).
    pub samples: usize,
    /// Action width (equals [`FqeInputs::action_dim`]).
    pub action_dim: usize,
    /// `n_frames × samples × action_dim`: frame-major, then sample.
    pub values: Vec<f32>,
}

impl TargetActions {
    /// The `samples × action_dim` block of frame `k`.
    pub fn frame(&self, k: usize) -> &[f32] {
        let block = self.samples * self.action_dim;
        &self.values[k * block..(k + 1) * block]
    }
}

impl FqeInputs {
    /// Number of frames.
    pub fn n_frames(&self) -> usize {
        self.frame_index.len()
    }

    /// Width of the concatenated input `x_t` (sum of part widths).
    pub fn input_dim(&self) -> usize {
        self.parts.iter().map(|p| p.width).sum()
    }

    /// Appends the concatenation of every part of frame `k` to `out` (all parts, in order).
    pub fn push_input(&self, k: usize, out: &mut Vec<f32>) {
        for p in &self.parts {
            out.extend_from_slice(&p.values[k * p.width..(k + 1) * p.width]);
        }
    }

    /// Frames of the median episode (the upper middle for an even count); `None` without
    /// episodes.
    pub fn median_episode_frames(&self) -> Option<usize> {
        let mut lens: Vec<usize> = self.episodes.iter().map(|e| e.len).collect();
        lens.sort_unstable();
        lens.get(lens.len() / 2).copied()
    }

    /// The dataset action of frame `k`.
    pub fn action(&self, k: usize) -> &[f32] {
        &self.actions[k * self.action_dim..(k + 1) * self.action_dim]
    }

    /// The smallest and largest dataset action in each dimension (`action_dim` values each).
    /// The estimators clip target actions into this box before they reach a model: nothing in
    /// the data says what an action outside it does (the coverage diagnostics report how far
    /// outside a policy goes).
    pub fn action_range(&self) -> (Vec<f32>, Vec<f32>) {
        let mut lo = vec![f32::INFINITY; self.action_dim];
        let mut hi = vec![f32::NEG_INFINITY; self.action_dim];
        for row in self.actions.chunks_exact(self.action_dim.max(1)) {
            for (j, v) in row.iter().enumerate() {
                lo[j] = lo[j].min(*v);
                hi[j] = hi[j].max(*v);
            }
        }
        (lo, hi)
    }

    /// Rows of the first frames of the episodes of task `l` (the initial inputs `x_0^i`).
    pub fn initial_frames(&self, task: usize) -> Vec<usize> {
        self.episodes
            .iter()
            .filter(|e| e.task == task)
            .map(|e| e.start)
            .collect()
    }

    /// Rows of every frame of the episodes of task `l`, episode by episode in order.
    pub fn task_frames(&self, task: usize) -> Vec<usize> {
        self.episodes
            .iter()
            .filter(|e| e.task == task)
            .flat_map(|e| e.start..e.start + e.len)
            .collect()
    }

    /// Checks shapes, that episodes tile the frames in order, that tasks are in range and that
    /// every value is finite.
    ///
    /// # Errors
    /// [`FqeError::InvalidInputs`] saying what is wrong.
    pub fn validate(&self) -> Result<(), FqeError> {
        let n = self.n_frames();
        let bad = |m: String| Err(FqeError::InvalidInputs(m));
        if n == 0 || self.episodes.is_empty() {
            return bad("no frames".into());
        }
        if self.action_dim == 0 || self.actions.len() != n * self.action_dim {
            return bad(format!(
                "actions: {} values for {n} frames of width {}",
                self.actions.len(),
                self.action_dim
            ));
        }
        if self.parts.is_empty() {
            return bad("the input has no parts".into());
        }
        for p in &self.parts {
            if p.width == 0 || p.values.len() != n * p.width {
                return bad(format!(
                    "input part {}: {} values for {n} frames of width {}",
                    p.name,
                    p.values.len(),
                    p.width
                ));
            }
            if p.values.iter().any(|v| !v.is_finite()) {
                return bad(format!("input part {} has a non-finite value", p.name));
            }
        }
        if self.actions.iter().any(|v| !v.is_finite()) {
            return bad("an action has a non-finite value".into());
        }
        let mut next = 0;
        for e in &self.episodes {
            if e.start != next || e.len == 0 {
                return bad(format!(
                    "episode {} starts at row {} with {} frames; expected a non-empty run from row {next}",
                    e.episode_index, e.start, e.len
                ));
            }
            if e.task >= self.tasks.len() {
                return bad(format!(
                    "episode {} has task {} but there are {} tasks",
                    e.episode_index,
                    e.task,
                    self.tasks.len()
                ));
            }
            next += e.len;
        }
        if next != n {
            return bad(format!("episodes cover {next} of {n} frames"));
        }
        Ok(())
    }

    /// Checks `target` against these inputs (same frame count and action width, finite values).
    ///
    /// # Errors
    /// [`FqeError::InvalidInputs`].
    pub fn validate_target(&self, target: &TargetActions) -> Result<(), FqeError> {
        if target.samples == 0
            || target.action_dim != self.action_dim
            || target.values.len() != self.n_frames() * target.samples * target.action_dim
        {
            return Err(FqeError::InvalidInputs(format!(
                "target actions: {} values, {} samples of width {} for {} frames of action width {}",
                target.values.len(),
                target.samples,
                target.action_dim,
                self.n_frames(),
                self.action_dim
            )));
        }
        if target.values.iter().any(|v| !v.is_finite()) {
            return Err(FqeError::InvalidInputs(
                "a target action has a non-finite value".into(),
            ));
        }
        Ok(())
    }

    /// Whether frame `k` is the last frame of its episode (terminal), and that episode's row.
    pub(crate) fn terminal_flags(&self) -> (Vec<bool>, Vec<usize>) {
        let mut done = vec![false; self.n_frames()];
        let mut episode_of = vec![0; self.n_frames()];
        for (i, e) in self.episodes.iter().enumerate() {
            done[e.start + e.len - 1] = true;
            for row in &mut episode_of[e.start..e.start + e.len] {
                *row = i;
            }
        }
        (done, episode_of)
    }

    /// Rewards per frame: `r_i` on the last frame of episode `i`, 0 elsewhere (SPEC §3).
    pub(crate) fn rewards(&self) -> Vec<f32> {
        let mut r = vec![0.0; self.n_frames()];
        for e in &self.episodes {
            r[e.start + e.len - 1] = if e.success { 1.0 } else { 0.0 };
        }
        r
    }
}
