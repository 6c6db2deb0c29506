//! Fitted Q evaluation (SPEC §3, seed 003): frozen encoders, neural and linear FQE, naive estimator, coverage diagnostics, metrics against ground truth.
