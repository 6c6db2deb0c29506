//! `roboaudit fqe collect`: a push-suite dataset with ground truth from the testbed.

use anyhow::bail;
use std::path::PathBuf;

/// Arguments of `roboaudit fqe collect`.
#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs the collection.
pub fn run(_args: &CollectArgs) -> anyhow::Result<()> {
    bail!("`roboaudit fqe collect` is not available yet")
}
