//! The whole `retrieval collect` pipeline: a request names the task, the mechanism and the
//! collection's sizes as a user typed them; [`collect_request`] parses and checks them
//! ([`CollectConfig::check`], once) and runs (or resumes) the collection ([`crate::collect`])
//! into the run folder, whose part files are written atomically. Progress goes to a
//! [`CollectObserver`]; nothing is printed here. [`unfinished_collect_note`] tells an audit
//! that fails on a run folder's executions whether a collection there is unfinished;
//! [`run_origin`] gives an audit of a finished one its task and mechanism.

use std::path::{Path, PathBuf};

use crate::collect::{CollectOutcome, MANIFEST_FILE, Progress, RunOptions, collect};
use crate::config::{AuditTask, CollectConfig, Mechanism};
use crate::error::CollectError;
use crate::manifest::Manifest;
use crate::shard::{part_count, part_files};
use roboaudit_shard::Shard;

/// Everything `retrieval collect` needs, as typed values (the task and mechanism as text, as
/// they are typed); each field's documentation is its command-line help, whose defaults are
/// [`CollectConfig::default`]'s. [`CollectRequest::config`] parses the task
/// ([`AuditTask::parse`]) and the mechanism ([`Mechanism::parse`]) and checks the sizes
/// ([`CollectConfig::check`]). `max_chunks` `None` runs to the end; `shard` `None` writes every
/// part.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CollectRequest {
    /// Task: stack or door.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = CollectConfig::default().task.name().to_owned())
    )]
    pub task: String,
    /// Reuse mechanism: replay (open-loop path retargeted to the first manipulated object) or
    /// policy (a behaviour-cloned closed-loop image policy per experience, trained on its own
    /// demonstration into DIR/policies/; one that fails in its own base scene is rejected) or
    /// policy-dr (the same, trained also on its demonstration re-run under 4 randomized
    /// appearances, Stack blocks moved by up to 1 cm).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = CollectConfig::default().mechanism.name().to_owned())
    )]
    pub mechanism: String,
    /// Pool size K: accepted experiences (nested libraries are its prefixes), 1 to 500.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().library))]
    pub library: usize,
    /// Query scenes (40 % appearance, 40 % layout, rest fresh), 3 to 400.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().scenes))]
    pub scenes: usize,
    /// Execution seeds per experience × scene cell, 1 to 100.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().seeds))]
    pub seeds: usize,
    /// Master seed of scenes, demonstrators and execution noise.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().seed))]
    pub seed: u64,
    /// Executions per part file of DIR/executions/ (a killed run loses at most one part's work).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().chunk))]
    pub chunk: usize,
    /// Stop after writing this many parts (a time-boxed run; rerun the same command to resume).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub max_chunks: Option<usize>,
    /// Run folder; an unfinished run with the same settings there is resumed.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Write only shard I of N (0-based; part files p with p mod N = I) and a shard.json, e.g. a
    /// Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge` joins the shards.
    #[cfg_attr(feature = "clap", arg(long, value_name = "I/N"))]
    pub shard: Option<Shard>,
}

/// Errors of a collect request, each with a whole message.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting out of range or an unknown name (a wrong option, not wrong data).
    #[error("{0}")]
    Usage(String),
    /// The run folder holds another or a damaged collection ([`CollectError::Resume`]).
    #[error("{0}")]
    Input(String),
    /// The collection failed (testbed, data, I/O, shard manifest).
    #[error(transparent)]
    Collect(CollectError),
}

impl From<CollectError> for RequestError {
    /// A configuration error or an occupied folder is a usage error, a resume refusal or a
    /// manifest that does not parse an input error, the rest stay collection errors.
    fn from(e: CollectError) -> Self {
        match e {
            CollectError::InvalidConfig(m) => Self::Usage(m),
            // A folder of someone else's files is a wrong --out, as in the other collections.
            CollectError::Occupied { .. } => Self::Usage(e.to_string()),
            CollectError::Resume { .. } => Self::Input(roboaudit_types::error_chain(&e)),
            // A run folder's manifest that does not parse is a damaged input file (writing one
            // fails only with an I/O error).
            CollectError::Manifest { ref source, .. } if !source.is_io() => {
                Self::Input(roboaudit_types::error_chain(&e))
            }
            other => Self::Collect(other),
        }
    }
}

/// Receives the stages of a collection while it runs (from the collection's threads).
pub trait CollectObserver: Sync {
    /// The collection entered stage `progress` (or advanced within the executions).
    fn progress(&self, progress: Progress);
}

impl<F: Fn(Progress) + Sync> CollectObserver for F {
    fn progress(&self, progress: Progress) {
        self(progress);
    }
}

impl CollectRequest {
    /// The checked configuration ([`AuditTask::parse`], [`Mechanism::parse`],
    /// [`CollectConfig::check`]).
    ///
    /// # Errors
    /// [`RequestError::Usage`] naming the first unknown name or setting out of range (a
    /// `max_chunks` of 0 included).
    pub fn config(&self) -> Result<CollectConfig, RequestError> {
        let usage = |e: CollectError| RequestError::Usage(roboaudit_types::error_chain(&e));
        let config = CollectConfig {
            task: AuditTask::parse(&self.task).map_err(usage)?,
            mechanism: Mechanism::parse(&self.mechanism).map_err(usage)?,
            library: self.library,
            scenes: self.scenes,
            seeds: self.seeds,
            seed: self.seed,
            chunk: self.chunk,
        };
        config.check().map_err(usage)?;
        if self.max_chunks == Some(0) {
            return Err(RequestError::Usage(
                "--max-chunks 0 would write nothing: give at least 1, or leave it out to run to the end"
                    .into(),
            ));
        }
        Ok(config)
    }

    /// How far the run goes and which parts it writes.
    #[must_use]
    pub fn options(&self) -> RunOptions {
        RunOptions {
            max_chunks: self.max_chunks,
            shard: self.shard,
        }
    }
}

/// Runs (or resumes) the collection a request names into `req.out`.
///
/// # Errors
/// [`RequestError::Usage`] for unknown names and settings out of range (before anything is
/// written), [`RequestError::Input`] when the folder holds another collection, else
/// [`RequestError::Collect`].
pub fn collect_request(
    req: &CollectRequest,
    obs: &dyn CollectObserver,
) -> Result<CollectOutcome, RequestError> {
    let config = req.config()?;
    run_collect(&config, &req.out, &req.options(), obs)
}

/// Runs (or resumes) the collection `config` into `dir` ([`crate::collect`]), its errors
/// classified as a [`RequestError`].
///
/// # Errors
/// As [`collect_request`].
pub fn run_collect(
    config: &CollectConfig,
    dir: &Path,
    options: &RunOptions,
    obs: &dyn CollectObserver,
) -> Result<CollectOutcome, RequestError> {
    Ok(collect(config, dir, options, &|p| obs.progress(p))?)
}

/// [`run_collect`] with a reuse mechanism built outside this crate ([`crate::collect_with`]),
/// e.g. the learned policies of `--mechanism policy`.
///
/// # Errors
/// As [`collect_request`].
pub fn run_collect_with(
    config: &CollectConfig,
    dir: &Path,
    options: &RunOptions,
    obs: &dyn CollectObserver,
    reuse: &dyn crate::reuse::Reuse,
) -> Result<CollectOutcome, RequestError> {
    Ok(crate::collect::collect_with(
        config,
        dir,
        options,
        &|p| obs.progress(p),
        reuse,
    )?)
}

/// A note for an audit of run folder `run` (failed on its execution log, or run on part of it),
/// when `run` holds the manifest of a `retrieval collect` that has not written all its part
/// files: the missing cells are then the collection's unfinished work, not a harness bug, and
/// the note says how to resume it (or, for one shard of a sharded collection, to merge). `None`
/// when there is no readable manifest or every part file is there (part files are counted, not
/// their rows: a part that does not read is not unfinished work).
#[must_use]
pub fn unfinished_collect_note(run: &Path) -> Option<String> {
    let manifest = crate::manifest::read_own(&run.join(MANIFEST_FILE)).ok()??;
    unfinished_note(run, &manifest)
}

/// [`unfinished_collect_note`] for the already read `manifest` of `run`.
fn unfinished_note(run: &Path, manifest: &Manifest) -> Option<String> {
    let c = &manifest.config;
    let total = part_count(c);
    let written = part_files().present(run).map_or(0, |p| p.len());
    if written >= total {
        return None;
    }
    // A shard holds only its own parts: resuming it cannot complete the matrix, merging can.
    if let Ok(Some(m)) = roboaudit_shard::ShardManifest::read(run) {
        return Some(format!(
            "{} holds shard {} of a sharded `retrieval collect` ({written} of the whole \
             collection's {total} part files of {} executions): merge the finished shards with \
             `roboaudit merge SHARD_FOLDERS… --out MERGED` and audit MERGED",
            run.display(),
            m.shard,
            manifest.total_executions,
        ));
    }
    let mechanism = c.mechanism.name();
    Some(format!(
        "{} holds an unfinished `retrieval collect` ({written} of {total} part files of {} executions written); resume it with `roboaudit retrieval collect --task {} --mechanism {mechanism} --library {} --scenes {} --seeds {} --seed {} --chunk {} --out {}` (without --max-chunks), then audit again",
        run.display(),
        manifest.total_executions,
        c.task.name(),
        c.library,
        c.scenes,
        c.seeds,
        c.seed,
        c.chunk,
        run.display()
    ))
}

/// The task and reuse mechanism of run folder `run`, from the `collect.json` of the
/// `retrieval collect` that wrote it, with its appearance-caused failures
/// ([`crate::appearance_caused_failures`]): what `retrieval audit --run` records in `audit.json`
/// so that `roboaudit report` names the section `task (mechanism)` and sets the audits of one
/// task under several mechanisms side by side. `None` for a path that is not a folder, a folder
/// without this harness's `collect.json` (a user's own run files, or another harness's manifest
/// such as the Meta-World bridge's) and a collection whose part files are not all there
/// (unfinished, or one shard before the merge: [`unfinished_collect_note`]).
///
/// # Errors
/// [`CollectError::Io`] or [`CollectError::Manifest`] when `collect.json` exists but does not
/// read ([`crate::manifest::read_own`]); the errors of [`crate::appearance_caused_failures`] (a
/// malformed table, named by file, row and column).
pub fn run_origin(run: &Path) -> Result<Option<roboaudit_types::TaskMechanism>, CollectError> {
    // A missing folder or a file given as one is the audit's to report, with its own message.
    if !run.is_dir() {
        return Ok(None);
    }
    let Some(manifest) = crate::manifest::read_own(&run.join(MANIFEST_FILE))? else {
        return Ok(None);
    };
    if unfinished_note(run, &manifest).is_some() {
        return Ok(None);
    }
    let config = &manifest.config;
    let failures = crate::appearance_caused_failures(config, run)?;
    Ok(Some(roboaudit_types::TaskMechanism {
        task: config.task.name().to_owned(),
        mechanism: config.mechanism.name().to_owned(),
        appearance_caused_failures: Some(failures),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> CollectRequest {
        CollectRequest {
            task: "stack".into(),
            mechanism: "replay".into(),
            library: 2,
            scenes: 4,
            seeds: 2,
            seed: 0,
            chunk: 2,
            max_chunks: None,
            shard: None,
            out: PathBuf::from("run"),
        }
    }

    /// Another harness's collect.json (the Meta-World bridge's) gives no origin; one that is
    /// not JSON, or this harness's schema with an unknown task, is an error naming the file.
    #[test]
    fn run_origin_reads_only_this_harness_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST_FILE);
        assert_eq!(run_origin(dir.path()).unwrap(), None);
        std::fs::write(
            &path,
            r#"{"schema": "roboaudit.metaworld.retrieval.v1", "config": {"task": "push"}}"#,
        )
        .unwrap();
        assert_eq!(run_origin(dir.path()).unwrap(), None);
        std::fs::write(&path, "garbage").unwrap();
        let err = run_origin(dir.path()).unwrap_err().to_string();
        assert!(err.contains("collect.json"), "{err}");
        std::fs::write(
            &path,
            format!(
                r#"{{"schema": "{}", "config": {{"task": "push"}}}}"#,
                crate::manifest::MANIFEST_SCHEMA
            ),
        )
        .unwrap();
        let err = roboaudit_types::error_chain(&run_origin(dir.path()).unwrap_err());
        assert!(err.contains("unknown variant `push`"), "{err}");
    }

    /// Unknown names and settings out of range are usage errors naming them.
    #[test]
    fn config_checks_names_and_bounds() {
        assert_eq!(request().config().unwrap().task, AuditTask::Stack);
        let bad_task = CollectRequest {
            task: "nope".into(),
            ..request()
        };
        let e = bad_task.config().unwrap_err();
        assert!(
            matches!(&e, RequestError::Usage(m) if m.contains("unknown task \"nope\"")),
            "{e}"
        );
        let bad_library = CollectRequest {
            library: 0,
            ..request()
        };
        assert!(matches!(bad_library.config(), Err(RequestError::Usage(_))));
    }

    /// A folder without a collection manifest gets no resume note.
    #[test]
    fn no_note_without_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(unfinished_collect_note(dir.path()), None);
    }
}
