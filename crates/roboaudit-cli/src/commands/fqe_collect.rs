//! `roboaudit fqe collect`: a push-suite dataset with ground truth from the testbed (SPEC.md §3).
//!
//! Writes `OUT/dataset/` (LeRobot v3.0), `OUT/policies/<name>.parquet` (policy-actions files),
//! `OUT/ground_truth.json` and `OUT/README.md`. Everything is written into a temporary sibling folder
//! that is renamed to `OUT` at the end, so a failed or killed run leaves nothing half-written.

use crate::exit::Usage;
use anyhow::Context;
use roboaudit_fqe_collect::{
    CheckedConfig, CollectConfig, CollectError, CollectSummary, Stage, collect,
};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Arguments of `roboaudit fqe collect`.
#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    /// Output folder (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Dataset episodes (default 750; 8 with --small).
    #[arg(long)]
    pub episodes: Option<usize>,
    /// Ground-truth rollouts per target policy and task (default 100; 3 with --small).
    #[arg(long)]
    pub rollouts: Option<usize>,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Side of the scene-camera images in pixels, 16..=128 (default 64; 32 with --small).
    #[arg(long, value_name = "PIXELS")]
    pub image_size: Option<usize>,
    /// Action samples per frame for stochastic target policies (default 8; 2 with --small).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Discount per frame for V^π (default 0.99, seed 003's value).
    #[arg(long, default_value_t = 0.99)]
    pub gamma: f64,
    /// A few-second preset for tests and demos; explicit flags override it.
    #[arg(long)]
    pub small: bool,
}

impl CollectArgs {
    fn config(&self) -> CollectConfig {
        let base = if self.small {
            CollectConfig::small()
        } else {
            CollectConfig::default()
        };
        CollectConfig {
            episodes: self.episodes.unwrap_or(base.episodes),
            rollouts: self.rollouts.unwrap_or(base.rollouts),
            seed: self.seed,
            image_size: self.image_size.unwrap_or(base.image_size),
            samples: self.samples.unwrap_or(base.samples),
            gamma: self.gamma,
            ..base
        }
    }
}

fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::Dataset => "recording dataset episodes",
        Stage::Writing => "writing the LeRobot dataset",
        Stage::Actions => "computing policy-actions files",
        Stage::GroundTruth => "ground-truth rollouts",
    }
}

fn check_out(out: &Path) -> anyhow::Result<()> {
    crate::output::refuse_out_file(out)?;
    if out.exists() {
        let empty = out.is_dir()
            && std::fs::read_dir(out)
                .with_context(|| format!("cannot read {}", out.display()))?
                .next()
                .is_none();
        if !empty {
            return Err(Usage(format!(
                "{} already exists and is not empty; choose a new --out or delete it first",
                out.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Runs the collection into `dir` with a progress bar per stage (episodes, then ground-truth
/// rollouts; rate and ETA, hidden in pipes and CI) whose message starts with `label`.
pub(crate) fn collect_with_progress(
    cfg: &CheckedConfig,
    dir: &Path,
    label: &str,
) -> Result<CollectSummary, CollectError> {
    let pb = crate::progress::bar(0, "");
    // Progress arrives from worker threads; the lock keeps the stage switches and positions ordered.
    let last = Mutex::new((None::<Stage>, 0usize));
    let summary = collect(cfg, dir, &|stage, done, total| {
        if let Ok(mut l) = last.lock() {
            if l.0 != Some(stage) {
                *l = (Some(stage), 0);
                pb.set_length(total as u64);
                pb.set_position(0);
                pb.reset_eta();
                pb.set_message(format!("{label}: {}", stage_name(stage)));
            }
            if done >= l.1 {
                l.1 = done;
                pb.set_position(done as u64);
            }
        }
    });
    pb.finish_and_clear();
    summary
}

/// Runs the collection.
pub fn run(args: &CollectArgs) -> anyhow::Result<()> {
    let cfg = args.config().check().map_err(|e| match e {
        CollectError::InvalidConfig(m) => anyhow::Error::new(Usage(m)),
        other => anyhow::Error::new(other),
    })?;
    check_out(&args.out)?;
    let parent = args
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::output::ensure_dir(parent)?;
    // One work folder per --out, named after it: an interrupted run's (a killed process leaves
    // it) is removed by the next run into the same --out instead of piling up beside it.
    let name = args
        .out
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".fqe-collect-{name}");
    let stale = parent.join(format!("{prefix}.partial"));
    if stale.exists() {
        std::fs::remove_dir_all(&stale)
            .with_context(|| format!("cannot remove the interrupted run's {}", stale.display()))?;
    }
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".partial")
        .rand_bytes(0)
        .tempdir_in(parent)
        .with_context(|| format!("cannot create a temporary folder in {}", parent.display()))?;
    let started = Instant::now();
    let summary = collect_with_progress(&cfg, tmp.path(), "fqe collect")?;
    let elapsed = started.elapsed().as_secs_f64();
    // An empty existing folder is replaced by the finished one in one rename.
    if args.out.exists() {
        std::fs::remove_dir(&args.out)
            .with_context(|| format!("cannot replace {}", args.out.display()))?;
    }
    let tmp_path = tmp.keep();
    std::fs::rename(&tmp_path, &args.out)
        .with_context(|| format!("cannot move the results to {}", args.out.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&args.out, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot set permissions of {}", args.out.display()))?;
    }
    let t = &summary.truth;
    let c = &cfg.config;
    println!(
        "dataset: {} episodes, {} frames, 4 push tasks ({}x{} images) in {:.1} s ({:.1} episodes/s incl. rollouts)",
        t.n_dataset_episodes,
        t.n_dataset_frames,
        c.image_size,
        c.image_size,
        elapsed,
        t.n_dataset_episodes as f64 / elapsed.max(1e-9)
    );
    println!(
        "ground truth: {} rollouts per policy and task, gamma = {}",
        c.rollouts, c.gamma
    );
    println!(
        "{:<14} {:>6} {:>6}  per task V^pi / SR",
        "policy", "V^pi", "SR"
    );
    for p in &t.policies {
        let per: Vec<String> = p
            .tasks
            .iter()
            .map(|k| format!("{:.2}/{:.2}", k.v_pi, k.success_rate))
            .collect();
        println!(
            "{:<14} {:>6.3} {:>6.3}  {}",
            p.policy,
            p.suite_v_pi,
            p.suite_success_rate,
            per.join("  ")
        );
    }
    println!("wrote {}", args.out.display());
    Ok(())
}
