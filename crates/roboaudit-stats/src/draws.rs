//! The random draws of the cluster bootstrap: one ChaCha8 stream per block of rows, several
//! indices per 32-bit word (Brackett-Rozinsky & Lemire's batched ranged draws), strata as pools
//! of clusters.

use crate::StatsError;
use crate::bootstrap::ResampleDesign;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Largest product of the bounds drawn together from one 32-bit word. A word is rejected with
/// probability `(2^32 mod P) / 2^32 < P / 2^32`, so this keeps rejections below 1 in 256
/// (1 in 2,300 for the four indices of 40 clusters a word carries). A position whose bound
/// alone exceeds it is a batch of its own, with that bound as its product.
const MAX_BATCH_PRODUCT: u64 = 1 << 24;

/// Consecutive positions `start..end` of a row drawn from one word: `product` is the product
/// of their bounds (at most 2^32), `threshold` = `2^32 mod product` (a word `x` with
/// `x · product mod 2^32` below it is rejected).
#[derive(Debug, Clone, Copy)]
struct Batch {
    start: usize,
    end: usize,
    product: u64,
    threshold: u64,
}

/// Cluster pools of each stratum, each position's pool, and how a row's positions are batched.
pub(crate) struct StratumPools {
    pools: Vec<Vec<usize>>,
    pool_of: Vec<usize>,
    /// Bound of every position: the size of its pool.
    bounds: Vec<u64>,
    batches: Vec<Batch>,
    /// The batches of a single pool of `n` clusters (every bound `n`): all but possibly the
    /// last have `len` positions; `full` of them do.
    uniform: Option<Uniform>,
}

#[derive(Debug, Clone, Copy)]
struct Uniform {
    n: u64,
    len: usize,
    full: usize,
    /// Positions of a row (`n`).
    total: usize,
}

impl StratumPools {
    /// Validates `design` and `resamples` (the errors of [`ResampleMatrix::generate`], in its order).
    ///
    /// [`ResampleMatrix::generate`]: crate::ResampleMatrix::generate
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
            None => Ok(Self::with_pools(vec![(0..n).collect()], vec![0; n])),
            Some(strata) if strata.len() != n => Err(StatsError::InvalidParameter(format!(
                "strata has {} entries for {n} clusters",
                strata.len()
            ))),
            Some(strata) => Ok(Self::new(strata)),
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
        Self::with_pools(pools, pool_of)
    }

    fn with_pools(pools: Vec<Vec<usize>>, pool_of: Vec<usize>) -> Self {
        let bounds: Vec<u64> = pool_of.iter().map(|&p| pools[p].len() as u64).collect();
        let batches = batches_of(&bounds);
        let uniform = match pools.as_slice() {
            [pool] => {
                let len = batches.first().map_or(0, |b| b.end - b.start);
                let full = batches
                    .iter()
                    .take_while(|b| b.end - b.start == len)
                    .count();
                Some(Uniform {
                    n: pool.len() as u64,
                    len,
                    full,
                    total: bounds.len(),
                })
            }
            _ => None,
        };
        Self {
            batches,
            pools,
            pool_of,
            bounds,
            uniform,
        }
    }

    /// Number of clusters (positions) of a row.
    pub(crate) fn n_clusters(&self) -> usize {
        self.pool_of.len()
    }

    /// Draws the next row of the stream into `row` (`row.len() == pool_of.len()`).
    pub(crate) fn fill_row(&self, words: &mut BlockWords, row: &mut [usize]) {
        self.draw(words, &mut RowSink(row));
    }

    /// Draws the next `rows` rows of the stream as multiplicities into `out` (see
    /// [`BlockCounts`]). The same rows as [`Self::fill_row`], with no row written.
    #[inline(always)]
    pub(crate) fn fill_block(&self, words: &mut BlockWords, rows: usize, out: &mut BlockCounts) {
        out.rows = rows;
        let n = out.n;
        match self.uniform {
            Some(u) if n <= 64 && u.n >= 2 => self.fill_small_uniform(u, words, rows, out),
            _ => {
                for r in 0..rows {
                    let counts = &mut out.counts[r * out.stride..r * out.stride + n];
                    let bits = &mut out.bits[r * out.words..(r + 1) * out.words];
                    counts.fill(0);
                    bits.fill(0);
                    self.draw(words, &mut CountSink { counts, bits });
                }
            }
        }
    }

    /// [`Self::fill_block`] for one pool of 2 to 64 clusters (the common case), in long simple
    /// loops over the whole block: the digits of every row ([`Self::small_uniform_digits`]),
    /// then each row's counts in a fixed-size array of bytes (no bounds checks; two vector
    /// stores to clear) with its drawn set in a register.
    #[inline(always)]
    fn fill_small_uniform(
        &self,
        u: Uniform,
        words: &mut BlockWords,
        rows: usize,
        out: &mut BlockCounts,
    ) {
        self.small_uniform_digits(u, words, rows, out);
        let (full, len) = (u.full, u.len);
        let rem_len = u.total - full * len;
        let block = rows * full;
        let (steps, rem_digits) = out.digits.split_at(len * block);
        for r in 0..rows {
            // at most 64 draws per row: the counts fit a byte
            let mut local = [0u8; 64];
            let mut drawn = 0u64;
            let mut count = |d: u8| {
                let c = usize::from(d) & 63;
                local[c] = local[c].wrapping_add(1);
                drawn |= 1 << c;
            };
            if full > 0 {
                for step in steps.chunks_exact(block) {
                    step[r * full..(r + 1) * full]
                        .iter()
                        .for_each(|&d| count(d));
                }
            }
            if rem_len > 0 {
                rem_digits[r * rem_len..(r + 1) * rem_len]
                    .iter()
                    .for_each(|&d| count(d));
            }
            let counts = &mut out.counts[r * out.stride..(r + 1) * out.stride];
            for (to, &k) in counts.iter_mut().zip(&local) {
                *to = u32::from(k);
            }
            out.bits[r] = drawn;
        }
    }

    /// The next `rows` rows of the stream as cluster-major byte counts, `columns[c · 64 + r]`
    /// for row `r` and cluster `c` (the rows of [`Self::fill_block`]), for one pool of 2 to 64
    /// clusters; `false` (nothing drawn) for any other design.
    #[inline(always)]
    pub(crate) fn fill_block_columns(
        &self,
        words: &mut BlockWords,
        rows: usize,
        out: &mut BlockCounts,
        columns: &mut [u8; 64 * 64],
    ) -> bool {
        let u = match self.uniform {
            Some(u) if out.n <= 64 && u.n >= 2 && rows <= 64 => u,
            _ => return false,
        };
        self.small_uniform_digits(u, words, rows, out);
        let (full, len) = (u.full, u.len);
        let rem_len = u.total - full * len;
        let block = rows * full;
        let (steps, rem_digits) = out.digits.split_at(len * block);
        columns.fill(0);
        // At most 64 draws per row: a count fits a byte. Rows are the inner index, so the
        // increments of one row go to different lines and never wait on each other.
        let mut count = |r: usize, d: u8| {
            let at = ((usize::from(d) & 63) << 6) | (r & 63);
            columns[at] = columns[at].wrapping_add(1);
        };
        if full > 0 {
            for step in steps.chunks_exact(block) {
                for (r, row) in step.chunks_exact(full).enumerate() {
                    row.iter().for_each(|&d| count(r, d));
                }
            }
        }
        if rem_len > 0 {
            for (r, row) in rem_digits.chunks_exact(rem_len).enumerate() {
                row.iter().for_each(|&d| count(r, d));
            }
        }
        true
    }

    /// The digits of the next `rows` rows of a single pool of `u.n` clusters into
    /// `out.digits`: the accepted words of every row, then the digits of all full batches of
    /// the block step by step (one vectorizable loop per step: `digits[step · rows · full + r ·
    /// full + batch]`), then the digits of each row's last, shorter batch (`rows · full · len +
    /// r · rem + i`).
    #[inline(always)]
    fn small_uniform_digits(
        &self,
        u: Uniform,
        words: &mut BlockWords,
        rows: usize,
        out: &mut BlockCounts,
    ) {
        out.rows = rows;
        let rem_len = u.total - u.full * u.len;
        let (full, len) = (u.full, u.len);
        out.full_words.clear();
        out.rem_words.clear();
        for _ in 0..rows {
            let accepted = &words.accept(&self.batches).words;
            out.full_words
                .extend_from_slice(&accepted[..full.min(accepted.len())]);
            if rem_len > 0 {
                out.rem_words.push(accepted.get(full).copied().unwrap_or(0));
            }
        }
        let block = rows * full;
        out.digits.resize(len * block + rows * rem_len, 0);
        let (steps, rem_digits) = out.digits.split_at_mut(len * block);
        if block > 0 {
            for step in steps.chunks_exact_mut(block) {
                for (d, x) in step.iter_mut().zip(out.full_words.iter_mut()) {
                    let (digit, r) = split(*x, u.n);
                    *x = r;
                    // digit < n <= 64
                    *d = digit as u8;
                }
            }
        }
        if rem_len > 0 {
            for (digits, x) in rem_digits
                .chunks_exact_mut(rem_len)
                .zip(out.rem_words.iter_mut())
            {
                for d in digits.iter_mut() {
                    let (digit, r) = split(*x, u.n);
                    *x = r;
                    *d = digit as u8;
                }
            }
        }
    }

    #[inline(always)]
    fn draw(&self, words: &mut BlockWords, sink: &mut impl Sink) {
        let accepted = &words.accept(&self.batches).words;
        if let [pool] = self.pools.as_slice() {
            // One pool: it is `0..n`, so the drawn position is the cluster.
            uniform_digits(&self.batches, accepted, pool.len() as u64, sink);
            return;
        }
        let mut pooled = PoolSink {
            pools: &self.pools,
            pool_of: &self.pool_of,
            sink,
        };
        digits(&self.batches, &self.bounds, accepted, &mut pooled);
    }
}

/// A block of drawn rows as multiplicities: for row `r`, how often each of the `n` clusters was
/// drawn and which were (bit `c % 64` of word `c / 64`); the rest is the scratch of
/// [`StratumPools::fill_block`].
pub(crate) struct BlockCounts {
    n: usize,
    /// Entries per row of `counts` (`n`).
    stride: usize,
    /// Words per row of `bits`.
    words: usize,
    rows: usize,
    counts: Vec<u32>,
    bits: Vec<u64>,
    full_words: Vec<u64>,
    rem_words: Vec<u64>,
    digits: Vec<u8>,
}

impl BlockCounts {
    /// Room for a block of [`crate::ROWS_PER_STREAM`] rows of `n` clusters.
    pub(crate) fn new(n: usize) -> Self {
        let (stride, words) = (n, n.div_ceil(64));
        let rows = crate::bootstrap::ROWS_PER_STREAM;
        Self {
            n,
            stride,
            words,
            rows: 0,
            counts: vec![0; rows * stride],
            bits: vec![0; rows * words],
            full_words: Vec::new(),
            rem_words: Vec::new(),
            digits: Vec::new(),
        }
    }

    /// Rows drawn by the last [`StratumPools::fill_block`].
    #[cfg(test)]
    fn rows(&self) -> usize {
        self.rows
    }

    /// Row `r`'s counts (length `n`) and drawn set.
    pub(crate) fn row(&self, r: usize) -> (&[u32], &[u64]) {
        let counts = &self.counts[r * self.stride..(r + 1) * self.stride];
        (counts, &self.bits[r * self.words..(r + 1) * self.words])
    }
}

/// Where drawn clusters go: a row of indices, or multiplicities.
trait Sink {
    /// Position `pos` of the row drew cluster `cluster`.
    fn put(&mut self, pos: usize, cluster: usize);
}

struct RowSink<'a>(&'a mut [usize]);

impl Sink for RowSink<'_> {
    #[inline(always)]
    fn put(&mut self, pos: usize, cluster: usize) {
        self.0[pos] = cluster;
    }
}

/// Multiplicities and the drawn set of more than 64 clusters. Wrapping adds: at most
/// `n_clusters <= u32::MAX` draws per row, and they spare the dev profile's overflow checks on
/// the hot path.
struct CountSink<'a> {
    counts: &'a mut [u32],
    bits: &'a mut [u64],
}

impl Sink for CountSink<'_> {
    #[inline(always)]
    fn put(&mut self, _: usize, c: usize) {
        self.counts[c] = self.counts[c].wrapping_add(1);
        self.bits[c >> 6] |= 1u64 << (c & 63);
    }
}

/// Maps each position's digit to the cluster of that rank in the position's stratum pool.
struct PoolSink<'a, S> {
    pools: &'a [Vec<usize>],
    pool_of: &'a [usize],
    sink: &'a mut S,
}

impl<S: Sink> Sink for PoolSink<'_, S> {
    #[inline(always)]
    fn put(&mut self, pos: usize, digit: usize) {
        // every digit is below its pool's size
        self.sink.put(pos, self.pools[self.pool_of[pos]][digit]);
    }
}

/// Groups positions greedily, in order, into batches whose bound product stays at most
/// [`MAX_BATCH_PRODUCT`]; a bound above it (at most `u32::MAX`) makes a batch of its own.
fn batches_of(bounds: &[u64]) -> Vec<Batch> {
    let mut batches = Vec::new();
    let (mut start, mut product) = (0, 1u64);
    for (i, &b) in bounds.iter().enumerate() {
        if i > start && product.saturating_mul(b) > MAX_BATCH_PRODUCT {
            batches.push(Batch::new(start, i, product));
            (start, product) = (i, 1);
        }
        product *= b;
    }
    batches.push(Batch::new(start, bounds.len(), product));
    batches
}

impl Batch {
    fn new(start: usize, end: usize, product: u64) -> Self {
        Self {
            start,
            end,
            product,
            threshold: (1u64 << 32) % product,
        }
    }
}

/// One step of the batched draw: `x · b = index · 2^32 + rest` (64-bit product of 32-bit `x`
/// and `b <= 2^32`): the index (below `b`) and the randomness left for the next index.
#[inline(always)]
fn split(x: u64, b: u64) -> (usize, u64) {
    // `x < 2^32` and `b <= 2^32`, so the product fits; `wrapping_mul` only spares the dev
    // profile's overflow check on the hot path.
    let m = x.wrapping_mul(b);
    // Cast: m >> 32 < b <= u32::MAX
    let index = (m >> 32) as usize;
    (index, m & 0xffff_ffff)
}

/// The digits of the accepted words, batch by batch: position `pos` gets a digit below
/// `bounds[pos]`.
#[inline(always)]
fn digits(batches: &[Batch], bounds: &[u64], accepted: &[u64], sink: &mut impl Sink) {
    for (batch, &word) in batches.iter().zip(accepted) {
        let mut x = word;
        for (pos, &b) in bounds.iter().enumerate().take(batch.end).skip(batch.start) {
            let (digit, rest) = split(x, b);
            x = rest;
            sink.put(pos, digit);
        }
    }
}

/// Batches advanced side by side by [`uniform_digits`].
const LANES: usize = 8;

/// The digits of the accepted words of a single pool of `n` clusters. Every batch but the last
/// has the same length, so [`LANES`] batches at a time advance side by side: each batch's digits
/// are one chain of dependent multiplications, and independent chains keep the multiplier busy
/// (and vectorize where the caller runs with wide registers).
#[inline(always)]
fn uniform_digits(batches: &[Batch], accepted: &[u64], n: u64, sink: &mut impl Sink) {
    let len = batches.first().map_or(0, |b| b.end - b.start);
    let full = batches
        .iter()
        .take_while(|b| b.end - b.start == len)
        .count();
    let (groups, _) = accepted[..full].as_chunks::<LANES>();
    for (g, words) in groups.iter().enumerate() {
        let mut x = *words;
        // wrapping: positions are below the row length
        let first = g.wrapping_mul(LANES).wrapping_mul(len);
        for i in 0..len {
            let mut digit = [0usize; LANES];
            for lane in 0..LANES {
                (digit[lane], x[lane]) = split(x[lane], n);
            }
            for (lane, &d) in digit.iter().enumerate() {
                sink.put(
                    first.wrapping_add(lane.wrapping_mul(len)).wrapping_add(i),
                    d,
                );
            }
        }
    }
    for (batch, &word) in batches.iter().zip(accepted).skip(LANES * groups.len()) {
        let mut x = word;
        for pos in batch.start..batch.end {
            let (digit, rest) = split(x, n);
            x = rest;
            sink.put(pos, digit);
        }
    }
}

/// The `next_u32` sequence of one block's ChaCha8 stream (`seed_from_u64(seed)`, then
/// `set_stream(block)`).
///
/// A batch of positions with bounds `b_1, …, b_k` (product `P`) is drawn from one word `x_0`:
/// `x_{i-1} · b_i = index_i · 2^32 + x_i` (64-bit product). Then `x_0 · P = V · 2^32 + x_k`
/// with `V = Σ_i index_i · b_{i+1} ⋯ b_k`, so the indices are the mixed-radix digits of
/// Lemire's multiply-and-reject draw of `V` below `P`; the word is rejected, and the batch drawn
/// from the next word, when `x_k < 2^32 mod P` (`x_k = x_0 · P mod 2^32`, so acceptance is
/// known before any digit is computed). What is left is exactly uniform on `0..P`, so the
/// indices are independent and exactly uniform (Lemire, ACM TOMACS 2019; Brackett-Rozinsky &
/// Lemire, "Batched ranged random integer generation", Softw. Pract. Exp. 2024). Forty
/// clusters take ten words per row (four indices per word), where one word per index takes 40.
pub(crate) struct BlockWords {
    rng: ChaCha8Rng,
    buf: [u32; BUFFERED_WORDS],
    /// Next unread word of `buf`.
    pos: usize,
    accepted: Accepted,
}

/// Words per refill of [`BlockWords`].
const BUFFERED_WORDS: usize = 64;

/// The accepted word of every batch of the row being drawn.
pub(crate) struct Accepted {
    words: Vec<u64>,
}

impl BlockWords {
    pub(crate) fn new(seed: u64, block: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(block as u64);
        Self {
            rng,
            buf: [0; BUFFERED_WORDS],
            pos: BUFFERED_WORDS,
            accepted: Accepted { words: Vec::new() },
        }
    }

    /// The next `next_u32` word, read 64 at a time: `next_u64` is the next two words, low word
    /// first (`BlockRng::next_u64` over `u32` results), and nothing else reads the stream.
    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        if self.pos >= BUFFERED_WORDS {
            for pair in self.buf.as_chunks_mut::<2>().0 {
                let x = self.rng.next_u64();
                // Cast: the low word is wanted
                let low = x as u32;
                *pair = [low, (x >> 32) as u32];
            }
            self.pos = 0;
        }
        let w = self.buf[self.pos & (BUFFERED_WORDS - 1)];
        self.pos = self.pos.wrapping_add(1);
        u64::from(w)
    }

    /// The accepted word of each batch, in batch order (each batch takes words from the stream
    /// until one is accepted).
    #[inline(always)]
    fn accept(&mut self, batches: &[Batch]) -> &mut Accepted {
        let words = &mut self.accepted.words;
        words.clear();
        // Rejections are rare (below 1 in 256 words), so the next words of the buffer are
        // checked all at once, without a branch per word; the first rejection in them sends
        // the row down the word-by-word path, which gives the same words.
        let nb = batches.len();
        if let Some(next) = self.buf.get(self.pos..self.pos.wrapping_add(nb)) {
            let mut ok = true;
            for (&w, b) in next.iter().zip(batches) {
                ok &= u64::from(w).wrapping_mul(b.product) & 0xffff_ffff >= b.threshold;
            }
            if ok {
                words.extend(next.iter().map(|&w| u64::from(w)));
                self.pos = self.pos.wrapping_add(nb);
                return &mut self.accepted;
            }
        }
        for batch in batches {
            let word = loop {
                let x = self.next_word();
                if x.wrapping_mul(batch.product) & 0xffff_ffff >= batch.threshold {
                    break x;
                }
            };
            self.accepted.words.push(word);
        }
        &mut self.accepted
    }
}

#[cfg(test)]
mod tests;
