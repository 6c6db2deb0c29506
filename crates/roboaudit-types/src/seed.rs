//! The two hashing primitives every seeded stream in roboaudit is built from, so that a seed
//! derivation reads the same everywhere and is written once: SplitMix64's output function and
//! 64-bit FNV-1a. Each caller composes them in its own documented way (a tag, an index, a
//! content hash); the compositions are part of the output contract (same seed, same bytes).

/// SplitMix64's step and output function (Steele, Lea & Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014; the `splitmix64.c` constants): adds the golden-ratio
/// increment `0x9e3779b97f4a7c15`, then the variant-13 finaliser. A bijection on `u64`.
pub const fn splitmix64(z: u64) -> u64 {
    let mut z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The golden-ratio increment of SplitMix64, also used to spread indices before mixing.
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// 64-bit FNV-1a (Fowler–Noll–Vo), streaming: offset basis `0xcbf29ce484222325`, prime
/// `0x100000001b3`, each byte XORed in before the multiply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a::new()
    }
}

impl Fnv1a {
    /// The offset basis.
    pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    /// The prime.
    pub const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A hasher at the offset basis.
    pub const fn new() -> Fnv1a {
        Fnv1a(Self::OFFSET)
    }

    /// Folds `bytes` in.
    pub fn write(&mut self, bytes: &[u8]) -> &mut Fnv1a {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
        self
    }

    /// Folds `v`'s eight little-endian bytes in.
    pub fn write_u64(&mut self, v: u64) -> &mut Fnv1a {
        self.write(&v.to_le_bytes())
    }

    /// The hash so far.
    pub const fn finish(&self) -> u64 {
        self.0
    }
}

/// FNV-1a of `bytes` in one call.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    Fnv1a::new().write(bytes).finish()
}

/// 64-bit FNV-1a of `bytes` as 16 lowercase hex digits: the fingerprint result files record of
/// the files they were computed from (a ground truth, a dataset, a stage's outputs). Equal bytes
/// give equal text; a changed file almost surely gives another (not a defence against anyone
/// forging a file).
#[must_use]
pub fn fingerprint(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a64(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers() {
        // FNV-1a 64 test vectors (Fowler–Noll–Vo reference: "" and "a", "foobar").
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        // splitmix64.c seeded with 0: the first three outputs.
        let mut s = 0u64;
        let mut next = || {
            let out = splitmix64(s);
            s = s.wrapping_add(GOLDEN_GAMMA);
            out
        };
        assert_eq!(next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(next(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(next(), 0x06c4_5d18_8009_454f);
    }
}
