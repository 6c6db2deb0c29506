//! The preregistered analysis plan (SPEC.md §2 "preregistration"): δ, action seeds, margins,
//! distance, eligibility and bootstrap settings, read from TOML and hashed canonically.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::MemoryError;

/// Largest `bootstrap.resamples` a plan may register (as `roboaudit retrieval audit --resamples`).
pub const MAX_RESAMPLES: usize = 1_000_000;

/// Where a plan came from; written into every result as `plan_source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanSource {
    /// Read from a plan file (or plan text).
    File,
    /// No plan given: the defaults of SPEC.md §2.
    #[default]
    Defaults,
}

/// Distance between the two memories' executed chunks (SPEC.md §2 sensitivity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Distance {
    /// Euclidean norm of the difference of the flattened chunks.
    #[default]
    L2,
}

/// Which pairs are analysed. A pair whose present failed the identity check
/// (`present_equal = false`) is always excluded; this cannot be switched off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Eligibility {
    /// Pairs excluded before any action was seen (outcome-blind), by `pair_id`; counted in
    /// `n_excluded`, never analysed.
    pub excluded_pairs: Vec<String>,
    /// Fewest eligible pairs for defined metrics (default 1); below it every metric is null
    /// with a reason.
    pub min_pairs: usize,
    /// Declared tolerance of the hidden-state equality check, as applied by the harness
    /// (recorded and hashed; the analysis does not use it).
    pub hidden_state_tolerance: Option<f64>,
}

impl Default for Eligibility {
    fn default() -> Self {
        Self {
            excluded_pairs: Vec::new(),
            min_pairs: 1,
            hidden_state_tolerance: None,
        }
    }
}

/// Pair-cluster bootstrap settings (SPEC.md §0, §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BootstrapPlan {
    /// Resamples, ≥ 1 (default 10,000).
    pub resamples: usize,
    /// Level of the confidence intervals and the positive rule, in (0, 1) (default 0.95).
    pub level: f64,
    /// Level of equivalence intervals, in (0, 1) (default 0.90).
    pub equivalence_level: f64,
    /// Seed of the resamples.
    pub seed: u64,
}

impl Default for BootstrapPlan {
    fn default() -> Self {
        Self {
            resamples: 10_000,
            level: 0.95,
            equivalence_level: 0.90,
            seed: 0,
        }
    }
}

/// An analysis plan. Unknown keys are errors, missing keys take the defaults of SPEC.md §2.
///
/// ```toml
/// delta = 0.05                 # branch-choice margin δ
/// seeds = [0, 1, 2]            # registered action seeds; [] = whatever the records hold
/// distance = "l2"
/// action_change_tolerance = 0.0
/// [margins]                    # named equivalence margins
/// nuisance = 0.1
/// [eligibility]
/// excluded_pairs = []
/// min_pairs = 1
/// [bootstrap]
/// resamples = 10000
/// level = 0.95
/// equivalence_level = 0.90
/// seed = 0
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Plan {
    /// Branch-choice margin δ ≥ 0 on progress(b_w) − progress(b_other) (default 0.05).
    pub delta: f64,
    /// Registered action seeds (distinct). Empty: the records' seeds, which every pair must share.
    pub seeds: Vec<i64>,
    /// Executed-chunk distance for sensitivity.
    pub distance: Distance,
    /// Two chunks count as changed when their distance exceeds this (≥ 0, default 0: any change).
    pub action_change_tolerance: f64,
    /// Named equivalence margins (> 0) for the irrelevant-history control.
    pub margins: BTreeMap<String, f64>,
    /// Eligibility rules.
    pub eligibility: Eligibility,
    /// Bootstrap settings.
    pub bootstrap: BootstrapPlan,
    /// Where the plan came from (not part of the plan's content or hash).
    #[serde(skip)]
    pub source: PlanSource,
}

impl Default for Plan {
    fn default() -> Self {
        Self {
            delta: 0.05,
            seeds: Vec::new(),
            distance: Distance::L2,
            action_change_tolerance: 0.0,
            margins: BTreeMap::new(),
            eligibility: Eligibility::default(),
            bootstrap: BootstrapPlan::default(),
            source: PlanSource::Defaults,
        }
    }
}

impl Plan {
    /// Parses and checks plan text; `source` is [`PlanSource::File`].
    ///
    /// # Errors
    /// [`MemoryError::InvalidPlan`] for bad TOML, an unknown key or a value out of range.
    pub fn from_toml_str(text: &str) -> Result<Self, MemoryError> {
        let mut plan: Self = toml::from_str(text).map_err(|e| MemoryError::InvalidPlan {
            message: e.to_string().trim_end().to_owned(),
            path: None,
        })?;
        plan.source = PlanSource::File;
        plan.validate()?;
        Ok(plan)
    }

    /// Reads and checks a plan file.
    ///
    /// # Errors
    /// [`MemoryError::PlanIo`] when the file cannot be read; [`MemoryError::InvalidPlan`]
    /// (naming the file) as [`Plan::from_toml_str`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, MemoryError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| MemoryError::PlanIo {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml_str(&text).map_err(|e| match e {
            MemoryError::InvalidPlan { message, .. } => MemoryError::InvalidPlan {
                message,
                path: Some(path.to_path_buf()),
            },
            other => other,
        })
    }

    /// Checks every value's range.
    ///
    /// # Errors
    /// [`MemoryError::InvalidPlan`] naming the first offending key.
    pub fn validate(&self) -> Result<(), MemoryError> {
        let bad = |message: String| {
            Err(MemoryError::InvalidPlan {
                message,
                path: None,
            })
        };
        if !(self.delta.is_finite() && self.delta >= 0.0) {
            return bad(format!("delta must be finite and >= 0, got {}", self.delta));
        }
        if !(self.action_change_tolerance.is_finite() && self.action_change_tolerance >= 0.0) {
            return bad(format!(
                "action_change_tolerance must be finite and >= 0, got {}",
                self.action_change_tolerance
            ));
        }
        let distinct: BTreeSet<i64> = self.seeds.iter().copied().collect();
        if distinct.len() != self.seeds.len() {
            return bad("seeds must be distinct".to_owned());
        }
        for (name, margin) in &self.margins {
            if !(margin.is_finite() && *margin > 0.0) {
                return bad(format!(
                    "margins.{name} must be finite and > 0, got {margin}"
                ));
            }
        }
        if self.eligibility.min_pairs == 0 {
            return bad("eligibility.min_pairs must be >= 1".to_owned());
        }
        if let Some(t) = self.eligibility.hidden_state_tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return bad(format!(
                "eligibility.hidden_state_tolerance must be finite and >= 0, got {t}"
            ));
        }
        let b = &self.bootstrap;
        // The upper bound keeps a typo from asking for terabytes of resample indices.
        if !(100..=MAX_RESAMPLES).contains(&b.resamples) {
            return bad(format!(
                "bootstrap.resamples must be in 100..={MAX_RESAMPLES}, got {}",
                b.resamples
            ));
        }
        for (name, level) in [
            ("level", b.level),
            ("equivalence_level", b.equivalence_level),
        ] {
            if !(level.is_finite() && level > 0.0 && level < 1.0) {
                return bad(format!("bootstrap.{name} must be in (0, 1), got {level}"));
            }
        }
        Ok(())
    }

    /// Canonical SHA-256 of the plan's content: `sha256:` + 64 hex digits over a version tag
    /// and the plan serialized as compact JSON with a fixed key order (so comments, key order
    /// and spelling of the TOML do not matter, but every value does; `source` is excluded).
    pub fn hash(&self) -> String {
        // Serializing plain numbers, strings and maps cannot fail; an empty body would still
        // hash deterministically.
        let body = serde_json::to_vec(self).unwrap_or_default();
        let mut hasher = Sha256::new();
        hasher.update(b"roboaudit.memory.plan.v1\n");
        hasher.update(&body);
        let digest = hasher.finalize();
        let mut out = String::with_capacity(7 + 64);
        out.push_str("sha256:");
        for byte in digest {
            out.push_str(&format!("{byte:02x}"));
        }
        out
    }
}
