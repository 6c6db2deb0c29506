//! The memory commands' side of the learned policies: opening the policy a command names
//! (`--policy`: built-in, `learned:DIR` or served; here because only this crate can open all
//! three) and the `memory train` pipeline (train, save, qualify) with the lines it reports,
//! built from what the command is given (`TrainOptions`).

use crate::checkpoint;
use crate::config::{CONFIG_FILE, Family, QualifyConfig, TrainConfig};
use crate::error::LearnedError;
use crate::policy::LearnedPolicy;
use crate::qualify::{open_for_audit, qualify_dir};
use roboaudit_memory_harness::request::study::require_native_memory;
use roboaudit_memory_harness::request::{PolicySpec, RequestError, ServedOptions, connect_served};
use roboaudit_memory_harness::{
    BuiltinPolicy, MemoryPolicy, PolicyKind, PolicyParams, ServedPolicy,
};
use roboaudit_testbed::TaskKind;
use std::path::PathBuf;
use std::time::Instant;

/// An opened memory policy of one of the three kinds a command can name.
#[derive(Debug)]
pub enum OpenedPolicy {
    /// A built-in policy (calibrators, bank).
    Builtin(BuiltinPolicy),
    /// A qualified learned checkpoint.
    Learned(Box<LearnedPolicy>),
    /// A served policy.
    Served(Box<ServedPolicy>),
}

/// What [`open_policy`] opened: the policy, what identifies it in a resumable or sharded run
/// beyond its name (built-in: `{"builtin": params}`; learned: `{"learned": {"weights_fnv": …}}`
/// of the weights it qualified; served: `{"served": capabilities}`), and for a learned policy
/// the line reporting its qualification.
#[derive(Debug)]
pub struct Opened {
    /// The policy.
    pub policy: OpenedPolicy,
    /// Its identity (see the type's docs).
    pub identity: serde_json::Value,
    /// `learned policy DIR: native success S/E = R (registered rate T)`, for a learned policy.
    pub note: Option<String>,
}

impl Opened {
    /// The policy behind the memory-policy interface.
    pub fn as_policy(&mut self) -> &mut dyn MemoryPolicy {
        match &mut self.policy {
            OpenedPolicy::Builtin(p) => p,
            OpenedPolicy::Learned(p) => p.as_mut(),
            OpenedPolicy::Served(p) => p.as_mut(),
        }
    }

    /// The served policy, for its latency and manifest field.
    pub fn served(&self) -> Option<&ServedPolicy> {
        match &self.policy {
            OpenedPolicy::Served(p) => Some(p),
            _ => None,
        }
    }
}

/// Why [`open_policy`] failed; each variant is its source's whole message (boxed: the
/// policies are opened once per run).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A built-in name, a setting or a served policy was refused or failed.
    #[error(transparent)]
    Request(Box<RequestError>),
    /// A checkpoint could not be opened or is not qualified for `task`.
    #[error(transparent)]
    Learned(Box<LearnedError>),
}

impl From<RequestError> for OpenError {
    fn from(e: RequestError) -> Self {
        Self::Request(Box::new(e))
    }
}

impl From<LearnedError> for OpenError {
    fn from(e: LearnedError) -> Self {
        Self::Learned(Box::new(e))
    }
}

/// Opens the policy `spec` for a run on `task`: a learned checkpoint loaded, checked and
/// qualified ([`open_for_audit`]); a served one connected with `served` and `params.chunk_len`
/// actions per chunk unless its server declares its own (with `native`, refused unless its
/// memory is native: [`require_native_memory`]); a built-in one with `params`.
///
/// # Errors
/// [`OpenError::Learned`] for a checkpoint that is bad or not qualified;
/// [`OpenError::Request`] for an unknown built-in name or bad parameters
/// ([`RequestError::Harness`]), a bad timeout, a refused server ([`RequestError::Usage`]) or a
/// failed connection.
pub fn open_policy(
    spec: &PolicySpec,
    task: TaskKind,
    params: PolicyParams,
    served: &ServedOptions,
    native: bool,
) -> Result<Opened, OpenError> {
    Ok(match spec {
        PolicySpec::Learned(dir) => {
            let (p, q) = open_for_audit(dir, task)?;
            Opened {
                policy: OpenedPolicy::Learned(Box::new(p)),
                identity: serde_json::json!({ "learned": { "weights_fnv": q.weights_fnv } }),
                note: Some(format!(
                    "learned policy {}: native success {}/{} = {:.3} (registered rate {:.3})",
                    dir.display(),
                    q.successes,
                    q.episodes,
                    q.rate,
                    q.config.threshold
                )),
            }
        }
        PolicySpec::Served { name, url } => {
            let p = connect_served(served, name, url, params.chunk_len)?;
            if native {
                require_native_memory(&p)?;
            }
            Opened {
                identity: serde_json::json!({ "served": p.client().capabilities() }),
                policy: OpenedPolicy::Served(Box::new(p)),
                note: None,
            }
        }
        PolicySpec::Builtin(name) => {
            let kind = PolicyKind::parse(name).map_err(RequestError::Harness)?;
            let p = BuiltinPolicy::new(kind, params).map_err(RequestError::Harness)?;
            Opened {
                identity: serde_json::json!({ "builtin": p.params() }),
                policy: OpenedPolicy::Builtin(p),
                note: None,
            }
        }
    })
}

/// What `memory train` is given: the task, the family (`recurrent` or `anchor-window`), the
/// training settings ([`TrainConfig`], whose other fields keep their defaults; demonstrations
/// and steps at least 1, memory width 1 to 1024, window 1 to 256), the qualification settings
/// ([`QualifyConfig`]: episodes 1 to 100,000, registered rate in [0, 1]) and the checkpoint
/// folder.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct TrainOptions {
    /// Memory task: put_back, swap or rearrange.
    #[cfg_attr(feature = "clap", arg(long))]
    pub task: String,
    /// Policy family: recurrent (a GRU; memory = its hidden state) or anchor-window (Mem-0
    /// style: a protected anchor embedding of the first observation and a window of recent
    /// observation embeddings, attended by the present; memory = `anchor` and `window`).
    #[cfg_attr(feature = "clap", arg(long, default_value = "recurrent"))]
    pub family: String,
    /// Expert demonstrations to record.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = TrainConfig::default().demos))]
    pub demos: usize,
    /// Optimizer steps (full batch).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = TrainConfig::default().steps))]
    pub steps: usize,
    /// Seed of the demonstrations and the initialization (same seed: same weights bytes).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = TrainConfig::default().seed))]
    pub seed: u64,
    /// Memory width: the GRU's hidden size (recurrent) or the observation embedding's width
    /// (anchor-window).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = TrainConfig::default().hidden))]
    pub hidden: usize,
    /// Anchor-window: observation embeddings the window keeps (1 to 256).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = TrainConfig::default().window))]
    pub window: usize,
    /// Qualification episodes run after training (their scenes are never used elsewhere).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = QualifyConfig::default().episodes)
    )]
    pub qualify_episodes: usize,
    /// Registered native success rate below which the checkpoint is refused for the audit.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = QualifyConfig::default().threshold)
    )]
    pub qualify_rate: f64,
    /// Checkpoint folder: model.safetensors, config.json, qualification.json.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
}

impl TrainOptions {
    /// The request ([`TrainRequest::new`]) for the task named, with these training and
    /// qualification settings (qualification seed 0).
    ///
    /// # Errors
    /// [`LearnedError::Task`] for an unknown task; as [`TrainRequest::new`].
    pub fn request(&self) -> Result<TrainRequest, LearnedError> {
        let task = TaskKind::parse(&self.task)?;
        let train = TrainConfig {
            demos: self.demos,
            steps: self.steps,
            seed: self.seed,
            hidden: self.hidden,
            window: self.window,
            ..TrainConfig::default()
        };
        let qualify = QualifyConfig {
            episodes: self.qualify_episodes,
            threshold: self.qualify_rate,
            seed: 0,
        };
        TrainRequest::new(task, &self.family, (train, qualify), self.out.clone())
    }
}

/// A `memory train` run: train `family` on `task` with `train`, save the checkpoint into `out`
/// and qualify it with `qualify`.
#[derive(Debug, Clone)]
pub struct TrainRequest {
    /// The memory task.
    pub task: TaskKind,
    /// The policy family.
    pub family: Family,
    /// Training settings ([`TrainConfig::validate`] runs when training starts).
    pub train: TrainConfig,
    /// Qualification settings.
    pub qualify: QualifyConfig,
    /// The checkpoint folder.
    pub out: PathBuf,
}

impl TrainRequest {
    /// A request for the family named `family` (`recurrent` or `anchor-window`) into `out`,
    /// which must not hold a checkpoint already.
    ///
    /// # Errors
    /// [`LearnedError::InvalidConfig`] for an unknown family,
    /// [`LearnedError::ExistingCheckpoint`] when `out` holds a `config.json`.
    pub fn new(
        task: TaskKind,
        family: &str,
        (train, qualify): (TrainConfig, QualifyConfig),
        out: PathBuf,
    ) -> Result<TrainRequest, LearnedError> {
        let family = Family::parse(family)?;
        if out.join(CONFIG_FILE).exists() {
            return Err(LearnedError::ExistingCheckpoint {
                path: out.display().to_string(),
            });
        }
        Ok(TrainRequest {
            task,
            family,
            train,
            qualify,
            out,
        })
    }

    /// Records the demonstrations (`on_demo(done, total)`), trains (`on_step(step, loss)`, from
    /// step 1) and saves the checkpoint; returns the line reporting it: family, task,
    /// demonstrations used, steps, final loss and the wall time split into demonstrations and
    /// fitting (seconds).
    ///
    /// # Errors
    /// As [`crate::train::train`] and [`checkpoint::save`].
    pub fn train_and_save(
        &self,
        on_demo: &mut dyn FnMut(usize, usize),
        on_step: &mut dyn FnMut(usize, f64),
    ) -> Result<String, LearnedError> {
        let started = Instant::now();
        let mut steps_started = None;
        let trained = crate::train::train(
            self.task,
            self.family,
            &self.train,
            &self.qualify,
            on_demo,
            &mut |s, loss| {
                if s == 1 {
                    steps_started = Some(Instant::now());
                }
                on_step(s, loss);
            },
        )?;
        let fit_s = steps_started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let total_s = started.elapsed().as_secs_f64();
        checkpoint::save(&self.out, &trained)?;
        Ok(format!(
            "trained {} on {}: {} demonstrations used of {}, {} steps, final loss {:.5} ({:.1} s: {:.1} s demonstrations, {:.1} s fitting)",
            self.family.name(),
            self.task.name(),
            trained.config.demos_used,
            self.train.demos,
            self.train.steps,
            trained.config.final_loss,
            total_s,
            total_s - fit_s,
            fit_s
        ))
    }

    /// Runs the qualification episodes of the saved checkpoint ([`qualify_dir`]) and returns
    /// the lines reporting them: the native success against the registered rate (`qualified` or
    /// `refused for the audit`) and the folder written, without a final newline.
    ///
    /// # Errors
    /// As [`qualify_dir`].
    pub fn qualify(&self) -> Result<String, LearnedError> {
        let q = qualify_dir(&self.out, &mut |_, _| {})?;
        Ok(format!(
            "native success on {}: {}/{} = {:.3} (registered rate {:.3}: {})\nwrote {}",
            q.task,
            q.successes,
            q.episodes,
            q.rate,
            q.config.threshold,
            if q.passed {
                "qualified"
            } else {
                "refused for the audit"
            },
            self.out.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_holding_a_checkpoint_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let settings = (TrainConfig::default(), QualifyConfig::default());
        let out = dir.path().to_path_buf();
        assert!(
            TrainRequest::new(
                TaskKind::PutBack,
                "recurrent",
                settings.clone(),
                out.clone()
            )
            .is_ok()
        );
        let err = TrainRequest::new(TaskKind::PutBack, "lstm", settings.clone(), out.clone())
            .unwrap_err();
        assert!(matches!(err, LearnedError::InvalidConfig(_)), "{err}");
        std::fs::write(dir.path().join(CONFIG_FILE), b"{}").unwrap();
        let err = TrainRequest::new(TaskKind::PutBack, "recurrent", settings, out).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} already holds a checkpoint; choose another --out",
                dir.path().display()
            )
        );
    }

    #[test]
    fn an_unknown_builtin_name_is_a_harness_error() {
        let served = ServedOptions {
            timeout: 1.0,
            allow_remote_policy: false,
        };
        let spec = PolicySpec::parse("nonesuch");
        let err = open_policy(
            &spec,
            TaskKind::PutBack,
            PolicyParams::default(),
            &served,
            false,
        )
        .unwrap_err();
        assert!(
            matches!(&err, OpenError::Request(e) if matches!(**e, RequestError::Harness(_))),
            "{err}"
        );
        let mut bank = open_policy(
            &PolicySpec::parse("bank"),
            TaskKind::PutBack,
            PolicyParams::default(),
            &served,
            false,
        )
        .unwrap();
        assert_eq!(bank.as_policy().name(), "bank");
        assert!(bank.served().is_none());
        assert_eq!(
            bank.identity,
            serde_json::json!({ "builtin": PolicyParams::default() })
        );
    }
}
