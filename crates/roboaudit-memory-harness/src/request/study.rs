//! The `memory intervene` and `memory natural` pipelines around the harness's studies: the
//! checks of a request, the unsharded run, and the lines and files a finished study gives.

use super::RequestError;
use super::policy::{PolicySpec, latency_line};
use crate::builtin::PolicyParams;
use crate::intervals::BootstrapSettings;
use crate::intervene::{
    InterventionConfig, InterventionStudy, StudyKind, replacement_study, restoration_study,
};
use crate::natural::{NaturalConfig, NaturalStudy};
use crate::policy::MemoryPolicy;
use crate::served::ServedPolicy;
use roboaudit_memory::interventions::CohortSettings;
use roboaudit_testbed::TaskKind;
use std::fmt::Write as _;
use std::path::Path;

/// The settings of one native-rollout study (`memory intervene`, `memory natural`) beside its
/// task and policy: what the command line gives.
#[derive(Debug, Clone, PartialEq)]
pub struct StudySettings {
    /// Recipient (intervene) or natural (natural) episodes, 1 to [`super::MAX_UNITS`].
    pub episodes: usize,
    /// Master seed of layouts and episodes.
    pub seed: u64,
    /// Bootstrap resamples of the layout-stratified intervals.
    pub resamples: usize,
    /// Seed of the bootstrap resampling.
    pub bootstrap_seed: u64,
}

impl StudySettings {
    fn bootstrap(&self) -> BootstrapSettings {
        BootstrapSettings {
            resamples: self.resamples,
            seed: self.bootstrap_seed,
            ..BootstrapSettings::default()
        }
    }

    /// The cohort of `task` these settings name; the rest as the defaults.
    fn cohort(&self, task: TaskKind) -> CohortSettings {
        CohortSettings {
            task,
            seed: self.seed,
            ..CohortSettings::with_episodes(self.episodes)
        }
    }
}

/// The intervention study `study` (`replacement` or `restoration`) of `task`: its kind and
/// configuration, checked before any policy is opened. `fault_chunks` belongs to restoration
/// (default 1, see [`check_fault_chunks`]; `chunk_len` from `params`); a served policy cannot be
/// sharded (its answers cannot be shown to be the same in every shard's process).
///
/// # Errors
/// [`RequestError::Usage`] for `--fault-chunks` with replacement or out of range, an unknown
/// study, or a sharded served policy.
pub fn intervention_config(
    study: &str,
    task: TaskKind,
    settings: &StudySettings,
    fault_chunks: Option<usize>,
    (spec, params, sharded): (&PolicySpec, &PolicyParams, bool),
) -> Result<(StudyKind, InterventionConfig), RequestError> {
    let fault_chunks = match (study, fault_chunks) {
        ("restoration", given) => {
            let chunks = given.unwrap_or(1);
            check_fault_chunks(chunks, task, params.chunk_len)?;
            chunks
        }
        ("replacement", Some(_)) => {
            return Err(RequestError::Usage(
                "--fault-chunks sets the restoration study's fault; --study replacement injects none"
                    .into(),
            ));
        }
        _ => 1,
    };
    let kind = match study {
        "replacement" => StudyKind::Replacement,
        "restoration" => StudyKind::Restoration,
        other => {
            return Err(RequestError::Usage(format!(
                "unknown study `{other}`; valid: replacement, restoration"
            )));
        }
    };
    if sharded && spec.is_served() {
        return Err(RequestError::Usage(
            "--shard takes built-in policies only: a served policy's answers cannot be shown to be the same in every shard's process; run it unsharded".into(),
        ));
    }
    let cfg = InterventionConfig {
        cohort: settings.cohort(task),
        fault_chunks,
        bootstrap: settings.bootstrap(),
    };
    Ok((kind, cfg))
}

/// Refuses a `--fault-chunks` that cannot lead to a restoration: 0 (the restoration would
/// coincide with the fault) or more chunks than the task's step limit allows at all, i.e. above
/// `max(1, ⌈max_steps / chunk_len⌉ − 1)`. A value in range can still exceed what an episode
/// runs after its lift event; the study then fails.
///
/// # Errors
/// [`RequestError::Usage`] naming the range for the task.
pub fn check_fault_chunks(
    fault_chunks: usize,
    task: TaskKind,
    chunk_len: usize,
) -> Result<(), RequestError> {
    let max = task
        .max_steps()
        .div_ceil(chunk_len.max(1))
        .saturating_sub(1)
        .max(1);
    if !(1..=max).contains(&fault_chunks) {
        return Err(RequestError::Usage(format!(
            "--fault-chunks must be in 1..={max} for {} (its episodes end after at most {} steps of {chunk_len}-action chunks, and the restoration query must come after the fault chunks), got {fault_chunks}",
            task.name(),
            task.max_steps()
        )));
    }
    Ok(())
}

/// Refuses a served policy whose memory is not native: the interventions replace and restore
/// named memory components, which needs the capabilities `memory_get` and `memory_set`.
///
/// # Errors
/// [`RequestError::Usage`] naming the server and what it declares.
pub fn require_native_memory(policy: &ServedPolicy) -> Result<(), RequestError> {
    if policy.has_native_memory() {
        return Ok(());
    }
    let c = policy.client();
    Err(RequestError::Usage(format!(
        "memory intervene cannot run the served policy at {}: native interventions replace and restore named memory components, which needs the roboaudit capabilities memory_get and memory_set, and the server declares only {:?}; memory collect and memory calibrate need only reset",
        c.url(),
        c.capabilities()
    )))
}

/// Runs the unsharded intervention study `kind` of `cfg` with `policy`.
///
/// # Errors
/// [`RequestError::Harness`] from the study.
pub fn intervention_study(
    kind: StudyKind,
    cfg: &InterventionConfig,
    policy: &mut dyn MemoryPolicy,
) -> Result<InterventionStudy, RequestError> {
    Ok(match kind {
        StudyKind::Replacement => replacement_study(cfg, policy),
        StudyKind::Restoration => restoration_study(cfg, policy),
    }?)
}

/// What `memory intervene` prints of a finished study: a served policy's latency line, the
/// study line (policy `policy`, recipients run and skipped), the table
/// ([`crate::intervene_output::table`]) and whether the own-history reconstruction reproduces
/// the native memory (replacement).
pub fn intervention_text(
    study: &InterventionStudy,
    policy: &str,
    cfg: &InterventionConfig,
    served: Option<&ServedPolicy>,
) -> String {
    let mut s = served.map_or_else(String::new, |p| format!("{}\n", latency_line(p)));
    let _ = writeln!(
        s,
        "{} study, {} on {}: {} recipients ({} skipped before any query)",
        study.study,
        policy,
        cfg.cohort.task.name(),
        cfg.cohort.episodes - study.skipped,
        study.skipped
    );
    s.push_str(&crate::intervene_output::table(study));
    if let Some(ok) = study.own_reproduces_native {
        let _ = writeln!(
            s,
            "own-history reconstruction reproduces the native memory: {ok}"
        );
    }
    s
}

/// Writes `interventions.json` and `interventions.md` into `out` (created if missing) and
/// returns the line naming them.
///
/// # Errors
/// [`RequestError::Write`] for the folder, [`RequestError::Harness`] for the files.
pub fn write_intervention(
    out: &Path,
    study: &InterventionStudy,
    policy: &str,
) -> Result<String, RequestError> {
    roboaudit_data::atomic::create_dir(out)?;
    let (path, md) = crate::intervene_output::write_study(out, study, policy)?;
    Ok(format!("wrote {} and {}", path.display(), md.display()))
}

/// The natural study of `task`, checked ([`crate::natural::prepare`]) before any policy is
/// opened; a served policy cannot be sharded.
///
/// # Errors
/// [`RequestError::Harness`] for the configuration, [`RequestError::Usage`] for a sharded
/// served policy.
pub fn natural_config(
    task: TaskKind,
    settings: &StudySettings,
    spec: &PolicySpec,
    sharded: bool,
) -> Result<NaturalConfig, RequestError> {
    let cfg = NaturalConfig {
        cohort: settings.cohort(task),
        bootstrap: settings.bootstrap(),
    };
    crate::natural::prepare(&cfg)?;
    if sharded && spec.is_served() {
        return Err(RequestError::Usage(
            "--shard takes built-in and learned policies only: a served policy's answers cannot be shown to be the same in every shard's process; run it unsharded".into(),
        ));
    }
    Ok(cfg)
}

/// What `memory natural` prints of a finished study: a served policy's latency line, the study
/// line (`seconds`: the run's wall time) and the text summary
/// ([`roboaudit_memory::natural::text_summary`]).
pub fn natural_text(study: &NaturalStudy, seconds: f64, served: Option<&ServedPolicy>) -> String {
    let mut s = served.map_or_else(String::new, |p| format!("{}\n", latency_line(p)));
    let _ = writeln!(
        s,
        "natural study, {} on {}: {} episodes in {seconds:.1} s",
        study.policy,
        study.config.cohort.task.name(),
        study.config.cohort.episodes,
    );
    s.push_str(&roboaudit_memory::natural::text_summary(study));
    s
}

/// Writes `natural.json` and `natural.md` into `out` (created if missing) and returns the line
/// naming them.
///
/// # Errors
/// [`RequestError::Write`] for the folder, [`RequestError::Harness`] for the files.
pub fn write_natural(out: &Path, study: &NaturalStudy) -> Result<String, RequestError> {
    roboaudit_data::atomic::create_dir(out)?;
    let (path, md) = crate::natural::write_study(out, study)?;
    Ok(format!("wrote {} and {}", path.display(), md.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> StudySettings {
        StudySettings {
            episodes: 2,
            seed: 0,
            resamples: 100,
            bootstrap_seed: 0,
        }
    }

    #[test]
    fn fault_chunks_end_before_the_step_limit() {
        let task = TaskKind::PutBack;
        let max = task.max_steps().div_ceil(12) - 1;
        assert!(check_fault_chunks(1, task, 12).is_ok());
        assert!(check_fault_chunks(max, task, 12).is_ok());
        assert!(check_fault_chunks(0, task, 12).is_err());
        let err = check_fault_chunks(max + 1, task, 12).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("--fault-chunks must be in 1..={max} for put_back")),
            "{err}"
        );
    }

    #[test]
    fn fault_chunks_belong_to_restoration() {
        let bank = PolicySpec::parse("bank");
        let params = PolicyParams::default();
        let policy = (&bank, &params, false);
        let (kind, cfg) =
            intervention_config("restoration", TaskKind::PutBack, &settings(), None, policy)
                .unwrap();
        assert_eq!((kind, cfg.fault_chunks), (StudyKind::Restoration, 1));
        let err = intervention_config(
            "replacement",
            TaskKind::PutBack,
            &settings(),
            Some(2),
            policy,
        )
        .unwrap_err();
        assert!(err.to_string().contains("injects none"), "{err}");
        let err =
            intervention_config("other", TaskKind::PutBack, &settings(), None, policy).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown study `other`; valid: replacement, restoration"
        );
        let served = PolicySpec::parse("ws://127.0.0.1:1");
        let err = intervention_config(
            "replacement",
            TaskKind::PutBack,
            &settings(),
            None,
            (&served, &params, true),
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("--shard takes built-in"),
            "{err}"
        );
    }

    #[test]
    fn a_served_natural_study_is_never_sharded() {
        let served = PolicySpec::parse("ws://127.0.0.1:1");
        assert!(natural_config(TaskKind::PutBack, &settings(), &served, false).is_ok());
        let err = natural_config(TaskKind::PutBack, &settings(), &served, true).unwrap_err();
        assert!(err.to_string().contains("built-in and learned"), "{err}");
    }
}
