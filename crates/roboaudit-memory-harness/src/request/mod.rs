//! The memory commands' pipelines, shared by those commands and the demo: a collection into an
//! output folder (whole and resumable, or one shard), the SPEC §2 audit and the
//! irrelevant-history control over a records file, written atomically; the calibration
//! ([`calibrate`]), the intervention and natural studies ([`study`]) and the policy a command
//! names ([`policy`]); the options each command is given (`CollectOptions`, …), from which its
//! request is built.
//!
//! The audit and the control live here rather than in `roboaudit-memory`: that crate is the
//! analysis over records in memory and knows no file format, while this one already sits on
//! the data layer that reads and writes them.

use crate::collect::{CollectConfig, Collection};
use crate::error::HarnessError;
use crate::output::RECORDS_FILE;
use crate::policy::MemoryPolicy;
use crate::resume::{self, ShardRun};
use roboaudit_data::atomic::WriteError;
use roboaudit_data::{DataError, MemoryRecord};
use roboaudit_memory::{MemoryAudit, MemoryError, Plan, RouteControl, route_control};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub mod calibrate;
mod collect;
mod options;
pub mod policy;
pub mod study;

pub use collect::{DEFAULT_SEEDS, MAX_SEEDS, MAX_UNITS, action_seeds, check_count, check_harness};
pub use options::{
    AuditOptions, CalibrateOptions, CollectOptions, ControlOptions, HarnessOptions,
    InterveneOptions, NaturalOptions,
};
pub use policy::{PolicySpec, connect_served};
pub use roboaudit_policy_client::ServedOptions;

/// File name of the audit's Markdown summary inside its output folder (beside
/// [`roboaudit_memory::AUDIT_FILE`]).
pub const SUMMARY_FILE: &str = "summary.md";

/// File name of the control inside its output folder.
pub const CONTROL_FILE: &str = "control.json";

/// Errors of the memory pipelines, each with a whole message. The transparent variants carry
/// the library error whose kind decides the caller's exit code.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A wrong option, found before any work (an existing records file in `--out`).
    #[error("{0}")]
    Usage(String),
    /// An unknown `--task` name (kept whole: its kind decides the caller's exit code).
    #[error(transparent)]
    Task(#[from] roboaudit_testbed::UnknownTask),
    /// The collection failed (configuration, simulator, policy, partial folder, shard, served).
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// A plan, the records' plan or the output folder's plan is refused.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The records file cannot be read or is invalid.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A result file or the output folder cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The analysis of valid records failed.
    #[error("memory audit failed")]
    Analysis(#[source] MemoryError),
    /// A result could not be serialized (`what`: the audit or the control).
    #[error("cannot serialize the {what}")]
    Serialize {
        /// What was serialized.
        what: &'static str,
        /// Why it failed.
        #[source]
        source: serde_json::Error,
    },
}

/// A collection into `out` of the checked configuration `config`.
#[derive(Debug, Clone)]
pub struct CollectRequest {
    /// What to collect ([`CollectConfig::validate`] runs first).
    pub config: CollectConfig,
    /// The output folder: `records.parquet` and `manifest.json`, or one shard's parts.
    pub out: PathBuf,
    /// Collect only this shard (built-in policies: a served policy's latency differs per shard).
    pub shard: Option<roboaudit_shard::Shard>,
}

/// What [`collect_request`] collected.
#[derive(Debug)]
pub enum Collected {
    /// The whole collection, not yet written ([`crate::output::write_collection`] writes it),
    /// and the number of pairs an interrupted run had kept.
    Whole {
        /// The records and manifest (boxed: a shard's outcome is a few counts).
        run: Box<Collection>,
        /// Pairs resumed from the partial folder.
        resumed: usize,
    },
    /// One shard, written into `out` with its `shard.json`.
    Shard {
        /// The shard collected.
        shard: roboaudit_shard::Shard,
        /// What it owned and resumed.
        run: ShardRun,
    },
}

/// Refuses an output folder that already holds a records file: collected records are never
/// overwritten.
///
/// # Errors
/// [`RequestError::Usage`] naming the file.
pub fn refuse_existing_records(out: &Path) -> Result<(), RequestError> {
    let path = out.join(RECORDS_FILE);
    if path.exists() {
        return Err(RequestError::Usage(format!(
            "{} already exists; collected records are never overwritten (choose a new --out)",
            path.display()
        )));
    }
    Ok(())
}

/// Refuses an output folder that holds files but none of a memory collection's (its records,
/// manifest, `records.partial` or a shard's manifest), as `retrieval collect` and `fqe collect`
/// refuse one: the records would land among someone else's files.
///
/// # Errors
/// [`RequestError::Usage`] naming the folder.
pub fn refuse_occupied(out: &Path) -> Result<(), RequestError> {
    const OWN: [&str; 4] = [
        RECORDS_FILE,
        crate::output::MANIFEST_FILE,
        crate::resume::PARTIAL_DIR,
        roboaudit_shard::SHARD_FILE,
    ];
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    let names: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    if names.is_empty() || names.iter().any(|n| OWN.iter().any(|o| n == *o)) {
        return Ok(());
    }
    Err(RequestError::Usage(format!(
        "{} is not empty and holds no memory collection ({RECORDS_FILE}, {}); collect into an empty or new folder",
        out.display(),
        crate::resume::PARTIAL_DIR
    )))
}

/// Collects `req` with `policy` (identified beyond its name by `identity`, so that a resumed
/// run is of the same policy): the whole collection, resumable through
/// [`resume::collect_resumable`], or one shard through [`resume::collect_shard`].
/// `progress(done, total)` counts routed pairs.
///
/// # Errors
/// [`RequestError::Harness`] from the harness.
pub fn collect_request(
    req: &CollectRequest,
    policy: &mut dyn MemoryPolicy,
    identity: &impl Serialize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Collected, RequestError> {
    let cfg = &req.config;
    Ok(match req.shard {
        Some(shard) => Collected::Shard {
            shard,
            run: resume::collect_shard(cfg, policy, identity, &req.out, shard, progress)?,
        },
        None => {
            let (run, resumed) =
                resume::collect_resumable(cfg, policy, identity, &req.out, progress)?;
            Collected::Whole {
                run: Box::new(run),
                resumed,
            }
        }
    })
}

/// Loads the plan at `path` (the SPEC §2 defaults without one), with its bootstrap seed
/// replaced by `seed` when given.
///
/// # Errors
/// [`MemoryError`] for a plan file that cannot be read or is invalid.
pub fn load_plan(path: Option<&Path>, seed: Option<u64>) -> Result<Plan, MemoryError> {
    let mut plan = match path {
        Some(path) => Plan::load(path)?,
        None => Plan::default(),
    };
    if let Some(seed) = seed {
        plan.bootstrap.seed = seed;
    }
    Ok(plan)
}

/// Reads the records file `records_path` and checks it against `plan`: every record collected
/// under this plan's hash, and (for a plan read from `plan_file`) its excluded pairs.
///
/// # Errors
/// [`RequestError::Data`] for an unreadable or invalid file, [`RequestError::Memory`] for
/// records of another plan.
pub fn read_checked(
    records_path: &Path,
    plan: &Plan,
    plan_file: Option<&Path>,
) -> Result<Vec<MemoryRecord>, RequestError> {
    let records = roboaudit_data::read_memory_records(records_path)?;
    roboaudit_memory::check_records_plan(&records, &plan.hash(), records_path)?;
    if let Some(p) = plan_file {
        roboaudit_memory::check_excluded_pairs(&records, plan).map_err(|e| e.in_plan_file(p))?;
    }
    Ok(records)
}

/// The `memory audit` pipeline: refuses an `out` whose audit ran under another plan, reads and
/// checks `records_path` ([`read_checked`]) and audits it ([`audit_into`]).
///
/// # Errors
/// As [`read_checked`] and [`audit_into`].
pub fn audit_file(
    records_path: &Path,
    plan: &Plan,
    plan_file: Option<&Path>,
    out: &Path,
) -> Result<MemoryAudit, RequestError> {
    roboaudit_memory::check_output_plan(out, &plan.hash())?;
    let records = read_checked(records_path, plan, plan_file)?;
    audit_into(&records, plan, out)
}

/// Audits `records` under `plan` (SPEC §2) and writes `out/audit.json` and `out/summary.md`
/// together, creating `out` if missing.
///
/// # Errors
/// [`RequestError::Memory`] when `out` holds an audit under another plan,
/// [`RequestError::Analysis`] when the analysis fails, [`RequestError::Write`] for the files.
pub fn audit_into(
    records: &[MemoryRecord],
    plan: &Plan,
    out: &Path,
) -> Result<MemoryAudit, RequestError> {
    roboaudit_memory::check_output_plan(out, &plan.hash())?;
    let audit = roboaudit_memory::analyze(records, plan).map_err(RequestError::Analysis)?;
    let json = serde_json::to_vec_pretty(&audit).map_err(|source| RequestError::Serialize {
        what: "audit",
        source,
    })?;
    let summary = roboaudit_memory::render_summary_markdown(&audit);
    roboaudit_data::atomic::create_dir(out)?;
    roboaudit_data::atomic::write_all_atomic(&[
        (&out.join(roboaudit_memory::AUDIT_FILE), &json),
        (&out.join(SUMMARY_FILE), summary.as_bytes()),
    ])?;
    Ok(audit)
}

/// What `memory audit` prints of a finished `audit` written into `out`: the compact table
/// ([`roboaudit_memory::render_compact_table`]), a note that the SPEC §2 defaults applied when
/// no plan file was given (with the plan's hash), and the files written; each line ends in a
/// newline.
pub fn audit_text(audit: &MemoryAudit, plan_hash: &str, out: &Path) -> String {
    let mut s = format!("{}\n", roboaudit_memory::render_compact_table(audit));
    if audit.plan_source == roboaudit_memory::PlanSource::Defaults {
        s.push_str(&format!(
            "note: no --plan given; the defaults of docs/methods.md §2 apply (plan {plan_hash})\n"
        ));
    }
    s.push_str(&format!(
        "wrote {} and {}\n",
        out.join(roboaudit_memory::AUDIT_FILE).display(),
        out.join(SUMMARY_FILE).display()
    ));
    s
}

/// Runs the irrelevant-history control over routed `records` and writes `out/control.json`,
/// creating `out` if missing.
///
/// # Errors
/// [`RequestError::Memory`] when the records hold no routed pairs or the control fails,
/// [`RequestError::Write`] for the file.
pub fn control_into(
    records: &[MemoryRecord],
    plan: &Plan,
    out: &Path,
) -> Result<RouteControl, RequestError> {
    let c = route_control(records, plan)?;
    roboaudit_data::atomic::create_dir(out)?;
    let json = serde_json::to_vec_pretty(&c).map_err(|source| RequestError::Serialize {
        what: "control",
        source,
    })?;
    roboaudit_data::atomic::write_atomic(&out.join(CONTROL_FILE), &json)?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_records_are_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        refuse_existing_records(dir.path()).unwrap();
        std::fs::write(dir.path().join(RECORDS_FILE), b"x").unwrap();
        let err = refuse_existing_records(dir.path()).unwrap_err();
        assert!(matches!(err, RequestError::Usage(_)), "{err}");
        assert!(err.to_string().contains("never overwritten"), "{err}");
    }

    #[test]
    fn a_seed_replaces_the_plans_bootstrap_seed() {
        let plan = load_plan(None, Some(7)).unwrap();
        assert_eq!(plan.bootstrap.seed, 7);
        assert_eq!(load_plan(None, None).unwrap(), Plan::default());
        let err = load_plan(Some(Path::new("/nonexistent/plan.json")), None).unwrap_err();
        assert!(err.to_string().contains("plan"), "{err}");
    }

    /// An analysis failure keeps the memory error as its source, which decides the exit code.
    #[test]
    fn an_analysis_failure_names_the_audit_and_keeps_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan {
            delta: -1.0,
            ..Plan::default()
        };
        let err = audit_into(&[], &plan, dir.path()).unwrap_err();
        assert!(matches!(err, RequestError::Analysis(_)), "{err}");
        let source = std::error::Error::source(&err).unwrap();
        assert!(source.downcast_ref::<MemoryError>().is_some());
        assert!(!dir.path().join(roboaudit_memory::AUDIT_FILE).exists());
    }
}
