//! Bellman-target values kept per frame while the target network is unchanged.
//!
//! `mean_j Q_θ̄(x_k, a'_j, l)` depends only on the frame `k` and the target parameters `θ̄`,
//! which stay fixed for `target_update_every` steps. A period of the default fit draws
//! `100 × 512 = 51,200` rows; on the 67,592-frame push suite 30 % of them repeat a frame already
//! drawn in that period, on the 19,152-frame Meta-World run 65 % (expected shares of uniform
//! draws). Each frame's value is computed the first time the period needs it and read back after
//! that: the targets are the uncached ones and only the repeated forward passes of the target
//! network go. Not the same bits, though: a value computed in a smaller batch of rows can differ
//! in its last bits, because `gemm` picks its kernel by the number of rows (`tests`, 4 ulp), so
//! a fit's bytes differ from an uncached fit's as they would on another CPU; the same inputs
//! and seed still give the same bytes. A Polyak-averaged target (`target_tau > 0`) changes
//! every step, so there the cache only merges the rows a mini-batch draws twice.

/// One value per frame with the target-network period that computed it.
#[derive(Debug)]
pub(super) struct TargetCache {
    values: Vec<f32>,
    /// The period whose parameters computed `values[k]`; 0 never matches, so nothing is
    /// valid before the first fill.
    stamp: Vec<u32>,
    period: u32,
    missing: Vec<usize>,
    computed: Vec<f32>,
}

impl TargetCache {
    /// An empty cache for `frames` frames.
    pub(super) fn new(frames: usize) -> Self {
        Self {
            values: vec![0.0; frames],
            stamp: vec![0; frames],
            period: 1,
            missing: Vec::new(),
            computed: Vec::new(),
        }
    }

    /// Forgets every value: the target parameters changed.
    pub(super) fn invalidate(&mut self) {
        self.period += 1;
    }

    /// The values of `rows` (frame indices `< frames`, repeats allowed) appended to `out`, in
    /// order. `compute(missing, dst)` appends one value to `dst` for each of `missing`: the
    /// frames of `rows` not yet valid in this period, each once, in order of first appearance.
    pub(super) fn values_of(
        &mut self,
        rows: &[usize],
        out: &mut Vec<f32>,
        compute: impl FnOnce(&[usize], &mut Vec<f32>),
    ) {
        self.missing.clear();
        for &k in rows {
            if self.stamp[k] != self.period {
                self.stamp[k] = self.period;
                self.missing.push(k);
            }
        }
        if !self.missing.is_empty() {
            self.computed.clear();
            compute(&self.missing, &mut self.computed);
            for (&k, &v) in self.missing.iter().zip(&self.computed) {
                self.values[k] = v;
            }
        }
        out.extend(rows.iter().map(|&k| self.values[k]));
    }
}

#[cfg(test)]
mod tests {
    use super::TargetCache;

    /// A stand-in target network: a frame's value is its index plus the period's offset, and
    /// every frame it evaluates is recorded.
    fn fill(
        cache: &mut TargetCache,
        rows: &[usize],
        offset: f32,
        seen: &mut Vec<usize>,
    ) -> Vec<f32> {
        let mut out = Vec::new();
        cache.values_of(rows, &mut out, |missing, dst| {
            seen.extend_from_slice(missing);
            dst.extend(missing.iter().map(|&k| k as f32 + offset));
        });
        out
    }

    #[test]
    fn each_frame_is_computed_once_per_period() {
        let mut cache = TargetCache::new(10);
        let mut seen = Vec::new();
        let out = fill(&mut cache, &[3, 7, 3, 0, 7], 0.5, &mut seen);
        assert_eq!(out, vec![3.5, 7.5, 3.5, 0.5, 7.5]);
        assert_eq!(seen, vec![3, 7, 0]);
        seen.clear();
        // Same period: only the new frame 9 is computed; the others keep the period's values
        // even though the stand-in would now return different ones.
        let out = fill(&mut cache, &[9, 0, 3], 100.0, &mut seen);
        assert_eq!(out, vec![109.0, 0.5, 3.5]);
        assert_eq!(seen, vec![9]);
        seen.clear();
        cache.invalidate();
        let out = fill(&mut cache, &[0, 9, 0], 2.0, &mut seen);
        assert_eq!(out, vec![2.0, 11.0, 2.0]);
        assert_eq!(seen, vec![0, 9]);
    }

    #[test]
    fn all_cached_rows_skip_the_network() {
        let mut cache = TargetCache::new(4);
        let mut seen = Vec::new();
        fill(&mut cache, &[1, 2], 0.0, &mut seen);
        let mut out = Vec::new();
        cache.values_of(&[2, 1, 2], &mut out, |_, _| panic!("nothing is missing"));
        assert_eq!(out, vec![2.0, 1.0, 2.0]);
    }
}
