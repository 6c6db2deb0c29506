//! AUROC as the Mann–Whitney statistic (SPEC.md §0).

use crate::StatsError;
use crate::check::{check_finite, check_same_len, sort_key, total_order_key};
use serde::Serialize;

/// AUROC of `scores` against binary `labels`: P(score of a random positive > score of a random
/// negative), ties counted ½, optionally with non-negative `weights` (one per sample; the pair
/// (i, j) weighs `w_i · w_j`). Equals scikit-learn `roc_auc_score(labels, scores, sample_weight=weights)`
/// to 1e-12.
///
/// Returns `Ok(None)` when only one class is present (or one class has zero total weight): such a
/// sample has no AUROC and is ineligible, never 0.5.
///
/// # Errors
/// `Empty` for no samples, `LengthMismatch` when the slices differ in length, `NonFinite` for a
/// NaN/infinite score, `InvalidWeight` for a negative or non-finite weight.
///
/// Cost: O(n log n) (one sort).
pub fn auroc(
    scores: &[f64],
    labels: &[bool],
    weights: Option<&[f64]>,
) -> Result<Option<f64>, StatsError> {
    check_inputs(scores, labels, weights)?;
    let mut samples = to_samples(scores, labels, weights, 0..scores.len());
    Ok(auroc_of_samples(&mut samples))
}

/// AUROC of one group in a [`GroupedAuroc`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupAuroc {
    /// The group label as given.
    pub group: usize,
    /// Number of samples in the group.
    pub n: usize,
    /// Number of positive samples.
    pub n_positive: usize,
    /// The group's AUROC; `None` when the group has a single class (ineligible).
    pub auroc: Option<f64>,
}

/// Per-group AUROC (for example within-query AUROC, one group per query scene).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupedAuroc {
    /// Every group present in the input, sorted by group label.
    pub groups: Vec<GroupAuroc>,
    /// Number of groups with both classes.
    pub n_eligible: usize,
    /// Unweighted mean AUROC over eligible groups; `None` when no group is eligible.
    pub mean: Option<f64>,
}

/// AUROC computed separately within each group (`groups[i]` is sample i's group label, any `usize`),
/// with the mean over the eligible groups. Same conventions and errors as [`auroc`]; a group whose
/// positives or negatives all have weight zero is ineligible too.
///
/// # Errors
/// As [`auroc`], plus `LengthMismatch` when `groups` differs in length from `scores`.
pub fn grouped_auroc(
    scores: &[f64],
    labels: &[bool],
    groups: &[usize],
    weights: Option<&[f64]>,
) -> Result<GroupedAuroc, StatsError> {
    check_inputs(scores, labels, weights)?;
    check_same_len("scores", scores.len(), "groups", groups.len())?;
    Ok(by_group(groups, |members| {
        let mut samples = to_samples(scores, labels, weights, members.iter().copied());
        let n_positive = members.iter().filter(|&&i| labels[i]).count();
        (n_positive, auroc_of_samples(&mut samples))
    }))
}

/// [`auroc`] of items that each carry a positive and a negative weight (the tallies of the two
/// outcomes observed at that score, for example the successes and failures of one cell): the
/// value of [`auroc`] on the expanded sample, each item entering as a positive with weight
/// `positives[i]` and as a negative with weight `negatives[i]`, at a fraction of the sort.
/// `Ok(None)` when either class has zero total weight.
///
/// # Errors
/// `Empty` for no items, `LengthMismatch` when the slices differ in length, `NonFinite` for a
/// NaN/infinite score, `InvalidWeight` for a negative or non-finite weight.
///
/// # Example
/// ```
/// use roboaudit_stats::{auroc, auroc_tallies};
/// // scores 0.1 (1 success, 2 failures) and 0.7 (3 successes, 1 failure)
/// let tallied = auroc_tallies(&[0.1, 0.7], &[1.0, 3.0], &[2.0, 1.0])?;
/// let expanded = auroc(
///     &[0.1, 0.1, 0.7, 0.7],
///     &[true, false, true, false],
///     Some(&[1.0, 2.0, 3.0, 1.0]),
/// )?;
/// assert_eq!(tallied, expanded);
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn auroc_tallies(
    scores: &[f64],
    positives: &[f64],
    negatives: &[f64],
) -> Result<Option<f64>, StatsError> {
    check_tallies(scores, positives, negatives)?;
    let mut samples = tally_samples(scores, positives, negatives, 0..scores.len());
    Ok(auroc_of_samples(&mut samples))
}

/// [`grouped_auroc`] of tallied items ([`auroc_tallies`]): `n` of a group counts its items and
/// `n_positive` those with a positive weight above zero.
///
/// # Errors
/// As [`auroc_tallies`], plus `LengthMismatch` when `groups` differs in length from `scores`.
pub fn grouped_auroc_tallies(
    scores: &[f64],
    positives: &[f64],
    negatives: &[f64],
    groups: &[usize],
) -> Result<GroupedAuroc, StatsError> {
    check_tallies(scores, positives, negatives)?;
    check_same_len("scores", scores.len(), "groups", groups.len())?;
    Ok(by_group(groups, |members| {
        let n_positive = members.iter().filter(|&&i| positives[i] > 0.0).count();
        let mut samples = tally_samples(scores, positives, negatives, members.iter().copied());
        (n_positive, auroc_of_samples(&mut samples))
    }))
}

/// [`auroc_tallies`] and [`grouped_auroc_tallies`] of the same items at once, for items whose
/// groups arrive as contiguous runs in increasing label order (the within-query layout: one
/// scene's items after another's). One sort serves both: the pooled sample is sorted once, and
/// one stable pass deals its items out to their groups, each of which then arrives sorted
/// (instead of one more sort per group). For other group layouts it calls the two functions.
///
/// Both results equal those of the two functions exactly when the tallies are whole numbers
/// (counts of executions: every sum is then an exact integer below 2^53); for fractional weights
/// the weights of tied scores may be added in another order (a difference in the last bits).
///
/// # Errors
/// As [`grouped_auroc_tallies`].
///
/// # Example
/// ```
/// use roboaudit_stats::{auroc_tallies, grouped_auroc_tallies, pooled_and_grouped_auroc_tallies};
/// let (scores, pos, neg) = ([0.1, 0.7, 0.3, 0.2], [1.0, 3.0, 0.0, 2.0], [2.0, 1.0, 1.0, 0.0]);
/// let groups = [0, 0, 1, 1];
/// let (pooled, grouped) = pooled_and_grouped_auroc_tallies(&scores, &pos, &neg, &groups)?;
/// assert_eq!(pooled, auroc_tallies(&scores, &pos, &neg)?);
/// assert_eq!(grouped, grouped_auroc_tallies(&scores, &pos, &neg, &groups)?);
/// # Ok::<(), roboaudit_stats::StatsError>(())
/// ```
pub fn pooled_and_grouped_auroc_tallies(
    scores: &[f64],
    positives: &[f64],
    negatives: &[f64],
    groups: &[usize],
) -> Result<(Option<f64>, GroupedAuroc), StatsError> {
    check_tallies(scores, positives, negatives)?;
    check_same_len("scores", scores.len(), "groups", groups.len())?;
    if groups.windows(2).any(|w| w[0] > w[1]) || u32::try_from(groups.len()).is_err() {
        return Ok((
            auroc_tallies(scores, positives, negatives)?,
            grouped_auroc_tallies(scores, positives, negatives, groups)?,
        ));
    }
    // The runs of equal labels, and each item's run.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut run_of: Vec<u32> = Vec::with_capacity(groups.len());
    for (i, &g) in groups.iter().enumerate() {
        if runs.last().is_none_or(|&(label, _)| label != g) {
            runs.push((g, i));
        }
        // Cast: runs <= items, which fit in u32 (checked)
        run_of.push((runs.len() - 1) as u32);
    }
    // Sorted as (key, item) pairs, which move faster than whole samples, by key alone (ties
    // keep the item order: the radix sort is stable, and whole-number sums do not see it).
    // Cast: items fit in u32 (checked)
    let mut order: Vec<(i64, u32)> = scores
        .iter()
        .enumerate()
        .map(|(i, &x)| (total_order_key(sort_key(x)), i as u32))
        .collect();
    radix_sort_by_key(&mut order);
    let sample = |&(score, i): &(i64, u32)| Sample {
        score,
        pos: positives[i as usize],
        neg: negatives[i as usize],
    };
    let pooled = auroc_of_sorted(&order, sample);
    // Counting sort by run, stable: every run's items stay in score order.
    let mut next: Vec<usize> = runs.iter().map(|&(_, start)| start).collect();
    let mut by_run = vec![(0i64, 0u32); order.len()];
    for entry in &order {
        if let Some(at) = run_of
            .get(entry.1 as usize)
            .and_then(|&r| next.get_mut(r as usize))
        {
            if let Some(slot) = by_run.get_mut(*at) {
                *slot = *entry;
            }
            *at += 1;
        }
    }
    let out = runs
        .iter()
        .enumerate()
        .map(|(r, &(group, start))| {
            let end = runs.get(r + 1).map_or(groups.len(), |&(_, next)| next);
            GroupAuroc {
                group,
                n: end - start,
                n_positive: positives[start..end].iter().filter(|&&w| w > 0.0).count(),
                auroc: auroc_of_sorted(&by_run[start..end], sample),
            }
        })
        .collect();
    Ok((pooled, grouped_result(out)))
}

/// A sort key and the item it belongs to.
type KeyItem = (i64, u32);

/// Sorts `(key, item)` pairs by key, stably: a least-significant-digit radix sort on the key's
/// order-preserving unsigned form, a byte per pass, skipping every byte all keys share (the
/// sign and exponent bytes of scores in one range). Below 256 pairs, a comparison sort.
fn radix_sort_by_key(order: &mut Vec<KeyItem>) {
    let n = order.len();
    if n < 256 {
        order.sort_by_key(|&(key, _)| key);
        return;
    }
    // Flipping the sign bit maps signed order onto unsigned order.
    // Cast: a reinterpretation of the bits is wanted
    let unsigned = |key: i64| (key as u64) ^ (1 << 63);
    let mut counts = [[0usize; 256]; 8];
    for &(key, _) in order.iter() {
        let u = unsigned(key);
        for (d, count) in counts.iter_mut().enumerate() {
            count[((u >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut other = vec![(0i64, 0u32); n];
    let mut in_order = true;
    for (d, count) in counts.iter().enumerate() {
        if count.contains(&n) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut total = 0;
        for (slot, &c) in next.iter_mut().zip(count) {
            *slot = total;
            total += c;
        }
        let (from, to): (&[KeyItem], &mut [KeyItem]) = if in_order {
            (order, &mut other)
        } else {
            (&other, order)
        };
        for &entry in from {
            let digit = ((unsigned(entry.0) >> (8 * d)) & 0xff) as usize;
            if let Some(slot) = to.get_mut(next[digit]) {
                *slot = entry;
            }
            next[digit] += 1;
        }
        in_order = !in_order;
    }
    if !in_order {
        std::mem::swap(order, &mut other);
    }
}

fn check_tallies(scores: &[f64], positives: &[f64], negatives: &[f64]) -> Result<(), StatsError> {
    if scores.is_empty() {
        return Err(StatsError::Empty { what: "scores" });
    }
    check_same_len("scores", scores.len(), "positives", positives.len())?;
    check_same_len("scores", scores.len(), "negatives", negatives.len())?;
    check_finite(scores, "scores")?;
    for (what, w) in [("positives", positives), ("negatives", negatives)] {
        if let Some(index) = w.iter().position(|&v| !(v.is_finite() && v >= 0.0)) {
            return Err(StatsError::InvalidWeight { what, index });
        }
    }
    Ok(())
}

fn tally_samples(
    scores: &[f64],
    positives: &[f64],
    negatives: &[f64],
    idx: impl Iterator<Item = usize>,
) -> Vec<Sample> {
    idx.map(|i| Sample {
        score: total_order_key(sort_key(scores[i])),
        pos: positives[i],
        neg: negatives[i],
    })
    .collect()
}

/// Groups (sorted by label, the input order kept inside a group) with their eligible mean;
/// `auroc_of(members)` gives a group's positive count and AUROC.
fn by_group(groups: &[usize], auroc_of: impl Fn(&[usize]) -> (usize, Option<f64>)) -> GroupedAuroc {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    // Stable sort keeps the input order inside a group (and costs one pass when the groups
    // already arrive contiguous and in order); the AUROC sort does the rest.
    order.sort_by_key(|&i| groups[i]);
    let mut out = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let group = groups[order[start]];
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| groups[i] == group)
                .count();
        let members = &order[start..end];
        let (n_positive, auroc) = auroc_of(members);
        out.push(GroupAuroc {
            group,
            n: members.len(),
            n_positive,
            auroc,
        });
        start = end;
    }
    grouped_result(out)
}

/// The [`GroupedAuroc`] of per-group results (sorted by label), with the eligible mean.
fn grouped_result(out: Vec<GroupAuroc>) -> GroupedAuroc {
    let eligible: Vec<f64> = out.iter().filter_map(|g| g.auroc).collect();
    // Cast: group counts are far below 2^53
    let mean = (!eligible.is_empty()).then(|| eligible.iter().sum::<f64>() / eligible.len() as f64);
    GroupedAuroc {
        groups: out,
        n_eligible: eligible.len(),
        mean,
    }
}

fn check_inputs(
    scores: &[f64],
    labels: &[bool],
    weights: Option<&[f64]>,
) -> Result<(), StatsError> {
    if scores.is_empty() {
        return Err(StatsError::Empty { what: "scores" });
    }
    check_same_len("scores", scores.len(), "labels", labels.len())?;
    check_finite(scores, "scores")?;
    if let Some(w) = weights {
        check_same_len("scores", scores.len(), "weights", w.len())?;
        if let Some(index) = w.iter().position(|&v| !(v.is_finite() && v >= 0.0)) {
            return Err(StatsError::InvalidWeight {
                what: "weights",
                index,
            });
        }
    }
    Ok(())
}

/// One sample: score as its `f64::total_cmp` integer key (after −0.0 is folded into 0.0, so
/// equal keys are equal scores), positive weight, negative weight.
#[derive(Clone, Copy)]
struct Sample {
    score: i64,
    pos: f64,
    neg: f64,
}

fn to_samples(
    scores: &[f64],
    labels: &[bool],
    weights: Option<&[f64]>,
    idx: impl Iterator<Item = usize>,
) -> Vec<Sample> {
    idx.map(|i| {
        let w = weights.map_or(1.0, |w| w[i]);
        let (pos, neg) = if labels[i] { (w, 0.0) } else { (0.0, w) };
        Sample {
            score: total_order_key(sort_key(scores[i])),
            pos,
            neg,
        }
    })
    .collect()
}

/// Mann–Whitney AUROC by one sort and a sweep over tie blocks: each block's positive weight meets
/// all negative weight below it in full and the block's own negative weight by halves.
fn auroc_of_samples(samples: &mut [Sample]) -> Option<f64> {
    // Integer keys order exactly as `total_cmp` on the scores, pair by pair, so the sort makes
    // the very same moves (and leaves ties in the same order) at a lower cost per comparison.
    samples.sort_unstable_by_key(|s| s.score);
    auroc_of_sorted(samples, |s| *s)
}

/// The sweep of [`auroc_of_samples`] over items already sorted by score (`sample` gives an
/// item's [`Sample`]).
fn auroc_of_sorted<T>(items: &[T], sample: impl Fn(&T) -> Sample) -> Option<f64> {
    let (mut neg_below, mut total_pos, mut twice_area) = (0.0_f64, 0.0_f64, 0.0_f64);
    let mut start = 0;
    while start < items.len() {
        let score = sample(&items[start]).score;
        let (mut pos, mut neg) = (0.0, 0.0);
        let mut end = start;
        while let Some(s) = items.get(end).map(&sample).filter(|s| s.score == score) {
            pos += s.pos;
            neg += s.neg;
            end += 1;
        }
        // Doubled so that unweighted sums stay integers (exact up to 2^53).
        twice_area += pos * (2.0 * neg_below + neg);
        neg_below += neg;
        total_pos += pos;
        start = end;
    }
    let pairs = total_pos * neg_below;
    (pairs > 0.0).then(|| twice_area / (2.0 * pairs))
}
