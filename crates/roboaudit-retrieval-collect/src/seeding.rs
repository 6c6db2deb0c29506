//! Named, seeded random streams (rand_chacha), so each draw depends only on the master seed and
//! what it is for, never on thread scheduling or the order of other draws.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_types::seed::{Fnv1a, GOLDEN_GAMMA, splitmix64};

/// A `u64` derived from the master seed, a tag and an index (FNV-1a of the tag, SplitMix64 finaliser).
pub fn mix(seed: u64, tag: &str, index: u64) -> u64 {
    let h = Fnv1a::new().write(tag.as_bytes()).finish();
    splitmix64(seed ^ h ^ index.wrapping_mul(GOLDEN_GAMMA))
}

/// The random stream named `tag` and `index` under `seed`.
pub fn rng(seed: u64, tag: &str, index: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix(seed, tag, index))
}

/// A uniform draw in `[lo, hi)`.
pub fn uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}
