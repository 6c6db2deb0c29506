//! Numbers echoed back to the user (settings in summaries, reports and messages) in a compact
//! form: Rust's `{}` for `f64` never switches to an exponent, so `--c 1e-300` would come back as
//! a 302-character decimal.

/// `x` as its shortest round-trip decimal (`0.25`, `1000`), or in exponent form (`1e-300`,
/// `2.5e20`) when its magnitude is below 1e-4 or at least 1e15, where the decimal would be
/// mostly zeros.
pub fn compact(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn tiny_and_huge_values_use_an_exponent_and_round_trip() {
        assert_eq!(compact(1e-300), "1e-300");
        assert_eq!(compact(-2.5e-7), "-2.5e-7");
        assert_eq!(compact(3e20), "3e20");
        assert_eq!(compact(0.0001), "0.0001");
        assert_eq!(compact(0.99), "0.99");
        assert_eq!(compact(1.0), "1");
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(f64::NAN), "NaN");
        let x = 1.234_567_890_123e-12;
        assert_eq!(compact(x).parse::<f64>().ok(), Some(x));
    }
}
