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

/// Success of `assignment` (library position per query scene).
fn success(t: &Transfer, lib: &[usize], assignment: &[usize]) -> f64 {
    assignment
        .iter()
        .enumerate()
        .map(|(s, &p)| t.at(lib[p], s))
        .sum::<f64>()
        / t.n as f64
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
    plan.rates
        .iter()
        .enumerate()
        .map(|(r, &rate)| {
            let mut rng = ChaCha8Rng::seed_from_u64(plan.seed.wrapping_add(r as u64));
            let m = ((rate * n as f64).round() as usize).clamp(1, n);
            let mut work = picks.to_vec();
            let mut order: Vec<usize> = (0..n).collect();
            let mut pool = vec![0usize; lib.len()];
            let (mut gap_sum, mut detected) = (0.0, 0usize);
            for _ in 0..replicates {
                fisher_yates(&mut work, &mut rng);
                fisher_yates(&mut order, &mut rng);
                order[..m].iter().for_each(|&s| pool[work[s]] += 1);
                for &s in &order[..m] {
                    let mut best = usize::MAX;
                    for (pos, &left) in pool.iter().enumerate() {
                        if left > 0
                            && (best == usize::MAX || t.at(lib[pos], s) > t.at(lib[best], s))
                        {
                            best = pos;
                        }
                    }
                    pool[best] -= 1;
                    work[s] = best;
                }
                let sr = success(t, lib, &work);
                gap_sum += sr - expected;
                detected += usize::from(sr < envelope[0] || sr > envelope[1]);
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
