//! Order statistics of an unsorted slice at a few ranks, for the percentile intervals and
//! shuffle envelopes that read two tails of 10,000 replicates (thousands of times per audit).
//!
//! Selection by a sample bracket (Floyd & Rivest, CACM 1975): the ranks' values are bracketed
//! from a small strided sample, one pass counts the values below each bracket and collects the
//! values inside it, and the wanted ranks are selected among the few collected values. The
//! brackets are checked against the counts, so the answer is exact whatever the data; when a
//! bracket misses (adversarial order, or one value repeated over a whole tail), the slice is
//! selected in full instead.

use crate::check::total_order_key;

/// Below this length the full selection is about as fast as the sample bracket.
const SMALL: usize = 2_048;
/// Sample size of the brackets.
const SAMPLE: usize = 256;
/// Collected values above which a bracket is given up (a tail of ties).
const BUFFER: usize = 4_096;

/// The values at `ranks` (ascending, distinct, each below `keys.len()`) of ascending-sorted
/// `keys`: what indexing a sorted copy would give, bit for bit. `keys` are finite with −0.0
/// mapped to +0.0 (so `<` is a total order on them) and are left permuted.
pub(crate) fn order_statistics(keys: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    let n = keys.len();
    if n < SMALL || ranks.is_empty() {
        return select_all(keys, ranks);
    }
    // Ranks close together share one bracket (a percentile needs ranks i and i + 1).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (at, &r) in ranks.iter().enumerate() {
        match groups.last_mut() {
            Some((_, last)) if r - ranks[*last] <= n / 16 => *last = at,
            _ => groups.push((at, at)),
        }
    }
    let mut sample: Vec<f64> = (0..SAMPLE).map(|i| keys[i * n / SAMPLE]).collect();
    let brackets: Vec<(f64, f64)> = groups
        .iter()
        .map(|&(first, last)| bracket(&mut sample, n, ranks[first], ranks[last]))
        .collect();
    let Some((below, inside)) = collect(keys, &brackets) else {
        return select_all(keys, ranks);
    };
    let mut out = Vec::with_capacity(ranks.len());
    for (g, &(first, last)) in groups.iter().enumerate() {
        let (lo, hi) = brackets[g];
        let mut own: Vec<f64> = inside
            .iter()
            .copied()
            .filter(|&x| x >= lo && x <= hi)
            .collect();
        // The bracket holds the group's ranks exactly when the values below it do not reach
        // the first rank and, with its own values, pass the last.
        if below[g] > ranks[first] || below[g] + own.len() <= ranks[last] {
            return select_all(keys, ranks);
        }
        let local: Vec<usize> = ranks[first..=last].iter().map(|&r| r - below[g]).collect();
        out.extend(select_all(&mut own, &local));
    }
    out
}

/// A bracket `[lo, hi]` that holds the values of ranks `first..=last` with high probability:
/// sample ranks a few standard deviations outside the expected ones (infinite ends where they
/// fall off the sample).
fn bracket(sample: &mut [f64], n: usize, first: usize, last: usize) -> (f64, f64) {
    let m = sample.len();
    #[allow(clippy::cast_precision_loss)]
    let (nf, mf) = ((n - 1) as f64, (m - 1) as f64);
    #[allow(clippy::cast_precision_loss)]
    let (p_lo, p_hi) = (first as f64 / nf, last as f64 / nf);
    let spread = |p: f64| 3.5 * (mf * p * (1.0 - p)).sqrt() + 3.0;
    let lo = (p_lo * mf - spread(p_lo)).floor();
    let hi = (p_hi * mf + spread(p_hi)).ceil();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let lo = if lo < 0.0 {
        f64::NEG_INFINITY
    } else {
        *sample.select_nth_unstable_by(lo as usize, f64::total_cmp).1
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let hi = if hi > mf {
        f64::INFINITY
    } else {
        *sample.select_nth_unstable_by(hi as usize, f64::total_cmp).1
    };
    (lo, hi)
}

/// For every bracket, how many values lie below it, and the values inside the brackets (in
/// data order). `None` when the brackets overlap or collect too many values.
fn collect(keys: &[f64], brackets: &[(f64, f64)]) -> Option<(Vec<usize>, Vec<f64>)> {
    if brackets.windows(2).any(|w| w[0].1 >= w[1].0) {
        return None;
    }
    // First the counts alone, two brackets per pass (a percentile interval has two): a loop of
    // compares and adds into locals that compiles to vector code. Wrapping adds: at most
    // `keys.len()`, and no overflow check per value in the dev profile.
    let mut below = Vec::with_capacity(brackets.len());
    let mut total = 0usize;
    for pair in brackets.chunks(2) {
        // A single bracket is paired with an empty one (nothing is below -inf or inside it).
        let [(lo1, hi1), (lo2, hi2)] = match *pair {
            [a, b] => [a, b],
            [a] => [a, (f64::NEG_INFINITY, f64::NEG_INFINITY)],
            _ => return None,
        };
        let (mut below1, mut below2, mut within) = (0usize, 0usize, 0usize);
        for &x in keys {
            below1 = below1.wrapping_add(usize::from(x < lo1));
            below2 = below2.wrapping_add(usize::from(x < lo2));
            within = within.wrapping_add(usize::from((x >= lo1) & (x <= hi1)));
            within = within.wrapping_add(usize::from((x >= lo2) & (x <= hi2)));
        }
        below.push(below1);
        if pair.len() == 2 {
            below.push(below2);
        }
        total = total.wrapping_add(within);
    }
    if total > BUFFER {
        return None;
    }
    // Then the values inside, branch-free (which values fall inside is data-dependent): the
    // slot is always written, the cursor moves only for kept values; the extra slot takes the
    // writes after the last kept value.
    let mut inside = vec![0.0; total + 1];
    let mut len = 0usize;
    for pair in brackets.chunks(2) {
        let [(lo1, hi1), (lo2, hi2)] = match *pair {
            [a, b] => [a, b],
            [a] => [a, (f64::NEG_INFINITY, f64::NEG_INFINITY)],
            _ => return None,
        };
        for &x in keys {
            let keep = ((x >= lo1) & (x <= hi1)) | ((x >= lo2) & (x <= hi2));
            inside[len.min(total)] = x;
            len = len.wrapping_add(usize::from(keep));
        }
    }
    inside.truncate(total);
    Some((below, inside))
}

/// The values at `ranks` of `keys` by full selection on the integer keys of `f64::total_cmp`
/// (its bit transform applied once per value instead of once per comparison), each selection
/// searching only the part above the previous rank.
fn select_all(keys: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    let mut ints: Vec<i64> = keys.iter().map(|&v| total_order_key(v)).collect();
    let mut out = Vec::with_capacity(ranks.len());
    let mut start = 0;
    for &i in ranks {
        let (_, &mut v, _) = ints[start..].select_nth_unstable(i - start);
        out.push(from_total_order_key(v));
        start = i + 1;
    }
    out
}

/// The `f64` of a [`total_order_key`].
pub(crate) fn from_total_order_key(key: i64) -> f64 {
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_wrap)]
    let bits = key ^ (((key >> 63) as u64) >> 1) as i64;
    #[allow(clippy::cast_sign_loss)]
    f64::from_bits(bits as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bracketed selection gives the values of a sorted copy, for random data, heavy ties
    /// (a tail of one repeated value, which overflows the bracket), sorted and reversed input,
    /// and ranks at both ends, close together and far apart.
    #[test]
    fn order_statistics_equal_sorted_values() {
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        #[allow(clippy::cast_precision_loss)]
        let cases: Vec<Vec<f64>> = vec![
            (0..10_000).map(|_| next() as f64 / 3.0 - 1e9).collect(),
            (0..10_000).map(|_| (next() % 200) as f64 / 200.0).collect(),
            (0..10_000)
                .map(|_| {
                    if next() % 10 < 3 {
                        0.5
                    } else {
                        (next() % 9) as f64
                    }
                })
                .collect(),
            (0..5_000).map(f64::from).collect(),
            (0..5_000).rev().map(f64::from).collect(),
            vec![2.0; 3_000],
            (0..100).map(f64::from).collect(),
        ];
        for data in cases {
            let n = data.len();
            let mut sorted = data.clone();
            sorted.sort_by(f64::total_cmp);
            for ranks in [
                vec![249, 250, 9_749, 9_750],
                vec![0, 1, n - 2, n - 1],
                vec![n / 2],
                vec![10, 11, 12, n / 3, n - 1],
            ] {
                let ranks: Vec<usize> = ranks.into_iter().map(|r| r.min(n - 1)).collect();
                let mut ranks = ranks;
                ranks.dedup();
                let mut keys = data.clone();
                let got = order_statistics(&mut keys, &ranks);
                let want: Vec<f64> = ranks.iter().map(|&r| sorted[r]).collect();
                assert_eq!(got, want, "n = {n}, ranks {ranks:?}");
                keys.sort_by(f64::total_cmp);
                assert_eq!(keys, sorted, "a permutation");
            }
        }
    }
}
