//! Audits whose engines land in later releases: the subcommand exists so that scripts can probe for
//! it, and says plainly that it is not available rather than doing nothing.

use anyhow::bail;

/// Arguments accepted (and ignored) by a not-yet-available audit.
#[derive(Debug, clap::Args)]
pub struct PendingArgs {
    /// Anything; the audit is not available yet.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Fails with a message naming the audit.
pub fn run(name: &str, _args: &PendingArgs) -> anyhow::Result<()> {
    bail!(
        "the `{name}` audit is not available in roboaudit {} yet",
        env!("CARGO_PKG_VERSION")
    )
}
