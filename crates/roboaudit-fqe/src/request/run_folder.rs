//! The fit of a run folder that `fqe collect` wrote (`dataset/`, `policies/`,
//! `ground_truth.json`), every path recorded relative to the report's folder, so that the same
//! run in another folder gives the same `fqe.json` bytes. The demo's FQE stage runs it.

use std::path::PathBuf;

use roboaudit_data::lerobot::{LeRobotDataset, read_policy_actions};

use super::{FitObserver, RequestError};
use crate::{
    DatasetIdentity, FitConfig, FqeReport, FrameFeatures, LoadOptions, Provenance, TargetPolicy,
    Truth, align_target_actions, fit_and_score, fit_work, load_lerobot_with_progress,
    read_ground_truth_fingerprinted,
};

/// A fit of a collected run folder.
#[derive(Debug, Clone)]
pub struct RunFolderFit {
    /// The run folder (`dataset/`, `policies/`, `ground_truth.json`).
    pub run: PathBuf,
    /// The dataset's path as recorded in the report, relative to the report's folder.
    pub recorded_dataset: PathBuf,
    /// Frame features.
    pub features: FrameFeatures,
    /// Principal components kept of the frame features.
    pub components: usize,
    /// Feature cache folder.
    pub cache_dir: PathBuf,
    /// The fit's settings; the linear discount is replaced by the ground truth's.
    pub config: FitConfig,
}

/// Fits every target policy of the run's ground truth (their actions files under the run
/// folder) and scores the estimates against it (methods document §3).
///
/// # Errors
/// [`RequestError::Open`] for a dataset that cannot be opened, [`RequestError::Data`] for an
/// unreadable policy-actions file, [`RequestError::Fqe`] for the rest.
pub fn fit_run_folder(
    fit: &RunFolderFit,
    obs: &dyn FitObserver,
) -> Result<FqeReport, RequestError> {
    let (truth, truth_print) = read_ground_truth_fingerprinted(&fit.run.join("ground_truth.json"))?;
    let dataset_dir = fit.run.join("dataset");
    let ds = LeRobotDataset::open(&dataset_dir).map_err(|source| RequestError::Open {
        path: dataset_dir.clone(),
        source: Box::new(source),
    })?;
    let opts = LoadOptions {
        features: fit.features.clone(),
        components: fit.components,
        cache_dir: Some(fit.cache_dir.clone()),
        ..LoadOptions::push_defaults()
    };
    let loaded = load_lerobot_with_progress(&ds, &opts, &mut |done, total| {
        obs.encoding(done, total);
    })?;
    obs.encoded();
    let mut targets = Vec::new();
    let mut prints = Vec::new();
    for p in &truth.policies {
        let file = fit.run.join(p.actions_path());
        let actions = read_policy_actions(&file).map_err(RequestError::Data)?;
        prints.push((p.policy.clone(), super::actions_fingerprint(&file)?));
        targets.push(TargetPolicy {
            name: p.policy.clone(),
            actions: align_target_actions(&loaded, &actions)?,
        });
    }
    let mut config = fit.config.clone();
    config.linear.gamma = truth.gamma;
    let mut load = serde_json::to_value(&loaded.summary)
        .map_err(|e| RequestError::Input(format!("cannot describe the inputs: {e}")))?;
    if let Some(d) = load.get_mut("dataset") {
        *d = serde_json::Value::from(fit.recorded_dataset.to_string_lossy().into_owned());
    }
    let describe = serde_json::json!({
        "load": load,
        "parts": loaded.inputs.parts.iter().map(|p| (&p.name, p.width)).collect::<Vec<_>>(),
    });
    let dataset = DatasetIdentity {
        path: fit.recorded_dataset.clone(),
        ..DatasetIdentity::of(&ds)?
    };
    let neural_fits = targets.len() * (config.seeds.len() + config.bootstrap);
    obs.fitting(fit_work(targets.len(), &config), neural_fits);
    let mut report = fit_and_score(
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
        &mut |policy, what| obs.stage(policy, what),
        &|k| obs.advance(k),
    )?;
    super::record_actions(&mut report, prints);
    obs.fitted();
    Ok(report)
}
