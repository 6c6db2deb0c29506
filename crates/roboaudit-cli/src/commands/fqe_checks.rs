//! The checks `roboaudit fqe fit` makes on its paths and thread count before it reads a frame
//! (exit code 2). The settings' bounds are the library's ([`roboaudit_fqe::FitRequest::validate`],
//! [`roboaudit_fqe::bounds_settings::check_threads`]).

use std::path::Path;

use anyhow::Result;

use super::fqe::FitArgs;
use crate::exit::Usage;
use crate::paths::{check_cache_folder, refuse_inside_dataset};

/// Checks the output paths and `--threads` before any file is read (exit code 2): a typo must
/// not cost a dataset pass, and no option may ask for unbounded work or memory.
pub(super) fn check_options(args: &FitArgs, dataset_dir: &Path) -> Result<()> {
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
    if let Some(n) = args.threads {
        roboaudit_fqe::bounds_settings::check_threads(n).map_err(super::fqe::classify)?;
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
            return Err(Usage(format!(
                "{flag} {} is not a UTF-8 path (fqe.json records paths as text); rename it",
                p.display()
            ))
            .into());
        }
    }
    Ok(())
}
