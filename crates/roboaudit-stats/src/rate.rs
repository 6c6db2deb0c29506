//! Rates built from counts, compared exactly (SPEC.md §0: "quantities built from counts are
//! compared, ranked and tie-broken exactly, as rationals").
//!
//! A float mean of success rates depends on the order of its terms, so two experiences with the
//! same successes over the same executions can come out one ulp apart and stop tying. Every
//! comparison, argmax, sort or rank keyed on such a rate goes through [`Rate`] (integer
//! numerator over a denominator, ordered by cross-multiplication) and [`exact_ratio`] turns the
//! fraction into the nearest `f64` for output only, so equal fractions print identically.

use crate::StatsError;
use std::cmp::Ordering;
use std::num::NonZeroU64;

/// A non-negative rate `num / den` built from counts (`den ≥ 1`), ordered by value: `1/2` equals
/// `2/4`, and no two different fractions compare equal. Comparisons are exact (cross-products
/// in `u128`), as cheap as comparing floats.
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    num: u64,
    den: u64,
}

impl Rate {
    /// `num / den`.
    ///
    /// # Errors
    /// [`StatsError::InvalidParameter`] when `den == 0`.
    pub fn new(num: u64, den: u64) -> Result<Self, StatsError> {
        if den == 0 {
            return Err(StatsError::InvalidParameter(format!(
                "a rate needs a positive denominator (got {num}/0)"
            )));
        }
        Ok(Self { num, den })
    }

    /// `num / den` for a denominator known to be positive.
    #[must_use]
    pub const fn per(num: u64, den: NonZeroU64) -> Self {
        Self {
            num,
            den: den.get(),
        }
    }

    /// The numerator as given (not reduced).
    #[must_use]
    pub const fn num(self) -> u64 {
        self.num
    }

    /// The denominator as given (not reduced), ≥ 1.
    #[must_use]
    pub const fn den(self) -> u64 {
        self.den
    }

    /// The `f64` nearest to the fraction (round to nearest, ties to even), so equal fractions
    /// give identical floats whatever their numerators. For output only.
    #[must_use]
    pub fn to_f64(self) -> f64 {
        exact_ratio(u128::from(self.num), u128::from(self.den))
    }

    /// Exact comparison with a finite `f64` (itself an exact binary fraction), as Python's
    /// `Fraction(num, den)` compares with `Fraction(x)`. A NaN compares as greater than every
    /// rate.
    #[must_use]
    pub fn cmp_f64(self, x: f64) -> Ordering {
        if x.is_nan() {
            return Ordering::Less;
        }
        let near = self.to_f64();
        if near != x {
            // Rounding is monotone and `x` is representable: the nearest float of the rate lies
            // on the same side of `x` as the rate itself.
            return near.total_cmp(&(x + 0.0));
        }
        if x == 0.0 {
            return Ordering::Equal; // the nearest float is 0 only for the rate 0
        }
        // `x = m · 2^e` exactly; the rate is within half an ulp of x, so both cross-products
        // below are within a factor 2 of `m · den < 2^117`.
        let bits = x.to_bits();
        let exp_bits = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (m, e) = if exp_bits == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp_bits - 1075)
        };
        let (num, den, m) = (u128::from(self.num), u128::from(self.den), u128::from(m));
        if e >= 0 {
            // num vs m·2^e·den
            let rhs = (m * den).checked_shl(e.unsigned_abs());
            match rhs {
                Some(r) if (m * den).leading_zeros() > e.unsigned_abs() => num.cmp(&r),
                _ => Ordering::Less,
            }
        } else {
            // num·2^(−e) vs m·den
            let shift = e.unsigned_abs();
            if num.leading_zeros() <= shift {
                return Ordering::Greater;
            }
            (num << shift).cmp(&(m * den))
        }
    }
}

impl PartialEq for Rate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Rate {}

impl PartialOrd for Rate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rate {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (u128::from(self.num) * u128::from(other.den))
            .cmp(&(u128::from(other.num) * u128::from(self.den)))
    }
}

/// The `f64` nearest to `num / den` (round to nearest, ties to even; `den ≥ 1`, a zero `den`
/// gives `+∞`, or 0 for `0/0`). Exact integer long division: the same fraction always gives the
/// same float, whichever numerator and denominator spell it.
#[must_use]
pub fn exact_ratio(num: u128, den: u128) -> f64 {
    if num == 0 || den == 0 {
        return if num == 0 { 0.0 } else { f64::INFINITY };
    }
    const EXACT: u128 = 1 << 53;
    if num < EXACT && den < EXACT {
        // Both operands are exact in f64 and IEEE division rounds once.
        return num as f64 / den as f64;
    }
    let (mut mant, mut rem) = (num / den, num % den);
    let mut exp: i32 = 0;
    // At least 55 significant bits, then round to odd (the lowest bit records a nonzero
    // remainder): the one rounding to 53 bits in the cast is then the correct one.
    while mant < 1 << 55 {
        let bit = rem >= den - rem;
        rem = if bit { rem - (den - rem) } else { rem + rem };
        mant = (mant << 1) | u128::from(bit);
        exp -= 1;
    }
    mant |= u128::from(rem != 0);
    // Cast: rounded once, to nearest even, by the cast
    let value = mant as f64;
    // exp ≥ −(128 + 55): a normal power of two.
    let scale = f64::from_bits(((1023 + exp) as u64) << 52);
    value * scale
}

/// The `f64` nearest to the signed fraction `num / den` ([`exact_ratio`] of the magnitude).
#[must_use]
pub fn exact_signed_ratio(num: i128, den: u128) -> f64 {
    let magnitude = exact_ratio(num.unsigned_abs(), den);
    if num < 0 { -magnitude } else { magnitude }
}

/// Greatest common divisor (Euclid); `gcd(0, b) = b`.
#[must_use]
pub fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The exact mean `(r_1 + … + r_m) / m` of rates with possibly different denominators, as one
/// fraction over `lcm(den_i) · m` (SPEC.md §0: a mean of rates from counts is itself compared
/// exactly). `None` for an empty slice, or when that denominator or the numerator exceeds
/// `u64` (callers then fall back to an order-independent float mean).
#[must_use]
pub fn mean_rate(rates: &[Rate]) -> Option<Rate> {
    if rates.is_empty() {
        return None;
    }
    let mut lcm: u128 = 1;
    for r in rates {
        let d = u128::from(r.den);
        lcm = (lcm / gcd(lcm, d)).checked_mul(d)?;
        if lcm > u128::from(u64::MAX) {
            return None;
        }
    }
    let mut num: u128 = 0;
    for r in rates {
        num = num.checked_add(u128::from(r.num).checked_mul(lcm / u128::from(r.den))?)?;
    }
    let den = lcm.checked_mul(u128::try_from(rates.len()).ok()?)?;
    Rate::new(u64::try_from(num).ok()?, u64::try_from(den).ok()?).ok()
}

/// Position of the largest value, the lowest position among ties (SPEC.md §1's tie rule);
/// `None` for an empty slice.
#[must_use]
pub fn first_max<T: Ord>(values: &[T]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, v) in values.iter().enumerate() {
        if best.is_none_or(|b| *v > values[b]) {
            best = Some(i);
        }
    }
    best
}

/// Ranks 1..=n of exactly ordered values, ties given their average rank
/// (`scipy.stats.rankdata(x, method="average")` on the exact values).
#[must_use]
pub fn average_ranks_exact<T: Ord>(x: &[T]) -> Vec<f64> {
    crate::correlation::average_ranks_by(x.len(), |a, b| x[a].cmp(&x[b]))
}

/// Spearman's ρ of exactly ordered values: Pearson's r of their average ranks
/// ([`average_ranks_exact`]), as `scipy.stats.spearmanr` on the exact values. `Ok(None)` when
/// either side is constant.
///
/// # Errors
/// `LengthMismatch`; `TooFew` when n < 2.
pub fn spearman_exact<T: Ord, U: Ord>(x: &[T], y: &[U]) -> Result<Option<f64>, StatsError> {
    crate::check::check_same_len("x", x.len(), "y", y.len())?;
    crate::pearson(&average_ranks_exact(x), &average_ranks_exact(y))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn r(num: u64, den: u64) -> Rate {
        Rate::new(num, den).unwrap()
    }

    #[test]
    fn mean_rate_is_exact_across_denominators() {
        // 1/5 and 6/10 average to 2/5, as do 2/5 and 4/10; the float sums differ in order.
        let a = mean_rate(&[r(1, 5), r(6, 10)]).unwrap();
        let b = mean_rate(&[r(4, 10), r(2, 5)]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, r(2, 5));
        assert_eq!(a.to_f64(), 0.4);
        assert_eq!(
            mean_rate(&[r(1, 10), r(2, 10), r(3, 10)]).unwrap().to_f64(),
            0.2
        );
        assert_eq!(mean_rate(&[]), None);
        // lcm of two large coprime denominators overflows u64.
        assert_eq!(mean_rate(&[r(1, u64::MAX), r(1, u64::MAX - 1)]), None);
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(0, 7), 7);
    }

    #[test]
    fn equal_fractions_tie_and_print_identically() {
        assert_eq!(r(1, 3), r(2, 6));
        assert_eq!(r(1, 3).to_f64().to_bits(), r(5, 15).to_f64().to_bits());
        assert!(r(1, 3) < r(34, 100));
        // A float mean of the same rates splits them: 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1.
        let forward: f64 = 0.1 + 0.2 + 0.3;
        let backward: f64 = 0.3 + 0.2 + 0.1;
        assert_ne!(forward, backward);
        assert_eq!(r(6, 10), r(3, 5));
        assert!(Rate::new(1, 0).is_err());
    }

    #[test]
    fn ratios_are_correctly_rounded_beyond_53_bits() {
        // (2^60 + 1) / 2^60 is 1 + 2^-60: nearest float 1.
        assert_eq!(exact_ratio((1 << 60) + 1, 1 << 60), 1.0);
        // (2^54 + 3) / 2 = 2^53 + 1.5: nearest float 2^53 + 2.
        assert_eq!(exact_ratio((1 << 54) + 3, 2), 9_007_199_254_740_994.0);
        // A tie to even: (2^53 + 1) / 1 lies halfway, rounds to 2^53.
        assert_eq!(exact_ratio((1 << 53) + 1, 1), 9_007_199_254_740_992.0);
        assert_eq!(exact_ratio(1, 3 << 80), 1.0 / 3.0 / 2f64.powi(80));
        assert_eq!(exact_signed_ratio(-1, 4), -0.25);
        assert_eq!(exact_ratio(0, 7), 0.0);
    }

    #[test]
    fn comparison_with_floats_is_exact() {
        assert_eq!(r(3, 5).cmp_f64(0.6), Ordering::Greater); // 0.6 is 0.59999999999999997...
        assert_eq!(r(1, 2).cmp_f64(0.5), Ordering::Equal);
        assert_eq!(r(1, 3).cmp_f64(0.3), Ordering::Greater);
        assert_eq!(r(0, 3).cmp_f64(-0.0), Ordering::Equal);
        assert_eq!(r(7, 1).cmp_f64(7.0), Ordering::Equal);
        assert_eq!(r(1, 10).cmp_f64(0.1), Ordering::Less); // 0.1 is 0.1000000000000000055...
    }

    #[test]
    fn ranks_and_spearman_follow_the_exact_values() {
        let q = [r(1, 3), r(2, 6), r(1, 2), r(0, 1)];
        assert_eq!(average_ranks_exact(&q), vec![2.5, 2.5, 4.0, 1.0]);
        assert_eq!(first_max(&q), Some(2));
        assert_eq!(first_max(&[r(1, 2), r(2, 4)]), Some(0));
        assert_eq!(first_max::<Rate>(&[]), None);
        let rho = spearman_exact(&q, &[1, 2, 3, 0]).unwrap().unwrap();
        assert!(
            (rho - crate::spearman(&[2.5, 2.5, 4.0, 1.0], &[1.0, 2.0, 3.0, 0.0])
                .unwrap()
                .unwrap())
            .abs()
                < 1e-15
        );
        assert_eq!(spearman_exact(&[r(1, 2), r(2, 4)], &[1, 2]).unwrap(), None);
    }

    proptest! {
        #[test]
        fn order_and_rounding_agree_with_cross_multiplication(
            a in 0u64..1_000_000, b in 1u64..1_000_000, c in 0u64..1_000_000, d in 1u64..1_000_000,
            scale in 1u64..1_000_000_000, twos in 0u32..20,
        ) {
            let (x, y) = (r(a, b), r(c, d));
            prop_assert_eq!(x.cmp(&y), (u128::from(a) * u128::from(d)).cmp(&(u128::from(c) * u128::from(b))));
            // Scaling both terms keeps the value and its float.
            let scaled = r(a * scale, b * scale);
            prop_assert_eq!(scaled, x);
            prop_assert_eq!(scaled.to_f64().to_bits(), x.to_f64().to_bits());
            prop_assert_eq!(x.to_f64(), a as f64 / b as f64);
            // A dyadic rate is exact in f64: comparing with its float is comparing with it.
            let dyadic = r(c, 1 << twos);
            prop_assert_eq!(x.cmp_f64(dyadic.to_f64()), x.cmp(&dyadic));
        }
    }
}
