//! Audit configuration: an unchecked, serializable [`AuditConfig`] validated once into a
//! [`CheckedConfig`] that the audit trusts (STYLE.md "Errors").

use crate::RetrievalError;
use serde::{Deserialize, Serialize};

/// Distance used by a nearest-neighbour rule (SPEC.md §1: cosine default, L2 option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Cosine distance `1 − cos(z_e, z_s)`, in [0, 2].
    #[default]
    Cosine,
    /// Euclidean distance `‖z_e − z_s‖₂`, ≥ 0.
    L2,
}

impl Metric {
    /// Name used in rule names: `cosine` or `l2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cosine => "cosine",
            Self::L2 => "l2",
        }
    }
}

/// Bootstrap interval method (SPEC.md §0: percentile default, BCa offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    /// Percentile interval.
    #[default]
    Percentile,
    /// Bias-corrected and accelerated interval (jackknife over scenes).
    Bca,
}

/// Scene-bootstrap resamples per interval by default (SPEC.md §0).
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// Frequency-matched shuffle permutations by default (SPEC.md §1).
pub const DEFAULT_PERMUTATIONS: usize = 10_000;
/// Random K-subsets of the pool per library size by default (SPEC.md §1).
pub const DEFAULT_RANDOM_SUBSETS: usize = 200;

/// Settings of a retrieval audit, as given by a caller. Validate with [`AuditConfig::check`].
///
/// ```
/// use roboaudit_retrieval::AuditConfig;
/// let config = AuditConfig { seed: 7, resamples: 2_000, ..AuditConfig::default() };
/// let checked = config.check().unwrap();
/// assert_eq!(checked.resamples(), 2_000);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// Seed of every random draw (random rule, Thompson sampling, shuffles, bootstrap, subsets).
    pub seed: u64,
    /// Scene-bootstrap resamples for each interval (SPEC.md §0 default 10,000), ≥ 2.
    pub resamples: usize,
    /// Frequency-matched shuffle permutations (SPEC.md §1 default 10,000), ≥ 1.
    pub permutations: usize,
    /// Confidence level of intervals and of the shuffle envelope, in (0, 1); default 0.95.
    pub level: f64,
    /// Interval method of the scene bootstrap.
    pub ci_method: CiMethod,
    /// Library sizes for the size interventions (nested, quality-equalized, random subsets);
    /// sizes ≥ 1; sizes not below the library size are reported as skipped.
    pub library_sizes: Vec<usize>,
    /// Random K-subsets of the pool per library size (SPEC.md §1 default 200); 0 disables.
    pub random_subsets: usize,
    /// Re-run every deterministic rule without its top pick (SPEC.md §1 library interventions;
    /// default true). False leaves each rule's `top_pick_deletion` null with a reason: the core
    /// audit alone, as the benchmark times it against the NumPy reference.
    pub top_pick_deletion: bool,
    /// CSLS neighbourhood size k (default 10, capped at the other side's size), ≥ 1.
    pub csls_k: usize,
    /// Representation holding state features for the structural rule; it is then left out of the
    /// visual rule families. `None`: no structural rule.
    pub structural: Option<String>,
    /// Distance of the structural rule (default L2: state features are coordinates, whose
    /// magnitude cosine would discard).
    pub structural_metric: Metric,
    /// Advantage denominators `O − R` below this are flagged unstable (SPEC.md §1: 0.05).
    pub unstable_threshold: f64,
    /// Planted-gap mixing rates of the shuffle-test power analysis, each in (0, 1]; empty disables.
    pub power_rates: Vec<f64>,
    /// Planted replicates per rate in the power analysis, ≥ 1.
    pub power_replicates: usize,
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            resamples: DEFAULT_RESAMPLES,
            permutations: DEFAULT_PERMUTATIONS,
            level: 0.95,
            ci_method: CiMethod::Percentile,
            library_sizes: vec![3, 10],
            random_subsets: DEFAULT_RANDOM_SUBSETS,
            top_pick_deletion: true,
            csls_k: 10,
            structural: None,
            structural_metric: Metric::L2,
            unstable_threshold: 0.05,
            power_rates: vec![0.25, 0.5, 1.0],
            power_replicates: 1_000,
        }
    }
}

impl AuditConfig {
    /// Validates every field once.
    ///
    /// # Errors
    /// [`RetrievalError::InvalidConfig`] naming the first invalid field.
    pub fn check(self) -> Result<CheckedConfig, RetrievalError> {
        let bad = |m: String| Err(RetrievalError::InvalidConfig(m));
        if self.resamples < 2 {
            return bad(format!("resamples must be >= 2, got {}", self.resamples));
        }
        if self.permutations < 1 {
            return bad("permutations must be >= 1".into());
        }
        if !(self.level > 0.0 && self.level < 1.0) {
            return bad(format!("level must be in (0, 1), got {}", self.level));
        }
        if self.csls_k < 1 {
            return bad("csls_k must be >= 1".into());
        }
        if let Some(size) = self.library_sizes.iter().find(|&&k| k == 0) {
            return bad(format!("library sizes must be >= 1, got {size}"));
        }
        // A repeated size would only repeat its section of the report, byte for byte.
        if let Some((_, size)) = self
            .library_sizes
            .iter()
            .enumerate()
            .find(|(k, size)| self.library_sizes[..*k].contains(size))
        {
            return bad(format!(
                "library size {size} is given twice; give each size once"
            ));
        }
        if !(self.unstable_threshold.is_finite() && self.unstable_threshold >= 0.0) {
            return bad(format!(
                "unstable_threshold must be finite and >= 0, got {}",
                self.unstable_threshold
            ));
        }
        if let Some(rate) = self.power_rates.iter().find(|r| !(**r > 0.0 && **r <= 1.0)) {
            return bad(format!("power rates must be in (0, 1], got {rate}"));
        }
        if self.power_replicates < 1 {
            return bad("power_replicates must be >= 1".into());
        }
        if self.structural.as_deref() == Some("") {
            return bad("structural representation name must not be empty".into());
        }
        Ok(CheckedConfig(self))
    }
}

/// An [`AuditConfig`] whose fields have been validated; read-only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckedConfig(AuditConfig);

impl CheckedConfig {
    /// The validated settings.
    pub fn get(&self) -> &AuditConfig {
        &self.0
    }
    /// Master seed.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
    /// Bootstrap resamples.
    pub fn resamples(&self) -> usize {
        self.0.resamples
    }
    /// Shuffle permutations.
    pub fn permutations(&self) -> usize {
        self.0.permutations
    }
    /// Confidence level.
    pub fn level(&self) -> f64 {
        self.0.level
    }
}
