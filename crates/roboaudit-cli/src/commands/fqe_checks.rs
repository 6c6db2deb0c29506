//! The checks `roboaudit fqe fit` makes before it reads a frame: option values and output
//! paths (exit code 2), and the `--components` cap it warns about.

use std::path::Path;

use anyhow::Result;
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe::number::compact;
use roboaudit_fqe::pca::max_components;
use roboaudit_fqe::{Encoder, FrameFeatures, LoadOptions, component_rows};

use super::fqe::FitArgs;
use crate::exit::Usage;
use crate::paths::{check_cache_folder, refuse_inside_dataset};

/// Most principal components: the raw-pixel encoder has 3,072 values, and more components than
/// that, or than frames, only add round-off directions.
pub(super) const MAX_COMPONENTS: usize = 1024;
/// Most neural gradient steps (10⁷ steps is days on a CPU: a typo, not a plan).
const MAX_STEPS: usize = 10_000_000;
/// Most mini-batch rows per step.
const MAX_BATCH: usize = 65_536;
/// Most episode-bootstrap refits per policy.
const MAX_BOOTSTRAP: usize = 1000;
/// Most training seeds.
const MAX_SEEDS: usize = 100;
/// Checks the numeric options and the output paths before any file is read (exit code 2): a
/// typo must not cost a dataset pass, and no option may ask for unbounded work or memory.
/// Most `--threads` a fit takes: a pool is started before any work, and each thread reserves
/// its stack.
const MAX_THREADS: usize = 1024;

pub(super) fn check_options(args: &FitArgs, dataset_dir: &Path) -> Result<()> {
    let usage = |m: String| -> Result<()> { Err(Usage(m).into()) };
    if !(1..=MAX_COMPONENTS).contains(&args.components) {
        return usage(format!(
            "--components {} is out of range 1..={MAX_COMPONENTS}",
            args.components
        ));
    }
    if let Some(g) = args.gamma
        && !(0.0..=1.0).contains(&g)
    {
        return usage(format!("--gamma {} is out of range [0, 1]", compact(g)));
    }
    if args.seeds.is_empty() || args.seeds.len() > MAX_SEEDS {
        return usage(format!(
            "--seeds lists {} seeds; give 1..={MAX_SEEDS}",
            args.seeds.len()
        ));
    }
    // A repeated seed repeats a fit: the spread over seeds would count one run twice.
    for (k, seed) in args.seeds.iter().enumerate() {
        if args.seeds[..k].contains(seed) {
            return usage(format!(
                "--seeds lists seed {seed} twice: each seed is one training run, so a repeat would count one run twice in the spread"
            ));
        }
    }
    crate::output::refuse_out_file(&args.out)?;
    crate::output::refuse_foreign_results(
        &args.out,
        &[
            ("fqe.json", &[roboaudit_fqe::SCHEMA]),
            // An audit folder's summary.md would be replaced by ours.
            ("audit.json", &[]),
        ],
    )?;
    refuse_inside_dataset("--out", &args.out, dataset_dir)?;
    if let Some(cache) = &args.cache {
        check_cache_folder(cache)?;
        refuse_inside_dataset("--cache", cache, dataset_dir)?;
    }
    if let Some(n) = args.threads
        && !(1..=MAX_THREADS).contains(&n)
    {
        return usage(format!("--threads {n} is out of range 1..={MAX_THREADS}"));
    }
    // fqe.json records the dataset and file paths as JSON text, which cannot hold a name that is
    // not UTF-8: refused here, before any dataset pass or feature cache.
    let paths = [
        ("--run", args.run.as_deref()),
        ("--dataset", args.dataset.as_deref()),
        ("--labels", args.labels.as_deref()),
        ("--ground-truth", args.ground_truth.as_deref()),
        ("--out", Some(args.out.as_path())),
        ("--cache", args.cache.as_deref()),
        ("the dataset", Some(dataset_dir)),
    ];
    for (flag, path) in paths {
        if let Some(p) = path
            && p.to_str().is_none()
        {
            return usage(format!(
                "{flag} {} is not a UTF-8 path (fqe.json records paths as text); rename it",
                p.display()
            ));
        }
    }
    if args.no_neural {
        return check_linear(args);
    }
    let (steps, auto) = args.step_budget();
    if !(1..=MAX_STEPS).contains(&steps) {
        let flag = if auto { "--max-steps" } else { "--steps" };
        return usage(format!("{flag} {steps} is out of range 1..={MAX_STEPS}"));
    }
    if args.bootstrap > MAX_BOOTSTRAP {
        return usage(format!(
            "--bootstrap {} is out of range 0..={MAX_BOOTSTRAP}",
            args.bootstrap
        ));
    }
    if !(1..=MAX_BATCH).contains(&args.batch_size) {
        return usage(format!(
            "--batch-size {} is out of range 1..={MAX_BATCH}",
            args.batch_size
        ));
    }
    if !(1..=MAX_STEPS).contains(&args.target_update) {
        return usage(format!(
            "--target-update {} is out of range 1..={MAX_STEPS}",
            args.target_update
        ));
    }
    if !(0.0..=1.0).contains(&args.target_tau) {
        return usage(format!(
            "--target-tau {} is out of range [0, 1]",
            compact(args.target_tau)
        ));
    }
    if !(args.learning_rate > 0.0 && args.learning_rate <= 1.0) {
        return usage(format!(
            "--learning-rate {} is out of range (0, 1]",
            compact(args.learning_rate)
        ));
    }
    check_linear(args)
}

fn check_linear(args: &FitArgs) -> Result<()> {
    if !(args.ridge > 0.0 && args.ridge.is_finite()) {
        return Err(Usage(format!(
            "--ridge {} must be a finite number > 0",
            compact(args.ridge)
        ))
        .into());
    }
    if !(args.coverage_threshold > 0.0 && args.coverage_threshold.is_finite()) {
        return Err(Usage(format!(
            "--coverage-threshold {} must be a finite number > 0",
            compact(args.coverage_threshold)
        ))
        .into());
    }
    Ok(())
}

/// Warns (stderr) when `--components` asks for more than the frames fitted can give, before
/// any frame is read: `n` rows span at most `n − 1` directions, and the component fit is capped
/// there (`roboaudit_fqe::pca::max_components`). The feature's width also caps it, as
/// documented, without a warning. Silent when the metadata does not give the frame count.
pub(super) fn warn_component_cap(
    args: &FitArgs,
    ds: &LeRobotDataset,
    features: &FrameFeatures,
    encoder: &Encoder,
) {
    let width = match features {
        FrameFeatures::Image(_) => encoder.dim(),
        FrameFeatures::Vector(c) => ds
            .feature(c)
            .map_or(1, roboaudit_data::lerobot::Feature::width),
        FrameFeatures::None => return,
    };
    let lengths: Option<u64> = ds.episodes().iter().map(|e| e.length).sum();
    let Some(frames) = lengths
        .or(ds.info().total_frames)
        .and_then(|f| usize::try_from(f).ok())
    else {
        return;
    };
    let rows = component_rows(frames, LoadOptions::push_defaults().component_frames);
    let cap = max_components(rows, width);
    if args.components > cap && cap < width {
        eprintln!(
            "warning: --components {} capped at {cap}: the {rows} frames the components are fitted on span at most {cap} principal directions",
            args.components
        );
    }
}
