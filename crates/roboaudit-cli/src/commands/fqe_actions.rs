//! `roboaudit fqe actions`: a served policy's actions at every frame of a LeRobot dataset,
//! written as the policy-actions file `fqe fit --policy-actions NAME=FILE` reads (the logic is
//! `roboaudit_policy_client::dataset_actions`).

use std::path::PathBuf;

use anyhow::Result;
use roboaudit_data::lerobot::LeRobotDataset;
use roboaudit_fqe_collect::request::PolicySpec;
use roboaudit_policy_client::dataset_actions::{ActionsConfig, collect_actions};
use roboaudit_policy_client::{ClientConfig, PolicyClient, PolicyClientError, summary};

use crate::exit::{InvalidInput, Usage};
use crate::progress;

/// Arguments of `roboaudit fqe actions`.
#[derive(clap::Args, Debug)]
pub struct ActionsArgs {
    /// The LeRobot dataset (v3.0 or v2.1 with an `image` or `video` feature or a state column).
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,
    /// The served policy as NAME=ws://HOST:PORT (openpi's websocket protocol).
    #[arg(long, value_name = "NAME=URL")]
    pub policy: String,
    /// Action samples per frame (M ≥ 1): each is a pass over every episode; with the server's
    /// `action_seed` capability, sample s at frame i is seeded (see the crate README).
    #[arg(long, default_value_t = 1)]
    pub samples: usize,
    /// Base of the action seeds.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The camera feature sent as the image, an `image` or a `video` feature (default: the first
    /// image feature, else the first decodable video feature).
    #[arg(long, value_name = "FEATURE")]
    pub image_feature: Option<String>,
    /// The numeric feature sent as the state (default: observation.state when declared).
    #[arg(long, value_name = "FEATURE")]
    pub state_feature: Option<String>,
    /// The dataset's action feature: every answer's action width must equal its width.
    #[arg(long, default_value = "action", value_name = "FEATURE")]
    pub action_feature: String,
    /// Longest wait for one answer, in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// Allow a policy server that is not on this machine's loopback.
    #[arg(long)]
    pub allow_remote_policy: bool,
    /// The policy-actions file to write (Parquet); `<stem>.manifest.json` goes beside it, and an
    /// interrupted run keeps its finished episodes in `FILE.partial/` for the rerun.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// The client settings from `--timeout` and `--allow-remote-policy`
/// ([`summary::client_config`]; usage error out of range).
pub(crate) fn client_config(timeout: f64, allow_remote: bool) -> Result<ClientConfig> {
    summary::client_config(timeout, allow_remote).map_err(classify)
}

/// Exit codes of client errors: an unusable address, a missing capability or an interrupted
/// run with other settings is a usage error (2); a malformed answer or unusable actions is
/// invalid input (3), as is a dataset problem; a server that fails, hangs or goes away is a
/// failure (1).
pub(crate) fn classify(e: PolicyClientError) -> anyhow::Error {
    match e {
        PolicyClientError::Address { .. }
        | PolicyClientError::Unsupported { .. }
        | PolicyClientError::Invalid(_) => Usage(e.to_string()).into(),
        PolicyClientError::Protocol { .. } | PolicyClientError::Actions { .. } => {
            InvalidInput(e.to_string()).into()
        }
        PolicyClientError::Data(d) => d.into(),
        other => other.into(),
    }
}

/// Runs `fqe actions`.
pub fn run(args: &ActionsArgs) -> Result<()> {
    let PolicySpec { name, url } =
        PolicySpec::parse(&args.policy).map_err(|e| Usage(e.to_string()))?;
    summary::check_samples(args.samples).map_err(classify)?;
    crate::paths::refuse_inside_dataset("--out", &args.out, &args.dataset)?;
    crate::paths::require_extension("--out", &args.out, "parquet", "a policy-actions file")?;
    summary::check_out_file(&args.out).map_err(classify)?;
    let config = client_config(args.timeout, args.allow_remote_policy)?;
    let dataset = LeRobotDataset::open(&args.dataset)?;
    let mut client = PolicyClient::connect(&url, config).map_err(classify)?;
    let caps = summary::describe_capabilities(client.capabilities(), "episodes");
    outln!("policy {name} at {url}: {caps}")?;
    let cfg = ActionsConfig {
        name,
        samples: args.samples,
        seed: args.seed,
        image_feature: args.image_feature.clone(),
        state_feature: args.state_feature.clone(),
        action_feature: args.action_feature.clone(),
    };
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
