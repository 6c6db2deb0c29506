//! The one error type of the statistics core.

/// Why a statistic could not be computed from its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// The input has no elements where at least one is needed.
    #[error("empty input: {what}")]
    Empty {
        /// Which argument was empty.
        what: &'static str,
    },
    /// Two arguments that must have the same length do not.
    #[error("length mismatch: {left} has {left_len} elements, {right} has {right_len}")]
    LengthMismatch {
        /// Name of the first argument.
        left: &'static str,
        /// Its length.
        left_len: usize,
        /// Name of the second argument.
        right: &'static str,
        /// Its length.
        right_len: usize,
    },
    /// A value is NaN or infinite.
    #[error("non-finite value in {what} at index {index}")]
    NonFinite {
        /// Which argument.
        what: &'static str,
        /// Zero-based position of the offending value.
        index: usize,
    },
    /// A sample weight is negative (or all weights are zero).
    #[error("invalid weight in {what} at index {index}: weights must be finite and >= 0")]
    InvalidWeight {
        /// Which argument.
        what: &'static str,
        /// Zero-based position of the offending weight.
        index: usize,
    },
    /// Fewer observations than the statistic needs.
    #[error("too few observations: {n} < {min} needed for {what}")]
    TooFew {
        /// What was being computed.
        what: &'static str,
        /// Observations given.
        n: usize,
        /// Observations needed.
        min: usize,
    },
    /// A parameter is outside its valid range (the message says which and why).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
}
