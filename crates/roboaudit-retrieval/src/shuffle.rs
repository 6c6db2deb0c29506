//! Frequency-matched shuffle (SPEC.md §1) and its power analysis (beyond the paper).

use crate::matrix::Transfer;
use crate::report::PowerPoint;
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// In-place Fisher–Yates shuffle. Successive calls on the same buffer keep drawing uniform
/// permutations, so the shuffle loop never re-copies the selections (counts are kept by
/// construction).
pub(crate) fn fisher_yates<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

/// Fisher–Yates shuffle as [`fisher_yates`], each index drawn from one `next_u32` by Lemire's
/// nearly-divisionless multiply-and-reject method (exactly uniform; a division only on the rare
/// rejection path). The hot loops of the shuffle null and the power analysis draw millions of
/// indices, and `random_range` costs several times more per draw. Slices longer than `u32::MAX`
/// fall back to [`fisher_yates`].
pub(crate) fn fast_shuffle<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R) {
    if u32::try_from(items.len()).is_err() {
        fisher_yates(items, rng);
        return;
    }
    for i in (1..items.len()).rev() {
        // i + 1 ≤ len ≤ u32::MAX, so the bound fits.
        let bound = (i + 1) as u32;
        items.swap(i, below(rng, bound) as usize);
    }
}

/// Uniform integer in `0..bound` (`bound ≥ 1`) from 32-bit draws (Lemire 2019, "Fast random
/// integer generation in an interval").
fn below<R: Rng + ?Sized>(rng: &mut R, bound: u32) -> u32 {
    let mut m = u64::from(rng.next_u32()) * u64::from(bound);
    if (m as u32) < bound {
        let threshold = bound.wrapping_neg() % bound;
        while (m as u32) < threshold {
            m = u64::from(rng.next_u32()) * u64::from(bound);
        }
    }
    (m >> 32) as u32
}

/// Success of `assignment` (library position per query scene).
fn success(t: &Transfer, lib: &[usize], assignment: &[usize]) -> f64 {
    assignment
        .iter()
        .enumerate()
        .map(|(s, &p)| t.at(lib[p], s))
        .sum::<f64>()
        / t.n as f64
}

/// Absolute tolerance of the envelope test: success rates are sums of up to `n` terms, so a rule
/// whose shuffles all give its own success (one selected experience) can differ from its envelope in
/// the last bit only through summation order; that must read as inside, not as a detected gap.
const ENVELOPE_TOLERANCE: f64 = 1e-12;

/// Whether success `sr` lies outside the shuffle `envelope` (SPEC §1), bounds inclusive, with
/// [`ENVELOPE_TOLERANCE`] for rounding.
pub(crate) fn outside_envelope(sr: f64, envelope: [f64; 2]) -> bool {
    sr < envelope[0] - ENVELOPE_TOLERANCE || sr > envelope[1] + ENVELOPE_TOLERANCE
}

/// The rule's shuffle null: envelope `[lo, hi]` and exact mean `Σ f q`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Null {
    pub envelope: [f64; 2],
    pub expected: f64,
}

/// Planted rates, replicates per rate and the stream seed of a power analysis.
pub(crate) struct PowerPlan<'a> {
    pub rates: &'a [f64],
    pub replicates: usize,
    pub seed: u64,
}

/// Shuffle-test power by planting a gap that keeps the rule's selection counts, so the rule's
/// own shuffle envelope stays the exact null for every planted replicate.
///
/// Replicate at rate α: shuffle the rule's selections over scenes (a null draw); pick
/// `max(1, round(α n))` scenes at random; hand the experiences assigned to them back out in
/// random scene order, each scene taking the remaining one with the highest `P[e, s]` (lowest
/// library position among ties). The planted gap is `SR − Σ f q` of the result (same `f`, so
/// same `Σ f q`); it is detected when `SR` falls outside `envelope`.
pub(crate) fn power(
    t: &Transfer,
    lib: &[usize],
    picks: &[usize],
    null: Null,
    plan: &PowerPlan<'_>,
) -> Vec<PowerPoint> {
    let (n, replicates, Null { envelope, expected }) = (t.n, plan.replicates, null);
    // Scene-major copy of P over the library, `by_scene[s * kk + pos]`, so the re-deal reads
    // each scene's row contiguously.
    let kk = lib.len();
    let by_scene: Vec<f64> = (0..n)
        .flat_map(|s| lib.iter().map(move |&e| t.at(e, s)))
        .collect();
    plan.rates
        .iter()
        .enumerate()
        .map(|(r, &rate)| {
            let mut rng = ChaCha8Rng::seed_from_u64(plan.seed.wrapping_add(r as u64));
            let m = ((rate * n as f64).round() as usize).clamp(1, n);
            let mut work = picks.to_vec();
            let mut order: Vec<usize> = (0..n).collect();
            let mut pool = vec![0usize; lib.len()];
            let mut distinct = Vec::with_capacity(lib.len());
            let (mut gap_sum, mut detected) = (0.0, 0usize);
            for _ in 0..replicates {
                fast_shuffle(&mut work, &mut rng);
                fast_shuffle(&mut order, &mut rng);
                order[..m].iter().for_each(|&s| pool[work[s]] += 1);
                // The pooled experiences with copies left, in library order (often far fewer
                // than K): exhausted ones are dropped so the scan only visits candidates.
                distinct.clear();
                distinct.extend((0..pool.len()).filter(|&pos| pool[pos] > 0));
                for &s in &order[..m] {
                    let row = &by_scene[s * kk..(s + 1) * kk];
                    // P ∈ [0, 1], so the first pooled experience always beats −∞; the strict
                    // `>` then keeps the lowest library position among tied maxima.
                    let (mut at, mut best_p) = (0, f64::NEG_INFINITY);
                    for (i, &pos) in distinct.iter().enumerate() {
                        if row[pos] > best_p {
                            (at, best_p) = (i, row[pos]);
                        }
                    }
                    let best = distinct[at];
                    pool[best] -= 1;
                    if pool[best] == 0 {
                        distinct.remove(at);
                    }
                    work[s] = best;
                }
                let sr = success(t, lib, &work);
                gap_sum += sr - expected;
                detected += usize::from(outside_envelope(sr, envelope));
            }
            PowerPoint {
                rate,
                mean_planted_gap: gap_sum / replicates as f64,
                detection_rate: detected as f64 / replicates as f64,
                replicates,
            }
        })
        .collect()
}
