//! Standard normal CDF and quantile (`scipy.special.ndtr` / `ndtri`), needed by the BCa interval.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// Standard normal CDF Φ(x) (`scipy.special.ndtr`), relative error ≈ 1e-16 over the whole line
/// (the lower tail goes through `erfc` so it keeps full relative accuracy). Φ(±∞) = 1 or 0; NaN
/// gives NaN.
pub fn normal_cdf(x: f64) -> f64 {
    let t = x * FRAC_1_SQRT_2;
    if x < 0.0 {
        0.5 * libm::erfc(-t)
    } else if t < 1.0 {
        0.5 + 0.5 * libm::erf(t)
    } else {
        1.0 - 0.5 * libm::erfc(t)
    }
}

/// Standard normal quantile Φ⁻¹(p) (`scipy.special.ndtri`): `−∞` at 0, `+∞` at 1, NaN outside
/// [0, 1] or for NaN. Accurate to a few ulp: an Abramowitz–Stegun 26.2.23 start (error < 4.5e-4)
/// refined by Halley steps on [`normal_cdf`] (cubic convergence, three steps reach round-off).
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    // 1 − p is exact for p in [0.5, 1] (Sterbenz), so the upper half reuses the lower tail.
    if p > 0.5 {
        -lower_quantile(1.0 - p)
    } else {
        lower_quantile(p)
    }
}

/// Φ⁻¹(p) for p in (0, 0.5].
fn lower_quantile(p: f64) -> f64 {
    let t = (-2.0 * p.ln()).sqrt();
    let num = 2.515_517 + t * (0.802_853 + t * 0.010_328);
    let den = 1.0 + t * (1.432_788 + t * (0.189_269 + t * 0.001_308));
    let mut x = -(t - num / den);
    for _ in 0..6 {
        let density = (-0.5 * x * x).exp() / (2.0 * PI).sqrt();
        if density == 0.0 {
            break;
        }
        let e = (normal_cdf(x) - p) / density;
        let step = e / (1.0 + 0.5 * x * e);
        x -= step;
        if step.abs() <= 1e-17 * x.abs().max(1e-300) {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_inverts_cdf() {
        for &p in &[
            1e-12, 1e-6, 0.001, 0.025, 0.1, 0.3, 0.5, 0.7, 0.975, 0.999_999,
        ] {
            let x = normal_quantile(p);
            // Φ's own relative error grows like x²·ε in the tail (the argument x/√2 is rounded).
            let tol = (4.0 + x * x) * f64::EPSILON * p;
            assert!((normal_cdf(x) - p).abs() <= tol, "p={p} x={x}");
        }
    }

    #[test]
    fn known_values() {
        // scipy.special.ndtri(0.975) and ndtr(1.0)
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-15);
        assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 4e-16);
        assert!((normal_cdf(-1.0) - 0.158_655_253_931_457_05).abs() < 1e-16);
        assert_eq!(normal_quantile(0.5), 0.0);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(1.5).is_nan());
    }
}
