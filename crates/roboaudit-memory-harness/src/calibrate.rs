//! Known-answer calibration (SPEC.md §2; seed 002 §IV-D1): every calibrator runs through the
//! whole pipeline ([`collect`] then [`roboaudit_memory::analyze`]) and its known answers are
//! compared with what the audit recovered.

use roboaudit_memory::{MemoryAudit, Plan, analyze};
use serde::{Deserialize, Serialize};

use crate::builtin::{BuiltinPolicy, PolicyKind, PolicyParams};
use crate::collect::{CollectConfig, Reuse, collect};
use crate::error::HarnessError;

/// Largest absolute difference accepted for an exact answer (floating-point summation only).
pub const EXACT: f64 = 1e-12;

/// A calibrator: a built-in policy with a known audit answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Calibrator {
    /// Memory-faithful: F = 1, correct-choice 1, every eligible pair reliable, U1 > 0.
    Faithful,
    /// Memory-blind: F = 0, U1 = 0, S = 0.
    Blind,
    /// Anti-faithful: F = −1, correct-choice 0, no pair reliable, U1 < 0.
    Anti,
    /// One genuine (faithful) chunk reused across balanced pseudo-memory labels: F = U1 = S = 0.
    Reused,
    /// Memory-independent random choice: F = U1 = S = 0.
    Random,
}

impl Calibrator {
    /// Every calibrator, in the order they run.
    pub const ALL: [Calibrator; 5] = [
        Calibrator::Faithful,
        Calibrator::Blind,
        Calibrator::Anti,
        Calibrator::Reused,
        Calibrator::Random,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Calibrator::Faithful => "faithful",
            Calibrator::Blind => "blind",
            Calibrator::Anti => "anti",
            Calibrator::Reused => "reused",
            Calibrator::Random => "random",
        }
    }

    /// Parses a [`Calibrator::name`].
    ///
    /// # Errors
    /// [`HarnessError::InvalidConfig`] listing the valid names.
    pub fn parse(s: &str) -> Result<Calibrator, HarnessError> {
        Calibrator::ALL
            .into_iter()
            .find(|c| c.name() == s.trim())
            .ok_or_else(|| {
                HarnessError::InvalidConfig(format!(
                    "unknown calibrator `{s}`; valid: faithful, blind, anti, reused, random"
                ))
            })
    }

    fn policy(self) -> (PolicyKind, Reuse) {
        match self {
            Calibrator::Faithful => (PolicyKind::Faithful, Reuse::Never),
            Calibrator::Blind => (PolicyKind::Blind, Reuse::Never),
            Calibrator::Anti => (PolicyKind::Anti, Reuse::Never),
            Calibrator::Reused => (PolicyKind::Faithful, Reuse::Balanced),
            Calibrator::Random => (PolicyKind::Random, Reuse::Never),
        }
    }
}

/// One compared answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Metric name as in `audit.json` (`faithfulness`, `u1`, `sensitivity`, …).
    pub metric: String,
    /// What was expected, in words (`= 1`, `> 0`).
    pub expected: String,
    /// What the audit gave (`None`: undefined).
    pub got: Option<f64>,
    /// Whether it matched.
    pub passed: bool,
}

/// One calibrator's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratorResult {
    /// The calibrator.
    pub calibrator: Calibrator,
    /// Pairs constructed.
    pub n_pairs: usize,
    /// Pairs excluded by the present check.
    pub n_excluded: usize,
    /// Compared answers.
    pub checks: Vec<Check>,
    /// All checks passed.
    pub passed: bool,
}

/// Results of every calibrator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Plan hash of the audits.
    pub plan_hash: String,
    /// Per calibrator.
    pub results: Vec<CalibratorResult>,
    /// Every calibrator passed.
    pub passed: bool,
}

impl Calibration {
    /// The calibration of `results` under the plan whose hash is `plan_hash`: passed when
    /// every calibrator did.
    #[must_use]
    pub fn new(plan_hash: String, results: Vec<CalibratorResult>) -> Self {
        Self {
            plan_hash,
            passed: results.iter().all(|r| r.passed),
            results,
        }
    }
}

enum Want {
    Exact(f64),
    Above(f64),
    Below(f64),
}

fn check(metric: &str, want: Want, got: Option<f64>) -> Check {
    let (expected, passed) = match want {
        Want::Exact(x) => (
            format!("= {x}"),
            got.is_some_and(|g| (g - x).abs() <= EXACT),
        ),
        Want::Above(x) => (format!("> {x}"), got.is_some_and(|g| g > x)),
        Want::Below(x) => (format!("< {x}"), got.is_some_and(|g| g < x)),
    };
    Check {
        metric: metric.into(),
        expected,
        got,
        passed,
    }
}

/// The checks of `calibrator` against an audit.
pub fn expected_checks(calibrator: Calibrator, audit: &MemoryAudit) -> Vec<Check> {
    let f = audit.faithfulness.value;
    let u1 = audit.u1.value;
    let eligible = audit.n_pairs as f64;
    let reliable = Some(audit.reliable_pairs.bidirectional as f64);
    match calibrator {
        Calibrator::Faithful => vec![
            check("faithfulness", Want::Exact(1.0), f),
            check(
                "correct_choice_rate",
                Want::Exact(1.0),
                audit.correct_choice_rate,
            ),
            check("reliable_pairs", Want::Exact(eligible), reliable),
            check("u1", Want::Above(0.0), u1),
        ],
        Calibrator::Anti => vec![
            check("faithfulness", Want::Exact(-1.0), f),
            check(
                "correct_choice_rate",
                Want::Exact(0.0),
                audit.correct_choice_rate,
            ),
            check("reliable_pairs", Want::Exact(0.0), reliable),
            check("u1", Want::Below(0.0), u1),
        ],
        Calibrator::Blind | Calibrator::Reused | Calibrator::Random => vec![
            check("faithfulness", Want::Exact(0.0), f),
            check("u1", Want::Exact(0.0), u1),
            check("sensitivity", Want::Exact(0.0), audit.sensitivity),
        ],
    }
}

/// Runs one calibrator played by `policy` (a built-in, or the same calibrator served by another
/// process, to prove that path) through collect and audit, and compares its known answers.
/// `cfg.reuse` is set as the calibrator needs (`reused` plays a faithful policy's chunks).
///
/// # Errors
/// Errors of [`collect`] and [`analyze`].
pub fn calibrate_policy(
    cfg: &CollectConfig,
    calibrator: Calibrator,
    policy: &mut dyn crate::policy::MemoryPolicy,
    plan: &Plan,
    on_step: &mut dyn FnMut(Calibrator, usize, usize),
) -> Result<CalibratorResult, HarnessError> {
    let (_, reuse) = calibrator.policy();
    let run_cfg = CollectConfig {
        reuse,
        ..cfg.clone()
    };
    let run = collect(&run_cfg, policy, &mut |d, t| on_step(calibrator, d, t))?;
    let audit = analyze(&run.records, plan)?;
    let checks = expected_checks(calibrator, &audit);
    Ok(CalibratorResult {
        calibrator,
        n_pairs: run.manifest.n_pairs,
        n_excluded: run.manifest.n_excluded,
        passed: checks.iter().all(|c| c.passed),
        checks,
    })
}

/// Runs every calibrator with `cfg` (its `reuse` is set per calibrator) and `params`, audits
/// under `plan`, and compares. `on_step(calibrator, done_pairs, total_pairs)` reports progress.
///
/// # Errors
/// Errors of [`collect`] and [`analyze`]. A calibrator that misses its answer is not an error:
/// see [`Calibration::passed`].
pub fn calibrate(
    cfg: &CollectConfig,
    params: &PolicyParams,
    plan: &Plan,
    on_step: &mut dyn FnMut(Calibrator, usize, usize),
) -> Result<Calibration, HarnessError> {
    let policies = Calibrator::ALL.into_iter().map(|calibrator| {
        let (kind, _) = calibrator.policy();
        Ok::<_, HarnessError>((calibrator, BuiltinPolicy::new(kind, params.clone())?))
    });
    calibrate_each(cfg, plan, policies, on_step)
}

/// Runs each calibrator that `policies` yields with its policy, in order, as
/// [`calibrate_policy`] does, and compares: the calibration of them all under `plan`. The
/// policies are made one at a time, when a calibrator's turn comes (a server is connected only
/// once the calibrators before it have run).
///
/// # Errors
/// The first error of `policies`, or of [`calibrate_policy`].
pub(crate) fn calibrate_each<P, E>(
    cfg: &CollectConfig,
    plan: &Plan,
    policies: impl IntoIterator<Item = Result<(Calibrator, P), E>>,
    on_step: &mut dyn FnMut(Calibrator, usize, usize),
) -> Result<Calibration, E>
where
    P: crate::policy::MemoryPolicy,
    E: From<HarnessError>,
{
    let mut results = Vec::new();
    for next in policies {
        let (calibrator, mut policy) = next?;
        results.push(calibrate_policy(
            cfg,
            calibrator,
            &mut policy,
            plan,
            on_step,
        )?);
    }
    Ok(Calibration::new(plan.hash(), results))
}
