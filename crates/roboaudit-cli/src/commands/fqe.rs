//! `roboaudit fqe …`: fitted Q evaluation (SPEC §3).
//!
//! `fit` loads the dataset and the target policies' actions, fits neural FQE (one model per
//! policy and seed), linear FQE and the naive average, and writes `OUT/fqe.json`, `summary.md`
//! and a table on stdout; when ground truth is known (a `--run` folder from `fqe collect`, or
//! `--ground-truth`) it also scores the estimates. `evaluate` (re)scores an existing `fqe.json`
//! against ground truth without refitting.
//!
//! Frame features come from a camera when the dataset has one (`--features auto`: an `image`
//! feature, else a `video` feature whose MP4 files are all present and open, decoded with
//! LeRobot's frame-for-timestamp rule), else from a numeric vector column such as
//! `observation.state` (standardized, then the same principal-component step). Without
//! `--policy-actions` or a run folder the target is the behaviour policy itself (the dataset's
//! actions, on-policy evaluation).
//!
//! `--encoder` picks the frozen image encoder: `raw32` (raw pixels 32×32) or
//! `dinov2:PATH[,side=N][,heads=N]`, a DINOv2 ViT/14 checkpoint read from a local safetensors
//! file (nothing is downloaded). A malformed value is a usage error (exit 2) found before any
//! file is read; a missing or invalid weights file is invalid input (exit 3) naming the file,
//! found before the dataset is read.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use roboaudit_data::lerobot::{FeatureKind, LeRobotDataset, SuccessSource, read_policy_actions};
use roboaudit_fqe::number::compact;
use roboaudit_fqe::{
    ActionTerms, DEFAULT_COVERAGE_THRESHOLD, DatasetIdentity, FitConfig, FqeError, FqeReport,
    FrameFeatures, GroundTruth, LinearFqeConfig, LinearSolver, LoadOptions, NeuralFqeConfig,
    Provenance, QHead, TargetPolicy, Truth, align_target_actions, behaviour_actions, fit_and_score,
    fit_work, load_lerobot_with_progress, read_ground_truth_fingerprinted,
    summary::{render_markdown, render_table},
};

use super::fqe_checks::{check_options, warn_component_cap};
use super::fqe_encoder::{EncoderSpec, encoder_spec, load_encoder};
use crate::exit::{InvalidInput, Usage};

/// Name of the behaviour policy when it is the target (no `--policy-actions`, no run folder).
const BEHAVIOUR: &str = "behaviour";
use crate::output::{ensure_dir, write_all_atomic};

/// FQE subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum FqeCommand {
    /// Collect a push-suite dataset on the testbed with ground-truth target-policy values.
    Collect(super::fqe_collect::CollectArgs),
    /// Fit neural FQE, linear FQE and the naive estimate for every target policy; scores them
    /// too when ground truth is known.
    Fit(Box<FitArgs>),
    /// Score the estimates of an existing fit (`OUT/fqe.json`) against ground truth.
    Evaluate(super::fqe_evaluate::EvaluateArgs),
    /// Query a served policy (openpi's websocket protocol) at every frame of a LeRobot dataset,
    /// episode by episode, and write the policy-actions file `fit` reads (resumable).
    Actions(super::fqe_actions::ActionsArgs),
}

/// Arguments of `roboaudit fqe fit`.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// A folder written by `roboaudit fqe collect` (dataset/, policies/, ground_truth.json).
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// A LeRobot dataset (instead of, or overriding, RUN/dataset).
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// A target policy as NAME=FILE (policy-actions file: `index`, `sample`, `action`);
    /// repeatable. Without any (and no run folder), the target is the behaviour policy: the
    /// dataset's own actions (on-policy evaluation).
    #[arg(long = "policy-actions", value_name = "NAME=FILE")]
    pub policy_actions: Vec<String>,
    /// Also evaluate the behaviour policy (the dataset's own actions, on-policy) beside the
    /// --policy-actions files; always on without them.
    #[arg(long)]
    pub behaviour: bool,
    /// Labels file (`episode_index`, `success`; `roboaudit data labels` derives one from a dense
    /// reward); default: the dataset's `next.success` column, else the last `next.reward`
    /// (success when ≥ 0.5).
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Ground-truth file (`roboaudit.fqe.ground_truth.v1`); default RUN/ground_truth.json.
    #[arg(long, value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Output folder (not inside the dataset folder).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Discount γ; default: the ground truth's, else 0.99. With ground truth it must be the
    /// ground truth's (exit code 2 otherwise): values at two discounts are not comparable.
    #[arg(long)]
    pub gamma: Option<f64>,
    /// Neural training seeds, comma-separated, each once.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
    pub seeds: Vec<u64>,
    /// Neural gradient steps per fit: `auto` (stop each fit once its estimate has settled, after
    /// enough Bellman backups for the median episode; at most --max-steps) or a fixed count N.
    #[arg(long, default_value = "auto", value_parser = parse_steps)]
    pub steps: Steps,
    /// The cap of `--steps auto` (the learning rate decays over it).
    #[arg(long, default_value_t = 20_000)]
    pub max_steps: usize,
    /// Episode-bootstrap refits per policy (0: none): each trains neural FQE on the episodes of
    /// one resample (per task, drawn with replacement) and the 2.5–97.5% quantiles of their
    /// estimates are reported per policy and task. Costs B more neural fits per policy.
    #[arg(long, default_value_t = 0)]
    pub bootstrap: usize,
    /// Threads for the whole fit (neural fits run one per thread); default: RAYON_NUM_THREADS,
    /// else one per core.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Target network copy period N.
    #[arg(long, default_value_t = 100)]
    pub target_update: usize,
    /// Polyak rate τ of the target network (> 0 replaces the copy every N steps by
    /// θ̄ ← (1 − τ) θ̄ + τ θ each step).
    #[arg(long, default_value_t = 0.0)]
    pub target_tau: f64,
    /// Neural AdamW learning rate at step 0 (decayed linearly to 5% of it).
    #[arg(long, default_value_t = 1e-3)]
    pub learning_rate: f64,
    /// Neural mini-batch size.
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Output head of the neural Q network: `sigmoid` (values in (0, 1), where every true value
    /// of a terminal success lies) or `linear` (unbounded).
    #[arg(long, default_value = "sigmoid", value_parser = ["sigmoid", "linear"])]
    pub head: String,
    /// Skip neural FQE (linear and naive only).
    #[arg(long)]
    pub no_neural: bool,
    /// Linear FQE ridge λ (per transition).
    #[arg(long, default_value_t = 1e-3)]
    pub ridge: f64,
    /// Linear FQE solver: `lstd` (closed-form projected fixed point) or `iterated` (fitted Q
    /// iteration, may diverge).
    #[arg(long, default_value = "lstd", value_parser = ["lstd", "iterated"])]
    pub linear_solver: String,
    /// Linear FQE action terms: `linear` ([1, z(a)]) or `quadratic` ([1, z(a), z(a)²]).
    #[arg(long, default_value = "quadratic", value_parser = ["linear", "quadratic"])]
    pub action_terms: String,
    /// Frame features: `image:KEY` (a camera, `image` or `video` feature, encoded and reduced to
    /// components), `state:COLUMN` (a numeric vector column, standardized and reduced to
    /// components), a bare KEY (by its declared kind), `none`, or `auto`: the first `image`
    /// feature by name, else the first `video` feature whose MP4 files are all present and
    /// open, else `state:` the --state-feature column.
    #[arg(long, alias = "image-feature", default_value = "auto")]
    pub features: String,
    /// Proprioception feature, added raw beside the frame features unless they are this same
    /// column; "none" for none.
    #[arg(long, default_value = "observation.state")]
    pub state_feature: String,
    /// Action feature.
    #[arg(long, default_value = "action")]
    pub action_feature: String,
    /// Principal components kept of the frame features (the encoder's output — 3,072 raw
    /// pixels, or the DINOv2 width, 384 for ViT-S/14 — or the standardized vector column; at
    /// most its width), 1..=1024. N frames (at most 20,000, evenly spaced, are fitted) span at
    /// most N − 1 directions: more are capped at that before any work, with a warning.
    #[arg(long, default_value_t = 64)]
    pub components: usize,
    /// Frozen image encoder for `image` features: `raw32` (raw pixels 32×32, area-resampled) or
    /// `dinov2:PATH[,side=N][,heads=N]`: a DINOv2 ViT/14 checkpoint from a local safetensors
    /// file in the torch-hub layout (e.g. dinov2_vits14 converted; PATH without commas), whose
    /// final-norm class token is the feature; side = input pixels, a multiple of 14 in 14..=518
    /// (default 224); heads = attention heads (default width / 64). Features are cached under
    /// --cache, keyed by encoder, weights hash and frame.
    #[arg(long, default_value = "raw32", value_name = "ENCODER")]
    pub encoder: String,
    /// Feature cache folder (default OUT/feature-cache); must be a folder, not inside the
    /// dataset folder.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Coverage threshold on the standardized action distance.
    #[arg(long, default_value_t = DEFAULT_COVERAGE_THRESHOLD)]
    pub coverage_threshold: f64,
}

/// `--steps`: `auto` or a fixed number of gradient steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steps {
    /// Stop each fit when settled, at most `--max-steps`.
    Auto,
    /// Exactly this many steps.
    Fixed(usize),
}

fn parse_steps(s: &str) -> Result<Steps, String> {
    if s == "auto" {
        return Ok(Steps::Auto);
    }
    s.parse()
        .map(Steps::Fixed)
        .map_err(|_| format!("expected `auto` or a number of steps, got `{s}`"))
}

impl FitArgs {
    /// The step count (the cap with `auto`) and whether the fit stops when settled.
    pub(super) fn step_budget(&self) -> (usize, bool) {
        match self.steps {
            Steps::Auto => (self.max_steps, true),
            Steps::Fixed(n) => (n, false),
        }
    }
}

/// Runs an FQE subcommand.
pub fn run(cmd: FqeCommand) -> Result<()> {
    match cmd {
        FqeCommand::Collect(args) => super::fqe_collect::run(&args),
        FqeCommand::Fit(args) => fit(&args),
        FqeCommand::Evaluate(args) => super::fqe_evaluate::evaluate(&args),
        FqeCommand::Actions(args) => super::fqe_actions::run(&args),
    }
}

/// `e`'s message followed by each source's that it does not already contain (a Parquet
/// decoder's reason is often the useful part).
pub(super) fn cause_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

/// Input errors exit with code 3, out-of-range settings (a usage error) with 2. The message
/// keeps the whole cause chain (a Parquet decoder's reason is the useful part).
pub(super) fn classify(e: FqeError) -> anyhow::Error {
    let text = cause_chain(&e);
    match e {
        FqeError::InvalidConfig(_) => Usage(text).into(),
        FqeError::Data(_)
        | FqeError::InvalidInputs(_)
        | FqeError::BadFile { .. }
        | FqeError::Weights { .. } => InvalidInput(text).into(),
        other => other.into(),
    }
}

/// Where the labels come from, for `fqe.json`'s inputs, and a note when a labels file is the
/// output of `data detect` with predicted labels in it: the estimates then rest on the
/// detector's accuracy, which only its report gives.
fn describe_labels(labels: &SuccessSource) -> (String, Option<String>) {
    match labels {
        SuccessSource::Column(c) => (format!("column {c:?}, true on any frame"), None),
        SuccessSource::LastReward { column, threshold } => (
            format!("last {column:?} of each episode >= {}", compact(*threshold)),
            None,
        ),
        SuccessSource::MaxReward { column, threshold } => (
            format!(
                "largest {column:?} of each episode >= {}",
                compact(*threshold)
            ),
            None,
        ),
        SuccessSource::File(path) => {
            let described = format!("labels file {}", path.display());
            // `data detect` writes this exact header; its `source` column says which labels
            // were given and which the detector predicted.
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let mut lines = text.lines();
            if lines.next() != Some("episode_index,success,source,probability") {
                return (described, None);
            }
            let (mut rows, mut predicted) = (0usize, 0usize);
            for line in lines.filter(|l| !l.is_empty()) {
                rows += 1;
                predicted += usize::from(line.split(',').nth(2) == Some("detector"));
            }
            let note = (predicted > 0).then(|| {
                format!(
                    "labels: {predicted} of {rows} episode labels in {} were predicted by the success detector (`data detect`), not observed: the estimates carry the detector's errors (its held-out accuracy is in its report)",
                    path.display()
                )
            });
            (
                format!("{described} ({predicted} of {rows} predicted by the success detector)"),
                note,
            )
        }
    }
}

/// The success labels: `--labels`, else `next.success`, else the last `next.reward` ≥ 0.5. A
/// default source that labels no episode a success is refused: FQE would silently estimate 0
/// for every policy (pusht's `next.success` is never true: its episodes stop short of the 0.95
/// coverage the flag needs).
fn labels_source(file: Option<&PathBuf>, ds: &LeRobotDataset) -> Result<SuccessSource> {
    if let Some(f) = file {
        return Ok(SuccessSource::File(f.clone()));
    }
    let hint = format!(
        "pass --labels FILE (episode_index, success), e.g. derived from a dense reward with \
         `roboaudit data labels {} --rule max --threshold T --out FILE`",
        ds.root().display()
    );
    let source = if ds.feature("next.success").is_some() {
        SuccessSource::Column("next.success".into())
    } else if ds.feature("next.reward").is_some() {
        SuccessSource::LastReward {
            column: "next.reward".into(),
            threshold: 0.5,
        }
    } else {
        return Err(InvalidInput(format!(
            "{} has no success label (neither \"next.success\" nor \"next.reward\"); {hint}",
            ds.root().display()
        ))
        .into());
    };
    let labels = ds.success_labels(&source)?;
    if !labels.iter().any(|l| l.success) {
        let what = match &source {
            SuccessSource::Column(c) => format!("\"{c}\" is never true"),
            _ => "the last \"next.reward\" is below 0.5".to_owned(),
        };
        return Err(InvalidInput(format!(
            "{what} in all {} episodes of {}: no usable success label; {hint}",
            labels.len(),
            ds.root().display()
        ))
        .into());
    }
    Ok(source)
}

/// Refuses a feature `key` named by `option` that the dataset does not declare: a wrong option
/// (exit 2, as for `--features`), listing the declared features and any other accepted `extra`.
fn declared(ds: &LeRobotDataset, option: &str, key: &str, extra: &str) -> Result<()> {
    if ds.feature(key).is_some() {
        return Ok(());
    }
    Err(Usage(format!(
        "{option} {key}: the dataset {} declares no feature \"{key}\"; declared features: {}{extra}",
        ds.root().display(),
        ds.describe_features()
    ))
    .into())
}

/// The frame-feature source named by `--features` (see [`FitArgs::features`]; `data detect`
/// spells its features the same way).
pub(crate) fn frame_features(
    spec: &str,
    ds: &LeRobotDataset,
    state_feature: Option<&str>,
) -> Result<FrameFeatures> {
    // A key the dataset does not declare is a wrong option (exit 2), not a bad dataset: the
    // message names the option and lists what the dataset declares.
    let undeclared = |key: &str| -> anyhow::Error {
        Usage(format!(
            "--features {spec}: the dataset {} declares no feature \"{key}\"; declared features: {}",
            ds.root().display(),
            ds.describe_features()
        ))
        .into()
    };
    if let Some(key) = spec.strip_prefix("image:") {
        if ds.feature(key).is_none() {
            return Err(undeclared(key));
        }
        return Ok(FrameFeatures::Image(key.to_owned()));
    }
    if let Some(column) = spec.strip_prefix("state:") {
        if ds.feature(column).is_none() {
            return Err(undeclared(column));
        }
        return Ok(FrameFeatures::Vector(column.to_owned()));
    }
    match spec {
        "none" => return Ok(FrameFeatures::None),
        "auto" => {}
        key => {
            return match ds.feature(key).map(|f| f.kind) {
                Some(FeatureKind::Numeric) => Ok(FrameFeatures::Vector(key.to_owned())),
                // Images and videos (cameras).
                Some(_) => Ok(FrameFeatures::Image(key.to_owned())),
                None => Err(undeclared(key)),
            };
        }
    }
    let mut images: Vec<&str> = ds
        .features()
        .iter()
        .filter(|f| f.kind == FeatureKind::Image)
        .map(|f| f.name.as_str())
        .collect();
    images.sort_unstable();
    if let Some(first) = images.first() {
        return Ok(FrameFeatures::Image((*first).to_owned()));
    }
    if let Some(first) = ds.decodable_video_features().first() {
        return Ok(FrameFeatures::Image(first.clone()));
    }
    match state_feature {
        Some(s)
            if ds
                .feature(s)
                .is_some_and(|f| f.kind == FeatureKind::Numeric) =>
        {
            Ok(FrameFeatures::Vector(s.to_owned()))
        }
        _ => Err(InvalidInput(format!(
            "--features auto: {} has no `image` feature, no `video` feature whose files are all \
             present and open, and no numeric state feature \"{}\"; pass --features \
             state:COLUMN (and --state-feature, --action-feature for non-standard keys); \
             declared features: {}",
            ds.root().display(),
            state_feature.unwrap_or("none"),
            ds.describe_features()
        ))
        .into()),
    }
}

fn optional(name: &str) -> Option<String> {
    (name != "none").then(|| name.to_owned())
}

pub(super) fn ground_truth_path(run: Option<&Path>, explicit: Option<&PathBuf>) -> Option<PathBuf> {
    explicit.cloned().or_else(|| {
        run.map(|r| r.join("ground_truth.json"))
            .filter(|p| p.exists())
    })
}

fn policies(
    args: &FitArgs,
    truth: Option<&GroundTruth>,
    gt_dir: Option<&Path>,
) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for spec in &args.policy_actions {
        let (name, file) = spec
            .split_once('=')
            .ok_or_else(|| Usage(format!("--policy-actions wants NAME=FILE, got \"{spec}\"")))?;
        if name == BEHAVIOUR {
            return Err(Usage(format!(
                "--policy-actions: the name \"{BEHAVIOUR}\" is reserved for the dataset's own actions"
            ))
            .into());
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(Usage(format!(
                "--policy-actions: the name \"{name}\" is given twice; every target policy needs its own name"
            ))
            .into());
        }
        out.push((name.to_owned(), PathBuf::from(file)));
    }
    if let (true, Some(gt), Some(dir)) = (out.is_empty(), truth, gt_dir) {
        for p in &gt.policies {
            let file = p
                .actions_file
                .clone()
                .unwrap_or_else(|| format!("policies/{}.parquet", p.policy));
            out.push((p.policy.clone(), dir.join(file)));
        }
    }
    Ok(out)
}

pub(super) fn write_outputs(out: &Path, report: &FqeReport) -> Result<()> {
    ensure_dir(out)?;
    let json = serde_json::to_vec_pretty(report).context("cannot serialize the report")?;
    write_all_atomic(&[
        (&out.join("fqe.json"), &json),
        (&out.join("summary.md"), render_markdown(report).as_bytes()),
    ])?;
    out!("{}", render_table(report))?;
    for n in &report.notes {
        outln!("warning: {n}")?;
    }
    Ok(())
}

fn fit(args: &FitArgs) -> Result<()> {
    let dataset_dir = args
        .dataset
        .clone()
        .or_else(|| args.run.as_ref().map(|r| r.join("dataset")))
        .ok_or_else(|| Usage("pass --run DIR or --dataset DIR".into()))?;
    check_options(args, &dataset_dir)?;
    match args.threads {
        // Every parallel step of the fit (encoding, linear FQE, the neural fits) runs on the
        // current rayon pool, so installing one of N threads bounds the whole fit. Started after
        // the option checks: a usage error costs no threads.
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .context("cannot start the thread pool")?
            .install(|| fit_checked(args, &dataset_dir)),
        None => fit_checked(args, &dataset_dir),
    }
}

/// [`fit`] once its options are checked.
fn fit_checked(args: &FitArgs, dataset_dir: &Path) -> Result<()> {
    let encoder_spec = encoder_spec(&args.encoder)?;
    // The weights are read (and checked) before the dataset: a wrong file must not cost a
    // dataset pass.
    let encoder = load_encoder(&encoder_spec)?;
    let gt_path = ground_truth_path(args.run.as_deref(), args.ground_truth.as_ref());
    let (truth, truth_print) = match gt_path.as_deref() {
        Some(path) => {
            let (t, print) = read_ground_truth_fingerprinted(path).map_err(classify)?;
            (Some(t), Some(print))
        }
        None => (None, None),
    };
    // Scoring refuses estimates at another discount than the ground truth's; found here, it
    // costs no encoding pass and leaves no feature cache behind.
    if let (Some(g), Some(t), Some(path)) = (args.gamma, &truth, &gt_path)
        && (g - t.gamma).abs() > 1e-12
    {
        return Err(Usage(format!(
            "--gamma {} differs from gamma {} of the ground truth: the estimates could not be scored against it; omit --gamma (or pass --gamma {}), ground truth {}",
            compact(g),
            compact(t.gamma),
            compact(t.gamma),
            path.display()
        ))
        .into());
    }
    let gamma = args
        .gamma
        .or(truth.as_ref().map(|t| t.gamma))
        .unwrap_or(0.99);
    let gt_dir = gt_path.as_deref().and_then(Path::parent);
    let policy_files = policies(args, truth.as_ref(), gt_dir)?;
    let ds = LeRobotDataset::open(dataset_dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", dataset_dir.display()))?;
    let labels = labels_source(args.labels.as_ref(), &ds)?;
    let (labels_described, predicted) = describe_labels(&labels);
    let state_feature = optional(&args.state_feature);
    // A key the user typed is checked as an option; the LeRobot defaults missing from a dataset
    // with non-standard keys stay the dataset's problem (exit 3, with the keys listed).
    if let Some(key) = state_feature
        .as_deref()
        .filter(|k| *k != "observation.state")
    {
        declared(&ds, "--state-feature", key, " (or none)")?;
    }
    if args.action_feature != "action" {
        declared(&ds, "--action-feature", &args.action_feature, "")?;
    }
    let features = frame_features(&args.features, &ds, state_feature.as_deref())?;
    if encoder_spec != EncoderSpec::Raw32 && !matches!(features, FrameFeatures::Image(_)) {
        eprintln!(
            "note: --encoder {} is unused: the frame features are {}",
            args.encoder,
            features.describe()
        );
    }
    warn_component_cap(args, &ds, &features, &encoder);
    let opts = LoadOptions {
        features,
        state_feature,
        action_feature: args.action_feature.clone(),
        labels,
        encoder,
        components: args.components,
        cache_dir: Some(
            args.cache
                .clone()
                .unwrap_or_else(|| args.out.join("feature-cache")),
        ),
        ..LoadOptions::push_defaults()
    };
    // Settings and the policy list are checked before encoding: a typo must not cost the
    // encoding pass nor leave a feature cache behind.
    let config = FitConfig {
        neural: (!args.no_neural).then(|| NeuralFqeConfig {
            gamma,
            steps: args.step_budget().0,
            auto_steps: args.step_budget().1,
            target_update_every: args.target_update,
            target_tau: args.target_tau,
            learning_rate: args.learning_rate,
            batch_size: args.batch_size,
            head: if args.head == "linear" {
                QHead::Linear
            } else {
                QHead::Sigmoid
            },
            ..NeuralFqeConfig::default()
        }),
        linear: LinearFqeConfig {
            gamma,
            ridge: args.ridge,
            action_terms: if args.action_terms == "linear" {
                ActionTerms::Linear
            } else {
                ActionTerms::Quadratic
            },
            solver: if args.linear_solver == "iterated" {
                LinearSolver::Iterated
            } else {
                LinearSolver::Lstd
            },
            ..LinearFqeConfig::default()
        },
        seeds: args.seeds.clone(),
        bootstrap: args.bootstrap,
        coverage_threshold: args.coverage_threshold,
    };
    config.linear.validate().map_err(classify)?;
    if let Some(neural) = &config.neural {
        neural.validate().map_err(classify)?;
    }
    // Policy-actions files are read (and checked) before the encoding pass too.
    let mut policy_actions = Vec::with_capacity(policy_files.len());
    for (name, file) in &policy_files {
        policy_actions.push((name.clone(), read_policy_actions(file)?));
    }
    let bar = crate::progress::bar(0, "encoding frames");
    let loaded = load_lerobot_with_progress(&ds, &opts, &mut |done, total| {
        if bar.length() != Some(total as u64) {
            bar.set_length(total as u64);
        }
        bar.set_position(done as u64);
    })
    .map_err(classify)?;
    bar.finish_and_clear();
    let mut targets = Vec::new();
    let only_behaviour = policy_files.is_empty();
    if only_behaviour || args.behaviour {
        targets.push(TargetPolicy {
            name: BEHAVIOUR.to_owned(),
            actions: behaviour_actions(&loaded.inputs),
        });
    }
    for (name, actions) in policy_actions {
        targets.push(TargetPolicy {
            name,
            actions: align_target_actions(&loaded, &actions).map_err(classify)?,
        });
    }
    let target = match (only_behaviour, args.behaviour) {
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
        eprintln!(
            "note: no --policy-actions: evaluating the behaviour policy (the dataset's own actions, on-policy)"
        );
    }
    // One unit per neural gradient step of every (policy, seed) fit and one per linear fit.
    let bar = crate::progress::bar(fit_work(targets.len(), &config), "fitting");
    // The neural batch runs between the "neural" and "linear" progress calls: its wall time is
    // printed (not reported: fqe.json keeps the same bytes on every machine).
    let (mut neural_start, mut neural_end) = (None, None);
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
            dataset: DatasetIdentity::of(&ds).map_err(classify)?,
            truth,
        },
        &mut |_, what| {
            if what.starts_with("neural") {
                neural_start = Some(std::time::Instant::now());
            } else if what == "linear" {
                neural_end = Some(std::time::Instant::now());
            }
        },
        &|k| bar.inc(k),
    )
    .map_err(classify)?;
    bar.finish_and_clear();
    if let (Some(a), Some(b)) = (neural_start, neural_end) {
        let fits = targets.len() * (config.seeds.len() + config.bootstrap);
        eprintln!(
            "neural FQE: {fits} fits in {:.2} s on {} threads",
            (b - a).as_secs_f64(),
            rayon::current_num_threads()
        );
    }
    if let Some(note) = predicted {
        report.notes.push(note);
    }
    write_outputs(&args.out, &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `data detect` labels file is recognised by its header and its predicted labels are
    /// counted into a note; any other labels file is only named.
    #[test]
    fn detector_labels_are_counted_into_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let detected = dir.path().join("labels.csv");
        std::fs::write(
            &detected,
            "episode_index,success,source,probability\n0,1,label,1.000000\n1,0,detector,0.210000\n2,1,detector,0.900000\n",
        )
        .unwrap();
        let (described, note) = describe_labels(&SuccessSource::File(detected.clone()));
        assert!(
            described.ends_with("(2 of 3 predicted by the success detector)"),
            "{described}"
        );
        let note = note.unwrap();
        assert!(
            note.starts_with("labels: 2 of 3 episode labels in "),
            "{note}"
        );
        let plain = dir.path().join("plain.csv");
        std::fs::write(&plain, "episode_index,success\n0,1\n").unwrap();
        assert_eq!(describe_labels(&SuccessSource::File(plain)).1, None);
        let all_given = dir.path().join("given.csv");
        std::fs::write(
            &all_given,
            "episode_index,success,source,probability\n0,1,label,1.000000\n",
        )
        .unwrap();
        assert_eq!(describe_labels(&SuccessSource::File(all_given)).1, None);
    }
}
