//! Coverage diagnostics (SPEC.md §3, seed 003 App. A.4): how far the target policy's actions lie
//! from the actions the dataset took at the same inputs. "The same inputs" are the `k` nearest
//! frames of the same task in the standardized input space (the frame itself included), so a
//! dataset that tried several actions in one situation covers all of them. For a query frame,
//! `d = mean_j min_{r ∈ kNN} ‖z(a'_j) − z(a_r)‖₂ / √dim(a)` — root-mean-square per dimension,
//! in units of the dataset's per-dimension action deviation. A task whose mean `d` exceeds the
//! registered threshold is flagged out of support. Queries and references are evenly strided
//! subsets (at most [`MAX_QUERIES`] and [`MAX_REFERENCES`] per task) to bound the cost.

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::FqeError;
use crate::inputs::{FqeInputs, TargetActions};
use crate::linalg::column_stats;

/// Registered default threshold on the mean standardized distance. Policies that act like the
/// behaviour mixture sit near 1 (the spread of the dataset's own actions at neighbouring inputs:
/// 0.7–1.4 on a 200-episode testbed push suite), so 3 deviations per action dimension marks
/// actions beyond anything the data took there (the push suite's `far_from_data` policy: ≈ 25).
pub const DEFAULT_COVERAGE_THRESHOLD: f64 = 3.0;
/// Neighbours per query frame.
pub const NEIGHBOURS: usize = 10;
/// Most query frames per task.
pub const MAX_QUERIES: usize = 2000;
/// Most reference frames per task.
pub const MAX_REFERENCES: usize = 5000;

/// Coverage of one target policy on one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCoverage {
    /// Task index.
    pub task: usize,
    /// Mean over the task's query frames of `d` (≥ 0); `None` without frames.
    pub mean_distance: Option<f64>,
    /// Fraction of query frames with `d` above the threshold, in `[0, 1]`.
    pub far_fraction: Option<f64>,
    /// `mean_distance > threshold`.
    pub out_of_support: bool,
}

/// Nearest dataset frames of each query frame, per task; independent of the target policy.
#[derive(Debug, Clone, PartialEq)]
pub struct SupportIndex {
    /// Per task: `(query frame, its neighbour frames)`.
    tasks: Vec<Vec<(usize, Vec<usize>)>>,
    action_std: Vec<f64>,
}

fn strided(rows: &[usize], most: usize) -> Vec<usize> {
    let step = rows.len().div_ceil(most.max(1)).max(1);
    rows.iter().step_by(step).copied().collect()
}

impl SupportIndex {
    /// Builds the index.
    ///
    /// # Errors
    /// [`FqeError::InvalidInputs`] from validation.
    pub fn new(inputs: &FqeInputs) -> Result<Self, FqeError> {
        inputs.validate()?;
        let dx = inputs.input_dim();
        let mut x = Vec::with_capacity(inputs.n_frames() * dx);
        for k in 0..inputs.n_frames() {
            inputs.push_input(k, &mut x);
        }
        let (mean, std) = column_stats(&x, dx);
        for row in x.chunks_exact_mut(dx) {
            for (j, v) in row.iter_mut().enumerate() {
                *v = ((f64::from(*v) - mean[j]) / std[j]) as f32;
            }
        }
        let tasks = (0..inputs.tasks.len())
            .map(|l| -> Vec<(usize, Vec<usize>)> {
                let rows = inputs.task_frames(l);
                let refs = strided(&rows, MAX_REFERENCES);
                strided(&rows, MAX_QUERIES)
                    .into_par_iter()
                    .map(|q| {
                        let xq = &x[q * dx..(q + 1) * dx];
                        let mut d: Vec<(f32, usize)> = refs
                            .iter()
                            .map(|&r| {
                                let xr = &x[r * dx..(r + 1) * dx];
                                (xq.iter().zip(xr).map(|(a, b)| (a - b) * (a - b)).sum(), r)
                            })
                            .collect();
                        d.push((0.0, q));
                        let order = |a: &(f32, usize), b: &(f32, usize)| {
                            a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
                        };
                        // Only the nearest matter: the query can appear twice (as itself and as
                        // a reference, at the same key), so NEIGHBOURS + 1 smallest keys hold the
                        // NEIGHBOURS nearest distinct frames.
                        if d.len() > NEIGHBOURS + 1 {
                            d.select_nth_unstable_by(NEIGHBOURS, order);
                            d.truncate(NEIGHBOURS + 1);
                        }
                        d.sort_by(order);
                        d.dedup_by_key(|p| p.1);
                        (q, d.iter().take(NEIGHBOURS).map(|p| p.1).collect())
                    })
                    .collect()
            })
            .collect();
        let (_, action_std) = column_stats(&inputs.actions, inputs.action_dim);
        Ok(Self { tasks, action_std })
    }
}

/// Per-task coverage of `target` against `threshold`, using `index` built from `inputs`.
///
/// # Errors
/// [`FqeError::InvalidInputs`] when `target` does not match `inputs`; [`FqeError::InvalidConfig`]
/// for a negative or non-finite threshold.
pub fn coverage(
    inputs: &FqeInputs,
    index: &SupportIndex,
    target: &TargetActions,
    threshold: f64,
) -> Result<Vec<TaskCoverage>, FqeError> {
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(FqeError::InvalidConfig(format!(
            "coverage threshold {threshold} must be finite and >= 0"
        )));
    }
    inputs.validate_target(target)?;
    let da = inputs.action_dim;
    let norm = 1.0 / (target.samples as f64 * (da as f64).sqrt());
    let dist = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .zip(&index.action_std)
            .map(|((x, y), sd)| ((f64::from(*x) - f64::from(*y)) / sd).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    Ok(index
        .tasks
        .iter()
        .enumerate()
        .map(|(l, queries)| {
            let d: Vec<f64> = queries
                .iter()
                .map(|(q, nbrs)| {
                    target
                        .frame(*q)
                        .chunks_exact(da)
                        .map(|s| {
                            nbrs.iter()
                                .map(|&r| dist(s, inputs.action(r)))
                                .fold(f64::INFINITY, f64::min)
                        })
                        .sum::<f64>()
                        * norm
                })
                .collect();
            if d.is_empty() {
                return TaskCoverage {
                    task: l,
                    mean_distance: None,
                    far_fraction: None,
                    out_of_support: false,
                };
            }
            let n = d.len() as f64;
            let mean = d.iter().sum::<f64>() / n;
            let far = d.iter().filter(|x| **x > threshold).count() as f64 / n;
            TaskCoverage {
                task: l,
                mean_distance: Some(mean),
                far_fraction: Some(far),
                out_of_support: mean > threshold,
            }
        })
        .collect())
}
