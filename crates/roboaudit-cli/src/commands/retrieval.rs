//! `roboaudit retrieval …`: the retrieval audit (SPEC §1) over files any harness can write.

use crate::exit::InvalidInput;
use crate::{output, progress};
use anyhow::Result;
use clap::Subcommand;
use roboaudit_retrieval::request::{
    AuditObserver, AuditOptions, RequestError as AuditRequestError, audit_request,
};
use roboaudit_retrieval_collect::Mechanism;
use roboaudit_retrieval_collect::Progress;
use roboaudit_retrieval_collect::request::{
    CollectObserver, CollectRequest, RequestError as CollectRequestError,
};
use roboaudit_retrieval_learned::request::policy_checks;
use std::cell::RefCell;

/// Retrieval-audit subcommands.
#[derive(Debug, Subcommand)]
pub enum RetrievalCommand {
    /// Audit selection rules on a transfer matrix: writes DIR/audit.json and DIR/summary.md.
    Audit(AuditOptions),
    /// Collect a run folder on the built-in testbed: record a library, execute every experience in
    /// every query scene over several seeds (resumable), write what `retrieval audit --run` reads.
    Collect(CollectRequest),
}

/// Runs a retrieval subcommand.
pub fn run(cmd: RetrievalCommand) -> Result<()> {
    match cmd {
        RetrievalCommand::Audit(args) => audit(args),
        RetrievalCommand::Collect(args) => collect(&args),
    }
}

/// A spinner on a terminal through the audit's stages, from the reading of the inputs on.
#[derive(Default)]
pub(crate) struct Spinner(RefCell<Option<indicatif::ProgressBar>>);

impl AuditObserver for Spinner {
    fn reading(&self) {
        *self.0.borrow_mut() = Some(progress::spinner("reading inputs"));
    }

    fn auditing(&self) {
        if let Some(s) = self.0.borrow().as_ref() {
            s.set_message("auditing rules");
        }
    }

    fn audited(&self) {
        if let Some(s) = self.0.borrow().as_ref() {
            s.finish_and_clear();
        }
    }
}

/// An audit request's error with its exit code: usage 2, input 3 (data and audit errors stay
/// causes of their own: their kind sets the code).
pub(crate) fn audit_error(e: AuditRequestError) -> anyhow::Error {
    match e {
        AuditRequestError::Usage(m) => crate::exit::Usage(m).into(),
        AuditRequestError::Input(m) => InvalidInput(m).into(),
        AuditRequestError::Data(d) => d.into(),
        AuditRequestError::Audit(a) => a.into(),
        other => other.into(),
    }
}

fn audit(args: AuditOptions) -> Result<()> {
    // Both are the user's choice of --out, so they are refused before any input is read.
    output::refuse_out_file(&args.out)?;
    output::refuse_foreign_results(
        &args.out,
        &[
            ("audit.json", &[roboaudit_retrieval::SCHEMA]),
            // An FQE result folder's summary.md would be replaced by ours.
            ("fqe.json", &[]),
        ],
    )?;
    let mut request = args.request();
    // With an execution log, scenes or experiences file of its own the audit is no longer of
    // what the run folder's collect.json describes.
    let own_files =
        request.executions.is_none() && request.scenes.is_none() && request.experiences.is_none();
    if let Some(run) = request.run.as_deref().filter(|_| own_files) {
        // collect.json and the tables it describes are the run folder's content: bad input.
        request.origin = roboaudit_retrieval_collect::request::run_origin(run)
            .map_err(|e| InvalidInput(roboaudit_types::error_chain(&e)))?;
    }
    let spinner = Spinner::default();
    let outcome = audit_request(&request, &spinner).map_err(|e| {
        // An unfinished `retrieval collect` in --run explains missing executions.
        let note = match (&e, &request.run, request.paths()) {
            (AuditRequestError::Data(d), Some(run), Ok(paths))
                if crate::paths::is_within(d.file(), &paths.executions) =>
            {
                roboaudit_retrieval_collect::request::unfinished_collect_note(run)
            }
            _ => None,
        };
        let err = audit_error(e);
        match note {
            Some(note) => err.context(note),
            None => err,
        }
    })?;
    outln!(
        "{}",
        roboaudit_retrieval::render_compact_table(&outcome.report)
    )?;
    eprint!("{}", outcome.notes());
    // Every cell had an execution, but the collection is not whole: say what was audited.
    if let Some(note) = request
        .run
        .as_deref()
        .and_then(roboaudit_retrieval_collect::request::unfinished_collect_note)
    {
        eprintln!("warning: this audit covers only the executions written so far: {note}");
    }
    if request.run.is_some() && !own_files {
        eprintln!(
            "note: audit.json records no task or mechanism (`run`): an input file given beside \
             --run replaces the run folder's own"
        );
    }
    outln!("{}", outcome.wrote_line())?;
    Ok(())
}

fn collect(request: &CollectRequest) -> Result<()> {
    output::refuse_out_file(&request.out)?;
    let config = request.config().map_err(collect_error)?;
    let _lock = output::lock_out(&request.out)?;
    let bar = CollectBar::new(config.task.name());
    let out = roboaudit_retrieval_learned::request::collect_request(&config, request, &bar);
    drop(bar);
    let out = out.map_err(collect_error)?;
    if matches!(config.mechanism, Mechanism::Policy | Mechanism::PolicyDr) {
        out!("{}", policy_checks(&out.dir)?)?;
    }
    // Every mechanism's audit records this count (`run`); the console says it once whole.
    if out.complete && request.shard.is_none() {
        let failures = roboaudit_retrieval_collect::appearance_caused_failures(&config, &out.dir)
            .map_err(|e| collect_error(CollectRequestError::Collect(e)))?;
        outln!("{}", failures)?;
    }
    out!("{}", out.summary(request.shard))?;
    Ok(())
}

/// A collect request's error with its exit code: usage 2, input 3.
pub(crate) fn collect_error(e: CollectRequestError) -> anyhow::Error {
    match e {
        CollectRequestError::Usage(m) => crate::exit::Usage(m).into(),
        CollectRequestError::Input(m) => InvalidInput(m).into(),
        CollectRequestError::Collect(c) => c.into(),
    }
}

/// A collection's progress bar (rate and ETA on a terminal), its message naming the task and
/// stage; cleared when dropped.
pub(crate) struct CollectBar {
    bar: progress::ClearOnDrop,
    task: String,
}

impl CollectBar {
    /// A bar for the collection of `task`, from the recording of the library on.
    pub(crate) fn new(task: &str) -> Self {
        let bar = progress::bar(0, "");
        bar.set_message(format!("{task}: recording the library"));
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Self {
            bar: progress::ClearOnDrop(bar),
            task: task.to_owned(),
        }
    }
}

impl CollectObserver for CollectBar {
    fn progress(&self, p: Progress) {
        let (bar, task) = (&self.bar, &self.task);
        match p {
            Progress::Library => bar.set_message(format!("{task}: recording the library")),
            Progress::Embeddings => bar.set_message(format!("{task}: rendering embeddings")),
            Progress::Executions { done, total } => {
                if bar.length() != Some(total as u64) {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                    bar.reset_eta();
                    bar.set_message(format!("{task}: executing"));
                } else {
                    bar.set_position(done as u64);
                }
            }
        }
    }
}
