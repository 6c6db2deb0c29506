//! `roboaudit fqe actions`: a served policy's actions at every frame of a LeRobot dataset,
//! written as the policy-actions file `fqe fit --policy-actions NAME=FILE` reads (the logic is
//! `roboaudit_policy_client::dataset_actions`).

use anyhow::Result;
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe_collect::request::PolicySpec;
use roboaudit_policy_client::dataset_actions::collect_actions;
use roboaudit_policy_client::{ActionsOptions, PolicyClient, PolicyClientError, summary};

use crate::exit::{InvalidInput, Usage};
use crate::progress;

/// Exit codes of client errors: an unusable address, a missing capability or an interrupted
/// run with other settings is a usage error (2); a malformed answer or unusable actions is
/// invalid input (3), as is a dataset problem; a server that fails, hangs or goes away is a
/// failure (1).
pub(crate) fn classify(e: PolicyClientError) -> anyhow::Error {
    match e {
        PolicyClientError::Address { .. }
        | PolicyClientError::Unsupported { .. }
        | PolicyClientError::Invalid(_) => Usage(roboaudit_types::error_chain(&e)).into(),
        PolicyClientError::Protocol { .. } | PolicyClientError::Actions { .. } => {
            InvalidInput(roboaudit_types::error_chain(&e)).into()
        }
        PolicyClientError::Data(d) => d.into(),
        other => other.into(),
    }
}

/// Runs `fqe actions`.
pub fn run(args: &ActionsOptions) -> Result<()> {
    let PolicySpec { name, url } =
        PolicySpec::parse(&args.policy).map_err(|e| Usage(roboaudit_types::error_chain(&e)))?;
    summary::check_samples(args.samples).map_err(classify)?;
    crate::paths::refuse_inside_dataset("--out", &args.out, &args.dataset)?;
    crate::paths::require_extension("--out", &args.out, "parquet", "a policy-actions file")?;
    summary::check_out_file(&args.out).map_err(classify)?;
    roboaudit_data::outpath::refuse_unwritable_file("--out", &args.out)?;
    let config = args.served.client_config().map_err(classify)?;
    let dataset = LeRobotDataset::open(&args.dataset)?;
    let cfg = args.config(name.clone());
    cfg.check_features(&dataset).map_err(classify)?;
    let mut client = PolicyClient::connect(&url, config).map_err(classify)?;
    let caps = summary::describe_capabilities(client.capabilities(), "episodes");
    outln!("policy {name} at {url}: {caps}")?;
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::output::ensure_dir(parent)?;
    }
    let bar = progress::bar(
        dataset.episodes().len() as u64,
        "querying the policy: episodes",
    );
    let result = collect_actions(&dataset, &mut client, &cfg, &args.out, &mut |done, _| {
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    let m = result.map_err(|e| {
        let hint = summary::stopped_hint(&args.out);
        classify(e).context(format!("fqe actions stopped{hint}"))
    })?;
    out!("{}", summary::actions_summary(&m, &args.dataset, &args.out))?;
    Ok(())
}
