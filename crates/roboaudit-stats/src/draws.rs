//! The random draws of the cluster bootstrap: one ChaCha8 stream per block of rows, Lemire's
//! multiply-and-reject indices read from a local word buffer, strata as pools of clusters.

use crate::StatsError;
use crate::bootstrap::ResampleDesign;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cluster pools of each stratum, and each position's pool.
pub(crate) struct StratumPools {
    pools: Vec<Vec<usize>>,
    pool_of: Vec<usize>,
}

impl StratumPools {
    /// Validates `design` and `resamples` (the errors of [`ResampleMatrix::generate`], in its order).
    pub(crate) fn for_design(
        design: &ResampleDesign,
        resamples: usize,
    ) -> Result<Self, StatsError> {
        let n = design.n_clusters;
        if n == 0 || u32::try_from(n).is_err() {
            return Err(StatsError::InvalidParameter(format!(
                "bootstrap design has {n} clusters"
            )));
        }
        if resamples == 0 {
            return Err(StatsError::InvalidParameter(
                "bootstrap needs at least one resample".to_owned(),
            ));
        }
        match &design.strata {
            None => Ok(Self::single(n)),
            Some(strata) if strata.len() != n => Err(StatsError::InvalidParameter(format!(
                "strata has {} entries for {n} clusters",
                strata.len()
            ))),
            Some(strata) => Ok(Self::new(strata)),
        }
    }

    /// One pool holding every cluster (no strata).
    fn single(n: usize) -> Self {
        Self {
            pools: vec![(0..n).collect()],
            pool_of: vec![0; n],
        }
    }

    fn new(strata: &[usize]) -> Self {
        let mut labels: Vec<usize> = strata.to_vec();
        labels.sort_unstable();
        labels.dedup();
        let mut pools = vec![Vec::new(); labels.len()];
        let mut pool_of = Vec::with_capacity(strata.len());
        for (cluster, s) in strata.iter().enumerate() {
            // `labels` holds every stratum value, so the search always succeeds.
            let p = labels.binary_search(s).unwrap_or(0);
            pools[p].push(cluster);
            pool_of.push(p);
        }
        Self { pools, pool_of }
    }

    /// Draws the next row of the stream into `row` (`row.len() == pool_of.len()`).
    pub(crate) fn fill_row(&self, words: &mut BlockWords, row: &mut [usize]) {
        if let [pool] = self.pools.as_slice() {
            // One pool: it is `0..n`, so the drawn position is the cluster.
            #[allow(clippy::cast_possible_truncation)] // n <= u32::MAX (checked)
            uniform_row(words, pool.len() as u32, row);
            return;
        }
        for (slot, &p) in row.iter_mut().zip(&self.pool_of) {
            let pool = &self.pools[p];
            // Pools are non-empty and no larger than n_clusters <= u32::MAX (checked).
            #[allow(clippy::cast_possible_truncation)]
            let k = uniform_below(words, pool.len() as u32);
            *slot = pool[k as usize];
        }
    }
}

/// Every slot of `row` uniform on `0..n`, exactly as `uniform_below` called once per slot.
fn uniform_row(words: &mut BlockWords, n: u32, row: &mut [usize]) {
    for chunk in row.chunks_mut(FAST_CHUNK) {
        if !words.try_fast_chunk(n, chunk) {
            for slot in chunk {
                *slot = uniform_below(words, n) as usize;
            }
        }
    }
}

/// Words per refill of [`BlockWords`] (1 KiB).
const BUFFERED_WORDS: usize = 256;
/// Positions of a row drawn together by [`BlockWords::try_fast_chunk`].
const FAST_CHUNK: usize = 64;

/// The `next_u32` sequence of one block's ChaCha8 stream (`seed_from_u64(seed)`, then
/// `set_stream(block)`), read through a local buffer. `BlockRng::fill_bytes` on a whole number of
/// words yields exactly the words `next_u32` would, in the same order, and nothing else reads the
/// stream, so the draws are those of calling `next_u32` once per word; reading them in bulk
/// avoids a store and reload of the generator's index per word and lets Lemire's products for a
/// whole chunk be computed in one vectorizable pass.
pub(crate) struct BlockWords {
    rng: ChaCha8Rng,
    buf: [u32; BUFFERED_WORDS],
    pos: usize,
}

impl BlockWords {
    pub(crate) fn new(seed: u64, block: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(block as u64);
        Self {
            rng,
            buf: [0; BUFFERED_WORDS],
            pos: BUFFERED_WORDS,
        }
    }

    /// Moves the unread words to the front and refills the rest, in stream order.
    fn refill(&mut self) {
        let unread = BUFFERED_WORDS - self.pos;
        self.buf.copy_within(self.pos.., 0);
        let mut fresh = self.buf[unread..].chunks_exact_mut(2);
        for pair in fresh.by_ref() {
            // `next_u64` is the next two words, low word first (`BlockRng::next_u64_from_u32`).
            let x = self.rng.next_u64();
            #[allow(clippy::cast_possible_truncation)] // the low word is wanted
            let lo = x as u32;
            pair[0] = lo;
            pair[1] = (x >> 32) as u32;
        }
        for w in fresh.into_remainder() {
            *w = self.rng.next_u32();
        }
        self.pos = 0;
    }

    fn next_word(&mut self) -> u32 {
        if self.pos == BUFFERED_WORDS {
            self.refill();
        }
        let w = self.buf[self.pos];
        self.pos += 1;
        w
    }

    /// Lemire's draw below `n` for every slot of `out` (at most [`FAST_CHUNK`]), one word each,
    /// when no word of the chunk lands in the low band `low < n` where a rejection is possible;
    /// otherwise consumes nothing and returns false (probability < `out.len()·n / 2^32`), and the
    /// caller draws the chunk one word at a time. Either way the output is that of the sequential
    /// method.
    fn try_fast_chunk(&mut self, n: u32, out: &mut [usize]) -> bool {
        if BUFFERED_WORDS - self.pos < out.len() {
            self.refill();
        }
        let words = &self.buf[self.pos..self.pos + out.len()];
        let n64 = u64::from(n);
        #[allow(clippy::cast_possible_truncation)] // the low 32 bits are wanted
        let safe = words
            .iter()
            .fold(true, |ok, &w| ok & ((u64::from(w) * n64) as u32 >= n));
        if !safe {
            return false;
        }
        for (slot, &w) in out.iter_mut().zip(words) {
            #[allow(clippy::cast_possible_truncation)] // (w·n) >> 32 < n <= u32::MAX
            let k = ((u64::from(w) * n64) >> 32) as usize;
            *slot = k;
        }
        self.pos += out.len();
        true
    }
}

/// Uniform integer in `0..n` (`n >= 1`) by Lemire's multiply-and-reject ("nearly divisionless",
/// ACM TOMACS 2019): exactly uniform, one word per draw except with probability < n / 2^32.
fn uniform_below(words: &mut BlockWords, n: u32) -> u32 {
    let mut m = u64::from(words.next_word()) * u64::from(n);
    #[allow(clippy::cast_possible_truncation)] // the low 32 bits are wanted
    if (m as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u32) < threshold {
            m = u64::from(words.next_word()) * u64::from(n);
        }
    }
    #[allow(clippy::cast_possible_truncation)] // m >> 32 < n
    let k = (m >> 32) as u32;
    k
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The buffered, chunked draws equal Lemire's method on `next_u32` one word at a time, also
    /// where the fast path falls back often (n near 2^32: most words land in the low band and
    /// many are rejected) and rows straddle refills.
    #[test]
    fn buffered_draws_equal_sequential_lemire() {
        for (n, len) in [
            (3_000_000_000u32, 100),
            (2_147_483_649, 37),
            (40, 40),
            (1, 3),
        ] {
            let mut words = BlockWords::new(11, 3);
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            rng.set_stream(3);
            for _ in 0..50 {
                let mut row = vec![0; len];
                uniform_row(&mut words, n, &mut row);
                let expected: Vec<usize> = (0..len)
                    .map(|_| {
                        loop {
                            let m = u64::from(rng.next_u32()) * u64::from(n);
                            if (m as u32) >= n.wrapping_neg() % n {
                                break (m >> 32) as usize;
                            }
                        }
                    })
                    .collect();
                assert_eq!(row, expected, "n = {n}");
            }
        }
    }
}
