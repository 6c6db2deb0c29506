//! Order statistics of an unsorted slice at a few ranks, for the percentile intervals and
//! shuffle envelopes that read two tails of 10,000 replicates (thousands of times per audit).
//!
//! A rank in a tail (the lowest or highest eighth) is found among the few values beyond a
//! threshold read off a small strided sample (Floyd & Rivest's sampling idea, CACM 1975): one
//! pass collects the values beyond both tails' thresholds, eight values at a time tested in
//! vectorizable comparisons, and the ranks are selected among them. Each threshold is checked
//! against the count of values collected for it, so the answer is exact whatever the data; when
//! one falls short (an adversarial order, or a tail of one repeated value), the slice is
//! selected in full instead, as ranks in the middle are.

use crate::check::total_order_key;
use crate::wide::{WideKernel, run_wide};

/// Below this length a full selection is as fast.
const SMALL: usize = 1_024;
/// Values in the strided sample.
const SAMPLE: usize = 256;

/// The values at `ranks` (ascending, distinct, each below `keys.len()`) of ascending-sorted
/// `keys`: what indexing a sorted copy would give, bit for bit. `keys` are finite with −0.0
/// mapped to +0.0 (so `<` is a total order on them) and may be left permuted.
pub(crate) fn order_statistics(keys: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    let n = keys.len();
    if n < SMALL || ranks.is_empty() {
        return select_all(keys, ranks);
    }
    let tail = n / 8;
    let low: Vec<usize> = ranks.iter().copied().filter(|&r| r < tail).collect();
    let high: Vec<usize> = ranks.iter().copied().filter(|&r| r >= n - tail).collect();
    let middle = ranks.len() - low.len() - high.len();
    let Some((low_values, high_values)) = tail_values(keys, &low, &high) else {
        return select_all(keys, ranks);
    };
    if middle == 0 {
        return low_values.into_iter().chain(high_values).collect();
    }
    let middle: Vec<usize> = ranks[low.len()..low.len() + middle].to_vec();
    let mut out = low_values;
    out.extend(select_all(keys, &middle));
    out.extend(high_values);
    out
}

/// The values at `low` ranks (all in the lowest eighth) and at `high` ranks (all in the highest
/// eighth), from the values beyond two thresholds read off one sample; `None` when a threshold
/// leaves too few values (then select in full).
fn tail_values(keys: &[f64], low: &[usize], high: &[usize]) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = keys.len();
    // How many of the most extreme values each side needs, counted from its end.
    let need_low = low.last().map_or(0, |&r| r + 1);
    let need_high = high.first().map_or(0, |&r| n - r);
    let mut sample: Vec<f64> = (0..SAMPLE).map(|i| keys[i * n / SAMPLE]).collect();
    // The sample position a few standard deviations past the expected position of the
    // need-th extreme value: with high probability at least `need` values lie beyond it.
    let margin = |need: usize| {
        let p = need as f64 / n as f64;
        let expected = p * SAMPLE as f64;
        let spread = 4.0 * (expected * (1.0 - p)).sqrt() + 4.0;
        ((expected + spread).ceil() as usize).min(SAMPLE - 1)
    };
    // A side with no rank keeps nothing: its threshold lies beyond every value.
    let low_threshold = if need_low > 0 {
        *sample
            .select_nth_unstable_by(margin(need_low), f64::total_cmp)
            .1
    } else {
        f64::NEG_INFINITY
    };
    let high_threshold = if need_high > 0 {
        *sample
            .select_nth_unstable_by(SAMPLE - 1 - margin(need_high), f64::total_cmp)
            .1
    } else {
        f64::INFINITY
    };
    // Room for about the values a side's sample position predicts, a quarter more for the
    // sampling spread: the buffers rarely grow (each growth copied and zero-filled them).
    let room = |need: usize| {
        if need == 0 {
            0
        } else {
            (margin(need) + 1) * n / SAMPLE * 5 / 4 + 64
        }
    };
    let (mut kept_low, mut kept_high) = collect_beyond(
        keys,
        (low_threshold, room(need_low)),
        (high_threshold, room(need_high)),
    );
    // Every value not kept lies strictly inside its threshold, so the `need` most extreme
    // values of a side are all kept exactly when at least `need` were.
    if kept_low.len() < need_low || kept_high.len() < need_high {
        return None;
    }
    let low_values = if low.is_empty() {
        Vec::new()
    } else {
        select_all(&mut kept_low, low)
    };
    let high_values = if high.is_empty() {
        Vec::new()
    } else {
        let skipped = n - kept_high.len();
        let local: Vec<usize> = high.iter().map(|&r| r - skipped).collect();
        select_all(&mut kept_high, &local)
    };
    Some((low_values, high_values))
}

/// The values at or below `low.0` and the values at or above `high.0`, each in data order (a
/// value can be in both when the thresholds cross); `.1` is the room to start each buffer with.
fn collect_beyond(keys: &[f64], low: (f64, usize), high: (f64, usize)) -> (Vec<f64>, Vec<f64>) {
    run_wide(Beyond {
        keys,
        low: low.0,
        high: high.0,
        below: Kept::with_room(low.1),
        above: Kept::with_room(high.1),
    })
}

/// [`collect_beyond`] as a kernel: its chunk tests are what 256-bit compares speed up.
struct Beyond<'a> {
    keys: &'a [f64],
    low: f64,
    high: f64,
    below: Kept,
    above: Kept,
}

impl WideKernel for Beyond<'_> {
    type Output = (Vec<f64>, Vec<f64>);

    #[inline(always)]
    fn run(self) -> Self::Output {
        let Beyond {
            keys,
            low,
            high,
            mut below,
            mut above,
        } = self;
        let (chunks, rest) = keys.as_chunks::<8>();
        // Every value is written to both buffers and kept where it passes, without a branch
        // per chunk: with the many ties of replicates of a mean over few scenes, half the chunks
        // or more hold a value to keep, and a test per chunk was mispredicted about as often as
        // it saved the stores (with few ties the stores cost about what the mispredictions did).
        for chunk in chunks {
            below.push_where(chunk, |x| x <= low);
            above.push_where(chunk, |x| x >= high);
        }
        below.push_where(rest, |x| x <= low);
        above.push_where(rest, |x| x >= high);
        (below.into_vec(), above.into_vec())
    }
}

/// A growing buffer of kept values: `values[..len]`, with room for a whole chunk more.
struct Kept {
    values: Vec<f64>,
    len: usize,
}

impl Kept {
    /// An empty buffer with `room` slots ready.
    fn with_room(room: usize) -> Self {
        Self {
            values: vec![0.0; room],
            len: 0,
        }
    }

    /// Appends the values of `chunk` (at most 8) that pass `keep`, in order: every value is
    /// written to the next free slot and the end moves past it only when it is kept.
    #[inline(always)]
    fn push_where(&mut self, chunk: &[f64], keep: impl Fn(f64) -> bool) {
        if self.values.len() < self.len + chunk.len() {
            let grown = (2 * self.values.len()).max(self.len + chunk.len()).max(64);
            self.values.resize(grown, 0.0);
        }
        for &x in chunk {
            self.values[self.len] = x;
            self.len += usize::from(keep(x));
        }
    }

    fn into_vec(mut self) -> Vec<f64> {
        self.values.truncate(self.len);
        self.values
    }
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
    let bits = key ^ (((key >> 63) as u64) >> 1) as i64;
    f64::from_bits(bits as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The selection gives the values of a sorted copy, for random data, heavy ties (a tail of
    /// one repeated value), sorted and reversed input (every value enters the heap), and ranks
    /// in both tails and the middle, close together and far apart.
    #[test]
    fn order_statistics_equal_sorted_values() {
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
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
                vec![n / 8 - 1, n / 8, n - n / 8 - 1, n - n / 8],
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
                let mut keys = data.clone();
                assert_eq!(select_all(&mut keys, &ranks), want);
            }
        }
    }
}
