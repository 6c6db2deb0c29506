//! The FQE stage (SPEC §3): a small push-suite collection with ground truth (`DIR/fqe/run/`),
//! then linear FQE, the naive average and a neural fit (one seed, a small network, stopped when
//! its estimate settles, with episode-bootstrap intervals), scored against the ground truth
//! (`DIR/fqe/`).

use crate::stage::{self, mark_done, remove_stale_temps, stage_done};
use crate::{DemoError, DemoObserver, Scale};
use roboaudit_fqe::headline::FqeHeadline;
use roboaudit_fqe::request::{RunFolderFit, fit_run_folder};
use roboaudit_fqe::{
    FitConfig, FqeReport, FrameFeatures, LinearFqeConfig, NeuralFqeConfig, REPORT_FILE,
    SUMMARY_FILE, write_report,
};
use roboaudit_fqe_collect::{CollectConfig, collect_with};
use std::path::Path;

struct Sizes {
    collect: CollectConfig,
    neural: NeuralFqeConfig,
    components: usize,
    /// Episode-bootstrap refits per policy.
    bootstrap: usize,
}

/// Standard: 300 episodes, 20 rollouts, neural fits that stop when settled (at most 8,000 steps,
/// 256-row batches, a target copy every 40 steps: the 61-frame median episode needs 2,440 steps of
/// backups), 8 episode-bootstrap refits per policy; small: 12 episodes, 3 rollouts, 60 steps of
/// 64-row batches, no refits. A 64-wide network keeps each neural fit to seconds.
///
/// A copy every 50 steps left `offset`'s curve of seed 0 rising at the cap (the "unreliable"
/// marker); every 40 steps settled every curve of seeds 0, 1 and 2 at the same cost (README,
/// "Set up"). With 120 episodes, 64-row batches and a copy every 25 steps the `offset` and
/// `reversed` curves were still moving at the cap.
fn sizes(scale: Scale) -> Sizes {
    let (episodes, rollouts, steps, auto, every, target, batch, bootstrap) = match scale {
        Scale::Standard => (300, 20, 8000, true, 100, 40, 256, 8),
        Scale::Small => (12, 3, 60, false, 10, 20, 64, 0),
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
        batch_size: batch,
        hidden: 64,
        part_embedding: 32,
        // The time input at the part width (32): the configuration whose convergence within
        // the demo's budget the README reports.
        time_embedding: None,
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

/// Outputs of the collection whose fingerprints its stamp records.
const RUN_OUTPUTS: &[&str] = &["ground_truth.json"];

/// Outputs of the fit whose fingerprints its stamp records.
const FIT_OUTPUTS: &[&str] = &[REPORT_FILE, SUMMARY_FILE];

/// Collects into `DIR/fqe/run/` unless a finished collection with the same settings is there.
fn collect_run(
    run_dir: &Path,
    cfg: &CollectConfig,
    obs: &dyn DemoObserver,
) -> Result<(), DemoError> {
    let settings = serde_json::json!({ "collect": cfg });
    if stage_done(run_dir, &settings, RUN_OUTPUTS, &|l| obs.note(l)) {
        return Ok(());
    }
    let checked = cfg.check()?;
    let parent = run_dir.parent().unwrap_or(Path::new("."));
    roboaudit_data::atomic::create_dir(parent)?;
    remove_stale_temps(parent, ".run-");
    let tmp = roboaudit_data::atomic::result_folder_builder()
        .prefix(".run-")
        .tempdir_in(parent)
        .map_err(DemoError::io(format!(
            "cannot create a temporary folder in {}",
            parent.display()
        )))?;
    let progress = obs.fqe_collect("fqe collect");
    let summary = collect_with(&checked, &mut [], tmp.path(), &|stage, done, total| {
        progress.progress(stage, done, total);
    });
    drop(progress);
    summary?;
    mark_done(tmp.path(), &settings, RUN_OUTPUTS)?;
    // A stale collection (other settings, or interrupted) is replaced as a whole.
    if run_dir.exists() {
        std::fs::remove_dir_all(run_dir).map_err(DemoError::io(format!(
            "cannot replace {}",
            run_dir.display()
        )))?;
    }
    std::fs::rename(tmp.keep(), run_dir).map_err(DemoError::io(format!(
        "cannot move the collection to {}",
        run_dir.display()
    )))?;
    Ok(())
}

/// Loads the collection, fits every estimator and scores them.
fn fit(
    run_dir: &Path,
    fit_dir: &Path,
    s: &Sizes,
    obs: &dyn DemoObserver,
) -> Result<FqeReport, DemoError> {
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
    let progress = obs.fqe_fit();
    let report = fit_run_folder(&fit, &*progress);
    drop(progress);
    Ok(report?)
}

/// Runs the FQE stage into `DIR/fqe/`. Announces stages `first` and `first + 1` of `n`.
pub(crate) fn run(
    out: &Path,
    scale: Scale,
    (first, n): (usize, usize),
    obs: &dyn DemoObserver,
) -> Result<FqeHeadline, DemoError> {
    let s = sizes(scale);
    let fit_dir = out.join("fqe");
    let run_dir = fit_dir.join("run");
    obs.stage(
        first,
        n,
        &format!(
            "FQE: collecting {} push episodes and ground truth",
            s.collect.episodes
        ),
    );
    collect_run(&run_dir, &s.collect, obs)?;
    obs.stage(
        first + 1,
        n,
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
    let fqe_json = fit_dir.join(REPORT_FILE);
    let report = if stage_done(&fit_dir, &settings, FIT_OUTPUTS, &|l| obs.note(l)) {
        let text = std::fs::read_to_string(&fqe_json)
            .map_err(DemoError::io(format!("cannot read {}", fqe_json.display())))?;
        serde_json::from_str(&text).map_err(|source| DemoError::FqeReport {
            path: fqe_json.clone(),
            source,
        })?
    } else {
        stage::clear(&fit_dir);
        let report = fit(&run_dir, &fit_dir, &s, obs)?;
        write_report(&fit_dir, &report)?;
        mark_done(&fit_dir, &settings, FIT_OUTPUTS)?;
        report
    };
    Ok(FqeHeadline::of(
        &report,
        "fqe",
        s.collect.episodes,
        s.collect.rollouts,
    ))
}
