//! The FQE stage (SPEC §3): a small push-suite collection with ground truth (`DIR/fqe/run/`), then
//! linear FQE, the naive average and a short neural fit (one seed, a small network: enough for a
//! learning curve, not for a converged estimate), scored against the ground truth (`DIR/fqe/`).

use super::{Scale, mark_done, stage_done};
use crate::commands::fqe_collect::collect_with_progress;
use crate::output;
use anyhow::{Context, Result};
use roboaudit_fqe::headline::FqeHeadline;
use roboaudit_fqe::request::{FitObserver, RunFolderFit, fit_run_folder};
use roboaudit_fqe::{
    FitConfig, FqeReport, FrameFeatures, LinearFqeConfig, NeuralFqeConfig, summary::render_markdown,
};
use roboaudit_fqe_collect::CollectConfig;
use std::path::Path;
use std::sync::Mutex;

/// Headline of the FQE stage (in the demo's `audit.json`).
pub(crate) type FqeSummary = FqeHeadline;

/// Lines of the demo's closing summary.
pub(super) fn print(summary: &FqeSummary) -> Result<(), crate::stdout::StdoutError> {
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

struct Sizes {
    collect: CollectConfig,
    neural: NeuralFqeConfig,
    components: usize,
    /// Episode-bootstrap refits per policy.
    bootstrap: usize,
}

/// Standard: 120 episodes, 20 rollouts, neural fits that stop when settled (at most 8,000 steps,
/// a target copy every 25 steps: the 65-frame median episode needs 1,625 steps of backups), 8
/// episode-bootstrap refits per policy; small: 12 episodes, 3 rollouts, 60 steps, no refits.
/// A 64-wide network and 64-row batches keep each neural fit to seconds.
fn sizes(scale: Scale) -> Sizes {
    let (episodes, rollouts, steps, auto, every, target, bootstrap) = match scale {
        Scale::Standard => (120, 20, 8000, true, 100, 25, 8),
        Scale::Small => (12, 3, 60, false, 10, 20, 0),
    };
    let collect = CollectConfig {
        episodes,
        rollouts,
        image_size: 32,
        samples: 2,
        ..CollectConfig::default()
    };
    let neural = NeuralFqeConfig {
        gamma: collect.gamma,
        steps,
        auto_steps: auto,
        batch_size: 64,
        hidden: 64,
        part_embedding: 32,
        action_embedding: 16,
        task_embedding: 8,
        target_update_every: target,
        curve_every: every,
        ..NeuralFqeConfig::default()
    };
    Sizes {
        collect,
        neural,
        components: 32,
        bootstrap,
    }
}

/// Removes folders `parent/PREFIX*` left by an interrupted run of this stage (Ctrl-C skips the
/// temporary folder's clean-up). Only folders with exactly this prefix, directly in `parent`;
/// a folder that cannot be removed is left (the stage still runs in a fresh one).
pub(super) fn remove_stale_temps(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let stale = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(prefix))
            && e.file_type().is_ok_and(|t| t.is_dir());
        if stale {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Outputs of the collection whose fingerprints its stamp records.
const RUN_OUTPUTS: &[&str] = &["ground_truth.json"];

/// Outputs of the fit whose fingerprints its stamp records.
const FIT_OUTPUTS: &[&str] = &["fqe.json", "summary.md"];

/// Collects into `DIR/fqe/run/` unless a finished collection with the same settings is there.
fn collect_run(run_dir: &Path, cfg: &CollectConfig) -> Result<()> {
    let settings = serde_json::json!({ "collect": cfg });
    if stage_done(run_dir, &settings, RUN_OUTPUTS) {
        return Ok(());
    }
    let checked = cfg.check()?;
    let parent = run_dir.parent().unwrap_or(Path::new("."));
    output::ensure_dir(parent)?;
    remove_stale_temps(parent, ".run-");
    let tmp = tempfile::Builder::new()
        .prefix(".run-")
        .tempdir_in(parent)
        .with_context(|| format!("cannot create a temporary folder in {}", parent.display()))?;
    collect_with_progress(&checked, &mut [], tmp.path(), "fqe collect")?;
    mark_done(tmp.path(), &settings, RUN_OUTPUTS)?;
    // A stale collection (other settings, or interrupted) is replaced as a whole.
    if run_dir.exists() {
        std::fs::remove_dir_all(run_dir)
            .with_context(|| format!("cannot replace {}", run_dir.display()))?;
    }
    std::fs::rename(tmp.keep(), run_dir)
        .with_context(|| format!("cannot move the collection to {}", run_dir.display()))?;
    Ok(())
}

/// Spinner on stderr for the stage's encoding and fitting.
struct Spinner(Mutex<Option<indicatif::ProgressBar>>);

impl FitObserver for Spinner {
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
        *lock(&self.0) = Some(crate::progress::spinner("fqe: fitting"));
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

/// Loads the collection, fits every estimator and scores them.
fn fit(run_dir: &Path, fit_dir: &Path, s: &Sizes) -> Result<FqeReport> {
    let fit = RunFolderFit {
        run: run_dir.to_path_buf(),
        // Relative to the report folder, so that the same demo in another folder writes the
        // same bytes.
        recorded_dataset: Path::new("run/dataset").to_path_buf(),
        features: FrameFeatures::Image(roboaudit_fqe_collect::collect::IMAGE_KEY.into()),
        components: s.components,
        cache_dir: fit_dir.join("feature-cache"),
        config: FitConfig {
            neural: Some(s.neural.clone()),
            linear: LinearFqeConfig::default(),
            seeds: vec![0],
            bootstrap: s.bootstrap,
            coverage_threshold: roboaudit_fqe::DEFAULT_COVERAGE_THRESHOLD,
        },
    };
    let spinner = Spinner(Mutex::new(Some(crate::progress::spinner(
        "fqe: encoding frames",
    ))));
    fit_run_folder(&fit, &spinner).map_err(crate::commands::fqe::request_error)
}

/// Runs the FQE stage. `stage(k, what)` announces stages 1 and 2.
pub(super) fn run(
    out: &Path,
    scale: Scale,
    stage: &mut dyn FnMut(usize, &str),
) -> Result<FqeSummary> {
    let s = sizes(scale);
    let fit_dir = out.join("fqe");
    let run_dir = fit_dir.join("run");
    stage(
        1,
        &format!(
            "FQE: collecting {} push episodes and ground truth",
            s.collect.episodes
        ),
    );
    collect_run(&run_dir, &s.collect)?;
    stage(
        2,
        &format!(
            "FQE: linear, naive and neural fits ({}{} steps, {} bootstrap refits per policy)",
            if s.neural.auto_steps { "at most " } else { "" },
            s.neural.steps,
            s.bootstrap
        ),
    );
    let settings = serde_json::json!({
        "collect": s.collect,
        "neural": s.neural,
        "components": s.components,
        "bootstrap": s.bootstrap,
    });
    let fqe_json = fit_dir.join("fqe.json");
    let report = if stage_done(&fit_dir, &settings, FIT_OUTPUTS) {
        let text = std::fs::read_to_string(&fqe_json)
            .with_context(|| format!("cannot read {}", fqe_json.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not an FQE report", fqe_json.display()))?
    } else {
        let _ = std::fs::remove_file(fit_dir.join(super::STAMP));
        let report = fit(&run_dir, &fit_dir, &s)?;
        let json = serde_json::to_vec_pretty(&report).context("cannot serialize the FQE report")?;
        output::write_all_atomic(&[
            (&fqe_json, &json),
            (
                &fit_dir.join("summary.md"),
                render_markdown(&report).as_bytes(),
            ),
        ])?;
        mark_done(&fit_dir, &settings, FIT_OUTPUTS)?;
        report
    };
    Ok(summarize(&report, &s))
}

fn summarize(r: &FqeReport, s: &Sizes) -> FqeSummary {
    FqeHeadline::of(r, "fqe", s.collect.episodes, s.collect.rollouts)
}
