//! `roboaudit memory collect`: crossed pairs on the testbed with a built-in, learned or served
//! policy, through [`roboaudit_memory_harness::request::collect_request`] on
//! `CollectOptions::request`.

use crate::exit::{InvalidInput, Usage};
use crate::progress;
use anyhow::Result;
use roboaudit_memory_harness::HarnessError;
use roboaudit_memory_harness::request::{self, CollectOptions, Collected, RequestError};
use std::time::Instant;

/// Maps configuration errors of the harness to usage errors (exit 2), and unwraps the audit's
/// own errors so that invalid records or plans keep their exit 3 (the harness wraps them
/// transparently, which hides them from the exit-code lookup).
pub fn usage_or(err: HarnessError) -> anyhow::Error {
    match err {
        HarnessError::InvalidConfig(_) | HarnessError::UnsupportedTask(_) => {
            Usage(roboaudit_types::error_chain(&err)).into()
        }
        HarnessError::Memory(e) => e.into(),
        HarnessError::ForeignPartial { .. } => {
            InvalidInput(roboaudit_types::error_chain(&err)).into()
        }
        HarnessError::Served(e) => crate::commands::fqe_actions::classify(e),
        HarnessError::Shard(e) => crate::commands::shard::exit_error(e),
        other => other.into(),
    }
}

/// A memory pipeline's error with its exit code: the harness's as [`usage_or`], the wrapped
/// plan, data and write errors as causes of their own (their kind sets the code).
pub fn request_error(err: RequestError) -> anyhow::Error {
    match err {
        RequestError::Usage(m) => Usage(m).into(),
        RequestError::Task(e) => e.into(),
        RequestError::Harness(e) => usage_or(e),
        RequestError::Memory(e) => e.into(),
        RequestError::Data(e) => e.into(),
        RequestError::Write(e) => e.into(),
        other => other.into(),
    }
}

/// Runs `memory collect`.
pub fn run(args: &CollectOptions) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    // Its audit's summary.md would replace an FQE result's (see `memory audit`).
    crate::output::refuse_foreign_results(&args.out, &[("fqe.json", &[])])?;
    crate::output::refuse_other_run(&args.out, &["ground_truth.json", "collect.json"])?;
    let (req, spec, params) = args.request().map_err(request_error)?;
    let _lock = crate::output::lock_out(&args.out)?;
    let mut opened = super::open(&spec, req.config.task, params, &args.served, false)?;
    crate::output::ensure_dir(&args.out)?;
    let started = Instant::now();
    let bar = progress::bar(req.total_pairs() as u64, "");
    bar.set_message("crossing histories: pairs");
    let identity = opened.identity.clone();
    let run = request::collect_request(&req, opened.as_policy(), &identity, &mut |d, n| {
        // A shard's bar counts the pairs it owns, which only the harness knows.
        if req.shard.is_some() {
            bar.set_length(n as u64);
        }
        bar.set_position(d as u64);
    });
    bar.finish_and_clear();
    let (run, resumed) = match run.map_err(request_error)? {
        Collected::Shard { shard, run } => {
            let counts = (run.owned, req.config.pairs, "pairs");
            let (out, resumed) = (&args.out, run.resumed);
            crate::commands::shard::print_shard_done(shard, counts, out, resumed, started, None)?;
            return Ok(());
        }
        Collected::Whole { run, resumed } => (*run, resumed),
    };
    let seconds = started.elapsed().as_secs_f64();
    if let Some(line) = req.resumed_line(resumed) {
        outln!("{line}")?;
    }
    let summary = req.write_whole(&run, opened.served(), seconds);
    out!("{}", summary.map_err(request_error)?)?;
    Ok(())
}
