//! The lines a command shows about a served policy and an `fqe actions` run, as text (the
//! caller prints them), and the checks of `fqe actions`' settings that need no server.

use std::path::Path;
use std::time::Duration;

use crate::client::ClientConfig;
use crate::dataset_actions::{ActionsManifest, manifest_path, partial_dir};
use crate::error::PolicyClientError;

/// Most action samples per frame of `fqe actions`: each is a pass over every episode.
pub const MAX_SAMPLES: usize = 10_000;

/// Longest per-query timeout, in seconds (a day).
pub const MAX_TIMEOUT_S: f64 = 86_400.0;

/// What a server's declared roboaudit capabilities `caps` give, in words; `between` names what
/// a plain openpi server is not reset between (`episodes`, `rollouts`).
#[must_use]
pub fn describe_capabilities(caps: &[String], between: &str) -> String {
    if caps.is_empty() {
        format!(
            "a plain openpi server (no roboaudit extensions: no reset between {between}, no action seeds)"
        )
    } else {
        format!("roboaudit capabilities {}", caps.join(", "))
    }
}

/// A latency in milliseconds with two decimals (`12.35 ms`), or the "no value" glyph
/// ([`roboaudit_types::NO_VALUE`]) without queries.
#[must_use]
pub fn format_ms(v: Option<f64>) -> String {
    v.map_or(roboaudit_types::NO_VALUE.to_owned(), |x| {
        format!("{x:.2} ms")
    })
}

/// The connection settings of a `timeout` in seconds, in `(0, `[`MAX_TIMEOUT_S`]`]`.
///
/// # Errors
/// [`PolicyClientError::Invalid`] naming `--timeout` for a timeout out of range (NaN included).
pub fn client_config(timeout: f64, allow_remote: bool) -> Result<ClientConfig, PolicyClientError> {
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= MAX_TIMEOUT_S) {
        return Err(PolicyClientError::Invalid(format!(
            "--timeout must be in (0, 86400] seconds, got {timeout}"
        )));
    }
    Ok(ClientConfig {
        timeout: Duration::from_secs_f64(timeout),
        allow_remote,
    })
}

/// Checks `fqe actions`' sample count, `1..=`[`MAX_SAMPLES`].
///
/// # Errors
/// [`PolicyClientError::Invalid`] naming `--samples`.
pub fn check_samples(samples: usize) -> Result<(), PolicyClientError> {
    if samples == 0 || samples > MAX_SAMPLES {
        return Err(PolicyClientError::Invalid(format!(
            "--samples must be in 1..={MAX_SAMPLES}, got {samples}"
        )));
    }
    Ok(())
}

/// Refuses an output path that is an existing folder: the result is one file.
///
/// # Errors
/// [`PolicyClientError::Invalid`] naming `--out`.
pub fn check_out_file(out: &Path) -> Result<(), PolicyClientError> {
    if out.is_dir() {
        return Err(PolicyClientError::Invalid(format!(
            "--out {} is a folder; name the file to write",
            out.display()
        )));
    }
    Ok(())
}

/// What an `fqe actions` run that stopped leaves for a rerun: a parenthesized hint naming the
/// partial folder of `out` when it holds finished episodes, else nothing.
#[must_use]
pub fn stopped_hint(out: &Path) -> String {
    let partial = partial_dir(out);
    if partial.exists() {
        format!(
            " (finished episodes are kept in {}; rerun the same command to continue)",
            partial.display()
        )
    } else {
        String::new()
    }
}

/// The summary of a finished `fqe actions` run whose manifest is `m`, written to `out` from
/// `dataset`: episodes and frames, latency, the files written and the `fqe fit` option that
/// reads them; three lines, each ending in a newline.
#[must_use]
pub fn actions_summary(m: &ActionsManifest, dataset: &Path, out: &Path) -> String {
    let resumed = if m.resumed_episodes > 0 {
        format!(
            ", {} episodes resumed from an interrupted run",
            m.resumed_episodes
        )
    } else {
        String::new()
    };
    format!(
        "{} episodes, {} frames × {} samples (action width {}, chunks of {}){resumed}\n\
         latency per query: median {}, p95 {} (server's own inference: median {})\n\
         wrote {} and {}; use: roboaudit fqe fit --dataset {} --policy-actions {}={}\n",
        m.episodes,
        m.frames,
        m.config.samples,
        m.action_dim,
        m.action_horizon,
        format_ms(m.latency.median_ms),
        format_ms(m.latency.p95_ms),
        format_ms(m.latency.server_infer_median_ms),
        out.display(),
        manifest_path(out).display(),
        dataset.display(),
        m.config.name,
        out.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_and_latencies_read_as_words() {
        assert_eq!(
            describe_capabilities(&[], "episodes"),
            "a plain openpi server (no roboaudit extensions: no reset between episodes, no action seeds)"
        );
        let caps = vec!["reset".to_owned(), "action_seed".to_owned()];
        assert_eq!(
            describe_capabilities(&caps, "rollouts"),
            "roboaudit capabilities reset, action_seed"
        );
        assert_eq!(format_ms(Some(1.234_9)), "1.23 ms");
        assert_eq!(format_ms(None), roboaudit_types::NO_VALUE);
    }

    #[test]
    fn settings_are_checked_at_their_bounds() {
        assert!(check_samples(1).is_ok() && check_samples(MAX_SAMPLES).is_ok());
        for bad in [0, MAX_SAMPLES + 1] {
            assert_eq!(
                check_samples(bad).unwrap_err().to_string(),
                format!("--samples must be in 1..=10000, got {bad}")
            );
        }
        assert!(client_config(MAX_TIMEOUT_S, false).is_ok());
        assert_eq!(
            client_config(0.5, true).unwrap(),
            ClientConfig {
                timeout: Duration::from_millis(500),
                allow_remote: true
            }
        );
        for bad in [0.0, -1.0, f64::NAN, MAX_TIMEOUT_S + 1.0] {
            assert!(matches!(
                client_config(bad, false),
                Err(PolicyClientError::Invalid(_))
            ));
        }
    }
}
