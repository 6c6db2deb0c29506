//! `roboaudit fqe …`: fitted Q evaluation (SPEC §3).

/// FQE subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum FqeCommand {
    /// Collect a push-suite dataset on the testbed with ground-truth target-policy values.
    Collect(super::fqe_collect::CollectArgs),
}

/// Runs an FQE subcommand.
pub fn run(cmd: FqeCommand) -> anyhow::Result<()> {
    match cmd {
        FqeCommand::Collect(args) => super::fqe_collect::run(&args),
    }
}
