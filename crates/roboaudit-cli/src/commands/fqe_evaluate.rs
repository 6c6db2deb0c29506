//! `roboaudit fqe evaluate`: scores an existing fit (`OUT/fqe.json`) against ground truth
//! without refitting, after checking that the ground truth belongs to the fitted dataset.

use std::path::PathBuf;

use anyhow::Result;
use roboaudit_fqe::request::{EvaluateRequest, evaluate_request};

use super::fqe::{request_error, write_outputs};

/// Arguments of `roboaudit fqe evaluate`.
#[derive(clap::Args, Debug)]
pub struct EvaluateArgs {
    /// A folder written by `roboaudit fqe collect` (its ground_truth.json is used).
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// Ground-truth file (overrides RUN/ground_truth.json).
    #[arg(long, value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Folder holding `fqe.json` from `roboaudit fqe fit`; results are rewritten there. Unless
    /// the ground truth is the very file the fit was last scored against (recorded in
    /// fqe.json), the dataset it was fitted on must be the one beside the ground truth
    /// (RUN/dataset, or dataset/ beside --ground-truth), else exit code 3.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `roboaudit fqe evaluate`: (re)scores `OUT/fqe.json` against ground truth
/// ([`evaluate_request`]) and rewrites its outputs.
pub(super) fn evaluate(args: &EvaluateArgs) -> Result<()> {
    let request = EvaluateRequest {
        run: args.run.clone(),
        ground_truth: args.ground_truth.clone(),
        out: args.out.clone(),
    };
    let report =
        evaluate_request(&request, &mut |line| eprintln!("{line}")).map_err(request_error)?;
    write_outputs(&args.out, &report)
}
