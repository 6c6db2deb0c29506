//! Linear FQE (SPEC.md §3): `Q(x, a, l) = wₗ · (x̃ ⊗ ã)` with `x̃ = [1, z(x)]`, `ã = [1, z(a)]`
//! (plus `z(a)²` with [`ActionTerms::Quadratic`]), `z` the per-column standardization. Each task has
//! its own weights. `Ψ'` holds `mean_j φ(x_{t+1}, a'_j)` (zero after a terminal frame): by
//! bilinearity it is `x̃_{t+1} ⊗ mean_j ã(a'_j)`.
//!
//! [`LinearSolver::Lstd`] (default) solves the projected Bellman fixed point in closed form
//! (LSTD-Q, Lagoudakis & Parr 2003): `w = (Φᵀ(Φ − γ Ψ') + λ n I)⁻¹ Φᵀ r`. It exists whenever the
//! matrix is non-singular, even where the fitted Bellman iteration is expansive.
//! [`LinearSolver::Iterated`] refits the Bellman targets by ridge least squares,
//! `w ← (ΦᵀΦ + λ n I)⁻¹ Φᵀ (r + γ Ψ' w)`, from `w = 0`; it reaches the same point only when the
//! projected operator is a contraction, and diverges on the testbed push suite (issue 7).

use serde::{Deserialize, Serialize};

use crate::inputs::{FqeInputs, TargetActions};
use crate::linalg::{add_at_b, cholesky, cholesky_solve, column_stats, lu_solve};
use crate::{FqeError, TaskEstimate};

/// Which functions of the action enter the features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionTerms {
    /// `[1, z(a)]`: Q is linear in the action.
    Linear,
    /// `[1, z(a), z(a)²]`: Q can peak at a preferred action per input.
    Quadratic,
}

/// How the linear fixed point is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinearSolver {
    /// Closed-form LSTD-Q: one non-symmetric solve per task.
    #[default]
    Lstd,
    /// Fitted Q iteration with ridge least squares, to `tolerance` or `max_iterations`.
    Iterated,
}

/// Linear FQE settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFqeConfig {
    /// Discount `γ` in `[0, 1]`.
    pub gamma: f64,
    /// Ridge `λ` (> 0), per transition: the penalty is `λ n_l ‖w‖²` for `n_l` transitions of task
    /// `l`, on every weight but the constant feature's (penalizing it would bias every value
    /// toward 0).
    pub ridge: f64,
    /// Action terms of the features.
    pub action_terms: ActionTerms,
    /// Fixed-point solver (LSTD when the field is missing).
    #[serde(default)]
    pub solver: LinearSolver,
    /// Most fixed-point iterations ([`LinearSolver::Iterated`] only).
    pub max_iterations: usize,
    /// Stop when the root-mean-square change of `Q` over the task's transitions falls to this.
    pub tolerance: f64,
}

impl Default for LinearFqeConfig {
    fn default() -> Self {
        Self {
            gamma: 0.99,
            ridge: 1e-3,
            action_terms: ActionTerms::Quadratic,
            solver: LinearSolver::Lstd,
            max_iterations: 20_000,
            tolerance: 1e-10,
        }
    }
}

impl LinearFqeConfig {
    /// Checks ranges.
    ///
    /// # Errors
    /// [`FqeError::Setting`] for `γ ∉ (0, 1]` or `λ` not finite and `> 0`;
    /// [`FqeError::InvalidConfig`] for zero iterations or a tolerance ≤ 0.
    pub fn validate(&self) -> Result<(), FqeError> {
        use crate::bounds_settings::{check_discount, check_positive};
        check_discount(crate::error::Setting::Gamma, self.gamma)?;
        check_positive(crate::error::Setting::Ridge, self.ridge)?;
        if self.max_iterations == 0 || self.tolerance.is_nan() || self.tolerance <= 0.0 {
            return Err(FqeError::InvalidConfig(
                "max_iterations and tolerance must be > 0".into(),
            ));
        }
        Ok(())
    }
}

/// Result of linear FQE for one target policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinearFit {
    /// `V̂(π, l)` per task (`None` for a task without episodes or whose iteration diverged).
    pub tasks: Vec<TaskEstimate>,
    /// Iterations used by the slowest task (0 for LSTD).
    pub iterations: usize,
    /// Whether every task reached the tolerance within `max_iterations` (always true for LSTD).
    pub converged: bool,
    /// Tasks whose iteration diverged (the fitted Bellman operator is expansive, typically
    /// because target actions lie outside the data); their estimate is `None`.
    pub diverged: Vec<usize>,
}

/// RMS change of Q per iteration beyond which the iteration counts as diverged (values are
/// returns in [0, 1]).
const DIVERGED: f64 = 1e6;

struct Standardizer {
    x_mean: Vec<f64>,
    x_std: Vec<f64>,
    a_mean: Vec<f64>,
    a_std: Vec<f64>,
    a_lo: Vec<f32>,
    a_hi: Vec<f32>,
    terms: ActionTerms,
}

impl Standardizer {
    fn new(inputs: &FqeInputs, terms: ActionTerms) -> Self {
        let dx = inputs.input_dim();
        let mut x = Vec::with_capacity(inputs.n_frames() * dx);
        for k in 0..inputs.n_frames() {
            inputs.push_input(k, &mut x);
        }
        let (x_mean, x_std) = column_stats(&x, dx);
        let (a_mean, a_std) = column_stats(&inputs.actions, inputs.action_dim);
        let (a_lo, a_hi) = inputs.action_range();
        Self {
            x_mean,
            x_std,
            a_mean,
            a_std,
            a_lo,
            a_hi,
            terms,
        }
    }

    fn x_aug(&self, inputs: &FqeInputs, k: usize, buf: &mut Vec<f32>) -> Vec<f64> {
        buf.clear();
        inputs.push_input(k, buf);
        let mut out = Vec::with_capacity(buf.len() + 1);
        out.push(1.0);
        for (j, v) in buf.iter().enumerate() {
            out.push((f64::from(*v) - self.x_mean[j]) / self.x_std[j]);
        }
        out
    }

    /// Appends `φ(x_k, a_k) = x̃ ⊗ ã` of frame `k`'s own action to `phi`.
    fn push_phi(&self, inputs: &FqeInputs, k: usize, buf: &mut Vec<f32>, phi: &mut Vec<f64>) {
        let x = self.x_aug(inputs, k, buf);
        let mut a = vec![0.0; self.a_dim()];
        self.add_a_aug(inputs.action(k), 1.0, &mut a);
        kron(&x, &a, phi);
    }

    fn a_dim(&self) -> usize {
        match self.terms {
            ActionTerms::Linear => 1 + self.a_mean.len(),
            ActionTerms::Quadratic => 1 + 2 * self.a_mean.len(),
        }
    }

    /// Adds `ã(a)` to `out` (same length as `a_dim`).
    fn add_a_aug(&self, a: &[f32], weight: f64, out: &mut [f64]) {
        out[0] += weight;
        let d = a.len();
        for (j, v) in a.iter().enumerate() {
            let v = v.max(self.a_lo[j]).min(self.a_hi[j]);
            let z = ((f64::from(v) - self.a_mean[j]) / self.a_std[j]).clamp(-Z_CLIP, Z_CLIP);
            out[1 + j] += weight * z;
            if self.terms == ActionTerms::Quadratic {
                out[1 + d + j] += weight * z * z;
            }
        }
    }
}

/// Actions are clipped to the dataset's range per dimension ([`FqeInputs::action_range`]), then
/// standardized values to ±`Z_CLIP` deviations: target actions far outside the
/// data (or along action dimensions the data barely varies) would otherwise enter the quadratic
/// features at thousands of deviations and make the fitted Bellman iteration expansive. Such
/// actions are flagged by the coverage diagnostics instead.
const Z_CLIP: f64 = 5.0;

/// `V̂(π, l)`: the mean over task `l`'s initial frames of `mean_j Q(x_0, a'_j)`.
fn initial_value(
    inputs: &FqeInputs,
    st: &Standardizer,
    mean_target: &dyn Fn(usize) -> Vec<f64>,
    l: usize,
    w: &[f64],
    dim: usize,
) -> f64 {
    let mut buf = Vec::new();
    let initial = inputs.initial_frames(l);
    let mut total = 0.0;
    for &k in &initial {
        let x = st.x_aug(inputs, k, &mut buf);
        let mut phi = Vec::with_capacity(dim);
        kron(&x, &mean_target(k), &mut phi);
        total += phi.iter().zip(w).map(|(p, q)| p * q).sum::<f64>();
    }
    let n = initial.len().max(1) as f64;
    total / n
}

fn kron(x: &[f64], a: &[f64], out: &mut Vec<f64>) {
    for xi in x {
        for aj in a {
            out.push(xi * aj);
        }
    }
}

/// Rows per Gram block: bounds memory at `CHUNK × dim` values per matrix.
const CHUNK: usize = 4096;

/// The policy-independent part of linear FQE on one dataset: the standardization and, per task,
/// its transitions, `ΦᵀΦ` and `Φᵀr`. Computed once by [`LinearSystems::new`] and shared by every
/// target policy's [`LinearSystems::fit`] (only `ΦᵀΨ'` depends on the policy).
pub struct LinearSystems {
    st: Standardizer,
    done: Vec<bool>,
    config: LinearFqeConfig,
    /// Per task: its frames, `ΦᵀΦ` (`dim × dim`) and `Φᵀr`; `None` without episodes.
    tasks: Vec<Option<TaskGram>>,
}

struct TaskGram {
    rows: Vec<usize>,
    gram: Vec<f64>,
    c: Vec<f64>,
}

impl LinearSystems {
    /// Validates `config` and `inputs` and accumulates each task's `ΦᵀΦ` and `Φᵀr` (tasks in
    /// parallel on the current rayon pool; each task's sums in frame order, so the bytes do not
    /// depend on the thread count).
    ///
    /// # Errors
    /// [`FqeError::InvalidConfig`]/[`FqeError::InvalidInputs`] from validation.
    pub fn new(inputs: &FqeInputs, config: &LinearFqeConfig) -> Result<Self, FqeError> {
        use rayon::prelude::*;
        config.validate()?;
        inputs.validate()?;
        let st = Standardizer::new(inputs, config.action_terms);
        let (done, _) = inputs.terminal_flags();
        let rewards = inputs.rewards();
        let dim = (inputs.input_dim() + 1) * st.a_dim();
        let tasks = (0..inputs.tasks.len())
            .into_par_iter()
            .with_max_len(1)
            .map(|l| {
                let rows = inputs.task_frames(l);
                if rows.is_empty() {
                    return Ok(None);
                }
                let mut buf = Vec::new();
                let mut gram = vec![0.0; dim * dim];
                let mut c = vec![0.0; dim];
                let mut phi = Vec::new();
                for chunk in rows.chunks(CHUNK) {
                    phi.clear();
                    for &k in chunk {
                        let start = phi.len();
                        st.push_phi(inputs, k, &mut buf, &mut phi);
                        let r = f64::from(rewards[k]);
                        for (cj, pj) in c.iter_mut().zip(&phi[start..]) {
                            *cj += r * pj;
                        }
                    }
                    add_at_b(&mut gram, &phi, &phi, chunk.len(), dim, dim)?;
                }
                Ok(Some(TaskGram { rows, gram, c }))
            })
            .collect::<Result<Vec<_>, FqeError>>()?;
        Ok(Self {
            st,
            done,
            config: config.clone(),
            tasks,
        })
    }

    /// Linear FQE for one target policy on these systems: the same values as [`fit_linear`].
    ///
    /// # Errors
    /// [`FqeError::InvalidInputs`] for target actions that do not match the inputs;
    /// [`FqeError::Numerical`] as [`fit_linear`].
    pub fn fit(&self, inputs: &FqeInputs, target: &TargetActions) -> Result<LinearFit, FqeError> {
        inputs.validate_target(target)?;
        fit_with(self, inputs, target)
    }
}

/// Fits linear FQE for one target policy and returns `V̂(π, l)` for every task.
///
/// # Errors
/// [`FqeError::InvalidConfig`]/[`FqeError::InvalidInputs`] from validation;
/// [`FqeError::Numerical`] when a system is not positive definite. A diverging iteration is not an
/// error: the task is listed in [`LinearFit::diverged`] with no estimate.
pub fn fit_linear(
    inputs: &FqeInputs,
    target: &TargetActions,
    config: &LinearFqeConfig,
) -> Result<LinearFit, FqeError> {
    config.validate()?;
    inputs.validate()?;
    inputs.validate_target(target)?;
    LinearSystems::new(inputs, config)?.fit(inputs, target)
}

fn fit_with(
    sys: &LinearSystems,
    inputs: &FqeInputs,
    target: &TargetActions,
) -> Result<LinearFit, FqeError> {
    let (st, done, config) = (&sys.st, &sys.done, &sys.config);
    let dx = inputs.input_dim() + 1;
    let da = st.a_dim();
    let dim = dx * da;
    let m = target.samples;
    let inv_m = 1.0 / m as f64;
    let mut buf = Vec::new();
    let mut tasks = Vec::with_capacity(inputs.tasks.len());
    let mut iterations = 0;
    let mut converged = true;
    let mut diverged = Vec::new();

    // Mean target-action features of frame k.
    let mean_target = |k: usize| {
        let mut acc = vec![0.0; da];
        for s in target.frame(k).chunks_exact(inputs.action_dim) {
            st.add_a_aug(s, inv_m, &mut acc);
        }
        acc
    };

    for (l, system) in sys.tasks.iter().enumerate() {
        let Some(TaskGram { rows, gram, c }) = system else {
            tasks.push(TaskEstimate {
                task: l,
                value: None,
            });
            continue;
        };
        let (mut gram, c) = (gram.clone(), c.clone());
        let mut cross = vec![0.0; dim * dim];
        let mut phi = Vec::new();
        let mut psi = Vec::new();
        for chunk in rows.chunks(CHUNK) {
            phi.clear();
            psi.clear();
            for &k in chunk {
                st.push_phi(inputs, k, &mut buf, &mut phi);
                if done[k] {
                    psi.extend(std::iter::repeat_n(0.0, dim));
                } else {
                    let xn = st.x_aug(inputs, k + 1, &mut buf);
                    kron(&xn, &mean_target(k + 1), &mut psi);
                }
            }
            add_at_b(&mut cross, &phi, &psi, chunk.len(), dim, dim)?;
        }
        let penalty = config.ridge * rows.len() as f64;
        if config.solver == LinearSolver::Lstd {
            // A = Φᵀ(Φ − γΨ') + λnI, b = Φᵀr.
            let mut a = gram;
            for (ai, ci) in a.iter_mut().zip(&cross) {
                *ai -= config.gamma * ci;
            }
            // Feature 0 is the constant x̃₀ã₀: not penalized. Along it A has only n(1 − γ), so
            // a penalty there would shrink every value toward 0 by (1 − γ)/(1 − γ + λ).
            for i in 1..dim {
                a[i * dim + i] += penalty;
            }
            let mut w = c;
            lu_solve(&mut a, dim, &mut w)?;
            tasks.push(TaskEstimate {
                task: l,
                value: Some(initial_value(inputs, st, &mean_target, l, &w, dim)),
            });
            continue;
        }
        let raw_gram = gram.clone();
        for i in 1..dim {
            gram[i * dim + i] += penalty;
        }
        let chol = cholesky(&gram, dim)?;
        let mut w = vec![0.0; dim];
        let mut task_converged = false;
        let mut used = 0;
        for it in 0..config.max_iterations {
            let mut next = c.clone();
            for i in 0..dim {
                let row = &cross[i * dim..(i + 1) * dim];
                next[i] += config.gamma * row.iter().zip(&w).map(|(p, q)| p * q).sum::<f64>();
            }
            cholesky_solve(&chol, dim, &mut next);
            // Converged when Q on the task's transitions stops moving: the RMS change
            // sqrt(Δwᵀ ΦᵀΦ Δw / n). Weights themselves may wander in directions the data does not
            // see, where a tiny ridge leaves round-off.
            let delta: Vec<f64> = next.iter().zip(&w).map(|(p, q)| p - q).collect();
            let mut quad = 0.0;
            for i in 0..dim {
                let row = &raw_gram[i * dim..(i + 1) * dim];
                quad += delta[i] * row.iter().zip(&delta).map(|(g, d)| g * d).sum::<f64>();
            }
            let change = (quad.max(0.0) / rows.len() as f64).sqrt();
            if !change.is_finite() || change > DIVERGED {
                diverged.push(l);
                break;
            }
            w = next;
            used = it + 1;
            if change <= config.tolerance {
                task_converged = true;
                break;
            }
        }
        iterations = iterations.max(used);
        converged &= task_converged;
        if diverged.last() == Some(&l) {
            tasks.push(TaskEstimate {
                task: l,
                value: None,
            });
            continue;
        }
        tasks.push(TaskEstimate {
            task: l,
            value: Some(initial_value(inputs, st, &mean_target, l, &w, dim)),
        });
    }
    Ok(LinearFit {
        tasks,
        iterations,
        converged,
        diverged,
    })
}
