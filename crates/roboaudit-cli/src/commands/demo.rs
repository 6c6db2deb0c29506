//! `roboaudit demo`: all three audits end to end on the built-in MuJoCo testbed, then one report,
//! through [`roboaudit_demo::run_demo`] (the output folder's layout and the reuse of finished
//! stages are described there). This module shows the progress and prints the headlines the library renders.

use crate::{output, progress};
use anyhow::Result;
use roboaudit_demo::{DEMO_SCHEMA, DemoError, DemoObserver, DemoRequest};
use std::sync::Mutex;
use std::time::Instant;

/// Runs the demo.
pub fn run(req: &DemoRequest) -> Result<()> {
    output::refuse_out_file(&req.out)?;
    // A demo rerun replaces its own results; anyone else's audit or report in --out is refused
    // before any stage runs.
    output::refuse_foreign_results(
        &req.out,
        &[
            ("audit.json", &[DEMO_SCHEMA]),
            ("retrieval/audit.json", &[DEMO_SCHEMA]),
            ("report.json", &[roboaudit_report::SCHEMA]),
            // An FQE fit's folder: the report written beside it would read it as one more
            // FQE section.
            ("fqe.json", &[]),
        ],
    )?;
    let started = Instant::now();
    let report = roboaudit_demo::run_demo(req, &Progress { started }).map_err(demo_error)?;
    out!("{}", roboaudit_demo::render_headlines(&report))?;
    let out = &req.out;
    let page = out.join("index.html");
    outln!(
        "wrote {} (report.md, report.json) and {} in {:.0} s; open {} in a browser",
        out.join("audit.json").display(),
        page.display(),
        started.elapsed().as_secs_f64(),
        page.display()
    )?;
    Ok(())
}

/// A demo error with the exit code of the pipeline that failed, as its own command maps it.
fn demo_error(e: DemoError) -> anyhow::Error {
    match e {
        DemoError::Usage(m) => crate::exit::Usage(m).into(),
        DemoError::RetrievalCollect { task, source } => {
            super::retrieval::collect_error(*source).context(format!("collecting the {task} run"))
        }
        DemoError::RetrievalAudit { task, source } => {
            super::retrieval::audit_error(*source).context(format!("auditing the {task} run"))
        }
        DemoError::Memory(e) => super::memory::collect::request_error(e),
        DemoError::Learned(e) => super::memory::learned::map_err(*e),
        DemoError::FqeCollect(e) => e.into(),
        DemoError::FqeFit(e) => super::fqe::request_error(*e),
        DemoError::Write(e) => e.into(),
        // The data error stays a cause of its own: its kind sets the exit code.
        DemoError::WriteRecords { path, source } => {
            anyhow::Error::from(*source).context(format!("cannot write {}", path.display()))
        }
        other => other.into(),
    }
}

/// The demo's progress on stderr: a log line per stage (it stays in CI logs), bars and spinners
/// on a terminal.
struct Progress {
    started: Instant,
}

impl DemoObserver for Progress {
    fn stage(&self, k: usize, n: usize, what: &str) {
        eprintln!(
            "[{k}/{n}] {what} (at {:.0} s)",
            self.started.elapsed().as_secs_f64()
        );
    }

    fn note(&self, line: &str) {
        eprintln!("{line}");
    }

    fn retrieval_collect(
        &self,
        task: &str,
    ) -> Box<dyn roboaudit_retrieval_collect::request::CollectObserver + '_> {
        Box::new(super::retrieval::CollectBar::new(task))
    }

    fn retrieval_audit(&self) -> Box<dyn roboaudit_retrieval::request::AuditObserver + '_> {
        Box::new(super::retrieval::Spinner::default())
    }

    fn memory_collect(&self, label: &str, total: usize) -> Box<dyn FnMut(usize, usize) + '_> {
        let bar = progress::ClearOnDrop(progress::bar(total as u64, ""));
        bar.set_message(format!("{label}: pairs"));
        Box::new(move |done: usize, _: usize| bar.set_position(done as u64))
    }

    fn fqe_collect(
        &self,
        label: &str,
    ) -> Box<dyn roboaudit_fqe_collect::request::CollectObserver + '_> {
        Box::new(super::fqe_collect::StageBar::new(label))
    }

    fn fqe_fit(&self) -> Box<dyn roboaudit_fqe::request::FitObserver + '_> {
        Box::new(FitSpinner(Mutex::new(Some(progress::spinner(
            "fqe: encoding frames",
        )))))
    }
}

/// Spinner on stderr for the FQE stage's encoding and fitting.
struct FitSpinner(Mutex<Option<indicatif::ProgressBar>>);

impl roboaudit_fqe::request::FitObserver for FitSpinner {
    fn note(&self, line: &str) {
        eprintln!("{line}");
    }

    fn encoding(&self, _done: usize, _total: usize) {}

    fn encoded(&self) {
        if let Some(s) = lock(&self.0).take() {
            s.finish_and_clear();
        }
    }

    fn fitting(&self, _work: u64, _neural_fits: usize) {
        *lock(&self.0) = Some(progress::spinner("fqe: fitting"));
    }

    fn stage(&self, policy: &str, what: &str) {
        if let Some(s) = lock(&self.0).as_ref() {
            s.set_message(format!("fqe: {policy}: {what}"));
        }
    }

    fn advance(&self, _k: u64) {}

    fn fitted(&self) {
        self.encoded();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
