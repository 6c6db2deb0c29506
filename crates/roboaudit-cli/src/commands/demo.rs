//! `roboaudit demo`: all three audits end to end on the built-in MuJoCo testbed, then one report,
//! through [`roboaudit_demo::run_demo`] (the output folder's layout and the reuse of finished
//! stages are described there). This module shows the progress and prints the headlines.

use crate::{output, progress};
use anyhow::Result;
use roboaudit_demo::{DEMO_SCHEMA, DemoError, DemoObserver, DemoReport, DemoRequest, DemoTask};
use roboaudit_memory::Estimate;
use roboaudit_report::demo::{ControlSummary, PolicySummary};
use roboaudit_retrieval::RuleFamily;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// Arguments of `roboaudit demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output folder; rerunning into it reuses finished stages.
    #[arg(long, value_name = "DIR", default_value = "roboaudit-demo")]
    pub out: PathBuf,
    /// `standard` (a few minutes on 2 cores) or `small` (about a minute: fewer scenes, pairs,
    /// episodes and training steps, for a first look or a smoke test; the numbers are noisier).
    #[arg(long, value_enum, default_value_t = Scale::Standard)]
    pub scale: Scale,
}

/// Size of the demo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// The default sizes.
    Standard,
    /// About a quarter of the work.
    Small,
}

impl From<Scale> for roboaudit_demo::Scale {
    fn from(s: Scale) -> Self {
        match s {
            Scale::Standard => Self::Standard,
            Scale::Small => Self::Small,
        }
    }
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<()> {
    output::refuse_out_file(&args.out)?;
    // A demo rerun replaces its own results; anyone else's audit or report in --out is refused
    // before any stage runs.
    output::refuse_foreign_results(
        &args.out,
        &[
            ("audit.json", &[DEMO_SCHEMA]),
            ("retrieval/audit.json", &[DEMO_SCHEMA]),
            ("report.json", &[roboaudit_report::SCHEMA]),
        ],
    )?;
    let started = Instant::now();
    let req = DemoRequest {
        out: args.out.clone(),
        scale: args.scale.into(),
    };
    let report = roboaudit_demo::run_demo(&req, &Progress { started }).map_err(demo_error)?;
    print_headlines(&report)?;
    let out = &args.out;
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

fn print_headlines(report: &DemoReport) -> Result<(), crate::stdout::StdoutError> {
    outln!("retrieval audit (success rates over query scenes):")?;
    for t in &report.tasks {
        print_task(t)?;
    }
    outln!("counterfactual memory audit (put_back, pair-bootstrap 95% intervals):")?;
    for m in &report.memory {
        print_policy(m)?;
    }
    if let Some(c) = &report.memory_control {
        print_control(c)?;
    }
    if let Some(f) = &report.fqe {
        print_fqe(f)?;
    }
    Ok(())
}

/// Prints the headline of one retrieval task: reference points, then the best deployable rule.
fn print_task(t: &DemoTask) -> Result<(), crate::stdout::StdoutError> {
    let a = &t.audit;
    let r = &a.reference;
    outln!(
        "  {:5} {} experiences × {} scenes: random (expected) {:.3}  oracle {:.3}  best-fixed {:.3} ({})  headroom {:.3}",
        t.task,
        a.n_experiences,
        a.n_scenes,
        r.random,
        r.oracle,
        r.best_fixed,
        r.best_fixed_experience,
        r.headroom
    )?;
    // Rules that need hindsight (oracle, best-fixed) are references, not candidates.
    let deployable = a
        .rules
        .iter()
        .filter(|x| !matches!(x.family, RuleFamily::Oracle | RuleFamily::BestFixed))
        .max_by(|x, y| x.success.total_cmp(&y.success));
    if let Some(b) = deployable {
        outln!(
            "        best deployable rule {}: success {:.3}, advantage {}{}, top-pick share {:.2} (concentration {:.2}), shuffle gap {}{}",
            b.name,
            b.success,
            b.advantage.map_or_else(
                || "undefined".to_owned(),
                |v| roboaudit_retrieval::fixed(v, 2)
            ),
            // As the audit report: a ratio over oracle − random < 0.05 is noise-dominated.
            if b.advantage_unstable && b.advantage.is_some() {
                " (unstable)"
            } else {
                ""
            },
            b.top_pick_share,
            b.concentration,
            roboaudit_retrieval::signed(b.gap, 3),
            if b.gap_significant == Some(true) {
                " (significant)"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

fn fmt_estimate(e: &Estimate) -> String {
    match (e.value, e.ci) {
        (Some(v), Some([lo, hi])) => format!("{v:+.3} [{lo:+.3}, {hi:+.3}]"),
        (Some(v), None) => format!("{v:+.3}"),
        _ => "undefined".to_owned(),
    }
}

/// Prints the summary line of one memory policy.
fn print_policy(s: &PolicySummary) -> Result<(), crate::stdout::StdoutError> {
    // The same count as the progress lines (pairs asked for), with the exclusions named.
    let pairs = if s.n_excluded > 0 {
        format!(
            "{} of {} pairs ({} excluded by the present check)",
            s.n_pairs,
            s.n_pairs + s.n_excluded,
            s.n_excluded
        )
    } else {
        format!("{} pairs", s.n_pairs)
    };
    outln!(
        "  {:8} {pairs} × {} seeds: warranted choice {}  F {}  U1 {}  fully reliable {}/{}  F > 0: {}",
        s.policy,
        s.seeds,
        s.correct_choice_rate
            .map_or_else(|| "undefined".to_owned(), |v| format!("{v:.3}")),
        fmt_estimate(&s.faithfulness),
        fmt_estimate(&s.u1),
        s.reliable_pairs,
        s.n_pairs,
        match s.positive_rule {
            Some(true) => "yes",
            Some(false) => "no",
            None => "undefined",
        }
    )?;
    Ok(())
}

/// Prints the summary line of the irrelevant-history control.
fn print_control(c: &ControlSummary) -> Result<(), crate::stdout::StdoutError> {
    let ci = |c: Option<[f64; 2]>| {
        c.map_or_else(
            || "undefined".to_owned(),
            |[lo, hi]| format!("[{lo:+.3}, {hi:+.3}]"),
        )
    };
    outln!(
        "  route control (bank, {} pairs × 2 routes): nuisance {:+.3} {}, interaction {:+.3} {} (90%, margin ±{}): {}",
        c.pairs,
        c.nuisance.0,
        ci(c.nuisance.1),
        c.interaction.0,
        ci(c.interaction.1),
        c.margin,
        if c.passed { "passed" } else { "not passed" }
    )?;
    Ok(())
}

/// Prints the lines of the FQE stage.
fn print_fqe(
    summary: &roboaudit_fqe::headline::FqeHeadline,
) -> Result<(), crate::stdout::StdoutError> {
    let opt = |v: Option<f64>| {
        v.map_or_else(
            || roboaudit_types::NO_VALUE.to_owned(),
            |x| format!("{x:.3}"),
        )
    };
    outln!(
        "fitted Q evaluation (push suite, {} dataset episodes, {} rollouts per policy and task):",
        summary.episodes,
        summary.rollouts
    )?;
    let truth: Vec<String> = summary
        .truth
        .iter()
        .map(|(p, v)| format!("{p} {v:.2}"))
        .collect();
    outln!("  ground-truth V^pi: {}", truth.join(", "))?;
    for e in &summary.estimators {
        // An estimator with a warning is not presented as a bare number.
        let flag = if roboaudit_fqe::notes::flags_estimator(&summary.notes, &e.estimator) {
            "  [unreliable: see warning]"
        } else {
            ""
        };
        outln!(
            "  {:7} Spearman(V^pi) {:>6}  regret@1 {:>5}  median ARE {:>6}  MMRV {:>5}{flag}",
            e.estimator,
            opt(e.spearman_v),
            opt(e.regret_at_1_v),
            opt(e.median_are),
            opt(e.mmrv_v)
        )?;
    }
    for n in &summary.notes {
        outln!("  warning: {n}")?;
    }
    Ok(())
}
