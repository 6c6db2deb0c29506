//! Atomic output ([`roboaudit_data::atomic`]: a temporary sibling renamed into place, so a
//! killed run never leaves a truncated result, and an audit that fails leaves `--out`
//! untouched) and the checks that `--out` destroys nothing ([`roboaudit_data::outpath`],
//! exit code 2).

pub use roboaudit_data::atomic::create_dir as ensure_dir;
pub use roboaudit_data::outpath::{
    refuse_foreign_labels, refuse_foreign_results, refuse_replacing,
};

/// Refuses an `--out` folder that exists as a file, or lies inside a LeRobot dataset folder
/// (exit code 2, before any work).
///
/// # Errors
/// [`roboaudit_data::outpath::OutputPathError`] naming the path.
pub fn refuse_out_file(out: &std::path::Path) -> anyhow::Result<()> {
    roboaudit_data::outpath::refuse_out_file(out)?;
    crate::paths::refuse_inside_any_dataset("--out", out)
}
