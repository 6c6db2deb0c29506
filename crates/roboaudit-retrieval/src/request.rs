//! The whole `retrieval audit` pipeline over files any harness can write (SPEC §1): a request
//! names the input files (a run folder, or each file) and the audit's settings;
//! [`audit_request`] checks the settings, looks for the input files, reads and validates them
//! (`roboaudit_data::load_retrieval_inputs`), runs the audit and writes `OUT/audit.json` and
//! `OUT/summary.md` together, atomically. Progress goes to an [`AuditObserver`]; nothing is
//! printed here.

use std::path::{Path, PathBuf};

use roboaudit_data::atomic::{WriteError, create_dir, write_all_atomic};
use roboaudit_data::{DataError, RUN_FILE_EXTENSIONS, RetrievalPaths, load_retrieval_inputs};

use crate::{AuditConfig, AuditReport, RetrievalError, render_summary_markdown, run_audit};

/// Name of the audit report in the output folder.
pub const AUDIT_FILE: &str = "audit.json";
/// Name of the Markdown summary in the output folder.
pub const SUMMARY_FILE: &str = "summary.md";

/// Everything `retrieval audit` needs, as typed values.
#[derive(Debug, Clone, Default)]
pub struct AuditRequest {
    /// A folder holding `executions`, `scenes`, `experiences`, `embeddings` (and optionally
    /// `selections`) files in one of [`RUN_FILE_EXTENSIONS`]; the file fields override its files.
    pub run: Option<PathBuf>,
    /// Execution log (CSV, Parquet or JSONL; or a folder of Parquet parts).
    pub executions: Option<PathBuf>,
    /// Query scenes file.
    pub scenes: Option<PathBuf>,
    /// Library experiences file, in library order.
    pub experiences: Option<PathBuf>,
    /// Embeddings file.
    pub embeddings: Option<PathBuf>,
    /// Optional user selection log.
    pub selections: Option<PathBuf>,
    /// Output folder (created if missing); nothing is written there when the audit fails.
    pub out: PathBuf,
    /// The audit's settings, checked by [`AuditConfig::check`] before any input is looked for.
    pub config: AuditConfig,
    /// The task and reuse mechanism of `run`, recorded as the report's
    /// [`AuditReport::run`](crate::AuditReport::run); the caller reads them from the folder's
    /// `collect.json` (this crate does not know the collection harness's manifest).
    pub origin: Option<roboaudit_types::TaskMechanism>,
}

/// The options of `retrieval audit` as a user gives them; [`AuditOptions::request`] turns them
/// into an [`AuditRequest`]. Each field's documentation is its command-line help. The input
/// files are those of [`AuditRequest`]: the executions may also be a folder of Parquet parts.
/// The settings are checked by [`AuditConfig::check`] when the request runs; the command line's
/// parser also bounds the counts of random draws (`resamples` and `permutations` 100 to
/// 1,000,000, `subsets` 1 to 100,000), so that a typo cannot ask for terabytes of resample
/// indices. Without `library_sizes` the audit runs no library intervention.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct AuditOptions {
    /// Folder holding executions.parquet, scenes.csv, experiences.csv, embeddings.parquet
    /// (and optionally selections.csv); individual file options override its files.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub run: Option<PathBuf>,
    /// Execution log (CSV, Parquet or JSONL): experience_id, scene_id, seed, success.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub executions: Option<PathBuf>,
    /// Query scenes: scene_id, perturbation, layout_level, appearance_draw.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub scenes: Option<PathBuf>,
    /// Library experiences in library order: experience_id [, base_scene_id, recorded_at, own_base_success].
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub experiences: Option<PathBuf>,
    /// Embeddings: representation, kind (experience|scene), id, vector.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub embeddings: Option<PathBuf>,
    /// Optional user selection log: scene_id, experience_id.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub selections: Option<PathBuf>,
    /// Name of the representation that holds state features (enables the structural rule).
    #[cfg_attr(feature = "clap", arg(long, value_name = "REP"))]
    pub structural: Option<String>,
    /// Output folder (created if missing); nothing is written there when the audit fails.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
    /// Seed of every random draw (shuffles, bootstrap, random rule, track record).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0))]
    pub seed: u64,
    /// Bootstrap resamples for every interval (100 to 1,000,000; fewer give intervals that mean nothing).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = crate::DEFAULT_RESAMPLES, value_parser = draws_in(100, 1_000_000))
    )]
    pub resamples: usize,
    /// Permutations of the frequency-matched shuffle (100 to 1,000,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = crate::DEFAULT_PERMUTATIONS, value_parser = draws_in(100, 1_000_000))
    )]
    pub permutations: usize,
    /// Random K-subsets of the pool for the concentration intervention (1 to 100,000).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = crate::DEFAULT_RANDOM_SUBSETS, value_parser = draws_in(1, 100_000))
    )]
    pub subsets: usize,
    /// Nested library sizes by library order, e.g. `--library-size 3 10 50`.
    #[cfg_attr(
        feature = "clap",
        arg(long = "library-size", value_name = "K", num_args = 1..)
    )]
    pub library_sizes: Vec<usize>,
    /// Skip re-running each rule without its top pick (the report's `top_pick_deletion` is then
    /// null with a reason).
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_top_pick_deletion: bool,
}

/// A parser for a count of random draws within `[lo, hi]`: the upper bound keeps a typo from
/// asking for terabytes of resample indices.
#[cfg(feature = "clap")]
fn draws_in(lo: u64, hi: u64) -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(lo..=hi)
}

impl AuditOptions {
    /// The request these options name: the audit's other settings are
    /// [`AuditConfig::default`]'s.
    #[must_use]
    pub fn request(self) -> AuditRequest {
        AuditRequest {
            run: self.run,
            executions: self.executions,
            scenes: self.scenes,
            experiences: self.experiences,
            embeddings: self.embeddings,
            selections: self.selections,
            out: self.out,
            config: AuditConfig {
                seed: self.seed,
                resamples: self.resamples,
                permutations: self.permutations,
                random_subsets: self.subsets,
                library_sizes: self.library_sizes,
                structural: self.structural,
                top_pick_deletion: !self.no_top_pick_deletion,
                ..AuditConfig::default()
            },
            origin: None,
        }
    }
}

/// Errors of an audit request. Each message is whole: a request names its settings as the
/// options a user typed (`--executions`, `--run`).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting the audit cannot use, or a missing input option (a wrong option, not wrong data).
    #[error("{0}")]
    Usage(String),
    /// A run folder that is missing or lacks a required file.
    #[error("{0}")]
    Input(String),
    /// An input file could not be read or failed validation (the error names the file).
    #[error(transparent)]
    Data(#[from] DataError),
    /// The audit refused the inputs (inconsistent cells, an unknown structural representation).
    #[error(transparent)]
    Audit(#[from] RetrievalError),
    /// The report could not be serialized.
    #[error("cannot serialize the audit")]
    Serialize(#[source] serde_json::Error),
    /// Writing an output file failed; the message names the step and the file.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Receives what an audit reports while it runs (a spinner on a terminal).
pub trait AuditObserver {
    /// The input files are being read and validated.
    fn reading(&self) {}
    /// The inputs are read; the rules are being audited.
    fn auditing(&self) {}
    /// The audit finished (not called when it fails).
    fn audited(&self) {}
}

/// An observer that ignores everything.
impl AuditObserver for () {}

/// What [`audit_request`] wrote.
#[derive(Debug, Clone)]
pub struct AuditOutcome {
    /// The report (also in [`Self::audit_file`]).
    pub report: AuditReport,
    /// `OUT/audit.json`.
    pub audit_file: PathBuf,
    /// `OUT/summary.md`.
    pub summary_file: PathBuf,
}

impl AuditOutcome {
    /// Notes for stderr, each ending in a newline: one per `--library-size` the audit could not
    /// run, with the reason (said here as well as in the files).
    #[must_use]
    pub fn notes(&self) -> String {
        self.report
            .library_interventions
            .iter()
            .filter_map(|s| {
                let reason = s.reason.as_ref()?;
                Some(format!(
                    "note: --library-size {} skipped: {reason}\n",
                    s.size
                ))
            })
            .collect()
    }

    /// The line naming the two files written (no newline).
    #[must_use]
    pub fn wrote_line(&self) -> String {
        format!(
            "wrote {} and {}",
            self.audit_file.display(),
            self.summary_file.display()
        )
    }
}

impl AuditRequest {
    /// The input files: the run folder's standard names, overridden by each file given.
    ///
    /// # Errors
    /// [`RequestError::Usage`] when there is no run folder and a required file is not given.
    pub fn paths(&self) -> Result<RetrievalPaths, RequestError> {
        let mut paths = match &self.run {
            Some(dir) => RetrievalPaths::from_run_dir(dir),
            None => {
                let missing: Vec<&str> = [
                    ("--executions", self.executions.is_none()),
                    ("--scenes", self.scenes.is_none()),
                    ("--experiences", self.experiences.is_none()),
                    ("--embeddings", self.embeddings.is_none()),
                ]
                .into_iter()
                .filter_map(|(name, absent)| absent.then_some(name))
                .collect();
                if !missing.is_empty() {
                    return Err(RequestError::Usage(format!(
                        "missing {} (or give --run DIR)",
                        missing.join(", ")
                    )));
                }
                RetrievalPaths::default()
            }
        };
        if let Some(p) = &self.executions {
            paths.executions = p.clone();
        }
        if let Some(p) = &self.scenes {
            paths.scenes = p.clone();
        }
        if let Some(p) = &self.experiences {
            paths.experiences = p.clone();
        }
        if let Some(p) = &self.embeddings {
            paths.embeddings = p.clone();
        }
        if self.selections.is_some() {
            paths.selections = self.selections.clone();
        }
        Ok(paths)
    }

    /// With a run folder: a missing folder, or a required file found in none of the readable
    /// formats, is named as such (with a file of that name in another format, if there is one)
    /// rather than as the standard name the reader would fail to open. Files given by their own
    /// fields are the readers' to check.
    fn check_run_files(&self, dir: &Path, paths: &RetrievalPaths) -> Result<(), RequestError> {
        if !dir.is_dir() {
            let what = if dir.exists() {
                "a file, not a run folder (give the folder that holds executions and experiences)"
            } else {
                "no such folder"
            };
            return Err(RequestError::Input(format!(
                "--run {}: {what}",
                dir.display()
            )));
        }
        // In the order the files are read, so that the first missing one is the reader's first.
        let required = [
            (
                "experiences",
                self.experiences.is_none(),
                &paths.experiences,
            ),
            ("scenes", self.scenes.is_none(), &paths.scenes),
            ("executions", self.executions.is_none(), &paths.executions),
            ("embeddings", self.embeddings.is_none(), &paths.embeddings),
        ];
        for (stem, from_run, path) in required {
            if !from_run || path.exists() {
                continue;
            }
            let parts = if stem == "executions" {
                ", or an executions/ folder of part-NNNNNN.parquet files"
            } else {
                ""
            };
            let others: Vec<String> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with(&format!("{stem}.")))
                .collect();
            let found = match others.as_slice() {
                [] => String::new(),
                names => format!(
                    "; found {}, whose extension is none of these",
                    names.join(", ")
                ),
            };
            let names: Vec<String> = RUN_FILE_EXTENSIONS
                .iter()
                .map(|ext| format!("{stem}.{ext}"))
                .collect();
            let looked_for = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("{} and {last}", rest.join(", "))
                }
                _ => names.concat(),
            };
            return Err(RequestError::Input(format!(
                "no {stem} file in {}: looked for {looked_for}{parts}{found}",
                dir.display()
            )));
        }
        Ok(())
    }
}

/// Runs the audit a request names: checks the settings ([`AuditConfig::check`], a usage
/// error) before any input is looked for, then the run folder's files, reads and audits the
/// inputs ([`audit_inputs`]) and writes `OUT/audit.json` (pretty JSON of [`AuditReport`]) and
/// `OUT/summary.md` ([`render_summary_markdown`]) as one atomic set: both or neither.
///
/// # Errors
/// [`RequestError::Usage`] for settings out of range or missing input options;
/// [`RequestError::Input`] for a run folder that is missing or lacks a file;
/// [`RequestError::Data`] and [`RequestError::Audit`] for inputs that cannot be read or
/// audited; [`RequestError::Serialize`] and [`RequestError::Write`] for the output. Nothing is
/// written on error.
pub fn audit_request(
    req: &AuditRequest,
    obs: &dyn AuditObserver,
) -> Result<AuditOutcome, RequestError> {
    let paths = req.paths()?;
    // Settings are the user's to fix before any input is looked for.
    req.config
        .clone()
        .check()
        .map_err(|e| RequestError::Usage(roboaudit_types::error_chain(&e)))?;
    if let Some(dir) = &req.run {
        req.check_run_files(dir, &paths)?;
    }
    let mut report = audit_inputs(&paths, req.config.clone(), obs)?;
    report.run.clone_from(&req.origin);
    let json = serde_json::to_vec_pretty(&report).map_err(RequestError::Serialize)?;
    let summary = render_summary_markdown(&report);
    create_dir(&req.out)?;
    let audit_file = req.out.join(AUDIT_FILE);
    let summary_file = req.out.join(SUMMARY_FILE);
    write_all_atomic(&[(&audit_file, &json), (&summary_file, summary.as_bytes())])?;
    Ok(AuditOutcome {
        report,
        audit_file,
        summary_file,
    })
}

/// Reads the inputs `paths` names (`roboaudit_data::load_retrieval_inputs`) and audits them
/// with `config` ([`run_audit`]).
///
/// # Errors
/// [`RequestError::Usage`] for settings out of range (checked before any input is read);
/// [`RequestError::Data`] for inputs that cannot be read or fail validation;
/// [`RequestError::Audit`] for inputs the audit refuses.
pub fn audit_inputs(
    paths: &RetrievalPaths,
    config: AuditConfig,
    obs: &dyn AuditObserver,
) -> Result<AuditReport, RequestError> {
    // Settings are the user's to fix before any input is read.
    let config = config
        .check()
        .map_err(|e| RequestError::Usage(roboaudit_types::error_chain(&e)))?;
    obs.reading();
    let inputs = load_retrieval_inputs(paths)?;
    obs.auditing();
    let report = run_audit(&inputs, &config)?;
    obs.audited();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/retrieval")
    }

    fn request(out: &Path) -> AuditRequest {
        AuditRequest {
            run: Some(example()),
            out: out.to_path_buf(),
            config: AuditConfig {
                resamples: 100,
                permutations: 100,
                random_subsets: 10,
                ..AuditConfig::default()
            },
            ..AuditRequest::default()
        }
    }

    /// The example run folder is audited and both files are written, the JSON being the report.
    #[test]
    fn audits_a_run_folder_and_writes_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("audit");
        let outcome = audit_request(&request(&out), &()).unwrap();
        assert_eq!(outcome.audit_file, out.join(AUDIT_FILE));
        let json = std::fs::read(&outcome.audit_file).unwrap();
        assert_eq!(json, serde_json::to_vec_pretty(&outcome.report).unwrap());
        let summary = std::fs::read_to_string(&outcome.summary_file).unwrap();
        assert_eq!(summary, render_summary_markdown(&outcome.report));
    }

    /// Missing options are usage errors, a missing run folder an input error; settings are
    /// checked before any input is looked for; nothing is written.
    #[test]
    fn refusals_are_typed_and_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("audit");
        let no_files = AuditRequest {
            run: None,
            executions: Some(example().join("executions.csv")),
            ..request(&out)
        };
        let e = audit_request(&no_files, &()).unwrap_err();
        assert!(
            matches!(&e, RequestError::Usage(m) if m == "missing --scenes, --experiences, --embeddings (or give --run DIR)"),
            "{e}"
        );
        let missing = AuditRequest {
            run: Some(dir.path().join("nothere")),
            ..request(&out)
        };
        let e = audit_request(&missing, &()).unwrap_err();
        assert!(matches!(e, RequestError::Input(_)), "{e}");
        let mut bad = request(&out);
        bad.run = Some(dir.path().join("nothere"));
        bad.config.library_sizes = vec![0];
        let e = audit_request(&bad, &()).unwrap_err();
        assert!(matches!(e, RequestError::Usage(_)), "{e}");
        assert!(!out.exists());
    }
}
