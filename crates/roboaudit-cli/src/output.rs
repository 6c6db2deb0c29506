//! Atomic output ([`roboaudit_data::atomic`]: a temporary sibling renamed into place, so a
//! killed run never leaves a truncated result, and an audit that fails leaves `--out`
//! untouched) and the checks that `--out` destroys nothing ([`roboaudit_data::outpath`],
//! exit code 2).

pub use roboaudit_data::atomic::create_dir as ensure_dir;
pub use roboaudit_data::outpath::{
    refuse_foreign_labels, refuse_foreign_results, refuse_out_file, refuse_replacing,
};
