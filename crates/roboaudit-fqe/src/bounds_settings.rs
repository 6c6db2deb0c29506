//! The bounds of the settings a user chooses for a fit, in one place: every config type's
//! `validate` checks its fields against these, and `roboaudit fqe fit` relies on those checks
//! alone. An error names the [`Setting`] and the bound it breaks.

use crate::error::{FqeError, Setting};
use crate::number::compact;

/// Most principal components: the raw-pixel encoder has 3,072 values, and more components than
/// that, or than frames, only add round-off directions.
pub const MAX_COMPONENTS: usize = 1024;
/// Most neural gradient steps (10⁷ steps is days on a CPU: a typo, not a plan); also the
/// longest target copy period.
pub const MAX_STEPS: usize = 10_000_000;
/// Most mini-batch rows per step.
pub const MAX_BATCH: usize = 65_536;
/// Widest hidden layer of the neural Q network: 4096² f32 weights with their target copy,
/// gradient and two AdamW moments are 335 MB per fit, and the fits of a pool run at once.
pub const MAX_HIDDEN: usize = 4096;
/// Most mini-batch rows × hidden units: a fit keeps about ten activation buffers of that many
/// f32 values (64 MB each at the bound), so the two bounds alone would allow 1 GB buffers and an
/// out-of-memory abort at 65,536 rows × 4,096 units.
pub const MAX_BATCH_WIDTH: usize = 1 << 24;
/// Most episode-bootstrap refits per policy.
pub const MAX_BOOTSTRAP: usize = 1000;
/// Most training seeds.
pub const MAX_SEEDS: usize = 100;
/// Most threads of a fit's pool: the pool is started before any work, and each thread reserves
/// its stack.
pub const MAX_THREADS: usize = 1024;
/// Most cross-validation folds of the success detector: more only repeats leave-one-out-like
/// fits at a higher cost.
pub const MAX_FOLDS: usize = 100;

/// `value` in `lo..=hi`, else a [`FqeError::Setting`] error.
pub(crate) fn check_count(
    setting: Setting,
    value: usize,
    lo: usize,
    hi: usize,
) -> Result<(), FqeError> {
    if (lo..=hi).contains(&value) {
        return Ok(());
    }
    Err(FqeError::setting(
        setting,
        format!("{value} is out of range {lo}..={hi}"),
    ))
}

/// Whether `gamma` is a discount γ the estimators, the ground truth and `fqe collect` take:
/// `(0, 1]` (SPEC §3). γ = 0 is not one: it makes the ground truth `V^π = E[γ^(T−1) · success]`
/// zero for every episode longer than one frame, so no error or ranking against it means
/// anything. NaN is not one either.
#[must_use]
pub fn is_discount(gamma: f64) -> bool {
    gamma > 0.0 && gamma <= 1.0
}

/// `value` in `(0, 1]`: a discount γ ([`is_discount`]).
pub(crate) fn check_discount(setting: Setting, value: f64) -> Result<(), FqeError> {
    if is_discount(value) {
        return Ok(());
    }
    Err(FqeError::setting(
        setting,
        format!("{} is out of range (0, 1]", compact(value)),
    ))
}

/// `value` in `[0, 1]` (a Polyak rate).
pub(crate) fn check_unit(setting: Setting, value: f64) -> Result<(), FqeError> {
    if (0.0..=1.0).contains(&value) {
        return Ok(());
    }
    Err(FqeError::setting(
        setting,
        format!("{} is out of range [0, 1]", compact(value)),
    ))
}

/// `value` finite and `> 0` (a ridge, a coverage threshold, the detector's `C`).
pub(crate) fn check_positive(setting: Setting, value: f64) -> Result<(), FqeError> {
    if value > 0.0 && value.is_finite() {
        return Ok(());
    }
    Err(FqeError::setting(
        setting,
        format!("{} must be a finite number > 0", compact(value)),
    ))
}

/// Principal components in `1..=`[`MAX_COMPONENTS`].
///
/// # Errors
/// [`FqeError::Setting`] naming [`Setting::Components`].
pub fn check_components(components: usize) -> Result<(), FqeError> {
    check_count(Setting::Components, components, 1, MAX_COMPONENTS)
}

/// Threads of a fit's pool in `1..=`[`MAX_THREADS`].
///
/// # Errors
/// [`FqeError::Setting`] naming [`Setting::Threads`].
pub fn check_threads(threads: usize) -> Result<(), FqeError> {
    check_count(Setting::Threads, threads, 1, MAX_THREADS)
}

/// Training seeds: 1..=[`MAX_SEEDS`] of them, each once (a repeated seed repeats a fit, and the
/// spread over seeds would count one run twice).
pub(crate) fn check_seeds(seeds: &[u64]) -> Result<(), FqeError> {
    if seeds.is_empty() || seeds.len() > MAX_SEEDS {
        return Err(FqeError::setting(
            Setting::Seeds,
            format!("lists {} seeds; give 1..={MAX_SEEDS}", seeds.len()),
        ));
    }
    for (k, seed) in seeds.iter().enumerate() {
        if seeds[..k].contains(seed) {
            return Err(FqeError::setting(
                Setting::Seeds,
                format!(
                    "lists seed {seed} twice: each seed is one training run, so a repeat would count one run twice in the spread"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FitConfig, LinearFqeConfig, NeuralFqeConfig};

    fn config() -> FitConfig {
        FitConfig {
            neural: Some(NeuralFqeConfig::default()),
            linear: LinearFqeConfig::default(),
            seeds: vec![0, 1, 2],
            bootstrap: 0,
            coverage_threshold: crate::DEFAULT_COVERAGE_THRESHOLD,
        }
    }

    /// The setting at fault and the message that follows its name.
    fn fault(c: &FitConfig) -> (Setting, String) {
        match c.validate() {
            Err(FqeError::Setting { setting, message }) => (setting, message),
            other => panic!("expected a setting error, got {other:?}"),
        }
    }

    #[test]
    fn each_bound_is_checked_inclusively_and_names_its_setting() {
        assert!(config().validate().is_ok());
        let mut c = config();
        c.neural.as_mut().unwrap().batch_size = MAX_BATCH;
        c.bootstrap = MAX_BOOTSTRAP;
        c.seeds = (0..MAX_SEEDS as u64).collect();
        assert!(c.validate().is_ok(), "the bounds themselves are accepted");
        c.neural.as_mut().unwrap().batch_size = MAX_BATCH + 1;
        assert_eq!(
            fault(&c),
            (Setting::BatchSize, "65537 is out of range 1..=65536".into())
        );
        let mut c = config();
        c.bootstrap = MAX_BOOTSTRAP + 1;
        assert_eq!(
            fault(&c),
            (Setting::Bootstrap, "1001 is out of range 0..=1000".into())
        );
        // Refits are neural fits: without neural FQE any bootstrap is refused, none is fine.
        c.neural = None;
        c.bootstrap = 5;
        assert_eq!(
            fault(&c),
            (
                Setting::Bootstrap,
                "5 asks for neural FQE refits, but this fit runs no neural FQE".into()
            )
        );
        c.bootstrap = 0;
        assert!(c.validate().is_ok());
        let mut c = config();
        c.seeds = vec![4, 7, 4];
        let (setting, message) = fault(&c);
        assert_eq!(setting, Setting::Seeds);
        assert!(message.starts_with("lists seed 4 twice"), "{message}");
        c.seeds.clear();
        assert_eq!(
            fault(&c),
            (Setting::Seeds, "lists 0 seeds; give 1..=100".into())
        );
    }

    #[test]
    fn the_step_cap_of_auto_steps_is_named_max_steps() {
        let mut c = config();
        let n = c.neural.as_mut().unwrap();
        n.steps = 0;
        n.auto_steps = true;
        assert_eq!(fault(&c).0, Setting::MaxSteps);
        c.neural.as_mut().unwrap().auto_steps = false;
        assert_eq!(
            fault(&c),
            (Setting::Steps, "0 is out of range 1..=10000000".into())
        );
    }

    #[test]
    fn real_bounds_reject_nan_and_the_open_ends() {
        let mut c = config();
        c.linear.gamma = f64::NAN;
        assert_eq!(fault(&c).0, Setting::Gamma);
        let mut c = config();
        c.neural.as_mut().unwrap().learning_rate = 0.0;
        assert_eq!(
            fault(&c),
            (Setting::LearningRate, "0 is out of range (0, 1]".into())
        );
        c.neural.as_mut().unwrap().learning_rate = 1.0;
        assert!(c.validate().is_ok());
        c.linear.ridge = f64::INFINITY;
        assert_eq!(
            fault(&c),
            (Setting::Ridge, "inf must be a finite number > 0".into())
        );
        let mut c = config();
        c.coverage_threshold = 0.0;
        assert_eq!(fault(&c).0, Setting::CoverageThreshold);
        assert!(check_components(MAX_COMPONENTS).is_ok());
        assert!(check_components(0).is_err());
    }
}
