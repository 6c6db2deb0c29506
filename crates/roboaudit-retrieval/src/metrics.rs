//! Point diagnostics of one rule on one library (SPEC.md §1 "Diagnostics for each rule").

use crate::matrix::{Reference, Transfer};

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
/// reference points on all scenes and its fractional oracle top share.
pub(crate) fn core(
    t: &Transfer,
    lib: &[usize],
    reference: &Reference,
    oracle_share: f64,
    picks: &[usize],
    unstable_below: f64,
) -> Core {
    let n = t.n as f64;
    let mut counts = vec![0usize; lib.len()];
    picks.iter().for_each(|&p| counts[p] += 1);
    let success = picks
        .iter()
        .enumerate()
        .map(|(s, &p)| t.at(lib[p], s))
        .sum::<f64>()
        / n;
    let mut top_pos = 0;
    for (pos, &c) in counts.iter().enumerate() {
        if c > counts[top_pos] {
            top_pos = pos;
        }
    }
    let top_share = counts[top_pos] as f64 / n;
    let expected = counts
        .iter()
        .zip(&reference.q)
        .map(|(&c, q)| c as f64 / n * q)
        .sum::<f64>();
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
        advantage: reference.advantage(success),
        unstable: reference.oracle - reference.random < unstable_below,
        top_pos,
        top_share,
        oracle_share,
        concentration: top_share / oracle_share,
        margin: reference.q[top_pos] - reference.random,
        // `+ 0.0` turns the −0.0 of a one-experience rule into 0.0 in the JSON.
        entropy: entropy + 0.0,
        expected,
        gap: success - expected,
        counts,
    }
}

/// The oracle's top-pick share `T_O` on `scenes`: each scene splits its unit of selection
/// equally among the experiences tied at its maximum `P`; `T_O` is the largest share.
pub(crate) fn oracle_top_share(t: &Transfer, lib: &[usize], scenes: &[usize]) -> f64 {
    let mut share = vec![0.0; lib.len()];
    for &s in scenes {
        let best = lib
            .iter()
            .map(|&e| t.at(e, s))
            .fold(f64::NEG_INFINITY, f64::max);
        let tied: Vec<usize> = (0..lib.len())
            .filter(|&pos| t.at(lib[pos], s) == best)
            .collect();
        tied.iter()
            .for_each(|&pos| share[pos] += 1.0 / tied.len() as f64);
    }
    share.iter().fold(0.0, |m: f64, &v| m.max(v)) / scenes.len() as f64
}

/// Discrimination gap `G = SR − Σ_e f(e) q(e)` over a list of scenes that may repeat (a
/// bootstrap resample) or be a subset (appearance / layout): `SR`, `f` and `q` are all
/// recomputed on that list (SPEC.md §1). `picks` is indexed by query scene. `None` for an
/// empty list.
pub(crate) fn gap_on(
    t: &Transfer,
    lib: &[usize],
    picks: &[usize],
    scenes: &[usize],
) -> Option<f64> {
    if scenes.is_empty() {
        return None;
    }
    let m = scenes.len() as f64;
    let mut counts = vec![0usize; lib.len()];
    let mut success = 0.0;
    for &s in scenes {
        counts[picks[s]] += 1;
        success += t.at(lib[picks[s]], s);
    }
    let mut expected = 0.0;
    for (pos, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let q = scenes.iter().map(|&s| t.at(lib[pos], s)).sum::<f64>() / m;
        expected += c as f64 / m * q;
    }
    Some(success / m - expected)
}
