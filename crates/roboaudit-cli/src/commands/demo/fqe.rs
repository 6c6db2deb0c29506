//! The FQE stage (SPEC §3): a small push-suite collection with ground truth (`DIR/fqe/run/`), then
//! linear FQE, the naive average and a short neural fit (one seed, a small network: enough for a
//! learning curve, not for a converged estimate), scored against the ground truth (`DIR/fqe/`).

use super::{Scale, mark_done, stage_done};
use crate::commands::fqe_collect::collect_with_progress;
use crate::output;
use anyhow::{Context, Result};
use roboaudit_data::lerobot::{LeRobotDataset, read_policy_actions};
use roboaudit_fqe::{
    DatasetIdentity, FitConfig, FqeReport, FrameFeatures, LinearFqeConfig, LoadOptions,
    NeuralFqeConfig, Provenance, TargetPolicy, Truth, align_target_actions, fit_and_score,
    load_lerobot, read_ground_truth_fingerprinted, summary::render_markdown,
};
use roboaudit_fqe_collect::CollectConfig;
use serde::Serialize;
use std::path::Path;

/// Suite-level metrics of one estimator (in the demo's `audit.json`).
#[derive(Debug, Serialize)]
pub(crate) struct EstimatorHeadline {
    /// `neural`, `linear` or `naive`.
    pub estimator: String,
    /// Spearman ρ of the estimates and `V^π` across policies.
    pub spearman_v: Option<f64>,
    /// Normalized regret@1 against `V^π`, in [0, 1].
    pub regret_at_1_v: Option<f64>,
    /// Median absolute relative error over (policy, task).
    pub median_are: Option<f64>,
    /// MMRV against `V^π`.
    pub mmrv_v: Option<f64>,
}

/// Headline of the FQE stage.
#[derive(Debug, Serialize)]
pub(crate) struct FqeSummary {
    /// Folder of `fqe.json`, relative to the demo folder.
    pub dir: String,
    /// Dataset episodes.
    pub episodes: usize,
    /// Ground-truth rollouts per policy and task.
    pub rollouts: usize,
    /// Target policies and their suite `V^π`, best first.
    pub truth: Vec<(String, f64)>,
    /// Per estimator.
    pub estimators: Vec<EstimatorHeadline>,
    /// The report's warnings ([`FqeReport::notes`]): a neural fit too short to converge,
    /// estimates outside `[0, 1]`.
    pub notes: Vec<String>,
}

impl FqeSummary {
    /// Lines of the demo's closing summary.
    pub(super) fn print(&self) -> Result<(), crate::stdout::StdoutError> {
        let opt = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |x| format!("{x:.3}"));
        outln!(
            "fitted Q evaluation (push suite, {} dataset episodes, {} rollouts per policy and task):",
            self.episodes,
            self.rollouts
        )?;
        let truth: Vec<String> = self
            .truth
            .iter()
            .map(|(p, v)| format!("{p} {v:.2}"))
            .collect();
        outln!("  ground-truth V^pi: {}", truth.join(", "))?;
        for e in &self.estimators {
            // An estimator with a warning is not presented as a bare number.
            let prefix = format!("{} FQE:", e.estimator);
            let flag = if self.notes.iter().any(|n| n.starts_with(&prefix)) {
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
        for n in &self.notes {
            outln!("  warning: {n}")?;
        }
        Ok(())
    }
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

/// Loads the collection, fits every estimator and scores them.
fn fit(run_dir: &Path, fit_dir: &Path, s: &Sizes) -> Result<FqeReport> {
    let (truth, truth_print) = read_ground_truth_fingerprinted(&run_dir.join("ground_truth.json"))?;
    let ds = LeRobotDataset::open(run_dir.join("dataset"))
        .with_context(|| format!("cannot open {}", run_dir.join("dataset").display()))?;
    let opts = LoadOptions {
        features: FrameFeatures::Image(roboaudit_fqe_collect::collect::IMAGE_KEY.into()),
        components: s.components,
        cache_dir: Some(fit_dir.join("feature-cache")),
        ..LoadOptions::push_defaults()
    };
    let spinner = crate::progress::spinner("fqe: encoding frames");
    let loaded = load_lerobot(&ds, &opts)?;
    spinner.finish_and_clear();
    let mut targets = Vec::new();
    for p in &truth.policies {
        let file = run_dir.join(
            p.actions_file
                .clone()
                .unwrap_or_else(|| format!("policies/{}.parquet", p.policy)),
        );
        let actions = read_policy_actions(&file)?;
        targets.push(TargetPolicy {
            name: p.policy.clone(),
            actions: align_target_actions(&loaded, &actions)?,
        });
    }
    let config = FitConfig {
        neural: Some(s.neural.clone()),
        linear: LinearFqeConfig {
            gamma: truth.gamma,
            ..LinearFqeConfig::default()
        },
        seeds: vec![0],
        bootstrap: s.bootstrap,
        coverage_threshold: roboaudit_fqe::DEFAULT_COVERAGE_THRESHOLD,
    };
    // Paths relative to the report folder, so that the same demo in another folder writes the
    // same bytes.
    let relative = Path::new("run/dataset");
    let mut load = serde_json::to_value(&loaded.summary).context("cannot describe the inputs")?;
    if let Some(d) = load.get_mut("dataset") {
        *d = serde_json::Value::from(relative.to_string_lossy().into_owned());
    }
    let describe = serde_json::json!({
        "load": load,
        "parts": loaded.inputs.parts.iter().map(|p| (&p.name, p.width)).collect::<Vec<_>>(),
    });
    let dataset = DatasetIdentity {
        path: relative.to_path_buf(),
        ..DatasetIdentity::of(&ds)?
    };
    let bar = crate::progress::spinner("fqe: fitting");
    let report = fit_and_score(
        &loaded.inputs,
        &targets,
        &config,
        Provenance {
            describe,
            dataset,
            truth: Some(Truth {
                values: &truth,
                fingerprint: &truth_print,
            }),
        },
        &mut |p, what| {
            bar.set_message(format!("fqe: {p}: {what}"));
        },
        &|_| {},
    )?;
    bar.finish_and_clear();
    Ok(report)
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
    let mut truth: Vec<(String, f64)> = r
        .policies
        .iter()
        .filter_map(|p| {
            let v: Vec<f64> = p
                .tasks
                .iter()
                .filter_map(|c| c.truth.as_ref().map(|t| t.v_pi))
                .collect();
            (!v.is_empty()).then(|| (p.policy.clone(), v.iter().sum::<f64>() / v.len() as f64))
        })
        .collect();
    truth.sort_by(|a, b| b.1.total_cmp(&a.1));
    FqeSummary {
        dir: "fqe".into(),
        episodes: s.collect.episodes,
        rollouts: s.collect.rollouts,
        truth,
        estimators: r
            .metrics
            .iter()
            .map(|m| EstimatorHeadline {
                estimator: m.estimator.clone(),
                spearman_v: m.suite.spearman_v,
                regret_at_1_v: m.suite.regret_at_1_v,
                median_are: m.suite.median_are,
                mmrv_v: m.suite.mmrv_v,
            })
            .collect(),
        // Recomputed so that a report cached by an older version gets its warnings too.
        notes: roboaudit_fqe::notes::reliability_notes(r),
    }
}
