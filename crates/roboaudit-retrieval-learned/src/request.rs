//! The `retrieval collect` pipeline with its mechanism chosen: `replay` runs the harness's own
//! [`run_collect`], `policy` and `policy-dr` run [`run_collect_with`] a [`PolicyReuse`] of the run
//! folder (here, above the harness, so that candle stays out of it). [`policy_checks`] renders each
//! trained policy's own-base check (seed 000 §VII) from the run's `collect.json`.

use std::fmt::Write as _;
use std::path::Path;

use roboaudit_retrieval_collect::request::{
    CollectObserver, CollectRequest, RequestError, run_collect, run_collect_with,
};
use roboaudit_retrieval_collect::{
    CollectConfig, CollectOutcome, MANIFEST_FILE, Manifest, Mechanism, RunOptions,
};

use crate::config::{TrainConfig, policy_dr};
use crate::reuse::{PolicyManifest, PolicyReuse};

/// Runs (or resumes) the collection `config` (checked by [`CollectRequest::config`]) into
/// `req.out` with `config.mechanism`: [`collect`] with the request's options.
///
/// # Errors
/// As [`collect`].
pub fn collect_request(
    config: &CollectConfig,
    req: &CollectRequest,
    obs: &dyn CollectObserver,
) -> Result<CollectOutcome, RequestError> {
    collect(config, &req.out, &req.options(), obs)
}

/// Runs (or resumes) the collection `config` into `out` with `config.mechanism`: Replay, or
/// per-experience policies trained with the collection's master seed and the default
/// [`TrainConfig`] (Policy) or [`policy_dr`] of the task (Policy+DR).
///
/// # Errors
/// [`RequestError::Usage`] when the policy training settings are out of range (before any
/// work), else as [`run_collect`].
pub fn collect(
    config: &CollectConfig,
    out: &Path,
    options: &RunOptions,
    obs: &dyn CollectObserver,
) -> Result<CollectOutcome, RequestError> {
    match config.mechanism {
        Mechanism::Replay => run_collect(config, out, options, obs),
        Mechanism::Policy | Mechanism::PolicyDr => {
            let train = match config.mechanism {
                Mechanism::PolicyDr => policy_dr(config.task.name()),
                _ => TrainConfig::default(),
            };
            let reuse = PolicyReuse::new(out, config.seed, train)
                .map_err(|e| RequestError::Usage(roboaudit_types::error_chain(&e)))?;
            run_collect_with(config, out, options, obs, &reuse)
        }
    }
}

/// One line per trained policy in run folder `dir` (its folder, candidate, experience, own-base
/// verdict, final training loss, training steps and samples, the first 16 hex digits of its
/// weights' SHA-256), then how many of the policies the library examined were rejected; each line
/// ends in a newline. Empty when `collect.json` records no reuse section (the `replay` mechanism).
///
/// # Errors
/// `collect.json` cannot be read, or does not parse as a manifest with a policy section
/// (kind [`std::io::ErrorKind::InvalidData`]).
pub fn policy_checks(dir: &Path) -> Result<String, std::io::Error> {
    let bytes = std::fs::read(dir.join(MANIFEST_FILE))?;
    let manifest: Manifest = serde_json::from_slice(&bytes)?;
    let Some(reuse) = manifest.reuse else {
        return Ok(String::new());
    };
    let m: PolicyManifest = serde_json::from_value(reuse)?;
    Ok(render_policy_checks(&m, manifest.library.attempts))
}

/// [`policy_checks`] of a policy section whose library recorded `attempts` candidates.
fn render_policy_checks(m: &PolicyManifest, attempts: usize) -> String {
    let mut out = String::new();
    for p in &m.policies {
        // Candidates are recorded in batches: one past the last the library needed is not used.
        let verdict = match (p.own_base_success, p.candidate < attempts) {
            (_, false) => "not needed (beyond the pool)",
            (true, true) => "reproduced",
            (false, true) => "FAILED (rejected)",
        };
        let _ = writeln!(
            out,
            "policy {} (candidate {}{}): own base {verdict}, training loss {:.2e} after {} steps on {} samples, weights sha256 {}",
            p.dir,
            p.candidate,
            p.experience_id
                .as_ref()
                .map(|e| format!(", {e}"))
                .unwrap_or_default(),
            p.final_loss,
            m.train.steps,
            p.samples,
            &p.weights_sha256[..16.min(p.weights_sha256.len())]
        );
    }
    // The policies whose own-base check counted: candidates the library examined.
    let checked = m.policies.iter().filter(|p| p.candidate < attempts).count();
    let _ = writeln!(
        out,
        "policy own-base check: {} of {checked} checked policies rejected (recording succeeded, trained policy failed in its base scene)",
        m.rejected
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reuse::PolicyRecord;

    #[test]
    fn each_policy_gets_its_verdict_and_a_short_hash() {
        let record = |candidate, id: Option<&str>, ok| PolicyRecord {
            candidate,
            experience_id: id.map(str::to_owned),
            dir: format!("policies/c{candidate:03}"),
            weights_sha256: "0123456789abcdef0123".into(),
            config_sha256: String::new(),
            samples: 40,
            final_loss: 0.00125,
            own_base_success: ok,
        };
        let m = PolicyManifest {
            mechanism: "policy".into(),
            train: TrainConfig::default(),
            policies: vec![
                record(0, Some("e00"), true),
                record(1, None, false),
                record(2, None, true),
            ],
            rejected: 1,
        };
        assert_eq!(
            render_policy_checks(&m, 2),
            "policy policies/c000 (candidate 0, e00): own base reproduced, training loss 1.25e-3 after 600 steps on 40 samples, weights sha256 0123456789abcdef\n\
             policy policies/c001 (candidate 1): own base FAILED (rejected), training loss 1.25e-3 after 600 steps on 40 samples, weights sha256 0123456789abcdef\n\
             policy policies/c002 (candidate 2): own base not needed (beyond the pool), training loss 1.25e-3 after 600 steps on 40 samples, weights sha256 0123456789abcdef\n\
             policy own-base check: 1 of 2 checked policies rejected (recording succeeded, trained policy failed in its base scene)\n"
        );
    }
}
