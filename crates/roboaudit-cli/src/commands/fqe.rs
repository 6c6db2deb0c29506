//! `roboaudit fqe …`: fitted Q evaluation (SPEC §3).
//!
//! `fit` loads the dataset and the target policies' actions, fits neural FQE (one model per
//! policy and seed), linear FQE and the naive average, and writes `OUT/fqe.json`, `summary.md`
//! and a table on stdout; when ground truth is known (a `--run` folder from `fqe collect`, or
//! `--ground-truth`) it also scores the estimates. `evaluate` (re)scores an existing `fqe.json`
//! against ground truth without refitting.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use roboaudit_data::lerobot::{FeatureKind, LeRobotDataset, SuccessSource, read_policy_actions};
use roboaudit_fqe::{
    ActionTerms, DEFAULT_COVERAGE_THRESHOLD, Encoder, FitConfig, FqeError, FqeReport, GroundTruth,
    LinearFqeConfig, LinearSolver, LoadOptions, NeuralFqeConfig, TargetPolicy,
    align_target_actions, fit_all, load_lerobot, read_ground_truth, score,
    summary::{render_markdown, render_table},
};

use crate::exit::InvalidInput;
use crate::output::{ensure_dir, write_atomic};

/// FQE subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum FqeCommand {
    /// Collect a push-suite dataset on the testbed with ground-truth target-policy values.
    Collect(super::fqe_collect::CollectArgs),
    /// Fit neural FQE, linear FQE and the naive estimate for every target policy; scores them
    /// too when ground truth is known.
    Fit(Box<FitArgs>),
    /// Score the estimates of an existing fit (`OUT/fqe.json`) against ground truth.
    Evaluate(EvaluateArgs),
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
    /// A target policy as NAME=FILE (policy-actions file: `index`, `sample`, `action`); repeatable.
    #[arg(long = "policy-actions", value_name = "NAME=FILE")]
    pub policy_actions: Vec<String>,
    /// Labels file (`episode_index`, `success`); default: the dataset's `next.success` column,
    /// else the last `next.reward` (success when ≥ 0.5).
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Ground-truth file (`roboaudit.fqe.ground_truth.v1`); default RUN/ground_truth.json.
    #[arg(long, value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Discount γ; default: the ground truth's, else 0.99.
    #[arg(long)]
    pub gamma: Option<f64>,
    /// Neural training seeds, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
    pub seeds: Vec<u64>,
    /// Neural gradient steps.
    #[arg(long, default_value_t = 20_000)]
    pub steps: usize,
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
    /// Image feature to encode; "auto" takes the dataset's first `image` feature by name,
    /// "none" uses no image part.
    #[arg(long, default_value = "auto")]
    pub image_feature: String,
    /// Proprioception feature; "none" for none.
    #[arg(long, default_value = "observation.state")]
    pub state_feature: String,
    /// Action feature.
    #[arg(long, default_value = "action")]
    pub action_feature: String,
    /// Principal components kept of the raw-pixel (32×32) features.
    #[arg(long, default_value_t = 64)]
    pub components: usize,
    /// Feature cache folder (default OUT/feature-cache).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Coverage threshold on the standardized action distance.
    #[arg(long, default_value_t = DEFAULT_COVERAGE_THRESHOLD)]
    pub coverage_threshold: f64,
}

/// Arguments of `roboaudit fqe evaluate`.
#[derive(clap::Args, Debug)]
pub struct EvaluateArgs {
    /// A folder written by `roboaudit fqe collect` (its ground_truth.json is used).
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// Ground-truth file (overrides RUN/ground_truth.json).
    #[arg(long, value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Folder holding `fqe.json` from `roboaudit fqe fit`; results are rewritten there.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs an FQE subcommand.
pub fn run(cmd: FqeCommand) -> Result<()> {
    match cmd {
        FqeCommand::Collect(args) => super::fqe_collect::run(&args),
        FqeCommand::Fit(args) => fit(&args),
        FqeCommand::Evaluate(args) => evaluate(&args),
    }
}

/// Input errors exit with code 3.
fn classify(e: FqeError) -> anyhow::Error {
    match e {
        FqeError::Data(_)
        | FqeError::InvalidInputs(_)
        | FqeError::BadFile { .. }
        | FqeError::InvalidConfig(_) => InvalidInput(format!("{e}")).into(),
        other => other.into(),
    }
}

fn optional(name: &str) -> Option<String> {
    (name != "none").then(|| name.to_owned())
}

fn ground_truth_path(run: Option<&Path>, explicit: Option<&PathBuf>) -> Option<PathBuf> {
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
        let (name, file) = spec.split_once('=').ok_or_else(|| {
            InvalidInput(format!("--policy-actions wants NAME=FILE, got \"{spec}\""))
        })?;
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
    if out.is_empty() {
        return Err(InvalidInput(
            "no target policy: pass --policy-actions NAME=FILE or --run DIR".into(),
        )
        .into());
    }
    Ok(out)
}

fn write_outputs(out: &Path, report: &FqeReport) -> Result<()> {
    ensure_dir(out)?;
    let json = serde_json::to_vec_pretty(report).context("cannot serialize the report")?;
    write_atomic(&out.join("fqe.json"), &json)?;
    write_atomic(&out.join("summary.md"), render_markdown(report).as_bytes())?;
    print!("{}", render_table(report));
    Ok(())
}

fn fit(args: &FitArgs) -> Result<()> {
    let dataset_dir = args
        .dataset
        .clone()
        .or_else(|| args.run.as_ref().map(|r| r.join("dataset")))
        .ok_or_else(|| InvalidInput("pass --run DIR or --dataset DIR".into()))?;
    let gt_path = ground_truth_path(args.run.as_deref(), args.ground_truth.as_ref());
    let truth = gt_path
        .as_deref()
        .map(read_ground_truth)
        .transpose()
        .map_err(classify)?;
    let gamma = args
        .gamma
        .or(truth.as_ref().map(|t| t.gamma))
        .unwrap_or(0.99);
    let ds = LeRobotDataset::open(&dataset_dir)
        .with_context(|| format!("cannot open LeRobot dataset {}", dataset_dir.display()))?;
    let labels = match &args.labels {
        Some(f) => SuccessSource::File(f.clone()),
        None if ds.feature("next.success").is_some() => {
            SuccessSource::Column("next.success".into())
        }
        None => SuccessSource::LastReward {
            column: "next.reward".into(),
            threshold: 0.5,
        },
    };
    let image_feature = if args.image_feature == "auto" {
        let mut images: Vec<&str> = ds
            .features()
            .iter()
            .filter(|f| f.kind == FeatureKind::Image)
            .map(|f| f.name.as_str())
            .collect();
        images.sort_unstable();
        images.first().map(|s| (*s).to_owned())
    } else {
        optional(&args.image_feature)
    };
    let opts = LoadOptions {
        image_feature,
        state_feature: optional(&args.state_feature),
        action_feature: args.action_feature.clone(),
        labels,
        encoder: Encoder::raw32(),
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
            steps: args.steps,
            target_update_every: args.target_update,
            target_tau: args.target_tau,
            learning_rate: args.learning_rate,
            batch_size: args.batch_size,
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
        coverage_threshold: args.coverage_threshold,
    };
    config.linear.validate().map_err(classify)?;
    if let Some(neural) = &config.neural {
        neural.validate().map_err(classify)?;
    }
    let gt_dir = gt_path.as_deref().and_then(Path::parent);
    let policy_files = policies(args, truth.as_ref(), gt_dir)?;
    let spinner = crate::progress::spinner("encoding frames");
    let loaded = load_lerobot(&ds, &opts).map_err(classify)?;
    spinner.finish_and_clear();
    let mut targets = Vec::new();
    for (name, file) in policy_files {
        let actions = read_policy_actions(&file)?;
        targets.push(TargetPolicy {
            name,
            actions: align_target_actions(&loaded, &actions).map_err(classify)?,
        });
    }
    let describe = serde_json::json!({ "load": loaded.summary, "parts": loaded.inputs.parts.iter().map(|p| (&p.name, p.width)).collect::<Vec<_>>() });
    let spinner = crate::progress::spinner("fitting");
    let mut report = fit_all(
        &loaded.inputs,
        &targets,
        &config,
        describe,
        &mut |p, what| {
            spinner.set_message(format!("{p}: {what}"));
        },
    )
    .map_err(classify)?;
    spinner.finish_and_clear();
    if let Some(t) = &truth {
        score(&mut report, t).map_err(classify)?;
    }
    write_outputs(&args.out, &report)
}

fn evaluate(args: &EvaluateArgs) -> Result<()> {
    let file = args.out.join("fqe.json");
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let mut report: FqeReport = serde_json::from_str(&text)
        .map_err(|e| InvalidInput(format!("{} is not an FQE report: {e}", file.display())))?;
    let gt_path =
        ground_truth_path(args.run.as_deref(), args.ground_truth.as_ref()).ok_or_else(|| {
            InvalidInput("no ground truth: pass --run DIR or --ground-truth FILE".into())
        })?;
    let truth = read_ground_truth(&gt_path).map_err(classify)?;
    score(&mut report, &truth).map_err(classify)?;
    write_outputs(&args.out, &report)
}
