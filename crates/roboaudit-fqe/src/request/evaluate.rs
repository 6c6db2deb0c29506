//! The `fqe evaluate` pipeline: (re)scores the estimates of an existing fit (`OUT/fqe.json`)
//! against ground truth without refitting (methods document §3), after checking that the ground
//! truth belongs to the fitted dataset and holds some of its policies. Notes go to a callback;
//! nothing is printed or written here.

use std::path::{Path, PathBuf};

use roboaudit_data::lerobot::LeRobotDataset;

use super::{RequestError, ground_truth_path};
use crate::{
    DatasetIdentity, FqeReport, GroundTruth, SCHEMA, read_ground_truth_fingerprinted,
    score_recorded,
};

/// Everything `fqe evaluate` needs. Each field's doc is its `--help` text (derived with the
/// `clap` feature); `out` holds the fit's `fqe.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct EvaluateRequest {
    /// A folder written by `roboaudit fqe collect` (its ground_truth.json is used).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub run: Option<PathBuf>,
    /// Ground-truth file (overrides RUN/ground_truth.json).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub ground_truth: Option<PathBuf>,
    /// Folder holding `fqe.json` from `roboaudit fqe fit`; results are rewritten there. Unless
    /// the ground truth is the very file the fit was last scored against (recorded in
    /// fqe.json), the dataset it was fitted on must be the one beside the ground truth
    /// (RUN/dataset, or dataset/ beside --ground-truth), else exit code 3.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
}

/// Reads `OUT/fqe.json`, scores it against the request's ground truth and returns the scored
/// report (recording the ground truth's fingerprint), for the caller to write. Unless the
/// ground truth is the very file the fit was last scored against, the dataset beside it
/// (`RUN/dataset`, or `dataset/` beside the ground-truth file) must be the fitted one.
/// `note` receives lines for the user (with their `note: ` or `warning: ` prefix).
///
/// # Errors
/// [`RequestError::Input`] for a missing, unreadable or foreign `fqe.json`, a ground truth of
/// another dataset, or one that holds none of the fit's policies; [`RequestError::Usage`]
/// without ground truth; [`RequestError::Open`] for a dataset beside the ground truth that
/// cannot be opened; [`RequestError::Fqe`] for an unreadable or malformed ground truth and a
/// failed scoring (another γ).
pub fn evaluate_request(
    req: &EvaluateRequest,
    note: &mut dyn FnMut(&str),
) -> Result<FqeReport, RequestError> {
    let file = req.out.join("fqe.json");
    // A missing, unreadable or foreign report is an input error, like any other input.
    let bytes = std::fs::read(&file)
        .map_err(|e| RequestError::Input(format!("cannot read {}: {e}", file.display())))?;
    let mut report: FqeReport = serde_json::from_slice(&bytes).map_err(|e| {
        RequestError::Input(format!("{} is not an FQE report: {e}", file.display()))
    })?;
    if report.schema != SCHEMA {
        return Err(RequestError::Input(format!(
            "{}: schema {:?}, expected {:?}",
            file.display(),
            report.schema,
            SCHEMA
        )));
    }
    let gt_path = ground_truth_path(req.run.as_deref(), req.ground_truth.as_ref()).ok_or_else(
        || match &req.run {
            Some(run) => RequestError::Input(format!(
                "no ground truth: {} does not exist (--run names a folder written by `fqe \
                     collect`); pass --ground-truth FILE",
                run.join("ground_truth.json").display()
            )),
            None => {
                RequestError::Usage("no ground truth: pass --run DIR or --ground-truth FILE".into())
            }
        },
    )?;
    let (truth, fingerprint) = read_ground_truth_fingerprinted(&gt_path)?;
    // The very file the fit was scored against needs no dataset check (a fit on another
    // dataset than the run's is scored against the run's ground truth on purpose).
    if report.ground_truth.as_ref() != Some(&fingerprint) {
        check_same_dataset(
            &report,
            &file,
            req.run.as_deref(),
            &gt_path,
            truth.n_dataset_episodes,
            note,
        )?;
    }
    check_policies(&report, &file, &truth, &gt_path, note)?;
    check_actions(&report, &file, &truth, &gt_path)?;
    score_recorded(&mut report, &truth, &fingerprint)?;
    if report.metrics.is_empty() {
        return Err(RequestError::Input(format!(
            "the ground truth {} matches none of the (policy, task) cells of the fit in {} \
             (tasks by text or task_index; the fit's tasks: {}): nothing to score",
            gt_path.display(),
            file.display(),
            report
                .tasks
                .iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(report)
}

/// Refuses to score `report` (read from `file`) against ground truth that comes with another
/// dataset than the one it was fitted on: the names would match (pi0, pi1, …) and the numbers
/// would mean nothing. Without a dataset beside the ground truth, the episode count the ground
/// truth records (`truth_episodes`, when it does) must be the fitted dataset's; with nothing to
/// compare (no count, or a report that does not record its dataset) a note says so.
fn check_same_dataset(
    report: &FqeReport,
    file: &Path,
    run: Option<&Path>,
    gt_path: &Path,
    truth_episodes: Option<usize>,
    note: &mut dyn FnMut(&str),
) -> Result<(), RequestError> {
    let Some(fitted) = &report.dataset else {
        note(&format!(
            "note: {} does not record the dataset it was fitted on: cannot check that the ground truth belongs to it",
            file.display()
        ));
        return Ok(());
    };
    let beside = run
        .map(|r| r.join("dataset"))
        .or_else(|| gt_path.parent().map(|p| p.join("dataset")))
        .filter(|d| d.join("meta/info.json").is_file());
    let Some(dir) = beside else {
        // The episode count the collection recorded still tells two collections apart.
        if let Some(n) = truth_episodes
            && n != fitted.episodes
        {
            return Err(RequestError::Input(format!(
                "the fit in {} was made on the dataset {}, but the ground truth {} was collected with a dataset of {n} episodes: its values belong to another run; pass the run (or ground truth) the fit was made on",
                file.display(),
                fitted.describe(),
                gt_path.display()
            )));
        }
        note(&format!(
            "note: no dataset beside the ground truth {}: cannot check that it belongs to the fitted dataset {}",
            gt_path.display(),
            fitted.path.display()
        ));
        return Ok(());
    };
    let ds = LeRobotDataset::open(&dir).map_err(|source| RequestError::Open {
        path: dir.clone(),
        source: Box::new(source),
    })?;
    let other = DatasetIdentity::of(&ds)?;
    if !fitted.same_dataset(&other) {
        return Err(RequestError::Input(format!(
            "the fit in {} was made on the dataset {}, but the ground truth {} comes with the dataset {}: its values belong to another run; pass the run (or ground truth) the fit was made on",
            file.display(),
            fitted.describe(),
            gt_path.display(),
            other.describe()
        )));
    }
    Ok(())
}

/// Refuses a ground truth that holds none of the fit's policies: scoring would leave every
/// `V^π` cell empty and no metric, as if it had scored something. When only some are missing,
/// a warning names them (their rows stay unscored).
fn check_policies(
    report: &FqeReport,
    file: &Path,
    truth: &GroundTruth,
    gt_path: &Path,
    note: &mut dyn FnMut(&str),
) -> Result<(), RequestError> {
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
        return Err(RequestError::Input(format!(
            "none of the policies of the fit in {} ({}) is in the ground truth {} ({}): nothing to score; pass the ground truth of these policies",
            file.display(),
            fitted.join(", "),
            gt_path.display(),
            known.join(", ")
        )));
    }
    note(&format!(
        "warning: the ground truth {} has no values for {} of the fit in {} (it has {}): left unscored",
        gt_path.display(),
        missing.join(", "),
        file.display(),
        known.join(", ")
    ));
    Ok(())
}

/// Refuses to score a policy whose fit recorded the fingerprint of its actions file when the
/// ground truth measured that policy with a file of other bytes: the estimate of one policy would
/// be scored against another's value (what `fqe fit` refuses for `--policy-actions`). A ground
/// truth whose actions file is not at hand cannot be compared and is accepted.
fn check_actions(
    report: &FqeReport,
    file: &Path,
    truth: &GroundTruth,
    gt_path: &Path,
) -> Result<(), RequestError> {
    let dir = gt_path.parent().unwrap_or(Path::new("."));
    for p in &report.policies {
        let Some(fitted) = &p.actions_fingerprint else {
            continue;
        };
        let Some(tp) = truth.policies.iter().find(|t| t.policy == p.policy) else {
            continue;
        };
        let measured = dir.join(tp.actions_path());
        let Ok(bytes) = std::fs::read(&measured) else {
            continue;
        };
        if crate::fingerprint(&bytes) != *fitted {
            return Err(RequestError::Input(format!(
                "the fit in {} estimated \"{}\" with other actions than {} holds, the file the \
                 ground truth {} measured it with: its estimate would be scored against another \
                 policy's value; refit with those actions or score against the ground truth of \
                 the actions it was fitted with",
                file.display(),
                p.policy,
                measured.display(),
                gt_path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(r: Result<FqeReport, RequestError>) -> String {
        match r {
            Err(RequestError::Input(m)) => m,
            other => panic!("not an input error: {other:?}"),
        }
    }

    /// A missing or foreign `fqe.json` is bad input, found before any ground truth is read.
    #[test]
    fn only_an_fqe_report_is_scored() {
        let dir = tempfile::tempdir().unwrap();
        let req = EvaluateRequest {
            run: None,
            ground_truth: Some(dir.path().join("missing.json")),
            out: dir.path().to_path_buf(),
        };
        let mut notes = Vec::new();
        let m = input(evaluate_request(&req, &mut |l| notes.push(l.to_owned())));
        assert!(m.starts_with("cannot read "), "{m}");
        std::fs::write(dir.path().join("fqe.json"), br#"{"schema": 1}"#).unwrap();
        let m = input(evaluate_request(&req, &mut |l| notes.push(l.to_owned())));
        assert!(m.contains("is not an FQE report"), "{m}");
        assert!(notes.is_empty());
    }
}
