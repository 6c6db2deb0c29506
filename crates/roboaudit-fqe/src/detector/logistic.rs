//! L2-regularized logistic regression (SPEC.md §3 success detector, seed 003 §3), the model
//! scikit-learn fits as `LogisticRegression(C, penalty="l2", fit_intercept=True)`: it minimizes
//!
//! `f(w, b) = ½‖w‖² + C Σᵢ [log(1 + e^{zᵢ}) − yᵢ zᵢ]`,  `zᵢ = xᵢ·w + b`,
//!
//! with the intercept `b` unpenalized. `f` is strictly convex in `w` and the optimum is unique
//! whenever both classes occur, so any correct solver lands on the same coefficients; ours is
//! Newton's method on the `(p + 1)`-dimensional system with a Cholesky solve and a backtracking
//! line search (the Hessian `C XᵀSX + diag(1, …, 1, 0)` is small: `p` is the number of
//! principal components). Checked against scikit-learn in `tests/detector_reference.rs`.

use serde::Serialize;

use crate::FqeError;
use crate::linalg::{add_at_b, cholesky, cholesky_solve};

/// Settings of [`fit_logistic`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LogisticConfig {
    /// Inverse regularization strength `C > 0` (scikit-learn's `C`): larger fits the training
    /// rows harder.
    pub c: f64,
    /// Most Newton iterations (Newton converges in well under 50 on standardized features).
    pub max_iterations: usize,
    /// Convergence: the largest gradient entry of `f / max(1, C)` at most this.
    pub tolerance: f64,
}

impl Default for LogisticConfig {
    fn default() -> Self {
        Self {
            c: 1.0,
            max_iterations: 100,
            tolerance: 1e-10,
        }
    }
}

impl LogisticConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`FqeError::Setting`] ([`crate::error::Setting::C`]) for `C` not finite and > 0;
    /// [`FqeError::InvalidConfig`] for no iterations or a tolerance ≤ 0.
    pub fn validate(&self) -> Result<(), FqeError> {
        crate::bounds_settings::check_positive(crate::error::Setting::C, self.c)?;
        if self.max_iterations == 0 || self.tolerance.is_nan() || self.tolerance <= 0.0 {
            return Err(FqeError::InvalidConfig(
                "max_iterations and tolerance must be > 0".into(),
            ));
        }
        Ok(())
    }
}

/// A fitted model `P(success | x) = σ(x·w + b)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogisticModel {
    /// Coefficients `w`, one per feature.
    pub coef: Vec<f64>,
    /// Intercept `b`.
    pub intercept: f64,
    /// Newton iterations taken.
    pub iterations: usize,
    /// Whether the gradient reached the tolerance within `max_iterations` (otherwise the model
    /// is the last iterate, still a descent from zero).
    pub converged: bool,
}

impl LogisticModel {
    /// `P(success)` for each row of `x` (row-major `rows × coef.len()`), in `[0, 1]`.
    pub fn predict_proba(&self, x: &[f64]) -> Vec<f64> {
        x.chunks_exact(self.coef.len().max(1))
            .map(|row| sigmoid(dot(row, &self.coef) + self.intercept))
            .collect()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `1 / (1 + e^{−z})` without overflow for large `|z|`.
pub(crate) fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// `log(1 + e^z)` without overflow.
fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// `f(w, b)` at `theta = [w, b]` (`x` has `theta.len() − 1 ≥ 1` columns).
fn objective(x: &[f64], y: &[bool], theta: &[f64], c: f64) -> f64 {
    let p = theta.len() - 1;
    let (w, b) = (&theta[..p], theta[p]);
    let loss: f64 = x
        .chunks_exact(p)
        .zip(y)
        .map(|(row, yi)| {
            let z = dot(row, w) + b;
            softplus(z) - if *yi { z } else { 0.0 }
        })
        .sum();
    0.5 * dot(w, w) + c * loss
}

/// Fits the model on `x` (row-major `y.len() × features`) and labels `y`.
///
/// # Errors
/// [`FqeError::Setting`] and [`FqeError::InvalidConfig`] from [`LogisticConfig::validate`];
/// [`FqeError::InvalidInputs`] when there are no rows or no features, `x` is not
/// `y.len() × features`, a value is not finite, or
/// `y` holds one class only (the unpenalized intercept then runs to ±∞);
/// [`FqeError::Numerical`] when the Newton system cannot be solved.
pub fn fit_logistic(
    x: &[f64],
    y: &[bool],
    features: usize,
    config: &LogisticConfig,
) -> Result<LogisticModel, FqeError> {
    config.validate()?;
    let n = y.len();
    if n == 0 || features == 0 || x.len() != n * features {
        return Err(FqeError::InvalidInputs(format!(
            "logistic regression: {} values for {n} rows of {features} features",
            x.len()
        )));
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(FqeError::InvalidInputs(
            "logistic regression: non-finite feature value".into(),
        ));
    }
    let positives = y.iter().filter(|v| **v).count();
    if positives == 0 || positives == n {
        return Err(FqeError::InvalidInputs(format!(
            "logistic regression needs both classes; all {n} rows are {}",
            if positives == 0 {
                "failures"
            } else {
                "successes"
            }
        )));
    }
    let c = config.c;
    let dim = features + 1;
    // Rows with a trailing 1 for the intercept.
    let xa: Vec<f64> = x
        .chunks_exact(features)
        .flat_map(|row| row.iter().copied().chain(std::iter::once(1.0)))
        .collect();
    let mut theta = vec![0.0; dim];
    let mut f = objective(x, y, &theta, c);
    // The gradient is tested on f / max(1, C): with a large C the loss term dominates and its
    // scale grows with C, which would make an absolute tolerance unattainable in f64.
    let scale = c.max(1.0);
    for iteration in 0..config.max_iterations {
        let prob: Vec<f64> = xa
            .chunks_exact(dim)
            .map(|r| sigmoid(dot(r, &theta)))
            .collect();
        let mut grad = vec![0.0; dim];
        for ((row, p), yi) in xa.chunks_exact(dim).zip(&prob).zip(y) {
            let r = c * (p - if *yi { 1.0 } else { 0.0 });
            for (g, v) in grad.iter_mut().zip(row) {
                *g += r * v;
            }
        }
        for (g, w) in grad.iter_mut().zip(&theta).take(features) {
            *g += w;
        }
        if grad.iter().fold(0.0f64, |m, g| m.max(g.abs())) / scale <= config.tolerance {
            return Ok(model(&theta, features, iteration, true));
        }
        // Hessian C·XᵀSX + diag(1…1, 0), S = diag(p(1 − p)).
        let weighted: Vec<f64> = xa
            .chunks_exact(dim)
            .zip(&prob)
            .flat_map(|(row, p)| {
                let s = (c * p * (1.0 - p)).sqrt();
                row.iter().map(move |v| v * s)
            })
            .collect();
        let mut hess = vec![0.0; dim * dim];
        add_at_b(&mut hess, &weighted, &weighted, n, dim, dim)?;
        for j in 0..features {
            hess[j * dim + j] += 1.0;
        }
        let mut step = grad.clone();
        let l = match cholesky(&hess, dim) {
            Ok(l) => l,
            // Every probability saturated: the intercept's curvature underflowed. A jitter far
            // below the penalty's unit curvature keeps the step a descent direction.
            Err(_) => {
                let jitter = 1e-10 * (1.0 + hess.iter().fold(0.0f64, |m, v| m.max(v.abs())));
                for j in 0..dim {
                    hess[j * dim + j] += jitter;
                }
                cholesky(&hess, dim)?
            }
        };
        cholesky_solve(&l, dim, &mut step);
        let decrease: f64 = dot(&grad, &step);
        // Near the optimum the predicted decrease (the Newton decrement) falls below the
        // round-off of f itself, and comparing f values would reject good steps at random:
        // there the full Newton step is taken untested (Newton converges quadratically).
        if decrease <= 1e-12 * (1.0 + f.abs()) {
            for (a, s) in theta.iter_mut().zip(&step) {
                *a -= s;
            }
            f = objective(x, y, &theta, c);
            continue;
        }
        // Backtracking (Armijo) line search on f along −step.
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            let trial: Vec<f64> = theta.iter().zip(&step).map(|(a, s)| a - t * s).collect();
            let ft = objective(x, y, &trial, c);
            if ft <= f - 1e-4 * t * decrease {
                theta = trial;
                f = ft;
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            // No decrease representable in f64: the iterate is the optimum to round-off.
            return Ok(model(&theta, features, iteration + 1, true));
        }
    }
    Ok(model(&theta, features, config.max_iterations, false))
}

fn model(theta: &[f64], features: usize, iterations: usize, converged: bool) -> LogisticModel {
    LogisticModel {
        coef: theta[..features].to_vec(),
        intercept: theta[features],
        iterations,
        converged,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sigmoid_and_softplus_do_not_overflow() {
        assert!((sigmoid(0.0) - 0.5).abs() < 1e-15);
        assert_eq!(sigmoid(-1000.0), 0.0);
        assert_eq!(sigmoid(1000.0), 1.0);
        assert!((softplus(1000.0) - 1000.0).abs() < 1e-12);
        assert!(softplus(-1000.0) >= 0.0 && softplus(-1000.0) < 1e-300);
    }

    #[test]
    fn symmetric_data_gives_zero_intercept_and_an_odd_model() {
        // x = ±1 with labels flipped on two of six rows: the optimum is symmetric.
        let x = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0];
        let y = [true, true, false, false, false, true];
        let m = fit_logistic(&x, &y, 1, &LogisticConfig::default()).unwrap();
        assert!(m.converged && m.intercept.abs() < 1e-12, "{m:?}");
        let p = m.predict_proba(&[1.0, -1.0]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-12 && p[0] > 0.5);
    }

    /// Regression: a 5-fold fit on the push suite ran to `max_iterations` because near the
    /// optimum the line search compared objective values that differ only by round-off and
    /// rejected the Newton steps at random.
    #[test]
    fn converges_when_the_newton_decrement_is_below_round_off() {
        use rand::{RngExt, SeedableRng};
        // 120 rows of 32 features, every fifth heavy-tailed (cubed), like principal-component
        // scores of images: the old line search ran this to 100 iterations.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let (n, p) = (120, 32);
        let mut x = Vec::with_capacity(n * p);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let label = rng.random::<f64>() < 0.6;
            for j in 0..p {
                let shift = if label && j < 4 { 0.7 } else { 0.0 };
                let v: f64 = rng.random::<f64>() * 3.0 - 1.5 + shift;
                x.push(if j % 5 == 0 { v * v * v } else { v });
            }
            y.push(label);
        }
        let m = fit_logistic(&x, &y, p, &LogisticConfig::default()).unwrap();
        assert!(
            m.converged && m.iterations <= 15,
            "{} iterations",
            m.iterations
        );
    }

    #[test]
    fn rejects_one_class_bad_shapes_and_bad_c() {
        let c = LogisticConfig::default();
        assert!(matches!(
            fit_logistic(&[1.0, 2.0], &[true, true], 1, &c),
            Err(FqeError::InvalidInputs(_))
        ));
        assert!(matches!(
            fit_logistic(&[1.0], &[true, false], 1, &c),
            Err(FqeError::InvalidInputs(_))
        ));
        let bad = LogisticConfig { c: 0.0, ..c };
        assert!(matches!(
            fit_logistic(&[1.0, 2.0], &[true, false], 1, &bad),
            Err(FqeError::Setting {
                setting: crate::error::Setting::C,
                ..
            })
        ));
    }
}
