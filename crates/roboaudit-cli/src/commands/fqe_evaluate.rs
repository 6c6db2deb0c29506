//! `roboaudit fqe evaluate`: scores an existing fit (`OUT/fqe.json`) against ground truth
//! without refitting, after checking that the ground truth belongs to the fitted dataset.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe::{DatasetIdentity, FqeReport, read_ground_truth_fingerprinted, score};

use roboaudit_fqe::request::ground_truth_path;

use super::fqe::{classify, write_outputs};
use crate::exit::{InvalidInput, Usage};

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

/// Refuses to score `report` (read from `file`) against ground truth that comes with another
/// dataset than the one it was fitted on (exit code 3): the names would match (pi0, pi1, …)
/// and the numbers would mean nothing. The ground truth's dataset is RUN/dataset, or the
/// dataset/ folder beside the ground-truth file; without one, or in a report from before fits
/// recorded their dataset, there is nothing to compare and a note says so.
fn check_same_dataset(
    report: &FqeReport,
    file: &Path,
    run: Option<&Path>,
    gt_path: &Path,
) -> Result<()> {
    let Some(fitted) = &report.dataset else {
        eprintln!(
            "note: {} does not record the dataset it was fitted on: cannot check that the ground truth belongs to it",
            file.display()
        );
        return Ok(());
    };
    let beside = run
        .map(|r| r.join("dataset"))
        .or_else(|| gt_path.parent().map(|p| p.join("dataset")))
        .filter(|d| d.join("meta/info.json").is_file());
    let Some(dir) = beside else {
        eprintln!(
            "note: no dataset beside the ground truth {}: cannot check that it belongs to the fitted dataset {}",
            gt_path.display(),
            fitted.path.display()
        );
        return Ok(());
    };
    let ds = LeRobotDataset::open(&dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", dir.display()))?;
    let other = DatasetIdentity::of(&ds).map_err(classify)?;
    if !fitted.same_dataset(&other) {
        return Err(InvalidInput(format!(
            "the fit in {} was made on the dataset {}, but the ground truth {} comes with the dataset {}: its values belong to another run; pass the run (or ground truth) the fit was made on",
            file.display(),
            fitted.describe(),
            gt_path.display(),
            other.describe()
        ))
        .into());
    }
    Ok(())
}

/// Refuses a ground truth that holds none of the fit's policies (exit code 3): scoring would
/// leave every `V^π` cell empty and no metric, and exit 0 as if it had scored something. When only
/// some are missing, a warning names them (their rows stay unscored).
fn check_policies(
    report: &FqeReport,
    file: &Path,
    truth: &roboaudit_fqe::GroundTruth,
    gt_path: &Path,
) -> Result<()> {
    let known: Vec<&str> = truth.policies.iter().map(|p| p.policy.as_str()).collect();
    let fitted: Vec<&str> = report.policies.iter().map(|p| p.policy.as_str()).collect();
    let missing: Vec<&str> = fitted
        .iter()
        .copied()
        .filter(|p| !known.contains(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if missing.len() == fitted.len() {
        return Err(InvalidInput(format!(
            "none of the policies of the fit in {} ({}) is in the ground truth {} ({}): nothing to score; pass the ground truth of these policies",
            file.display(),
            fitted.join(", "),
            gt_path.display(),
            known.join(", ")
        ))
        .into());
    }
    eprintln!(
        "warning: the ground truth {} has no values for {} of the fit in {} (it has {}): left unscored",
        gt_path.display(),
        missing.join(", "),
        file.display(),
        known.join(", ")
    );
    Ok(())
}

/// `roboaudit fqe evaluate`: (re)scores `OUT/fqe.json` against ground truth and rewrites its
/// outputs.
pub(super) fn evaluate(args: &EvaluateArgs) -> Result<()> {
    let file = args.out.join("fqe.json");
    // A missing, unreadable or foreign report is an input error (exit 3), like any other input.
    let bytes = std::fs::read(&file)
        .map_err(|e| InvalidInput(format!("cannot read {}: {e}", file.display())))?;
    let mut report: FqeReport = serde_json::from_slice(&bytes)
        .map_err(|e| InvalidInput(format!("{} is not an FQE report: {e}", file.display())))?;
    if report.schema != roboaudit_fqe::SCHEMA {
        return Err(InvalidInput(format!(
            "{}: schema {:?}, expected {:?}",
            file.display(),
            report.schema,
            roboaudit_fqe::SCHEMA
        ))
        .into());
    }
    let gt_path = ground_truth_path(args.run.as_deref(), args.ground_truth.as_ref())
        .ok_or_else(|| Usage("no ground truth: pass --run DIR or --ground-truth FILE".into()))?;
    let (truth, fingerprint) = read_ground_truth_fingerprinted(&gt_path).map_err(classify)?;
    // The very file the fit was scored against needs no dataset check (a fit on another
    // dataset than the run's is scored against the run's ground truth on purpose).
    if report.ground_truth.as_ref() != Some(&fingerprint) {
        check_same_dataset(&report, &file, args.run.as_deref(), &gt_path)?;
    }
    check_policies(&report, &file, &truth, &gt_path)?;
    score(&mut report, &truth).map_err(classify)?;
    report.ground_truth = Some(fingerprint);
    write_outputs(&args.out, &report)
}
