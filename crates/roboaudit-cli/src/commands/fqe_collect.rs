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

use crate::commands::fqe_actions::classify;
use crate::exit::{InvalidInput, Usage};
use roboaudit_fqe_collect::request::{
    CollectObserver, CollectRequest, Prepared, RequestError, render_summary, resumed_note,
    run_collect, stage_label, work_note,
};
use roboaudit_fqe_collect::{CollectError, Stage, WorkState};
use roboaudit_policy_client::summary::describe_capabilities;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

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
pub fn run(request: &CollectRequest) -> anyhow::Result<()> {
    let prepared = request.prepare().map_err(request_error)?;
    if let Some(shard) = request.shard {
        return run_shard(request, &prepared, shard);
    }
    crate::output::refuse_out_file(&request.out)?;
    // Before the check of OUT: two runs into a new OUT would both pass it.
    let _lock = crate::output::lock_out(&request.out)?;
    request.check_out().map_err(request_error)?;
    let client_cfg = request.served.client_config().map_err(classify)?;
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
    let run = run_collect(request, &prepared, &mut served, &bar);
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
    let _lock = crate::output::lock_out(out)?;
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
