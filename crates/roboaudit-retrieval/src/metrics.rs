//! Point diagnostics of one rule on one library (SPEC.md §1 "Diagnostics for each rule").

use crate::matrix::{Reference, Transfer};
use num_bigint::BigUint;
use num_integer::Integer;
use roboaudit_stats::{exact_ratio, exact_signed_ratio, first_max, gcd};

/// Deterministic diagnostics of a rule's choices on a library (all scenes).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Core {
    /// `SR = mean_s P[sel(s), s]`.
    pub success: f64,
    /// `A = (SR − R)/(O − R)`; `None` when `O = R`.
    pub advantage: Option<f64>,
    /// `O − R` below the stability threshold.
    pub unstable: bool,
    /// Selection counts per library position.
    pub counts: Vec<usize>,
    /// Most-selected library position (lowest among ties).
    pub top_pos: usize,
    /// `T = max_e f(e)`.
    pub top_share: f64,
    /// `T_O`, the oracle's top share with tied maxima counted fractionally.
    pub oracle_share: f64,
    /// `C = T / T_O`.
    pub concentration: f64,
    /// `C > 1`, decided exactly.
    pub concentrated: bool,
    /// `q(top) − mean_e q(e)`.
    pub margin: f64,
    /// `−Σ f ln f` (nats).
    pub entropy: f64,
    /// `Σ_e f(e) q(e)`, the exact mean of the frequency-matched shuffle.
    pub expected: f64,
    /// `G = SR − Σ_e f(e) q(e)`.
    pub gap: f64,
}

/// Computes [`Core`] for `picks` (library positions, one per scene) given the library's
/// reference points on all scenes and its fractional oracle top share. Every figure is one
/// exact fraction of the cells' numerators, rounded once.
pub(crate) fn core(
    t: &Transfer,
    lib: &[usize],
    reference: &Reference,
    oracle_share: &OracleShare,
    picks: &[usize],
    unstable_below: f64,
) -> Core {
    let n = t.n as f64;
    let mut counts = vec![0usize; lib.len()];
    picks.iter().for_each(|&p| counts[p] += 1);
    let sel_sum: u128 = picks
        .iter()
        .enumerate()
        .map(|(s, &p)| u128::from(t.num[lib[p] * t.n + s]))
        .sum();
    let den_n = u128::from(t.den.get()) * t.n as u128;
    let success = exact_ratio(sel_sum, den_n);
    let top_pos = first_max(&counts).unwrap_or(0);
    let top_share = counts[top_pos] as f64 / n;
    // Σ_e f(e) q(e) = Σ_e c_e · rowsum_e / (n · den · n).
    let expected_num: u128 = counts
        .iter()
        .zip(&reference.q_exact)
        .map(|(&c, q)| c as u128 * u128::from(q.num()))
        .sum();
    let expected = exact_ratio(expected_num, den_n * t.n as u128);
    // Cast: both below 2^127: n · den · n fits in u128
    let gap = exact_signed_ratio(
        (sel_sum * t.n as u128) as i128 - expected_num as i128,
        den_n * t.n as u128,
    );
    let entropy = -counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let f = c as f64 / n;
            f * f.ln()
        })
        .sum::<f64>();
    Core {
        success,
        advantage: reference.advantage_exact(sel_sum),
        unstable: reference.headroom_over_random() < unstable_below,
        top_pos,
        top_share,
        oracle_share: oracle_share.value(),
        concentration: oracle_share.concentration(counts[top_pos]),
        concentrated: oracle_share.exceeded_by(counts[top_pos]),
        margin: reference.margin(top_pos),
        // `+ 0.0` turns the −0.0 of a one-experience rule into 0.0 in the JSON.
        entropy: entropy + 0.0,
        expected,
        gap,
        counts,
    }
}

/// The oracle's top-pick share `T_O` exactly: each scene splits its unit of selection equally
/// among the experiences tied at its maximum `P` (exact numerators), and the largest total,
/// in scene units, is `num / den` (`den` the least common multiple of the tie sizes).
/// `T_O = num / (den · m)` over `m` scenes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OracleShare {
    /// Every sum fits in `u128`.
    Small { num: u128, den: u128, m: u128 },
    /// Tie sizes whose least common multiple overflows `u128` (large libraries).
    Big {
        num: BigUint,
        den: BigUint,
        m: BigUint,
    },
}

impl OracleShare {
    /// `T_O`, rounded once.
    pub fn value(&self) -> f64 {
        match self {
            Self::Small { num, den, m } => match den.checked_mul(*m) {
                Some(d) => exact_ratio(*num, d),
                None => big_ratio(&BigUint::from(*num), &(BigUint::from(*den) * *m)),
            },
            Self::Big { num, den, m } => big_ratio(num, &(den * m)),
        }
    }

    /// `C = T / T_O` for a top pick chosen in `count` of the `m` scenes: `count · den / num`.
    pub fn concentration(&self, count: usize) -> f64 {
        match self {
            Self::Small { num, den, .. } => match den.checked_mul(count as u128) {
                Some(top) => exact_ratio(top, *num),
                None => big_ratio(&(BigUint::from(*den) * count), &BigUint::from(*num)),
            },
            Self::Big { num, den, .. } => big_ratio(&(den * count), num),
        }
    }

    /// Whether `C > 1` exactly for a top pick chosen in `count` scenes.
    pub fn exceeded_by(&self, count: usize) -> bool {
        match self {
            Self::Small { num, den, .. } => match den.checked_mul(count as u128) {
                Some(top) => top > *num,
                None => true, // count · den ≥ 2^128 > num
            },
            Self::Big { num, den, .. } => den * count > *num,
        }
    }
}

/// The nearest `f64` of `num / den` for big integers (`den > 0`).
fn big_ratio(num: &BigUint, den: &BigUint) -> f64 {
    if let (Some(a), Some(b)) = (u128::try_from(num).ok(), u128::try_from(den).ok()) {
        return exact_ratio(a, b);
    }
    // Scale so that the quotient has at least 64 bits, keep its top 127 bits with a sticky bit
    // (round to odd), then let `exact_ratio` round once.
    let shift = (den.bits() + 64).saturating_sub(num.bits());
    let scaled = num << shift;
    let (q, r) = (&scaled / den, &scaled % den);
    let drop = q.bits().saturating_sub(126);
    let top = &q >> drop;
    let sticky = r.bits() > 0 || q.trailing_zeros().is_some_and(|z| z < drop);
    let mant = u128::try_from(&top).unwrap_or(u128::MAX) | u128::from(sticky);
    let exp = i32::try_from(drop).unwrap_or(i32::MAX) - i32::try_from(shift).unwrap_or(i32::MAX);
    exact_ratio(mant, 1) * 2f64.powi(exp)
}

/// The oracle's top-pick share `T_O` on `scenes` (non-empty): each scene splits its unit of
/// selection equally among the experiences tied at its maximum `P`; `T_O` is the largest
/// share, found exactly.
pub(crate) fn oracle_top_share(t: &Transfer, lib: &[usize], scenes: &[usize]) -> OracleShare {
    // Tie size of each scene and the positions at its maximum.
    let mut ties: Vec<(usize, Vec<usize>)> = Vec::with_capacity(scenes.len());
    for &s in scenes {
        let column = |pos: usize| t.num[lib[pos] * t.n + s];
        let best = (0..lib.len()).map(column).max().unwrap_or(0);
        let tied: Vec<usize> = (0..lib.len()).filter(|&pos| column(pos) == best).collect();
        ties.push((tied.len(), tied));
    }
    let m = scenes.len() as u128;
    let small = || -> Option<OracleShare> {
        let mut den: u128 = 1;
        for (size, _) in &ties {
            let size = *size as u128;
            den = (den / gcd(den, size)).checked_mul(size)?;
        }
        let mut share = vec![0u128; lib.len()];
        for (size, tied) in &ties {
            let unit = den / *size as u128;
            for &pos in tied {
                share[pos] = share[pos].checked_add(unit)?;
            }
        }
        let num = share.into_iter().max().unwrap_or(0);
        Some(OracleShare::Small { num, den, m })
    };
    small().unwrap_or_else(|| {
        let mut den = BigUint::from(1u32);
        for (size, _) in &ties {
            den = den.lcm(&BigUint::from(*size));
        }
        let mut share = vec![BigUint::default(); lib.len()];
        for (size, tied) in &ties {
            let unit = &den / *size;
            for &pos in tied {
                share[pos] += &unit;
            }
        }
        let num = share.into_iter().max().unwrap_or_default();
        OracleShare::Big {
            num,
            den,
            m: BigUint::from(m),
        }
    })
}

/// Discrimination gap `G = SR − Σ_e f(e) q(e)` over a list of scenes that may repeat (a
/// bootstrap resample) or be a subset (appearance / layout): `SR`, `f` and `q` are all
/// recomputed on that list (SPEC.md §1), as one exact fraction of the cells' numerators.
/// `picks` is indexed by query scene. `None` for an empty list.
pub(crate) fn gap_on(
    t: &Transfer,
    lib: &[usize],
    picks: &[usize],
    scenes: &[usize],
) -> Option<f64> {
    if scenes.is_empty() {
        return None;
    }
    let m = scenes.len() as u128;
    let mut counts = vec![0u128; lib.len()];
    let mut success: u128 = 0;
    for &s in scenes {
        counts[picks[s]] += 1;
        success += u128::from(t.num[lib[picks[s]] * t.n + s]);
    }
    let mut expected: u128 = 0;
    for (pos, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let row = &t.num[lib[pos] * t.n..(lib[pos] + 1) * t.n];
        expected += c * scenes.iter().map(|&s| u128::from(row[s])).sum::<u128>();
    }
    // Cast: m · den · m and the numerators fit in 2^127
    let num = (success * m) as i128 - expected as i128;
    Some(exact_signed_ratio(num, u128::from(t.den.get()) * m * m))
}
