//! Named, seeded random streams (rand_chacha), so each draw depends only on the master seed and
//! what it is for, never on thread scheduling or the order of other draws.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A `u64` derived from the master seed, a tag and an index (FNV-1a of the tag, SplitMix64 finaliser).
pub fn mix(seed: u64, tag: &str, index: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in tag.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = seed ^ h ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The random stream named `tag` and `index` under `seed`.
pub fn rng(seed: u64, tag: &str, index: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix(seed, tag, index))
}

/// A uniform draw in `[lo, hi)`.
pub fn uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}
