//! Seeded draws shared by the scene generators and the episode noise.

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_types::seed::{Fnv1a, GOLDEN_GAMMA};

/// A ChaCha8 stream derived from a seed and a purpose tag, so that independent draws (layout,
/// appearance, noise) of one seed never share random numbers.
pub fn stream(seed: u64, tag: &str, index: u64) -> ChaCha8Rng {
    let h = Fnv1a::new().write(tag.as_bytes()).finish();
    let mixed = seed ^ h.rotate_left(17) ^ index.wrapping_mul(GOLDEN_GAMMA);
    ChaCha8Rng::seed_from_u64(mixed)
}

/// Uniform draw in `[lo, hi)`.
pub fn uniform<R: Rng>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}

/// Standard normal draw (Box–Muller; one of the pair is discarded to keep the stream simple).
pub fn normal<R: Rng>(rng: &mut R) -> f64 {
    let u1 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
