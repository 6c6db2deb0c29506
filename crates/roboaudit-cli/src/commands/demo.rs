//! `roboaudit demo`: the audits on the built-in testbed, one report.

use anyhow::bail;
use std::path::PathBuf;

/// Arguments of `roboaudit demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output folder.
    #[arg(long, value_name = "DIR", default_value = "roboaudit-demo")]
    pub out: PathBuf,
}

/// Runs the demo.
pub fn run(_args: &DemoArgs) -> anyhow::Result<()> {
    bail!("`roboaudit demo` is not available yet")
}
