//! `roboaudit fqe collect`: a push-suite dataset with ground truth from the testbed (SPEC.md §3).
//!
//! Writes `OUT/dataset/` (LeRobot v3.0), `OUT/policies/<name>.parquet` (policy-actions files),
//! `OUT/ground_truth.json` and `OUT/README.md`. Everything is written into a work folder beside
//! `OUT` (`.fqe-collect-<name>.partial`) that is renamed to `OUT` at the end, so a failed or
//! killed run leaves nothing half-written. A failed run keeps its work folder: a rerun with the
//! same settings and target names continues it; a rerun with others removes it.
//!
//! `--policy NAME=ws://HOST:PORT` adds served target policies (`roboaudit_fqe_collect::served`).
//! `--shard I/N` runs only a shard of the built-in targets' rollouts into `OUT`
//! (`roboaudit_fqe_collect::shard`; `roboaudit merge` completes the run).

use crate::commands::fqe_actions::{classify, client_config, split_policy};
use crate::commands::memory::collect::ServedArgs;
use crate::exit::{InvalidInput, Usage};
use anyhow::Context;
use roboaudit_fqe_collect::served::ServedTarget;
use roboaudit_fqe_collect::{
    CheckedConfig, CollectConfig, CollectError, CollectSummary, RunIdentity, Stage, WorkState,
    collect_with, open_work,
};
use roboaudit_policy_client::PolicyClient;
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
    /// Store the dataset's camera as MP4 video (LeRobot's settings: AV1 when libsvtav1 is
    /// linked, else H.264) instead of PNG bytes; part of the run's resume identity.
    #[arg(long)]
    pub video: bool,
    /// A served target policy as NAME=ws://HOST:PORT (openpi's websocket protocol; repeatable):
    /// rolled out like the built-in targets and queried at every dataset frame (see the
    /// fqe-collect README for the observation it receives and the actions it must answer).
    #[arg(long = "policy", value_name = "NAME=URL")]
    pub policies: Vec<String>,
    /// Only the served policies: no built-in targets (needs at least one --policy).
    #[arg(long)]
    pub served_only: bool,
    /// Served-policy settings.
    #[command(flatten)]
    pub served: ServedArgs,
    /// Run only shard I of N (0-based) of the built-in targets' ground-truth rollouts into
    /// --out with a shard.json, resumably (jobs: target × task blocks, j mod N = I), e.g. a
    /// Slurm array task's `--shard $SLURM_ARRAY_TASK_ID/N`; `roboaudit merge` joins the shards
    /// and records the dataset, giving the folder an unsharded run writes. Built-in targets
    /// only.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<roboaudit_shard::Shard>,
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
            video: self.video,
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
        Stage::ServedGroundTruth => "served policy rollouts",
        Stage::ServedActions => "served policy actions at dataset frames: episodes",
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

/// Runs the collection (built-in targets of `cfg`, then `served`) into `dir` with a progress bar
/// per stage (episodes, then ground-truth rollouts; rate and ETA, hidden in pipes and CI) whose
/// message starts with `label`.
pub(crate) fn collect_with_progress(
    cfg: &CheckedConfig,
    served: &mut [ServedTarget],
    dir: &Path,
    label: &str,
) -> Result<CollectSummary, CollectError> {
    let pb = crate::progress::bar(0, "");
    // Progress arrives from worker threads; the lock keeps the stage switches and positions ordered.
    let last = Mutex::new((None::<Stage>, 0usize));
    let summary = collect_with(cfg, served, dir, &|stage, done, total| {
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

/// `(name, url)` of every `--policy`, checked: NAME=URL form, names usable as file stems, unique
/// and not a built-in target's name (usage errors).
fn served_specs(args: &CollectArgs) -> anyhow::Result<Vec<(String, String)>> {
    if args.served_only && args.policies.is_empty() {
        return Err(
            Usage("--served-only needs at least one --policy NAME=ws://HOST:PORT".into()).into(),
        );
    }
    let builtin: Vec<String> = roboaudit_fqe_collect::standard_targets()
        .into_iter()
        .map(|t| t.name)
        .collect();
    let mut specs: Vec<(String, String)> = Vec::new();
    for p in &args.policies {
        let (name, url) = split_policy(p)?;
        let stem_ok = !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !stem_ok {
            return Err(Usage(format!(
                "--policy name `{name}`: use letters, digits, `_`, `-` and `.` (it names policies/{name}.parquet)"
            ))
            .into());
        }
        if builtin.contains(&name) {
            return Err(Usage(format!(
                "--policy name `{name}` is a built-in target's name ({}); choose another",
                builtin.join(", ")
            ))
            .into());
        }
        if specs.iter().any(|(n, _)| *n == name) {
            return Err(Usage(format!("--policy name `{name}` is given twice")).into());
        }
        specs.push((name, url));
    }
    Ok(specs)
}

/// Runs the collection.
pub fn run(args: &CollectArgs) -> anyhow::Result<()> {
    let mut cfg = args.config().check().map_err(|e| match e {
        CollectError::InvalidConfig(m) => anyhow::Error::new(Usage(m)),
        other => anyhow::Error::new(other),
    })?;
    let specs = served_specs(args)?;
    if args.served_only {
        cfg.targets.clear();
    }
    if let Some(shard) = args.shard {
        return run_shard(&cfg, &specs, args, shard);
    }
    check_out(&args.out)?;
    let client_cfg = client_config(args.served.timeout, args.served.allow_remote_policy)?;
    let mut served = Vec::with_capacity(specs.len());
    for (name, url) in &specs {
        let client = PolicyClient::connect(url, client_cfg)
            .map_err(|e| classify(e).context(format!("served policy {name}")))?;
        let caps = client.capabilities();
        outln!(
            "policy {name} at {url}: {}",
            if caps.is_empty() {
                "a plain openpi server (no roboaudit extensions: no reset between rollouts, no action seeds)".to_owned()
            } else {
                format!("roboaudit capabilities {}", caps.join(", "))
            }
        )?;
        served.push(ServedTarget {
            name: name.clone(),
            client,
        });
    }
    let parent = args
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::output::ensure_dir(parent)?;
    // One work folder per --out, named after it: an interrupted run's is continued by a rerun
    // with the same settings, and refused otherwise (it may hold hours of rollouts).
    let name = args
        .out
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let work = parent.join(format!(".fqe-collect-{name}.partial"));
    let names: Vec<String> = specs.iter().map(|(n, _)| n.clone()).collect();
    let state = open_work(&work, &RunIdentity::of(&cfg, &names)).map_err(|e| match e {
        CollectError::OtherRun { .. } => InvalidInput(e.to_string()).into(),
        e => anyhow::Error::new(e),
    })?;
    match state {
        WorkState::Fresh => {}
        WorkState::Resumed => eprintln!(
            "continuing the interrupted run in {} (same settings and targets)",
            work.display()
        ),
        WorkState::Replaced => eprintln!(
            "removed {}: an interrupted run cut off before it recorded its settings",
            work.display()
        ),
    }
    let started = Instant::now();
    let summary = collect_with_progress(&cfg, &mut served, &work, "fqe collect").map_err(|e| {
        let kept = format!(
            "fqe collect stopped; {} is kept: rerun the same command to continue",
            work.display()
        );
        match e {
            CollectError::Served { policy, source } => classify(*source)
                .context(format!("served policy {policy}"))
                .context(kept),
            CollectError::Resume(m) => Usage(m).into(),
            other => anyhow::Error::new(other).context(kept),
        }
    })?;
    let r = summary.resumed;
    if r.dataset || r.builtin_rollouts || r.served_rollouts > 0 {
        eprintln!(
            "resumed from the interrupted run: dataset {}, built-in rollouts {}, {} served rollouts",
            if r.dataset { "kept" } else { "redone" },
            if r.builtin_rollouts { "kept" } else { "redone" },
            r.served_rollouts
        );
    }
    let elapsed = started.elapsed().as_secs_f64();
    // An empty existing folder is replaced by the finished one in one rename.
    if args.out.exists() {
        std::fs::remove_dir(&args.out)
            .with_context(|| format!("cannot replace {}", args.out.display()))?;
    }
    std::fs::rename(&work, &args.out)
        .with_context(|| format!("cannot move the results to {}", args.out.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&args.out, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot set permissions of {}", args.out.display()))?;
    }
    let t = &summary.truth;
    let c = &cfg.config;
    outln!(
        "dataset: {} episodes, {} frames, 4 push tasks ({}x{} images) in {:.1} s ({:.1} episodes/s incl. rollouts)",
        t.n_dataset_episodes,
        t.n_dataset_frames,
        c.image_size,
        c.image_size,
        elapsed,
        t.n_dataset_episodes as f64 / elapsed.max(1e-9)
    )?;
    outln!(
        "ground truth: {} rollouts per policy and task, gamma = {}",
        c.rollouts,
        c.gamma
    )?;
    outln!(
        "{:<14} {:>6} {:>6}  per task V^pi / SR",
        "policy",
        "V^pi",
        "SR"
    )?;
    for p in &t.policies {
        let per: Vec<String> = p
            .tasks
            .iter()
            .map(|k| format!("{:.2}/{:.2}", k.v_pi, k.success_rate))
            .collect();
        outln!(
            "{:<14} {:>6.3} {:>6.3}  {}",
            p.policy,
            p.suite_v_pi,
            p.suite_success_rate,
            per.join("  ")
        )?;
    }
    let ms = |v: Option<f64>| {
        v.map_or(roboaudit_types::NO_VALUE.to_owned(), |x| {
            format!("{x:.2} ms")
        })
    };
    for p in &t.policies {
        if let Some(s) = &p.served {
            outln!(
                "served policy {} at {}: rollouts {} queries (median {}, p95 {}), dataset frames {} queries (median {}, p95 {}), {} reconnections",
                p.policy,
                s.url,
                s.latency.rollouts.queries,
                ms(s.latency.rollouts.median_ms),
                ms(s.latency.rollouts.p95_ms),
                s.latency.actions.queries,
                ms(s.latency.actions.median_ms),
                ms(s.latency.actions.p95_ms),
                s.latency.reconnections
            )?;
        }
    }
    outln!("wrote {}", args.out.display())?;
    Ok(())
}

/// `fqe collect --shard I/N`: the shard's rollout blocks into `--out`, nothing assembled.
fn run_shard(
    cfg: &CheckedConfig,
    specs: &[(String, String)],
    args: &CollectArgs,
    shard: roboaudit_shard::Shard,
) -> anyhow::Result<()> {
    if !specs.is_empty() || args.served_only {
        return Err(Usage(
            "--shard takes the built-in targets only: a served policy's rollouts and latency cannot be shown to be the same in every shard's process; collect it unsharded (it resumes)".into(),
        )
        .into());
    }
    crate::output::refuse_out_file(&args.out)?;
    crate::output::ensure_dir(&args.out)?;
    let started = Instant::now();
    let pb = crate::progress::bar(0, "fqe collect: ground-truth rollouts");
    let run = roboaudit_fqe_collect::shard::collect_shard(cfg, &args.out, shard, &|d, n| {
        pb.set_length(n as u64);
        pb.set_position(d as u64);
    });
    pb.finish_and_clear();
    let run = run.map_err(|e| match e {
        CollectError::Shard(e) => crate::commands::shard::exit_error(e),
        other => anyhow::Error::new(other),
    })?;
    crate::commands::shard::print_shard_done(
        shard,
        (run.owned, run.total, "rollout blocks"),
        &args.out,
        run.resumed,
        started,
        Some("it records the dataset"),
    )?;
    Ok(())
}
