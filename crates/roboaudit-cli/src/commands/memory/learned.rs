//! `roboaudit memory train`, through [`roboaudit_memory_learned::request::TrainRequest`], and
//! the exit codes of learned-policy errors (also of a `learned:DIR` policy another command
//! opens).

use crate::exit::{InvalidInput, Usage};
use crate::progress;
use anyhow::Result;
use roboaudit_memory_learned::request::TrainRequest;
use roboaudit_memory_learned::{LearnedError, QualifyConfig, TrainConfig};
use roboaudit_testbed::TaskKind;
use std::path::PathBuf;

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
        LearnedError::InvalidConfig(_) | LearnedError::ExistingCheckpoint { .. } => {
            Usage(e.to_string()).into()
        }
        e if e.is_invalid_input() => InvalidInput(e.to_string()).into(),
        LearnedError::Harness(h) => super::collect::usage_or(h),
        e => e.into(),
    }
}

/// Runs `memory train`: trains, saves, qualifies, prints the timing and the native success.
pub fn run_train(args: &TrainArgs) -> Result<()> {
    crate::output::refuse_out_file(&args.out)?;
    let task = TaskKind::parse(&args.task)?;
    let train = TrainConfig {
        demos: args.demos,
        steps: args.steps,
        seed: args.seed,
        hidden: args.hidden,
        window: args.window,
        ..TrainConfig::default()
    };
    let qualify = QualifyConfig {
        episodes: args.qualify_episodes,
        threshold: args.qualify_rate,
        seed: 0,
    };
    let (family, out) = (&args.family, args.out.clone());
    let req = TrainRequest::new(task, family, (train, qualify), out).map_err(map_err)?;
    let bar = progress::bar(args.demos as u64, "recording demonstrations");
    let trained = req.train_and_save(&mut |d, _| bar.set_position(d as u64), &mut |s, loss| {
        if s == 1 {
            bar.set_length(args.steps as u64);
            bar.set_message("training");
        }
        bar.set_position(s as u64);
        if s % 50 == 0 {
            bar.println(format!("step {s}: loss {loss:.5}"));
        }
    });
    bar.finish_and_clear();
    outln!("{}", trained.map_err(map_err)?)?;
    let spinner = progress::spinner("qualification episodes");
    let qualified = req.qualify();
    spinner.finish_and_clear();
    outln!("{}", qualified.map_err(map_err)?)?;
    Ok(())
}
