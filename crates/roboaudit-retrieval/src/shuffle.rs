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

/// Fisher–Yates shuffle as [`fisher_yates`] with several swap positions per 32-bit word. The
/// positions for `i = len − 1, len − 2, …` (uniform on `0..=i`) are cut into batches of
/// consecutive bounds `i + 1` whose product `P` stays at most 2^24; a batch comes from one
/// `next_u32` word `x_0`: position `k` of the batch is the high half of the 64-bit product
/// `x_{k−1} · b_k` and `x_k` its low half, and the word is rejected (the next one is taken) when
/// `x_0 · P mod 2^32 < 2^32 mod P` — the batched multiply-and-reject of Brackett-Rozinsky &
/// Lemire ("Batched ranged random integer generation", Softw. Pract. Exp. 2024), exactly
/// uniform. Forty items take 11 words instead of 39. Successive calls on the same buffer keep
/// drawing uniform permutations (counts are kept by construction). Slices longer than
/// `u32::MAX` fall back to [`fisher_yates`].
pub(crate) fn batched_shuffle<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R) {
    match ShufflePlan::new(items.len()) {
        Some(plan) => plan.shuffle(items, rng),
        None => fisher_yates(items, rng),
    }
}

/// The batches of [`batched_shuffle`] for one length, computed once for many shuffles: each
/// batch is the bounds `first, first − 1, …, last` with their product and rejection threshold.
pub(crate) struct ShufflePlan {
    len: usize,
    batches: Vec<(usize, usize, u64, u64)>,
}

impl ShufflePlan {
    /// The plan for slices of `len` items; `None` above `u32::MAX` items.
    pub(crate) fn new(len: usize) -> Option<Self> {
        u32::try_from(len).ok()?;
        let mut batches = Vec::new();
        // `i` is the bound of the next swap (position `i − 1`); bounds fit in u32 (checked).
        let mut i = len;
        while i > 1 {
            let (mut product, mut last) = (i as u64, i);
            while last > 2 && product * (last as u64 - 1) <= 1 << 24 {
                last -= 1;
                product *= last as u64;
            }
            batches.push((i, last, product, (1u64 << 32) % product));
            i = last - 1;
        }
        Some(Self { len, batches })
    }

    /// One uniform shuffle of `items` (of the plan's length) from `rng`.
    pub(crate) fn shuffle<T, R: Rng + ?Sized>(&self, items: &mut [T], rng: &mut R) {
        if items.len() != self.len {
            batched_shuffle(items, rng);
            return;
        }
        for &(first, last, product, threshold) in &self.batches {
            let mut x = loop {
                let w = u64::from(rng.next_u32());
                if w.wrapping_mul(product) & 0xffff_ffff >= threshold {
                    break w;
                }
            };
            for bound in (last..=first).rev() {
                // x < 2^32 and bound <= 2^32: the product fits in 64 bits
                let m = x.wrapping_mul(bound as u64);
                items.swap(bound - 1, (m >> 32) as usize);
                x = m & 0xffff_ffff;
            }
        }
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
    let shuffle_plan = ShufflePlan::new(n);
    let shuffle = |items: &mut [usize], rng: &mut ChaCha8Rng| match &shuffle_plan {
        Some(p) => p.shuffle(items, rng),
        None => batched_shuffle(items, rng),
    };
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
                shuffle(&mut work, &mut rng);
                shuffle(&mut order, &mut rng);
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
