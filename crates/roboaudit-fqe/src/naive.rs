//! The naive estimator (SPEC.md §3): the average discounted return of the dataset's episodes of
//! each task, `mean_{i ∈ l} γ^{T_i − 1} r_i`, whatever policy is being evaluated. It is the floor
//! every estimator must beat.

use crate::inputs::FqeInputs;
use crate::{FqeError, TaskEstimate};

/// Naive `V̂(l)` per task; `None` for a task without episodes.
///
/// # Errors
/// [`FqeError::InvalidConfig`] for `γ ∉ (0, 1]`
/// ([`crate::bounds_settings::is_discount`]); [`FqeError::InvalidInputs`] from validation.
pub fn naive_estimate(inputs: &FqeInputs, gamma: f64) -> Result<Vec<TaskEstimate>, FqeError> {
    if !crate::bounds_settings::is_discount(gamma) {
        return Err(FqeError::InvalidConfig(format!(
            "gamma {gamma} not in (0, 1]"
        )));
    }
    inputs.validate()?;
    Ok((0..inputs.tasks.len())
        .map(|l| {
            let returns: Vec<f64> = inputs
                .episodes
                .iter()
                .filter(|e| e.task == l)
                .map(|e| {
                    let t = i32::try_from(e.len - 1).unwrap_or(i32::MAX);
                    if e.success { gamma.powi(t) } else { 0.0 }
                })
                .collect();
            let value =
                (!returns.is_empty()).then(|| returns.iter().sum::<f64>() / returns.len() as f64);
            TaskEstimate { task: l, value }
        })
        .collect())
}
