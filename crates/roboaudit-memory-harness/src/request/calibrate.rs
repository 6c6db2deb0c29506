//! The `memory calibrate` pipeline around [`crate::calibrate`]: the calibrators played by served
//! policies, the check that each calibrator had eligible pairs, and the table, file and failure
//! message of a finished calibration.

use super::RequestError;
use super::policy::{PolicySpec, connect_served};
use crate::calibrate::{Calibration, Calibrator, calibrate_each};
use crate::collect::CollectConfig;
use roboaudit_memory::Plan;
use roboaudit_policy_client::ServedOptions;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// File name of the calibration inside its output folder.
pub const CALIBRATION_FILE: &str = "calibration.json";

/// Runs the calibrators named by `specs` (`CALIBRATOR=ws://HOST:PORT` each, in order) through
/// their servers, reached with `settings` and `chunk_len` actions per chunk unless a server
/// declares its own; `on_step(calibrator, done, total)` counts pairs.
///
/// # Errors
/// [`RequestError::Usage`] for a spec without `=` or an unusable server,
/// [`RequestError::Harness`] for an unknown calibrator, a failed connection or run.
pub fn calibrate_served(
    specs: &[String],
    settings: &ServedOptions,
    chunk_len: usize,
    (cfg, plan): (&CollectConfig, &Plan),
    on_step: &mut dyn FnMut(Calibrator, usize, usize),
) -> Result<Calibration, RequestError> {
    let policies = specs.iter().map(|spec| {
        let Some((name, _)) = spec.split_once('=') else {
            return Err(RequestError::Usage(format!(
                "--served expects CALIBRATOR=ws://HOST:PORT, got `{spec}`"
            )));
        };
        let calibrator = Calibrator::parse(name)?;
        // An address that is not `ws://…` is named by the whole spec, as a `--policy` is.
        let (name, url) = match PolicySpec::parse(spec) {
            PolicySpec::Served { name, url } => (name, url),
            _ => (spec.clone(), spec.clone()),
        };
        Ok((
            calibrator,
            connect_served(settings, &name, &url, chunk_len)?,
        ))
    });
    calibrate_each(cfg, plan, policies, on_step)
}

/// Refuses a calibration in which some calibrator had no eligible pair: its metrics are
/// undefined, which would read as "the audit did not recover a known answer", while the cause
/// is the present-check tolerances of `cfg` (or too few pairs).
///
/// # Errors
/// [`RequestError::Usage`] naming the calibrators, the tolerances and the pairs.
pub fn check_eligible(cal: &Calibration, cfg: &CollectConfig) -> Result<(), RequestError> {
    let empty: Vec<&str> = cal
        .results
        .iter()
        .filter(|r| r.n_pairs > 0 && r.n_excluded >= r.n_pairs)
        .map(|r| r.calibrator.name())
        .collect();
    if empty.is_empty() {
        return Ok(());
    }
    Err(RequestError::Usage(format!(
        "no pair passed the present check for calibrator(s) {}: every pair was excluded, so nothing could be calibrated; the present-check tolerances --tol-position {} m and --tol-joint {} rad are too tight (0 excludes any difference) for this --expert-skill, or --pairs {} is too few",
        empty.join(", "),
        cfg.tolerance.position_m,
        cfg.tolerance.joint_rad,
        cfg.pairs
    )))
}

/// The calibration as a fixed-width table, one line per check: calibrator, metric, expected,
/// got (6 decimals, or `undefined`), `yes`/`NO`; each line ends in a newline.
pub fn calibration_table(cal: &Calibration) -> String {
    let mut s = format!(
        "{:<10} {:<20} {:>10} {:>12}  ok\n",
        "calibrator", "metric", "expected", "got"
    );
    for r in &cal.results {
        for c in &r.checks {
            let got = c.got.map_or("undefined".to_owned(), |g| format!("{g:.6}"));
            let _ = writeln!(
                s,
                "{:<10} {:<20} {:>10} {:>12}  {}",
                r.calibrator.name(),
                c.metric,
                c.expected,
                got,
                if c.passed { "yes" } else { "NO" }
            );
        }
    }
    s
}

/// Writes [`CALIBRATION_FILE`] into `dir` (created if missing) and returns its path.
///
/// # Errors
/// [`RequestError::Serialize`], or [`RequestError::Write`] for the folder or file.
pub fn write_calibration(dir: &Path, cal: &Calibration) -> Result<PathBuf, RequestError> {
    roboaudit_data::atomic::create_dir(dir)?;
    let path = dir.join(CALIBRATION_FILE);
    let json = serde_json::to_vec_pretty(cal).map_err(|source| RequestError::Serialize {
        what: "calibration",
        source,
    })?;
    roboaudit_data::atomic::write_atomic(&path, &json)?;
    Ok(path)
}

/// Why a calibration failed, naming every failed check (`calibrator `x`: metric expected E, got
/// G`); `None` when every calibrator recovered its known answer.
pub fn calibration_failure(cal: &Calibration) -> Option<String> {
    if cal.passed {
        return None;
    }
    let failures: Vec<String> = cal
        .results
        .iter()
        .flat_map(|r| {
            r.checks.iter().filter(|c| !c.passed).map(move |c| {
                format!(
                    "calibrator `{}`: {} expected {}, got {}",
                    r.calibrator.name(),
                    c.metric,
                    c.expected,
                    c.got.map_or("undefined".to_owned(), |g| g.to_string())
                )
            })
        })
        .collect();
    Some(format!(
        "calibration failed, the audit did not recover a known answer: {}",
        failures.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{CalibratorResult, Check};

    fn calibration(got: Option<f64>, passed: bool, excluded: usize) -> Calibration {
        Calibration {
            plan_hash: "h".into(),
            results: vec![CalibratorResult {
                calibrator: Calibrator::Faithful,
                n_pairs: 2,
                n_excluded: excluded,
                checks: vec![Check {
                    metric: "faithfulness".into(),
                    expected: "= 1".into(),
                    got,
                    passed,
                }],
                passed,
            }],
            passed,
        }
    }

    #[test]
    fn the_table_has_one_line_per_check() {
        let table = calibration_table(&calibration(Some(1.0), true, 0));
        assert_eq!(
            table,
            "calibrator metric                 expected          got  ok\n\
             faithful   faithfulness                = 1     1.000000  yes\n"
        );
        assert!(calibration_table(&calibration(None, false, 0)).contains("undefined  NO"));
    }

    #[test]
    fn a_failure_names_each_failed_check() {
        assert_eq!(calibration_failure(&calibration(Some(1.0), true, 0)), None);
        assert_eq!(
            calibration_failure(&calibration(Some(0.5), false, 0)).unwrap(),
            "calibration failed, the audit did not recover a known answer: calibrator `faithful`: faithfulness expected = 1, got 0.5"
        );
    }

    #[test]
    fn a_calibrator_without_eligible_pairs_is_refused() {
        let cfg = CollectConfig::default();
        assert!(check_eligible(&calibration(Some(1.0), true, 1), &cfg).is_ok());
        let err = check_eligible(&calibration(None, false, 2), &cfg).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("no pair passed the present check for calibrator(s) faithful"),
            "{err}"
        );
    }
}
