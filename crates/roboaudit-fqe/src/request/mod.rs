//! The whole `fqe fit` pipeline of a dataset folder (methods document §3): a request names the
//! dataset, the target policies' actions files, the labels, the ground truth, the frame features
//! and the fit's settings; [`fit_request`] checks them, loads and encodes the dataset, fits every
//! estimator ([`crate::fit_and_score`], shared with the demo) and returns the report. Progress and
//! notes go to a [`FitObserver`]; nothing is printed or written here.

mod encoder_spec;
mod evaluate;
mod features;
mod labels;
mod options;
mod run_folder;

use std::path::{Path, PathBuf};
use std::time::Instant;

use roboaudit_data::DataError;
use roboaudit_data::lerobot::{LeRobotDataset, SuccessSource, read_policy_actions};

use crate::bounds_settings::check_components;
use crate::number::compact;
use crate::{
    DatasetIdentity, FitConfig, FqeError, FqeReport, FrameFeatures, GroundTruth, LoadOptions,
    Provenance, TargetPolicy, Truth, align_target_actions, behaviour_actions, check_target_actions,
    fit_and_score, fit_work, load_lerobot_with_progress, read_ground_truth_fingerprinted,
};

pub use encoder_spec::EncoderSpec;
pub use evaluate::{EvaluateRequest, evaluate_request};
pub use features::{auto_skipped_videos, frame_features};
pub use options::{FitOptions, ParseStepsError, Steps, option_name};
pub use run_folder::{RunFolderFit, fit_run_folder};

/// Name of the behaviour policy when it is the target (the dataset's own actions).
pub const BEHAVIOUR: &str = "behaviour";

/// Discount of a fit without ground truth and without an explicit γ.
pub const DEFAULT_GAMMA: f64 = 0.99;

/// Errors of a fit request. The message is whole (no prefix): a request names its settings as
/// the options a user typed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting or name the request cannot use (a wrong option, not wrong data).
    #[error("{0}")]
    Usage(String),
    /// An input file or dataset that cannot be used.
    #[error("{0}")]
    Input(String),
    /// The dataset folder could not be opened.
    #[error("cannot open LeRobot dataset {}", path.display())]
    Open {
        /// The dataset folder.
        path: PathBuf,
        /// Why (boxed: it would double the size of every result).
        #[source]
        source: Box<DataError>,
    },
    /// Reading the labels or a policy-actions file failed.
    #[error(transparent)]
    Data(DataError),
    /// Loading, fitting or scoring failed (including [`FqeError::Setting`] for a setting out of
    /// bounds).
    #[error(transparent)]
    Fqe(#[from] FqeError),
}

/// Everything `fqe fit` needs, as typed values.
#[derive(Debug, Clone)]
pub struct FitRequest {
    /// A folder written by `fqe collect` (`dataset/`, `policies/`, `ground_truth.json`), if any.
    pub run: Option<PathBuf>,
    /// The LeRobot dataset folder.
    pub dataset: PathBuf,
    /// Target policies as (name, policy-actions file); empty: the run's policies, else the
    /// behaviour policy alone.
    pub policy_actions: Vec<(String, PathBuf)>,
    /// Also evaluate the behaviour policy beside `policy_actions`.
    pub behaviour: bool,
    /// Labels file; `None`: `next.success`, else the last `next.reward` ≥ 0.5.
    pub labels: Option<PathBuf>,
    /// Ground-truth file; `None`: `RUN/ground_truth.json` when it exists.
    pub ground_truth: Option<PathBuf>,
    /// Discount γ in `[0, 1]`; `None`: the ground truth's, else [`DEFAULT_GAMMA`]. With ground
    /// truth it must be the ground truth's.
    pub gamma: Option<f64>,
    /// Frame features as text (see [`frame_features`]).
    pub features: String,
    /// Proprioception column added raw beside the frame features (`None`: none).
    pub state_feature: Option<String>,
    /// The time input ([`LoadOptions::time_input`]): each frame's position in its episode as
    /// one more input part.
    pub time_input: bool,
    /// Action column.
    pub action_feature: String,
    /// Principal components kept of the frame features, `1..=`[`crate::bounds_settings::MAX_COMPONENTS`].
    pub components: usize,
    /// Image encoder as text (see [`EncoderSpec::parse`]).
    pub encoder: String,
    /// Feature cache folder.
    pub cache_dir: PathBuf,
    /// The fit's settings; the discounts in it are replaced by the resolved γ.
    pub config: FitConfig,
    /// Replace the neural target period of `config` by [`crate::neural::target_period`] of its
    /// steps and the dataset's median episode, once the dataset is read.
    pub target_period_from_episodes: bool,
}

/// Receives what a fit reports while it runs. Called from the fit's threads (`advance` from
/// several at once).
pub trait FitObserver: Sync {
    /// A line for the user, with its `note: ` or `warning: ` prefix.
    fn note(&self, line: &str);
    /// `done` of `total` frames encoded.
    fn encoding(&self, done: usize, total: usize);
    /// Encoding finished.
    fn encoded(&self);
    /// Fitting starts: `work` units of [`fit_work`] and `neural_fits` neural fits in all.
    fn fitting(&self, work: u64, neural_fits: usize);
    /// Policy `policy` entered fit stage `what` (`neural…`, `linear`, …).
    fn stage(&self, policy: &str, what: &str);
    /// `k` units of work done.
    fn advance(&self, k: u64);
    /// Fitting finished.
    fn fitted(&self);
    /// After [`Self::fitted`], the neural fits' wall time as a line for the user
    /// ([`neural_timing`]), when neural and linear FQE both ran. It is not in the report,
    /// whose bytes are the same on every machine. Ignored by default.
    fn timing(&self, line: &str) {
        let _ = line;
    }
}

/// The line that says how long `fits` neural fits took: `seconds` from the start of the last
/// neural stage to the start of the linear stage, on a pool of `threads` threads.
#[must_use]
pub fn neural_timing(fits: usize, seconds: f64, threads: usize) -> String {
    format!(
        "neural FQE: {fits} fits in {seconds:.2} s on {threads} thread{}",
        if threads == 1 { "" } else { "s" }
    )
}

impl FitRequest {
    /// Checks every setting against its bounds ([`FitConfig::validate`], the components, γ),
    /// before any file is read: a typo must not cost a dataset pass.
    ///
    /// # Errors
    /// [`FqeError::Setting`] (in [`RequestError::Fqe`]) naming the first setting out of bounds.
    pub fn validate(&self) -> Result<(), RequestError> {
        check_components(self.components)?;
        let mut config = self.config.clone();
        set_gamma(&mut config, self.gamma.unwrap_or(DEFAULT_GAMMA));
        config.validate()?;
        Ok(())
    }
}

fn set_gamma(config: &mut FitConfig, gamma: f64) {
    config.linear.gamma = gamma;
    if let Some(n) = &mut config.neural {
        n.gamma = gamma;
    }
}

/// Refuses a file named by an option (`(option text, file)`) that does not exist, naming the
/// option: the reader's own error would name only the file.
fn named_files_exist<'a>(
    named: impl IntoIterator<Item = (String, &'a PathBuf)>,
) -> Result<(), RequestError> {
    match named.into_iter().find(|(_, file)| !file.exists()) {
        Some((option, file)) => Err(RequestError::Input(format!(
            "{option}{}: no such file",
            file.display()
        ))),
        None => Ok(()),
    }
}

/// The ground-truth file: `explicit`, else `RUN/ground_truth.json` when it exists.
#[must_use]
pub fn ground_truth_path(run: Option<&Path>, explicit: Option<&PathBuf>) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        run.map(|r| r.join("ground_truth.json"))
            .filter(|p| p.exists())
    })
}

/// The target policies' (name, actions file): the request's, else the ground truth's (files
/// relative to its folder).
fn policies(
    req: &FitRequest,
    truth: Option<&GroundTruth>,
    gt_path: Option<&Path>,
) -> Result<Vec<(String, PathBuf)>, RequestError> {
    let gt_dir = gt_path.and_then(Path::parent);
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for (name, file) in &req.policy_actions {
        if name == BEHAVIOUR {
            return Err(RequestError::Usage(format!(
                "--policy-actions: the name \"{BEHAVIOUR}\" is reserved for the dataset's own actions"
            )));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(RequestError::Usage(format!(
                "--policy-actions: the name \"{name}\" is given twice; every target policy needs its own name"
            )));
        }
        if let (Some(gt), Some(dir)) = (truth, gt_dir)
            && let Some(p) = gt.policies.iter().find(|p| &p.policy == name)
        {
            refuse_other_actions(name, file, &dir.join(p.actions_path()))?;
        }
        out.push((name.clone(), file.clone()));
    }
    if let (true, Some(gt), Some(dir)) = (out.is_empty(), truth, gt_dir) {
        for p in &gt.policies {
            if req.behaviour && p.policy == BEHAVIOUR {
                return Err(RequestError::Usage(format!(
                    "--behaviour: the ground truth already has a policy named \"{BEHAVIOUR}\" \
                     (with its actions file {}), the name --behaviour gives the dataset's own \
                     actions; leave out --behaviour or rename that policy",
                    p.actions_path()
                )));
            }
            let file = dir.join(p.actions_path());
            if !file.is_file() {
                // The schema places actions files relative to the ground truth's folder, which a
                // `--ground-truth` copied out of its run folder leaves behind.
                return Err(RequestError::Input(format!(
                    "{}: policy \"{}\" reads its actions from {} (relative to the ground \
                     truth's folder), and {} is not a file: keep ground_truth.json in its \
                     `fqe collect` folder, or name the file with --policy-actions {}=FILE",
                    gt_path.unwrap_or(dir).display(),
                    p.policy,
                    p.actions_path(),
                    file.display(),
                    p.policy
                )));
            }
            out.push((p.policy.clone(), file));
        }
    }
    Ok(out)
}

/// Refuses an input column (`--features state:COLUMN`, `--state-feature`) that is not an
/// observation: the action feature (Q takes the action beside the inputs, and as an input the
/// behaviour's action would stand in for every target action), the labels' column or any
/// `next.*` column (what follows the frame's action: reward, success, done; as an input it would
/// hand the network the label it is to learn).
fn refuse_outcomes_as_inputs(
    req: &FitRequest,
    features: &FrameFeatures,
    labels: &SuccessSource,
) -> Result<(), RequestError> {
    let label_column = match labels {
        SuccessSource::Column(c)
        | SuccessSource::LastReward { column: c, .. }
        | SuccessSource::MaxReward { column: c, .. } => Some(c.as_str()),
        SuccessSource::File(_) => None,
    };
    let state = req.state_feature.as_deref();
    // The state feature's default is not something the user typed: the message says how to
    // change it.
    let state_option = if state == Some("observation.state") {
        "--state-feature (default observation.state; none for none)"
    } else {
        "--state-feature"
    };
    for (option, key) in [("--features", features.column()), (state_option, state)] {
        let Some(key) = key else { continue };
        let why = if key == req.action_feature {
            format!(
                "is the action feature (--action-feature {key}), not an observation: Q takes the \
                 action beside the inputs, and as an input the behaviour's action would stand in \
                 for every target action"
            )
        } else if Some(key) == label_column || key.starts_with("next.") {
            "holds what follows the frame's action (reward, success, done), not an observation: \
             as an input it would hand the network the success label it is to learn"
                .to_owned()
        } else {
            continue;
        };
        return Err(RequestError::Usage(format!("{option}: \"{key}\" {why}")));
    }
    Ok(())
}

/// [`crate::fingerprint`] of a policy-actions file's bytes.
///
/// # Errors
/// [`RequestError::Input`] naming the file when it cannot be read.
pub(crate) fn actions_fingerprint(file: &Path) -> Result<String, RequestError> {
    std::fs::read(file)
        .map(|bytes| crate::fingerprint(&bytes))
        .map_err(|e| RequestError::Input(format!("cannot read {}: {e}", file.display())))
}

/// Sets [`crate::report::PolicyReport::actions_fingerprint`] of each policy named in `prints`.
pub(crate) fn record_actions(report: &mut FqeReport, prints: Vec<(String, String)>) {
    for (name, print) in prints {
        if let Some(p) = report.policies.iter_mut().find(|p| p.policy == name) {
            p.actions_fingerprint = Some(print);
        }
    }
}

/// Refuses `--policy-actions NAME=FILE` when the ground truth knows `NAME` and measured its
/// value with other actions (`truth_file`'s bytes differ from `file`'s): the estimate of one
/// policy would be scored against another's value. An identical copy elsewhere passes; a file
/// that cannot be read is left to the reader, which names it.
fn refuse_other_actions(name: &str, file: &Path, truth_file: &Path) -> Result<(), RequestError> {
    let (Ok(given), Ok(measured)) = (std::fs::read(file), std::fs::read(truth_file)) else {
        return Ok(());
    };
    if given == measured {
        return Ok(());
    }
    Err(RequestError::Usage(format!(
        "--policy-actions {name}={}: the ground truth's \"{name}\" was measured with the actions in {}, and this file holds other actions, so its estimate would be scored against another policy's value; give {name}={} or another name",
        file.display(),
        truth_file.display(),
        truth_file.display()
    )))
}

/// Runs the fit a request names (methods document §3): reads the encoder's weights and the
/// ground truth, opens the dataset, resolves labels and features, reads the policy-actions
/// files (all before the encoding pass, so that a wrong input costs no pass and leaves no
/// feature cache), encodes the frames, fits every estimator and scores them when ground truth
/// is known.
///
/// # Errors
/// See [`RequestError`]; settings are assumed checked by [`FitRequest::validate`] (they are
/// checked again before encoding).
pub fn fit_request(req: &FitRequest, obs: &dyn FitObserver) -> Result<FqeReport, RequestError> {
    named_files_exist(
        [
            ("--ground-truth ", &req.ground_truth),
            ("--labels ", &req.labels),
        ]
        .into_iter()
        .filter_map(|(option, file)| Some((option.to_owned(), file.as_ref()?))),
    )?;
    let encoder_spec = EncoderSpec::parse(&req.encoder)?;
    // The weights are read (and checked) before the dataset: a wrong file must not cost a
    // dataset pass.
    let encoder = encoder_spec.load()?;
    let gt_path = ground_truth_path(req.run.as_deref(), req.ground_truth.as_ref());
    // A run folder with target policies but no ground truth is an unfinished or damaged `fqe
    // collect` run: fitting only the behaviour policy would drop its targets without a word.
    if let (None, Some(run), true) = (&gt_path, &req.run, req.policy_actions.is_empty())
        && run.join("policies").is_dir()
    {
        return Err(RequestError::Input(format!(
            "--run {}: policies/ is there but ground_truth.json is not, so the target policies cannot be named (it lists them and their actions files): restore it from the finished `fqe collect` run, or name the targets with --policy-actions NAME=FILE",
            run.display()
        )));
    }
    let (truth, truth_print) = match gt_path.as_deref() {
        Some(path) => {
            let (t, print) = read_ground_truth_fingerprinted(path)?;
            (Some(t), Some(print))
        }
        None => (None, None),
    };
    // Scoring refuses estimates at another discount than the ground truth's; found here, it
    // costs no encoding pass and leaves no feature cache behind.
    if let (Some(g), Some(t), Some(path)) = (req.gamma, &truth, &gt_path)
        && (g - t.gamma).abs() > 1e-12
    {
        return Err(RequestError::Usage(format!(
            "--gamma {} differs from gamma {} of the ground truth: the estimates could not be scored against it; omit --gamma (or pass --gamma {}), ground truth {}",
            compact(g),
            compact(t.gamma),
            compact(t.gamma),
            path.display()
        )));
    }
    let gamma = req
        .gamma
        .or(truth.as_ref().map(|t| t.gamma))
        .unwrap_or(DEFAULT_GAMMA);
    let policy_files = policies(req, truth.as_ref(), gt_path.as_deref())?;
    // After the names: a name given twice is a usage error, whatever the files.
    named_files_exist(
        req.policy_actions
            .iter()
            .map(|(name, file)| (format!("--policy-actions {name}="), file)),
    )?;
    let ds = LeRobotDataset::open(&req.dataset).map_err(|source| RequestError::Open {
        path: req.dataset.clone(),
        source: Box::new(source),
    })?;
    let labels = labels::labels_source(req.labels.as_ref(), &ds)?;
    let (labels_described, predicted) = labels::describe_labels(&labels);
    // A key the user chose is checked as an option; the LeRobot defaults missing from a dataset
    // with non-standard keys stay the dataset's problem (with the keys listed).
    if let Some(key) = req
        .state_feature
        .as_deref()
        .filter(|k| *k != "observation.state")
    {
        features::declared(&ds, "--state-feature", key, " (or none)")?;
        features::numeric(&ds, "--state-feature", key)?;
    }
    if req.action_feature != "action" {
        features::declared(&ds, "--action-feature", &req.action_feature, "")?;
        features::numeric(&ds, "--action-feature", &req.action_feature)?;
    }
    let features = frame_features(&req.features, &ds, req.state_feature.as_deref())?;
    refuse_outcomes_as_inputs(req, &features, &labels)?;
    for note in features::auto_skipped_videos(&req.features, &ds, &features) {
        obs.note(&note);
    }
    if encoder_spec != EncoderSpec::Raw32 && !matches!(features, FrameFeatures::Image(_)) {
        obs.note(&format!(
            "note: --encoder {} is unused: the frame features are {}",
            req.encoder,
            features.describe()
        ));
    }
    if let Some(w) = features::component_cap_warning(req.components, &ds, &features, &encoder) {
        obs.note(&format!("warning: {w}"));
    }
    let opts = LoadOptions {
        features,
        state_feature: req.state_feature.clone(),
        action_feature: req.action_feature.clone(),
        labels,
        encoder,
        components: req.components,
        cache_dir: Some(req.cache_dir.clone()),
        time_input: req.time_input,
        ..LoadOptions::push_defaults()
    };
    let mut config = req.config.clone();
    set_gamma(&mut config, gamma);
    config.validate()?;
    let mut policy_actions = Vec::with_capacity(policy_files.len());
    let mut prints = Vec::with_capacity(policy_files.len());
    for (name, file) in &policy_files {
        let actions = read_policy_actions(file).map_err(RequestError::Data)?;
        prints.push((name.clone(), actions_fingerprint(file)?));
        policy_actions.push((name.clone(), actions));
    }
    // A policy-actions file that does not fit the dataset stops the run before the encoding
    // pass (minutes on a large dataset), not after it.
    if !policy_actions.is_empty() {
        let frames = ds
            .read_frames(&[req.action_feature.as_str()])
            .map_err(RequestError::Data)?;
        let index: Vec<i64> = frames
            .iter()
            .flat_map(|e| e.index.iter().copied())
            .collect();
        let width = frames
            .iter()
            .find_map(|e| e.column(&req.action_feature)?.first().map(Vec::len))
            .unwrap_or(0);
        for (_, actions) in &policy_actions {
            check_target_actions(&index, width, actions)?;
        }
    }
    let loaded = load_lerobot_with_progress(&ds, &opts, &mut |done, total| {
        obs.encoding(done, total);
    })?;
    obs.encoded();
    let s = &loaded.summary;
    // Rows whose episode the metadata does not describe are not read: say so rather than fit
    // silently on fewer frames than the dataset declares.
    if let Some(total) = ds.info().total_frames.filter(|t| *t != s.frames as u64) {
        obs.note(&format!(
            "warning: meta/info.json declares total_frames {total}; the fit read {} frames, \
             those of the episodes the metadata describes (`roboaudit data inspect {}` names \
             the rows that differ)",
            s.frames,
            ds.root().display()
        ));
    }
    if let Some(encoder) = &s.encoder {
        obs.note(&format!(
            "note: frames by {encoder}: {} encoded, {} found in the feature cache {}",
            s.encoded,
            s.cache_hits,
            req.cache_dir.display()
        ));
    }
    if let (true, Some(neural), Some(frames)) = (
        req.target_period_from_episodes,
        config.neural.as_mut(),
        loaded.inputs.median_episode_frames(),
    ) {
        neural.target_update_every = crate::neural::target_period(neural.steps, frames);
        obs.note(&crate::neural::target_period_note(neural, frames));
    }
    let mut targets = Vec::new();
    let only_behaviour = policy_files.is_empty();
    if only_behaviour || req.behaviour {
        targets.push(TargetPolicy {
            name: BEHAVIOUR.to_owned(),
            actions: behaviour_actions(&loaded.inputs),
        });
    }
    for (name, actions) in policy_actions {
        targets.push(TargetPolicy {
            name,
            actions: align_target_actions(&loaded, &actions)?,
        });
    }
    let target = match (only_behaviour, req.behaviour) {
        (true, _) => {
            "behaviour policy: the dataset's own actions (on-policy evaluation; no --policy-actions given)"
        }
        (false, true) => {
            "policy-actions files, and the behaviour policy: the dataset's own actions (on-policy)"
        }
        (false, false) => "policy-actions files",
    };
    let describe = serde_json::json!({
        "load": loaded.summary,
        "parts": loaded.inputs.parts.iter().map(|p| (&p.name, p.width)).collect::<Vec<_>>(),
        "target": target,
        "labels": labels_described,
    });
    if only_behaviour {
        obs.note(
            "note: no --policy-actions: evaluating the behaviour policy (the dataset's own actions, on-policy)",
        );
    }
    let neural_fits = targets.len() * (config.seeds.len() + config.bootstrap);
    // When the last neural stage and the linear stage began: the neural batch's wall time.
    let (mut neural_started, mut linear_started) = (None, None);
    obs.fitting(fit_work(targets.len(), &config), neural_fits);
    let truth = truth
        .as_ref()
        .zip(truth_print.as_deref())
        .map(|(values, fingerprint)| Truth {
            values,
            fingerprint,
        });
    let mut report = fit_and_score(
        &loaded.inputs,
        &targets,
        &config,
        Provenance {
            describe,
            dataset: DatasetIdentity::of(&ds)?,
            truth,
        },
        &mut |policy, what| {
            if what.starts_with("neural") {
                neural_started = Some(Instant::now());
            } else if what == "linear" {
                linear_started = Some(Instant::now());
            }
            obs.stage(policy, what);
        },
        &|k| obs.advance(k),
    )?;
    obs.fitted();
    if let (Some(a), Some(b)) = (neural_started, linear_started) {
        let seconds = (b - a).as_secs_f64();
        obs.timing(&neural_timing(
            neural_fits,
            seconds,
            rayon::current_num_threads(),
        ));
    }
    record_actions(&mut report, prints);
    if let Some(note) = predicted {
        report.notes.push(note);
    }
    // Every return is then 0 and so is every estimate, whatever the policies: a fit that
    // cannot tell them apart, which `data detect` refuses outright.
    if loaded.inputs.episodes.iter().all(|e| !e.success) {
        report.notes.push(format!(
            "labels: none of the {} episodes succeeds ({labels_described}): every return is 0, \
             so every estimate is 0 whatever the policy; check the labels",
            loaded.inputs.episodes.len()
        ));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::neural_timing;

    #[test]
    fn the_timing_line_counts_threads_in_words() {
        assert_eq!(
            neural_timing(14, 10.104, 2),
            "neural FQE: 14 fits in 10.10 s on 2 threads"
        );
        assert_eq!(
            neural_timing(1, 0.5, 1),
            "neural FQE: 1 fits in 0.50 s on 1 thread"
        );
    }
}
