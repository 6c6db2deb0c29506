//! `roboaudit memory train`, through [`roboaudit_memory_learned::request::TrainRequest`] (from
//! `TrainOptions::request`), and the exit codes of learned-policy errors (also of a
//! `learned:DIR` policy another command opens).

use crate::exit::{InvalidInput, Usage};
use crate::progress;
use anyhow::Result;
use roboaudit_memory_learned::LearnedError;
use roboaudit_memory_learned::request::TrainOptions;

/// A learned-policy error with its exit code: a setting 2, a checkpoint or qualification 3.
pub(crate) fn map_err(e: LearnedError) -> anyhow::Error {
    match e {
        LearnedError::InvalidConfig(_) | LearnedError::ExistingCheckpoint { .. } => {
            Usage(roboaudit_types::error_chain(&e)).into()
        }
        LearnedError::Task(e) => e.into(),
        e if e.is_invalid_input() => InvalidInput(roboaudit_types::error_chain(&e)).into(),
        LearnedError::Harness(h) => super::collect::usage_or(h),
        e => e.into(),
    }
}

/// Runs `memory train`: trains, saves, qualifies, prints the timing and the native success.
pub fn run_train(args: &TrainOptions) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    let req = args.request().map_err(map_err)?;
    let bar = progress::bar(args.demos as u64, "recording demonstrations");
    let trained = req.train_and_save(&mut |d, _| bar.set_position(d as u64), &mut |s, loss| {
        if s == 1 {
            bar.set_length(args.steps as u64);
            bar.set_message("training");
        }
        bar.set_position(s as u64);
        if s % 50 == 0 {
            bar.println(format!("step {s}: loss {loss:.5}"));
        }
    });
    bar.finish_and_clear();
    outln!("{}", trained.map_err(map_err)?)?;
    let spinner = progress::spinner("qualification episodes");
    let qualified = req.qualify();
    spinner.finish_and_clear();
    outln!("{}", qualified.map_err(map_err)?)?;
    Ok(())
}
