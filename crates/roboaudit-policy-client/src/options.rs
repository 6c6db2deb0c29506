//! The options of the commands that reach a served policy, as a user types them: how long to
//! wait and whether a remote server is allowed ([`ServedOptions`], the served targets of
//! `fqe collect`) and every option of `fqe actions` ([`ActionsOptions`]). With the `clap`
//! feature they derive `clap::Args`, and each field's doc is its `--help` text.

use std::path::PathBuf;

use crate::client::ClientConfig;
use crate::dataset_actions::ActionsConfig;
use crate::error::PolicyClientError;
use crate::summary::client_config;

/// How a command reaches its served policies: `timeout` in seconds, in
/// `(0, `[`crate::summary::MAX_TIMEOUT_S`]`]`, checked by [`ServedOptions::client_config`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ServedOptions {
    /// Served policies: longest wait for one answer, in seconds.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = ClientConfig::default().timeout.as_secs_f64())
    )]
    pub timeout: f64,
    /// Served policies: allow a server that is not on this machine's loopback.
    #[cfg_attr(feature = "clap", arg(long))]
    pub allow_remote_policy: bool,
}

impl Default for ServedOptions {
    /// [`ClientConfig::default`]'s: 30 s, loopback only.
    fn default() -> Self {
        let c = ClientConfig::default();
        ServedOptions {
            timeout: c.timeout.as_secs_f64(),
            allow_remote_policy: c.allow_remote,
        }
    }
}

impl ServedOptions {
    /// The connection settings ([`client_config`]).
    ///
    /// # Errors
    /// [`PolicyClientError::Invalid`] naming `--timeout` for a timeout out of range.
    pub fn client_config(&self) -> Result<ClientConfig, PolicyClientError> {
        client_config(self.timeout, self.allow_remote_policy)
    }
}

/// Every option of `fqe actions`, as typed. `policy` is `NAME=URL` (the caller splits it);
/// `samples` is `1..=`[`crate::summary::MAX_SAMPLES`] ([`crate::summary::check_samples`]);
/// `served` is checked by [`ServedOptions::client_config`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ActionsOptions {
    /// The LeRobot dataset (v3.0 or v2.1 with an `image` or `video` feature or a state column).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub dataset: PathBuf,
    /// The served policy as NAME=ws://HOST:PORT (openpi's websocket protocol).
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME=URL"))]
    pub policy: String,
    /// Action samples per frame (M ≥ 1): each is a pass over every episode; with the server's
    /// `action_seed` capability, sample s at frame i is seeded (see the crate README).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = ActionsConfig::default().samples))]
    pub samples: usize,
    /// Base of the action seeds.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = ActionsConfig::default().seed))]
    pub seed: u64,
    /// The camera feature sent as the image, an `image` or a `video` feature (default: the first
    /// image feature, else the first decodable video feature).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FEATURE"))]
    pub image_feature: Option<String>,
    /// The numeric feature sent as the state (default: observation.state when declared).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FEATURE"))]
    pub state_feature: Option<String>,
    /// The dataset's action feature: every answer's action width must equal its width.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = ActionsConfig::default().action_feature, value_name = "FEATURE")
    )]
    pub action_feature: String,
    /// Served-policy settings.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub served: ServedOptions,
    /// The policy-actions file to write (Parquet); `<stem>.manifest.json` goes beside it, and an
    /// interrupted run keeps its finished episodes in `FILE.partial/` for the rerun.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub out: PathBuf,
}

impl ActionsOptions {
    /// The run's settings for the policy named `name` (the `NAME` of `policy`).
    #[must_use]
    pub fn config(&self, name: String) -> ActionsConfig {
        ActionsConfig {
            name,
            samples: self.samples,
            seed: self.seed,
            image_feature: self.image_feature.clone(),
            state_feature: self.state_feature.clone(),
            action_feature: self.action_feature.clone(),
        }
    }
}
