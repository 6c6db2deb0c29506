//! `roboaudit fqe collect`: a push-suite dataset with ground truth from the testbed (SPEC.md §3).
//!
//! Writes `OUT/dataset/` (LeRobot v3.0), `OUT/policies/<name>.parquet` (policy-actions files),
//! `OUT/ground_truth.json` and `OUT/README.md`, through `roboaudit_fqe_collect::request` (a work
//! folder beside `OUT`, `.fqe-collect-<name>.partial`, renamed to `OUT` at the end; a failed run
//! keeps it for a rerun with the same settings to continue).
//!
//! `--policy NAME=ws://HOST:PORT` adds served target policies (`roboaudit_fqe_collect::served`).
//! `--shard I/N` runs only a shard of the built-in targets' rollouts into `OUT`
//! (`roboaudit_fqe_collect::shard`; `roboaudit merge` completes the run).

use crate::commands::fqe_actions::{classify, client_config};
use crate::exit::{InvalidInput, Usage};
use roboaudit_fqe_collect::request::{
    CollectObserver, CollectRequest, Prepared, RequestError, render_summary, resumed_note,
    run_collect, stage_label, work_note,
};
use roboaudit_fqe_collect::{CollectError, Stage, WorkState};
use roboaudit_memory_harness::request::ServedSettings;
use roboaudit_policy_client::summary::describe_capabilities;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Arguments of `roboaudit fqe collect`.
#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    /// Output folder (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Dataset episodes (default 750; 8 with --small).
    #[arg(long)]
    pub episodes: Option<usize>,
    /// Ground-truth rollouts per target policy and task (default 100; 3 with --small).
    #[arg(long)]
    pub rollouts: Option<usize>,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Side of the scene-camera images in pixels, 16..=128 (default 64; 32 with --small).
    #[arg(long, value_name = "PIXELS")]
    pub image_size: Option<usize>,
    /// Action samples per frame for stochastic target policies (default 8; 2 with --small).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Discount per frame for V^π (default 0.99, seed 003's value).
    #[arg(long, default_value_t = 0.99)]
    pub gamma: f64,
    /// A few-second preset for tests and demos; explicit flags override it.
    #[arg(long)]
    pub small: bool,
    /// Store the dataset's camera as MP4 video (LeRobot's settings: AV1 when libsvtav1 is
    /// linked, else H.264) instead of PNG bytes; part of the run's resume identity.
    #[arg(long)]
    pub video: bool,
    /// A served target policy as NAME=ws://HOST:PORT (openpi's websocket protocol; repeatable):
    /// rolled out like the built-in targets and queried at every dataset frame (see the
    /// fqe-collect README for the observation it receives and the actions it must answer).
    #[arg(long = "policy", value_name = "NAME=URL")]
    pub policies: Vec<String>,
    /// Only the served policies: no built-in targets (needs at least one --policy).
    #[arg(long)]
    pub served_only: bool,
    /// Served-policy settings.
    #[command(flatten)]
    pub served: ServedSettings,
    /// Run only shard I of N (0-based) of the built-in targets' ground-truth rollouts into
    /// --out with a shard.json, resumably (jobs: target × task blocks, j mod N = I), e.g. a
    /// Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge` joins the shards
    /// and records the dataset, giving the folder an unsharded run writes. Built-in targets
    /// only.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<roboaudit_shard::Shard>,
}

impl CollectArgs {
    /// The typed request these options name.
    fn request(&self) -> CollectRequest {
        CollectRequest {
            out: self.out.clone(),
            episodes: self.episodes,
            rollouts: self.rollouts,
            seed: self.seed,
            image_size: self.image_size,
            samples: self.samples,
            gamma: self.gamma,
            small: self.small,
            video: self.video,
            policies: self.policies.clone(),
            served_only: self.served_only,
            shard: self.shard,
        }
    }
}

/// A progress bar per stage (rate and ETA, hidden in pipes and CI) whose message starts with
/// a label, and the work folder's state on stderr.
pub(crate) struct StageBar {
    /// Started at the first progress, after the work folder's state is said.
    bar: OnceLock<indicatif::ProgressBar>,
    label: String,
    /// Progress arrives from worker threads; the lock keeps the stage switches and positions
    /// ordered.
    last: Mutex<(Option<Stage>, usize)>,
}

impl StageBar {
    /// A bar whose messages start with `label`, drawn from the first progress on.
    pub(crate) fn new(label: &str) -> Self {
        Self {
            bar: OnceLock::new(),
            label: label.to_owned(),
            last: Mutex::new((None, 0)),
        }
    }

    fn bar(&self) -> &indicatif::ProgressBar {
        self.bar.get_or_init(|| crate::progress::bar(0, ""))
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

impl CollectObserver for StageBar {
    fn work(&self, state: WorkState, work: &Path) {
        if let Some(line) = work_note(state, work) {
            eprintln!("{line}");
        }
    }

    fn progress(&self, stage: Stage, done: usize, total: usize) {
        if let Ok(mut l) = self.last.lock() {
            if l.0 != Some(stage) {
                *l = (Some(stage), 0);
                let bar = self.bar();
                bar.set_length(total as u64);
                bar.set_position(0);
                bar.reset_eta();
                bar.set_message(format!("{}: {}", self.label, stage_label(stage)));
            }
            if done >= l.1 {
                l.1 = done;
                self.bar().set_position(done as u64);
            }
        }
    }
}

/// The demo drops its collection's observer to end the step.
impl Drop for StageBar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A request's error with its exit code: usage 2, input 3; a stopped collection says its work
/// folder is kept, with a served policy's error classified by the client's kind.
fn request_error(e: RequestError) -> anyhow::Error {
    let kept = e.to_string();
    match e {
        RequestError::Usage(m) => Usage(m).into(),
        RequestError::Input(m) => InvalidInput(m).into(),
        RequestError::Stopped { source, .. } => match *source {
            CollectError::Served { policy, source } => classify(*source)
                .context(format!("served policy {policy}"))
                .context(kept),
            other => anyhow::Error::new(other).context(kept),
        },
        RequestError::Collect(c) => anyhow::Error::new(*c),
        other @ RequestError::Io { .. } => other.into(),
    }
}

/// Runs the collection.
pub fn run(args: &CollectArgs) -> anyhow::Result<()> {
    let request = args.request();
    let prepared = request.prepare().map_err(request_error)?;
    if let Some(shard) = args.shard {
        return run_shard(&request, &prepared, shard);
    }
    crate::output::refuse_out_file(&args.out)?;
    request.check_out().map_err(request_error)?;
    let client_cfg = client_config(args.served.timeout_s, args.served.allow_remote)?;
    let mut served = Vec::with_capacity(prepared.served.len());
    for spec in &prepared.served {
        let target = spec
            .connect(client_cfg)
            .map_err(|e| classify(e).context(format!("served policy {}", spec.name)))?;
        let caps = describe_capabilities(target.client.capabilities(), "rollouts");
        outln!("policy {} at {}: {caps}", spec.name, spec.url)?;
        served.push(target);
    }
    let bar = StageBar::new("fqe collect");
    let run = run_collect(&request, &prepared, &mut served, &bar);
    bar.finish();
    let run = run.map_err(request_error)?;
    if let Some(line) = resumed_note(&run) {
        eprintln!("{line}");
    }
    out!(
        "{}",
        render_summary(&run, &prepared.config.config, &request.out)
    )?;
    Ok(())
}

/// `fqe collect --shard I/N`: the shard's rollout blocks into `--out`, nothing assembled.
fn run_shard(
    request: &CollectRequest,
    prepared: &Prepared,
    shard: roboaudit_shard::Shard,
) -> anyhow::Result<()> {
    request.check_shard(prepared).map_err(request_error)?;
    let out = &request.out;
    crate::output::refuse_out_file(out)?;
    crate::output::ensure_dir(out)?;
    let started = Instant::now();
    let pb = crate::progress::bar(0, "fqe collect: ground-truth rollouts");
    let run = roboaudit_fqe_collect::shard::collect_shard(&prepared.config, out, shard, &|d, n| {
        pb.set_length(n as u64);
        pb.set_position(d as u64);
    });
    pb.finish_and_clear();
    let run = run.map_err(|e| match e {
        CollectError::Shard(e) => crate::commands::shard::exit_error(e),
        other => anyhow::Error::new(other),
    })?;
    crate::commands::shard::print_shard_done(
        shard,
        (run.owned, run.total, "rollout blocks"),
        out,
        run.resumed,
        started,
        Some("it records the dataset"),
    )?;
    Ok(())
}
