//! The policy a memory command names (`--policy`): a built-in name, a `learned:DIR`
//! checkpoint or a served policy (`ws://HOST:PORT`, `NAME=ws://HOST:PORT`), the connection to a
//! served one, and what a run reports about it (its manifest field and latency line).

use super::RequestError;
use crate::builtin::PolicyParams;
use crate::error::HarnessError;
use crate::served::ServedPolicy;
use roboaudit_policy_client::{PolicyClient, ServedOptions};
use std::path::PathBuf;

/// Prefix of a learned policy's name on the command line: `learned:DIR`.
pub const LEARNED_PREFIX: &str = "learned:";

/// A `--policy` value, classified without opening anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySpec {
    /// A built-in policy's name; [`crate::PolicyKind::parse`] checks it when the policy is
    /// opened, after every setting check.
    Builtin(String),
    /// A trained checkpoint folder (`learned:DIR`, from `memory train`).
    Learned(PathBuf),
    /// A served policy: its name (the address itself for a bare `ws://…`) and address.
    Served {
        /// Name in the records and manifest.
        name: String,
        /// `ws://HOST:PORT`.
        url: String,
    },
}

impl PolicySpec {
    /// Classifies `spec`: `learned:DIR`; `NAME=ws://…` (a non-empty name) or `ws://…` (named by
    /// its address); anything else is a built-in name. Never fails: a wrong name is reported
    /// when the policy is opened.
    pub fn parse(spec: &str) -> PolicySpec {
        if let Some(dir) = spec.strip_prefix(LEARNED_PREFIX) {
            return PolicySpec::Learned(PathBuf::from(dir));
        }
        match spec.split_once('=') {
            Some((n, u)) if !n.is_empty() && u.starts_with("ws://") => PolicySpec::Served {
                name: n.to_owned(),
                url: u.to_owned(),
            },
            _ if spec.starts_with("ws://") => PolicySpec::Served {
                name: spec.to_owned(),
                url: spec.to_owned(),
            },
            _ => PolicySpec::Builtin(spec.to_owned()),
        }
    }

    /// Whether the spec names a served policy.
    pub fn is_served(&self) -> bool {
        matches!(self, PolicySpec::Served { .. })
    }

    /// The bank policy's settings: `reliability` (recall probability per tray index) when
    /// given, else the bank's default (0.95, 0.95, 0.3), with the other defaults of
    /// [`PolicyParams`].
    ///
    /// # Errors
    /// [`RequestError::Usage`] when `reliability` is given for another policy: no other policy
    /// reads it, and a run that silently ignored it would be labelled with a setting it never
    /// used.
    pub fn bank_params(&self, reliability: Option<&[f64]>) -> Result<PolicyParams, RequestError> {
        let defaults = PolicyParams::default();
        match (reliability, self) {
            (None, _) => Ok(defaults),
            (Some(r), PolicySpec::Builtin(name)) if name == "bank" => Ok(PolicyParams {
                reliability: r.to_vec(),
                ..defaults
            }),
            (Some(_), _) => Err(RequestError::Usage(format!(
                "--reliability sets the bank policy's recall; --policy {} does not use it",
                self.text()
            ))),
        }
    }

    /// The spec as given on the command line.
    fn text(&self) -> String {
        match self {
            PolicySpec::Builtin(name) => name.clone(),
            PolicySpec::Learned(dir) => format!("{LEARNED_PREFIX}{}", dir.display()),
            PolicySpec::Served { name, url } if name == url => url.clone(),
            PolicySpec::Served { name, url } => format!("{name}={url}"),
        }
    }
}

/// Connects to `url` as the memory policy `name` with the connection settings of `served`
/// (`--timeout`, `--allow-remote-policy`, the same options `fqe collect` and `fqe actions`
/// take), with `chunk_len` actions per chunk unless the server declares its `action_horizon`
/// ([`ServedPolicy::new`]).
///
/// # Errors
/// [`RequestError::Usage`] for a timeout outside (0, 86,400] seconds (or not finite) or a server
/// the memory audit cannot use (no `reset`, a bad `action_horizon`, a failed first memory read);
/// [`RequestError::Harness`] wrapping [`HarnessError::Served`] when the connection fails.
pub fn connect_served(
    served: &ServedOptions,
    name: &str,
    url: &str,
    chunk_len: usize,
) -> Result<ServedPolicy, RequestError> {
    let config = served
        .client_config()
        .map_err(|e| RequestError::Usage(roboaudit_types::error_chain(&e)))?;
    let client = PolicyClient::connect(url, config).map_err(HarnessError::Served)?;
    ServedPolicy::new(name, client, chunk_len)
        .map_err(|e| RequestError::Usage(roboaudit_types::error_chain(&e)))
}

/// `served policy URL: N queries, latency median …, p95 …` (`—` for a latency without
/// queries).
pub fn latency_line(p: &ServedPolicy) -> String {
    let l = p.client().latency();
    let ms = |v: Option<f64>| {
        v.map_or(roboaudit_types::NO_VALUE.to_owned(), |x| {
            format!("{x:.2} ms")
        })
    };
    format!(
        "served policy {}: {} queries, latency median {}, p95 {}",
        p.client().url(),
        l.queries,
        ms(l.median_ms),
        ms(l.p95_ms)
    )
}

/// For a served policy, the manifest's `served_policy` field: its address, capabilities,
/// metadata, reconnections and query latency (median, p95).
pub fn served_field(served: Option<&ServedPolicy>) -> Option<(&'static str, serde_json::Value)> {
    served.map(|p| {
        let c = p.client();
        (
            "served_policy",
            serde_json::json!({
                "url": c.url(),
                "capabilities": c.capabilities(),
                "metadata": c.metadata().to_json(),
                "reconnections": c.generation().saturating_sub(1),
                "latency": c.latency(),
            }),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_classified_learned_then_served_then_builtin() {
        assert_eq!(
            PolicySpec::parse("learned:ckpt/a"),
            PolicySpec::Learned(PathBuf::from("ckpt/a"))
        );
        assert_eq!(
            PolicySpec::parse("pi=ws://127.0.0.1:8000"),
            PolicySpec::Served {
                name: "pi".into(),
                url: "ws://127.0.0.1:8000".into()
            }
        );
        let bare = PolicySpec::parse("ws://127.0.0.1:8000");
        assert!(bare.is_served());
        assert_eq!(bare.text(), "ws://127.0.0.1:8000");
        // An empty name or a non-websocket address is a (wrong) built-in name.
        assert_eq!(
            PolicySpec::parse("=ws://h:1"),
            PolicySpec::Builtin("=ws://h:1".into())
        );
        assert_eq!(
            PolicySpec::parse("a=http://h"),
            PolicySpec::Builtin("a=http://h".into())
        );
        assert_eq!(
            PolicySpec::parse("bank"),
            PolicySpec::Builtin("bank".into())
        );
    }

    #[test]
    fn reliability_belongs_to_the_bank_only() {
        let bank = PolicySpec::parse("bank");
        assert_eq!(
            bank.bank_params(Some(&[0.5])).unwrap().reliability,
            vec![0.5]
        );
        assert_eq!(bank.bank_params(None).unwrap(), PolicyParams::default());
        let err = PolicySpec::parse("pi=ws://h:1")
            .bank_params(Some(&[0.5]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--reliability sets the bank policy's recall; --policy pi=ws://h:1 does not use it"
        );
    }
}
