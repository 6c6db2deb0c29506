//! `roboaudit memory train` and the `learned:DIR` policy name of `memory collect` and
//! `memory intervene`: parsing and printing around `roboaudit-memory-learned`.

use crate::exit::{InvalidInput, Usage};
use crate::progress;
use anyhow::Result;
use roboaudit_memory_learned::config::CONFIG_FILE;
use roboaudit_memory_learned::qualify::{open_for_audit, qualify_dir};
use roboaudit_memory_learned::train::train;
use roboaudit_memory_learned::{Family, LearnedError, LearnedPolicy, QualifyConfig, TrainConfig};
use roboaudit_testbed::TaskKind;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Prefix of a learned policy's name on the command line: `learned:DIR`.
pub const PREFIX: &str = "learned:";

/// Arguments of `memory train`.
#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    /// Memory task: put_back, swap or rearrange.
    #[arg(long)]
    pub task: String,
    /// Policy family: recurrent (a GRU; memory = its hidden state) or anchor-window (Mem-0
    /// style: a protected anchor embedding of the first observation and a window of recent
    /// observation embeddings, attended by the present; memory = `anchor` and `window`).
    #[arg(long, default_value = "recurrent")]
    pub family: String,
    /// Expert demonstrations to record.
    #[arg(long, default_value_t = 64)]
    pub demos: usize,
    /// Optimizer steps (full batch).
    #[arg(long, default_value_t = 300)]
    pub steps: usize,
    /// Seed of the demonstrations and the initialization (same seed: same weights bytes).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Memory width: the GRU's hidden size (recurrent) or the observation embedding's width
    /// (anchor-window).
    #[arg(long, default_value_t = 64)]
    pub hidden: usize,
    /// Anchor-window: observation embeddings the window keeps (1 to 256).
    #[arg(long, default_value_t = 8)]
    pub window: usize,
    /// Qualification episodes run after training (their scenes are never used elsewhere).
    #[arg(long, default_value_t = 24)]
    pub qualify_episodes: usize,
    /// Registered native success rate below which the checkpoint is refused for the audit.
    #[arg(long, default_value_t = 0.5)]
    pub qualify_rate: f64,
    /// Checkpoint folder: model.safetensors, config.json, qualification.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// A learned-policy error with its exit code: a setting 2, a checkpoint or qualification 3.
pub(crate) fn map_err(e: LearnedError) -> anyhow::Error {
    match e {
        LearnedError::InvalidConfig(_) => Usage(e.to_string()).into(),
        e if e.is_invalid_input() => InvalidInput(e.to_string()).into(),
        LearnedError::Harness(h) => super::collect::usage_or(h),
        e => e.into(),
    }
}

/// Runs `memory train`: trains, saves, qualifies, prints the timing and the native success.
pub fn run_train(args: &TrainArgs) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    let task = TaskKind::parse(&args.task)?;
    let family = Family::parse(&args.family).map_err(map_err)?;
    if args.out.join(CONFIG_FILE).exists() {
        return Err(Usage(format!(
            "{} already holds a checkpoint; choose another --out",
            args.out.display()
        ))
        .into());
    }
    let cfg = TrainConfig {
        demos: args.demos,
        steps: args.steps,
        seed: args.seed,
        hidden: args.hidden,
        window: args.window,
        ..TrainConfig::default()
    };
    let q = QualifyConfig {
        episodes: args.qualify_episodes,
        threshold: args.qualify_rate,
        seed: 0,
    };
    let started = Instant::now();
    let bar = progress::bar(args.demos as u64, "recording demonstrations");
    let mut steps_started = None;
    let trained = train(
        task,
        family,
        &cfg,
        &q,
        &mut |d, _| bar.set_position(d as u64),
        &mut |s, loss| {
            if s == 1 {
                steps_started = Some(Instant::now());
                bar.set_length(cfg.steps as u64);
                bar.set_message("training");
            }
            bar.set_position(s as u64);
            if s % 50 == 0 {
                bar.println(format!("step {s}: loss {loss:.5}"));
            }
        },
    );
    bar.finish_and_clear();
    let trained = trained.map_err(map_err)?;
    let fit_s = steps_started.map_or(0.0, |t| t.elapsed().as_secs_f64());
    let total_s = started.elapsed().as_secs_f64();
    roboaudit_memory_learned::checkpoint::save(&args.out, &trained).map_err(map_err)?;
    outln!(
        "trained {} on {}: {} demonstrations used of {}, {} steps, final loss {:.5} ({:.1} s: {:.1} s demonstrations, {:.1} s fitting)",
        family.name(),
        task.name(),
        trained.config.demos_used,
        cfg.demos,
        cfg.steps,
        trained.config.final_loss,
        total_s,
        total_s - fit_s,
        fit_s
    )?;
    let spinner = progress::spinner("qualification episodes");
    let qual = qualify_dir(&args.out, &mut |_, _| {});
    spinner.finish_and_clear();
    let qual = qual.map_err(map_err)?;
    outln!(
        "native success on {}: {}/{} = {:.3} (registered rate {:.3}: {})",
        qual.task,
        qual.successes,
        qual.episodes,
        qual.rate,
        qual.config.threshold,
        if qual.passed {
            "qualified"
        } else {
            "refused for the audit"
        }
    )?;
    outln!("wrote {}", args.out.display())?;
    Ok(())
}

/// The learned policy named `policy` (`learned:DIR`), opened for an audit of `task` (loaded,
/// checked, qualified: exit 3 with its rate when below the registered one), with what identifies
/// it in a resumable run (the hash of the weights it qualified); `None` for any other name.
pub fn open(policy: &str, task: TaskKind) -> Result<Option<(LearnedPolicy, serde_json::Value)>> {
    let Some(dir) = policy.strip_prefix(PREFIX) else {
        return Ok(None);
    };
    let (p, q) = open_for_audit(Path::new(dir), task).map_err(map_err)?;
    outln!(
        "learned policy {dir}: native success {}/{} = {:.3} (registered rate {:.3})",
        q.successes,
        q.episodes,
        q.rate,
        q.config.threshold
    )?;
    let identity = serde_json::json!({ "learned": { "weights_fnv": q.weights_fnv } });
    Ok(Some((p, identity)))
}
