//! The whole `fqe collect` pipeline: a request holds the options as a user typed them (the
//! `--small` preset, explicit sizes, served policies as `NAME=URL`); [`CollectRequest::prepare`]
//! checks them ([`CollectConfig::check`], once; the served policies' names) before anything is
//! written, and [`run_collect`] collects into a work folder beside `OUT`
//! (`.fqe-collect-<name>.partial`, resumed by a rerun with the same identity) that is renamed
//! to `OUT` at the end, so a failed or killed run leaves no half-written `OUT`. Progress and the
//! work folder's state go to a [`CollectObserver`]; nothing is printed here.

mod summary;

use std::path::{Path, PathBuf};
use std::time::Instant;

use roboaudit_policy_client::{ClientConfig, PolicyClient, PolicyClientError, ServedOptions};
use roboaudit_shard::Shard;

use crate::collect::{CollectSummary, RunIdentity, Stage, WorkState, collect_with, open_work};
use crate::config::{CheckedConfig, CollectConfig};
use crate::error::CollectError;
use crate::served::ServedTarget;
use crate::targets::standard_targets;
pub use summary::{render_summary, resumed_note, stage_label, work_note};

/// Everything `fqe collect` needs, as typed values; `None` sizes take the preset's
/// ([`CollectConfig::small`] with `small`, else [`CollectConfig::default`]). Each field's doc is
/// its `--help` text (derived with the `clap` feature); what the help leaves out: `policies` are
/// checked by [`PolicySpec::parse`] and [`CollectRequest::prepare`]; `served` is used by the caller
/// to connect them; `shard` runs through `crate::shard`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CollectRequest {
    /// Output folder (must not exist, or be empty). The work goes into
    /// `.fqe-collect-<name>.partial` beside it, renamed to DIR when done; an interrupted run is
    /// resumed from there by the same command.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Dataset episodes, 4 to 100,000 (default 750; 8 with --small).
    #[cfg_attr(feature = "clap", arg(long))]
    pub episodes: Option<usize>,
    /// Ground-truth rollouts per target policy and task, 1 to 100,000 (default 100; 3 with
    /// --small).
    #[cfg_attr(feature = "clap", arg(long))]
    pub rollouts: Option<usize>,
    /// Seed of every random draw.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().seed))]
    pub seed: u64,
    /// Side of the scene-camera images in pixels, 16..=128 (default 64; 32 with --small).
    #[cfg_attr(feature = "clap", arg(long, value_name = "PIXELS"))]
    pub image_size: Option<usize>,
    /// Action samples per frame for stochastic target policies, 1 to 10,000 (default 8; 2 with
    /// --small).
    #[cfg_attr(feature = "clap", arg(long))]
    pub samples: Option<usize>,
    /// Discount per frame for V^π, in (0, 1] (default 0.99, seed 003's value).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = CollectConfig::default().gamma))]
    pub gamma: f64,
    /// A few-second preset for tests and demos; explicit flags override it.
    #[cfg_attr(feature = "clap", arg(long))]
    pub small: bool,
    /// Store the dataset's camera as MP4 video (LeRobot's settings: AV1 when libsvtav1 is
    /// linked, else H.264) instead of PNG bytes; part of the run's resume identity.
    #[cfg_attr(feature = "clap", arg(long))]
    pub video: bool,
    /// A served target policy as NAME=ws://HOST:PORT (openpi's websocket protocol; repeatable):
    /// rolled out like the built-in targets and queried at every dataset frame (see the
    /// fqe-collect README for the observation it receives and the actions it must answer).
    #[cfg_attr(feature = "clap", arg(long = "policy", value_name = "NAME=URL"))]
    pub policies: Vec<String>,
    /// Only the served policies: no built-in targets (needs at least one --policy).
    #[cfg_attr(feature = "clap", arg(long))]
    pub served_only: bool,
    /// Served-policy settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub served: ServedOptions,
    /// Run only shard I of N (0-based) of the built-in targets' ground-truth rollouts into
    /// --out with a shard.json, resumably (jobs: target × task blocks, j mod N = I), e.g. a
    /// Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge` joins the shards
    /// and records the dataset, giving the folder an unsharded run writes. Built-in targets
    /// only.
    #[cfg_attr(feature = "clap", arg(long, value_name = "I/N"))]
    pub shard: Option<Shard>,
}

/// A served target policy's name and websocket address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySpec {
    /// Its name: the stem of `policies/<name>.parquet` and its name in `ground_truth.json`.
    pub name: String,
    /// Its address, `ws://HOST:PORT`.
    pub url: String,
}

impl PolicySpec {
    /// Splits `NAME=URL` (both non-empty) at the first `=`.
    ///
    /// # Errors
    /// [`RequestError::Usage`] for any other form.
    pub fn parse(spec: &str) -> Result<Self, RequestError> {
        match spec.split_once('=') {
            Some((n, u)) if !n.is_empty() && !u.is_empty() => Ok(Self {
                name: n.to_owned(),
                url: u.to_owned(),
            }),
            _ => Err(RequestError::Usage(format!(
                "--policy expects NAME=ws://HOST:PORT, got `{spec}`"
            ))),
        }
    }

    /// Connects to the policy ([`PolicyClient::connect`]).
    ///
    /// # Errors
    /// The client's error (an unusable address, a server that does not answer).
    pub fn connect(&self, config: ClientConfig) -> Result<ServedTarget, PolicyClientError> {
        Ok(ServedTarget {
            name: self.name.clone(),
            client: PolicyClient::connect(&self.url, config)?,
        })
    }
}

/// A request's checked settings.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The checked configuration; no built-in targets with `served_only`.
    pub config: CheckedConfig,
    /// The served policies, in the order given.
    pub served: Vec<PolicySpec>,
}

/// Errors of a collect request, each with a whole message.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting or name the request cannot use (a wrong option, not wrong data).
    #[error("{0}")]
    Usage(String),
    /// The work folder holds an interrupted run with other settings ([`CollectError::OtherRun`]).
    #[error("{0}")]
    Input(String),
    /// A file-system step on `OUT` or its folder failed; the message names the step and path.
    #[error("{message}")]
    Io {
        /// `cannot read OUT`, `the finished collection stays in WORK (…): cannot move it to OUT`, …
        message: String,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The collection failed; its work folder is kept for a rerun to continue.
    #[error("fqe collect stopped; {} is kept: rerun the same command to continue", work.display())]
    Stopped {
        /// The work folder.
        work: PathBuf,
        /// Why (boxed: it is large, and rare).
        #[source]
        source: Box<CollectError>,
    },
    /// Another collection error (the work folder could not be opened, a setting's check;
    /// boxed: it is large, and rare).
    #[error(transparent)]
    Collect(Box<CollectError>),
}

impl CollectRequest {
    /// The collection's settings: the preset (`small` or default) under the explicit values.
    #[must_use]
    pub fn config(&self) -> CollectConfig {
        let base = if self.small {
            CollectConfig::small()
        } else {
            CollectConfig::default()
        };
        CollectConfig {
            episodes: self.episodes.unwrap_or(base.episodes),
            rollouts: self.rollouts.unwrap_or(base.rollouts),
            seed: self.seed,
            image_size: self.image_size.unwrap_or(base.image_size),
            samples: self.samples.unwrap_or(base.samples),
            gamma: self.gamma,
            video: self.video,
            ..base
        }
    }

    /// Checks the settings ([`CollectConfig::check`]) and the served policies: `NAME=URL`
    /// form, names usable as file stems, unique and not a built-in target's; `served_only`
    /// needs at least one. Nothing is read or written.
    ///
    /// # Errors
    /// [`RequestError::Usage`] for the first setting out of range or unusable policy.
    pub fn prepare(&self) -> Result<Prepared, RequestError> {
        let mut config = self.config().check().map_err(|e| match e {
            CollectError::InvalidConfig(m) => RequestError::Usage(m),
            other => RequestError::Collect(Box::new(other)),
        })?;
        let served = self.served_specs()?;
        if self.served_only {
            config.targets.clear();
        }
        Ok(Prepared { config, served })
    }

    fn served_specs(&self) -> Result<Vec<PolicySpec>, RequestError> {
        if self.served_only && self.policies.is_empty() {
            return Err(RequestError::Usage(
                "--served-only needs at least one --policy NAME=ws://HOST:PORT".into(),
            ));
        }
        let builtin: Vec<String> = standard_targets().into_iter().map(|t| t.name).collect();
        let mut specs: Vec<PolicySpec> = Vec::new();
        for p in &self.policies {
            let spec = PolicySpec::parse(p)?;
            let name = &spec.name;
            let stem_ok = !name.starts_with('.')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !stem_ok {
                return Err(RequestError::Usage(format!(
                    "--policy name `{name}`: use letters, digits, `_`, `-` and `.` (it names policies/{name}.parquet)"
                )));
            }
            if builtin.contains(name) {
                return Err(RequestError::Usage(format!(
                    "--policy name `{name}` is a built-in target's name ({}); choose another",
                    builtin.join(", ")
                )));
            }
            if specs.iter().any(|s| s.name == *name) {
                return Err(RequestError::Usage(format!(
                    "--policy name `{name}` is given twice"
                )));
            }
            specs.push(spec);
        }
        Ok(specs)
    }

    /// Refuses an `OUT` that exists and is not an empty folder (the finished run replaces only
    /// an empty one), and an `OUT` that is or holds the current folder.
    ///
    /// # Errors
    /// [`RequestError::Usage`] for a non-empty `OUT` or the current folder;
    /// [`RequestError::Io`] when it cannot be listed.
    pub fn check_out(&self) -> Result<(), RequestError> {
        let out = &self.out;
        if roboaudit_data::outpath::is_within(Path::new("."), out) {
            return Err(RequestError::Usage(format!(
                "--out {} is the current folder or holds it; the collection is renamed onto OUT when it ends, which would replace the folder you are in: name a new folder, e.g. --out gt",
                out.display()
            )));
        }
        if out.exists() {
            let empty = out.is_dir()
                && std::fs::read_dir(out)
                    .map_err(|e| io_error(format!("cannot read {}", out.display()), e))?
                    .next()
                    .is_none();
            if !empty {
                return Err(RequestError::Usage(format!(
                    "{} already exists and is not empty; choose a new --out or delete it first",
                    out.display()
                )));
            }
        }
        Ok(())
    }

    /// Refuses served policies in a sharded run: their rollouts and latency cannot be shown to
    /// be the same in every shard's process.
    ///
    /// # Errors
    /// [`RequestError::Usage`] when `prepared` has served policies or `served_only` is set.
    pub fn check_shard(&self, prepared: &Prepared) -> Result<(), RequestError> {
        if !prepared.served.is_empty() || self.served_only {
            return Err(RequestError::Usage(
                "--shard takes the built-in targets only: a served policy's rollouts and latency cannot be shown to be the same in every shard's process; collect it unsharded (it resumes)".into(),
            ));
        }
        Ok(())
    }

    /// The work folder beside `OUT`: `.fqe-collect-<name of OUT>.partial`.
    #[must_use]
    pub fn work_folder(&self) -> PathBuf {
        let (parent, name) = roboaudit_data::outpath::beside(&self.out);
        parent.join(format!(".fqe-collect-{name}.partial"))
    }
}

fn io_error(message: String, source: std::io::Error) -> RequestError {
    RequestError::Io { message, source }
}

/// Receives what a collection reports while it runs (progress from worker threads).
pub trait CollectObserver: Sync {
    /// The work folder `work` was opened in state `state` (before any work).
    fn work(&self, state: WorkState, work: &Path) {
        let _ = (state, work);
    }
    /// `done` of `total` units of `stage` are finished.
    fn progress(&self, stage: Stage, done: usize, total: usize);
}

/// What [`run_collect`] did.
#[derive(Debug, Clone)]
pub struct CollectRun {
    /// The collection's summary (ground truth, what was resumed).
    pub summary: CollectSummary,
    /// Wall time of the collection in seconds (not of the final rename).
    pub elapsed_s: f64,
}

/// Collects `prepared` with the connected `served` targets into the request's work folder
/// ([`open_work`] with the run's identity; [`collect_with`]) and renames it to `OUT` (mode
/// 0755), replacing an empty `OUT`. Call [`CollectRequest::check_out`] first.
///
/// # Errors
/// [`RequestError::Io`] for `OUT`'s folder and the final rename; [`RequestError::Input`] when
/// the work folder holds an interrupted run with other settings; [`RequestError::Stopped`]
/// when the collection fails (the work folder is kept), except [`CollectError::Resume`], a
/// [`RequestError::Usage`].
pub fn run_collect(
    req: &CollectRequest,
    prepared: &Prepared,
    served: &mut [ServedTarget],
    obs: &dyn CollectObserver,
) -> Result<CollectRun, RequestError> {
    let (parent, _) = roboaudit_data::outpath::beside(&req.out);
    std::fs::create_dir_all(&parent).map_err(|e| {
        io_error(
            format!("cannot create output folder {}", parent.display()),
            e,
        )
    })?;
    // One work folder per OUT, named after it: an interrupted run's is continued by a rerun
    // with the same settings, and refused otherwise (it may hold hours of rollouts).
    let work = req.work_folder();
    let names: Vec<String> = prepared.served.iter().map(|s| s.name.clone()).collect();
    let state =
        open_work(&work, &RunIdentity::of(&prepared.config, &names)).map_err(|e| match e {
            CollectError::OtherRun { .. } => RequestError::Input(e.to_string()),
            e => RequestError::Collect(Box::new(e)),
        })?;
    obs.work(state, &work);
    let started = Instant::now();
    let summary = collect_with(&prepared.config, served, &work, &|stage, done, total| {
        obs.progress(stage, done, total);
    })
    .map_err(|e| match e {
        CollectError::Resume(m) => RequestError::Usage(m),
        source => RequestError::Stopped {
            work: work.clone(),
            source: Box::new(source),
        },
    })?;
    let elapsed_s = started.elapsed().as_secs_f64();
    let out = &req.out;
    // An empty existing folder is replaced by the finished one in one rename.
    if out.exists() {
        std::fs::remove_dir(out)
            .map_err(|e| io_error(format!("cannot replace {}", out.display()), e))?;
    }
    // The work folder no longer marks an interrupted run, so a rerun would remove it and
    // collect again: the message says where the finished collection is.
    std::fs::rename(&work, out).map_err(|e| {
        io_error(
            format!(
                "the finished collection stays in {} (rename it to {} yourself; a rerun collects it again): cannot move it to {}",
                work.display(),
                out.display(),
                out.display()
            ),
            e,
        )
    })?;
    Ok(CollectRun { summary, elapsed_s })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> CollectRequest {
        CollectRequest {
            out: PathBuf::from("runs/gt"),
            episodes: None,
            rollouts: None,
            seed: 0,
            image_size: None,
            samples: None,
            gamma: 0.99,
            small: true,
            video: false,
            policies: Vec::new(),
            served_only: false,
            served: ServedOptions::default(),
            shard: None,
        }
    }

    fn usage(r: Result<Prepared, RequestError>) -> String {
        match r {
            Err(RequestError::Usage(m)) => m,
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn policy_specs_split_at_the_first_equals_sign() {
        let s = PolicySpec::parse("pi=ws://127.0.0.1:8000/a=b").unwrap();
        assert_eq!(s.name, "pi");
        assert_eq!(s.url, "ws://127.0.0.1:8000/a=b");
        for bad in ["pi", "=ws://x", "pi="] {
            assert!(matches!(
                PolicySpec::parse(bad),
                Err(RequestError::Usage(_))
            ));
        }
    }

    /// The preset is under the explicit sizes; served names are checked before anything runs.
    #[test]
    fn prepare_checks_settings_and_served_names() {
        let explicit = CollectRequest {
            episodes: Some(12),
            ..request()
        };
        let p = explicit.prepare().unwrap();
        assert_eq!(p.config.config.episodes, 12);
        assert_eq!(p.config.config.rollouts, CollectConfig::small().rollouts);
        assert!(!p.config.targets.is_empty());
        let with = |policies: &[&str], served_only| CollectRequest {
            policies: policies.iter().map(|p| (*p).to_owned()).collect(),
            served_only,
            ..request()
        };
        assert!(usage(with(&[], true).prepare()).contains("--served-only"));
        assert!(usage(with(&["expert=ws://x"], false).prepare()).contains("built-in"));
        assert!(usage(with(&["a=ws://x", "a=ws://y"], false).prepare()).contains("twice"));
        assert!(usage(with(&[".a=ws://x"], false).prepare()).contains("letters"));
        let served = with(&["a=ws://x"], true).prepare().unwrap();
        assert!(served.config.targets.is_empty());
        assert_eq!(served.served[0].name, "a");
        let too_few = CollectRequest {
            episodes: Some(2),
            ..request()
        };
        assert!(usage(too_few.prepare()).contains("episodes"));
        for (too_many, says) in [
            (
                CollectRequest {
                    episodes: Some(100_001),
                    ..request()
                },
                "episodes = 100001 (at most 100000)",
            ),
            (
                CollectRequest {
                    rollouts: Some(99_999_999),
                    ..request()
                },
                "rollouts = 99999999 (at most 100000",
            ),
            (
                CollectRequest {
                    samples: Some(10_001),
                    ..request()
                },
                "samples = 10001 (at most 10000)",
            ),
        ] {
            assert!(usage(too_many.prepare()).contains(says), "{says}");
        }
    }

    #[test]
    fn the_work_folder_sits_beside_out() {
        assert_eq!(
            request().work_folder(),
            PathBuf::from("runs/.fqe-collect-gt.partial")
        );
    }
}
