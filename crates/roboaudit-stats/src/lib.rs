//! Statistics core of roboaudit (SPEC.md §0).
//!
//! Every estimator here is checked against SciPy / scikit-learn reference values
//! (`scripts/reference_stats.py`, `tests/data/reference_stats.json`). Undefined values are
//! `None` or a typed error, never NaN.
//!
//! API CONTRACT (fixed: other crates code against these signatures):
//! - `auroc(scores, labels, weights) -> Result<Option<f64>>` (None = one class, ineligible)
//! - `grouped_auroc(scores, labels, groups, weights) -> Result<GroupedAuroc>`
//! - `pearson`, `spearman`, `kendall_tau_b` `(x, y) -> Result<Option<f64>>` (None = constant input)
//! - `average_ranks(x) -> Result<Vec<f64>>`
//! - `quantile(data, q) -> Result<f64>` (NumPy "linear"), `quantiles(data, qs)`
//! - bootstrap: `ResampleDesign`, `ResampleMatrix`, `bootstrap(...)`, `Interval`, `IntervalMethod`
//! - `equivalent(interval, margin) -> bool`
//! - evaluator metrics: `absolute_relative_error`, `normalized_regret_at_k`, `mmrv`

mod auroc;
mod bootstrap;
mod correlation;
mod error;
mod evaluator;
mod quantile;

pub use auroc::{GroupAuroc, GroupedAuroc, auroc, grouped_auroc};
pub use bootstrap::{
    BootstrapConfig, BootstrapResult, Interval, IntervalMethod, ResampleDesign, ResampleMatrix,
    bootstrap, bootstrap_with_matrix, equivalent,
};
pub use correlation::{average_ranks, kendall_tau_b, pearson, spearman};
pub use error::StatsError;
pub use evaluator::{absolute_relative_error, mmrv, normalized_regret_at_k};
pub use quantile::{quantile, quantiles};
