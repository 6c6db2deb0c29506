//! The one error type of the policy client.

/// Why a served policy could not be reached or answered unusably.
///
/// Every variant names the policy's address (`url`) and, for a query, the `step` the caller
/// was at (e.g. `episode 3 frame 17`), so a message says which policy failed where.
#[derive(Debug, thiserror::Error)]
pub enum PolicyClientError {
    /// The address is malformed, or not on this machine while remote policies are not allowed.
    #[error("policy address `{url}`: {message}")]
    Address {
        /// The address as given.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// No connection could be made (nothing listening, handshake refused).
    #[error("cannot connect to the policy server at {url}: {message}")]
    Connect {
        /// The address.
        url: String,
        /// The underlying error in words.
        message: String,
    },
    /// The server did not answer within the per-query timeout.
    #[error("policy server at {url} did not answer within {seconds} s at {step}")]
    Timeout {
        /// The address.
        url: String,
        /// Where the caller was.
        step: String,
        /// The timeout (s).
        seconds: f64,
    },
    /// The server reported an error: a text frame (its traceback), then close code 1011.
    #[error("policy server at {url} failed at {step}:\n{text}")]
    Server {
        /// The address.
        url: String,
        /// Where the caller was.
        step: String,
        /// The server's text.
        text: String,
    },
    /// The connection dropped and one reconnection did not help.
    #[error("policy server at {url} closed the connection at {step}: {message}")]
    Closed {
        /// The address.
        url: String,
        /// Where the caller was.
        step: String,
        /// What happened.
        message: String,
    },
    /// The server answered something that is not a protocol message (not msgpack, no map, no
    /// `actions`, a malformed msgpack-numpy array).
    #[error("policy server at {url} answered garbage at {step}: {message}")]
    Protocol {
        /// The address.
        url: String,
        /// Where the caller was.
        step: String,
        /// What is wrong.
        message: String,
    },
    /// The answer's actions are unusable (wrong shape or width, a non-finite value).
    #[error("policy server at {url} returned unusable actions at {step}: {message}")]
    Actions {
        /// The address.
        url: String,
        /// Where the caller was.
        step: String,
        /// What is wrong.
        message: String,
    },
    /// The server does not declare an extension the caller needs.
    #[error(
        "policy server at {url} does not declare the roboaudit capability `{capability}` (its metadata lists: {declared}), needed for {what}"
    )]
    Unsupported {
        /// The address.
        url: String,
        /// The missing capability.
        capability: String,
        /// The capabilities it declares, in words.
        declared: String,
        /// What needed it.
        what: String,
    },
    /// Reading the dataset or writing the output failed.
    #[error(transparent)]
    Data(#[from] roboaudit_data::DataError),
    /// A file could not be written or read (the message names it).
    #[error("{action} {path}")]
    Io {
        /// What was being done (`cannot write`, …).
        action: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The arguments or the resumed state are inconsistent (the message says how).
    #[error("{0}")]
    Invalid(String),
}

impl PolicyClientError {
    /// Whether the error is a dropped connection worth one reconnection.
    pub(crate) fn is_dropped(&self) -> bool {
        matches!(self, PolicyClientError::Closed { .. })
    }
}
