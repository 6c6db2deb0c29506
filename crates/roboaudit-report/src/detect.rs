//! Reads input folders: detects what each holds, loads the audits and the retrieval matrices.

use crate::model::{
    FqeSection, MemorySection, Report, RetrievalSection, SCHEMA, Source, SourceKind, TaskMechanism,
};
use crate::transfer::{self, Loaded};
use crate::{ReportError, plots};
use roboaudit_fqe::FqeReport;
use roboaudit_memory::interventions::INTERVENTIONS_SCHEMA;
use roboaudit_memory::natural::NATURAL_SCHEMA;
use roboaudit_memory::{CONTROL_SCHEMA, MemoryAudit};
use roboaudit_retrieval::AuditReport;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const RETRIEVAL_SCHEMA: &str = roboaudit_retrieval::SCHEMA;
use crate::demo::{DEMO_SCHEMA, DemoFile};
const MEMORY_SCHEMA: &str = roboaudit_memory::SCHEMA;
const FQE_SCHEMA: &str = roboaudit_fqe::SCHEMA;

#[derive(Deserialize)]
struct Tagged {
    #[serde(default)]
    schema: Option<String>,
}

fn read_text(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, ReportError> {
    serde_json::from_str(text).map_err(|source| ReportError::Json {
        path: path.to_path_buf(),
        source,
    })
}

fn folder_name(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .map_or_else(|| "output".to_owned(), |n| n.to_string_lossy().into_owned())
}

/// A lowercase `[a-z0-9-]` slug of `name` made unique within `taken`.
fn unique_id(prefix: &str, name: &str, taken: &mut BTreeSet<String>) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    // Runs of dashes collapse so that `--` stays reserved for sub-headings (`{section}--{part}`).
    let mut collapsed = String::with_capacity(slug.len());
    for c in slug.chars() {
        if !(c == '-' && collapsed.ends_with('-')) {
            collapsed.push(c);
        }
    }
    let base = format!("{prefix}-{}", collapsed.trim_matches('-'));
    let mut id = base.clone();
    let mut k = 2;
    while taken.contains(&id) {
        id = format!("{base}-{k}");
        k += 1;
    }
    taken.insert(id.clone());
    id
}

/// `name`, or `name #k` when `k − 1` retrieval sections already carry it (two audits of one task
/// under one mechanism, or two folders both called `audit`), so that no two headings read alike.
fn numbered(name: String, sections: &[RetrievalSection]) -> String {
    let before = sections
        .iter()
        .filter(|s| {
            s.name == name
                || s.name
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with(" #"))
        })
        .count();
    if before == 0 {
        name
    } else {
        format!("{name} #{}", before + 1)
    }
}

/// Reads every folder in `dirs` into one report (see [`crate::build_report`]).
pub(crate) fn build(dirs: &[PathBuf]) -> Result<Report, ReportError> {
    let mut report = Report {
        schema: SCHEMA.to_owned(),
        sources: Vec::new(),
        retrieval: Vec::new(),
        memory: Vec::new(),
        fqe: Vec::new(),
        plots: Vec::new(),
        notes: Vec::new(),
    };
    let mut ids = BTreeSet::new();
    let mut runs = Vec::new();
    let mut seen = BTreeSet::new();
    let mut queue: std::collections::VecDeque<PathBuf> = dirs.iter().cloned().collect();
    while let Some(dir) = queue.pop_front() {
        let dir = &dir;
        if !dir.is_dir() {
            return Err(ReportError::NotAFolder(dir.clone()));
        }
        // The same folder given twice (or reached twice through a demo's sources) is read once.
        let key = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        if !seen.insert(key) {
            report.notes.push(format!(
                "{} was given more than once; it is reported once",
                dir.display()
            ));
            continue;
        }
        let mut kinds = Vec::new();
        let audit_path = dir.join("audit.json");
        if audit_path.is_file() {
            match read_audit_json(dir, &audit_path, &mut report, &mut ids)? {
                Read::Kind(kind) => kinds.push(kind),
                Read::Sources(sources) => {
                    // The demo's own list replaces its root: every audit it ran, in its order,
                    // before the folders given after it.
                    for (i, s) in sources.into_iter().enumerate() {
                        queue.insert(i, s);
                    }
                    kinds.push(SourceKind::Demo);
                }
            }
        }
        let fqe_path = dir.join("fqe.json");
        if fqe_path.is_file() {
            let text = read_text(&fqe_path)?;
            check_schema(&fqe_path, &text, &[FQE_SCHEMA])?;
            let fqe: FqeReport = parse(&fqe_path, &text)?;
            let (frames, frames_note) = match crate::frames::strip(&fqe, &fqe_path) {
                Ok(strip) => (Some(strip), None),
                Err(note) => (None, Some(note)),
            };
            report.fqe.push(FqeSection {
                name: folder_name(dir),
                id: unique_id("fqe", &folder_name(dir), &mut ids),
                file: fqe_path,
                report: fqe,
                frames,
                frames_note,
            });
            kinds.push(SourceKind::Fqe);
        }
        if kinds.is_empty() && transfer::is_run_dir(dir) {
            runs.push(dir.clone());
            kinds.push(SourceKind::RetrievalRun);
        }
        if kinds.is_empty() {
            return Err(ReportError::NoAudit(dir.clone()));
        }
        report.sources.push(Source {
            path: dir.clone(),
            kinds,
        });
    }
    attach_runs(&mut report, &runs)?;
    report.plots = plots::catalogue(&report);
    Ok(report)
}

fn check_schema(path: &Path, text: &str, accepted: &[&str]) -> Result<String, ReportError> {
    let tag: Tagged = parse(path, text)?;
    match tag.schema {
        Some(schema) if accepted.contains(&schema.as_str()) => Ok(schema),
        Some(found) => Err(ReportError::Schema {
            path: path.to_path_buf(),
            found,
            expected: accepted.join(", "),
        }),
        None => Err(ReportError::NoSchema {
            path: path.to_path_buf(),
            expected: accepted.join(", "),
        }),
    }
}

/// What one `audit.json` gave: a section of one kind, or (a demo root) the folders to read.
enum Read {
    Kind(SourceKind),
    Sources(Vec<PathBuf>),
}

fn read_audit_json(
    dir: &Path,
    path: &Path,
    report: &mut Report,
    ids: &mut BTreeSet<String>,
) -> Result<Read, ReportError> {
    let text = read_text(path)?;
    let schema = check_schema(path, &text, &[RETRIEVAL_SCHEMA, DEMO_SCHEMA, MEMORY_SCHEMA])?;
    let name = folder_name(dir);
    match schema.as_str() {
        RETRIEVAL_SCHEMA => {
            let audit: AuditReport = parse(path, &text)?;
            // An audit of a `retrieval collect` folder knows its task and mechanism; a folder
            // name such as `audit` says neither.
            let name = numbered(
                audit
                    .run
                    .as_ref()
                    .map_or(name, |r| crate::demo::display_name(&r.task, &r.mechanism)),
                &report.retrieval,
            );
            report.retrieval.push(RetrievalSection {
                id: unique_id("retrieval", &name, ids),
                name,
                audit_file: path.to_path_buf(),
                run_dir: None,
                transfer: None,
                transfer_note: None,
                mechanism: audit.run.clone(),
                audit,
            });
            Ok(Read::Kind(SourceKind::RetrievalAudit))
        }
        DEMO_SCHEMA => {
            let demo: DemoFile = parse(path, &text)?;
            if let Some(sources) = demo.report.as_ref().filter(|r| !r.sources.is_empty()) {
                return Ok(Read::Sources(
                    sources.sources.iter().map(|s| dir.join(s)).collect(),
                ));
            }
            let ignored = demo.headline_parts();
            if !ignored.is_empty() {
                report.notes.push(format!(
                    "{}: only the retrieval tasks were read; `{}` ignored (no `report.sources` \
                     list; give the memory and FQE folders as further DIRs)",
                    path.display(),
                    ignored.join("`, `")
                ));
            }
            for task in demo.tasks {
                let run = dir.join(&task.run_dir);
                let name = numbered(task.display_name(), &report.retrieval);
                let mut section = RetrievalSection {
                    id: unique_id("retrieval", &name, ids),
                    name,
                    audit_file: path.to_path_buf(),
                    run_dir: None,
                    transfer: None,
                    transfer_note: None,
                    audit: task.audit,
                    mechanism: Some(TaskMechanism {
                        task: task.task,
                        mechanism: task.mechanism,
                        appearance_caused_failures: task.appearance_caused_failures,
                    }),
                };
                if transfer::is_run_dir(&run) {
                    attach(&mut section, &run)?;
                } else {
                    section.transfer_note = Some(format!(
                        "run folder {} not found next to audit.json",
                        task.run_dir
                    ));
                }
                report.retrieval.push(section);
            }
            Ok(Read::Kind(SourceKind::Demo))
        }
        _ => {
            let audit: MemoryAudit = parse(path, &text)?;
            report.memory.push(MemorySection {
                id: unique_id("memory", &name, ids),
                name,
                audit_file: path.to_path_buf(),
                control: optional(&dir.join("control.json"), CONTROL_SCHEMA)?,
                interventions: optional(&dir.join("interventions.json"), INTERVENTIONS_SCHEMA)?,
                natural: optional(&dir.join("natural.json"), NATURAL_SCHEMA)?,
                audit,
            });
            Ok(Read::Kind(SourceKind::MemoryAudit))
        }
    }
}

/// The side file at `path` as a `T`, whose `schema` tag must be `schema`, or `None` when nothing
/// is there. Anything else at `path` (a folder, an unreadable file, a file without the tag or
/// with another) is an error naming it, not an absent side file: the report would otherwise
/// silently leave out the control, interventions or natural study its user put there.
fn optional<T: serde::de::DeserializeOwned>(
    path: &Path,
    schema: &str,
) -> Result<Option<T>, ReportError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => {
            let text = read_text(path)?;
            let expected = || format!("\"{schema}\"");
            match parse::<Tagged>(path, &text)?.schema {
                Some(found) if found == schema => parse(path, &text).map(Some),
                Some(found) => Err(ReportError::Schema {
                    path: path.to_path_buf(),
                    found,
                    expected: expected(),
                }),
                None => Err(ReportError::NoSchema {
                    path: path.to_path_buf(),
                    expected: expected(),
                }),
            }
        }
    }
}

/// Loads `run` into `section`; a run of another audit leaves a note instead.
fn attach(section: &mut RetrievalSection, run: &Path) -> Result<bool, ReportError> {
    match transfer::load(run, &section.audit)? {
        Loaded::Matrix(m) => {
            section.transfer = Some(m);
            section.run_dir = Some(run.to_path_buf());
            section.transfer_note = None;
            Ok(true)
        }
        Loaded::Mismatch(why) => {
            section.transfer_note = Some(format!("run folder {} skipped: {why}", run.display()));
            Ok(false)
        }
    }
}

/// Gives each plain retrieval audit its matrix: first from the run folders given as inputs, then
/// from the audit folder itself or its parent (`retrieval collect` suggests `--out RUN/audit`).
fn attach_runs(report: &mut Report, runs: &[PathBuf]) -> Result<(), ReportError> {
    for run in runs {
        let mut matched = false;
        for section in report.retrieval.iter_mut().filter(|s| s.transfer.is_none()) {
            if attach(section, run)? {
                matched = true;
                break;
            }
        }
        if !matched {
            return Err(ReportError::UnmatchedRun(run.clone()));
        }
    }
    for section in report.retrieval.iter_mut().filter(|s| s.transfer.is_none()) {
        if section.transfer_note.is_some() {
            continue;
        }
        let audit_dir = section.audit_file.parent().unwrap_or(Path::new("."));
        let candidates = [Some(audit_dir), audit_dir.parent()];
        let found = candidates
            .into_iter()
            .flatten()
            .filter(|d| !d.as_os_str().is_empty())
            .find(|d| transfer::is_run_dir(d))
            .map(Path::to_path_buf);
        match found {
            Some(run) => {
                attach(section, &run)?;
            }
            None => {
                section.transfer_note = Some(
                    "no run folder found beside the audit; give the run folder as another DIR"
                        .to_owned(),
                );
            }
        }
    }
    Ok(())
}
