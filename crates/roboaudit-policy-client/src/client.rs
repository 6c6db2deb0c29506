//! The websocket client: openpi's protocol plus roboaudit's declared extensions.

use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use tungstenite::protocol::WebSocketConfig;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};

use crate::error::PolicyClientError;
pub use crate::latency::LatencySummary;
use crate::msgpack_numpy::{Field, pack, unpack};

/// Capability: `reset` command (the policy clears its history).
pub const CAP_RESET: &str = "reset";
/// Capability: the observation key [`ACTION_SEED_KEY`] seeds the policy's sampling.
pub const CAP_ACTION_SEED: &str = "action_seed";
/// Capability: `memory_get` command (named float32 memory components).
pub const CAP_MEMORY_GET: &str = "memory_get";
/// Capability: `memory_set` command.
pub const CAP_MEMORY_SET: &str = "memory_set";
/// Observation key of the action seed (an integer in `0..=i64::MAX`).
pub const ACTION_SEED_KEY: &str = "roboaudit/action_seed";
/// Key of a control message's command (`reset`, `memory_get`, `memory_set`).
pub const COMMAND_KEY: &str = "roboaudit/command";
/// Key of the memory components (a map name → float32 array) in `memory_get` answers and
/// `memory_set` requests.
pub const MEMORY_KEY: &str = "roboaudit/memory";
/// The extension version this client speaks.
pub const EXTENSION_VERSION: i64 = 1;
/// openpi's default address.
pub const DEFAULT_URL: &str = "ws://127.0.0.1:8000";

/// Largest websocket message or frame accepted from a server, in bytes (1 GiB). openpi leaves
/// messages unbounded; a bound is needed because the reader allocates a frame's declared length
/// before reading it, so a broken server declaring an absurd length would abort the process.
/// Observations and action chunks are far smaller (a 1024×1024 RGB image is 3 MiB).
pub const MAX_MESSAGE_BYTES: usize = 1 << 30;

/// Connection settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientConfig {
    /// Longest wait for one answer (and for connecting).
    pub timeout: Duration,
    /// Allow an address that is not this machine's loopback.
    pub allow_remote: bool,
}

impl Default for ClientConfig {
    /// 30 s per query, loopback only.
    fn default() -> Self {
        ClientConfig {
            timeout: Duration::from_secs(30),
            allow_remote: false,
        }
    }
}

/// One answer to an observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Actions, `horizon × dim`, action after action.
    pub actions: Vec<f32>,
    /// Actions in the chunk (1 for a one-dimensional `actions` array).
    pub horizon: usize,
    /// Width of an action.
    pub dim: usize,
    /// The server's own inference time (`server_timing.infer_ms`), when it reports one.
    pub infer_ms: Option<f64>,
    /// Wall time from sending the observation to decoding the answer (ms).
    pub round_trip_ms: f64,
}

impl Reply {
    /// The first action of the chunk.
    pub fn first(&self) -> &[f32] {
        &self.actions[..self.dim]
    }
}

/// A connection to a served policy.
///
/// Speaks openpi's protocol: on connecting, the server sends its metadata (one msgpack map);
/// each query sends an observation map and receives a map with `actions`; a text frame is the
/// server's error (followed by close code 1011). A dropped connection is reconnected once per
/// query ([`PolicyClient::generation`] counts connections, so a caller whose policy keeps a
/// history can replay it). Extensions are used only when the metadata declares them under
/// `roboaudit: {version: 1, capabilities: [...]}`.
pub struct PolicyClient {
    url: String,
    addr: SocketAddr,
    config: ClientConfig,
    conn: Option<WebSocket<TcpStream>>,
    metadata: Field,
    capabilities: Vec<String>,
    generation: u64,
    rtt_ms: Vec<f64>,
    server_ms: Vec<f64>,
}

impl std::fmt::Debug for PolicyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyClient")
            .field("url", &self.url)
            .field("capabilities", &self.capabilities)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// Resolves `ws://HOST:PORT[/path]` and checks it is on loopback unless `allow_remote`.
fn resolve(url: &str, allow_remote: bool) -> Result<SocketAddr, PolicyClientError> {
    let bad = |m: &str| PolicyClientError::Address {
        url: url.to_owned(),
        message: m.to_owned(),
    };
    let rest = url
        .strip_prefix("ws://")
        .ok_or_else(|| bad("expected ws://HOST:PORT (wss is not supported)"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(bad("no host"));
    }
    let with_port = if authority.ends_with(']') || !authority.contains(':') {
        format!("{authority}:80")
    } else {
        authority.to_owned()
    };
    let addrs: Vec<SocketAddr> = with_port
        .to_socket_addrs()
        .map_err(|e| bad(&format!("cannot resolve the host ({e})")))?
        .collect();
    let first = *addrs
        .first()
        .ok_or_else(|| bad("the host resolves to no address"))?;
    let loopback = |ip: IpAddr| ip.is_loopback();
    if !allow_remote && !addrs.iter().all(|a| loopback(a.ip())) {
        return Err(bad(
            "not a loopback address; serving a policy to another machine needs --allow-remote-policy",
        ));
    }
    Ok(first)
}

impl PolicyClient {
    /// Connects to `url` and reads the server's metadata.
    ///
    /// # Errors
    /// [`PolicyClientError::Address`] for a malformed or (without `allow_remote`) non-loopback
    /// address; [`PolicyClientError::Connect`] when nothing answers the handshake; a
    /// [`PolicyClientError::Protocol`] when the metadata frame is not a msgpack map.
    pub fn connect(url: &str, config: ClientConfig) -> Result<PolicyClient, PolicyClientError> {
        let addr = resolve(url, config.allow_remote)?;
        let mut client = PolicyClient {
            url: url.to_owned(),
            addr,
            config,
            conn: None,
            metadata: Field::Map(Vec::new()),
            capabilities: Vec::new(),
            generation: 0,
            rtt_ms: Vec::new(),
            server_ms: Vec::new(),
        };
        client.open()?;
        Ok(client)
    }

    /// The address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's metadata (the map it sent on connecting).
    pub fn metadata(&self) -> &Field {
        &self.metadata
    }

    /// The roboaudit capabilities the metadata declares (empty for a plain openpi server).
    pub fn capabilities(&self) -> &[String] {
        &self.capabilities
    }

    /// Whether the server declares `capability`.
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// Connections made so far (1 after [`PolicyClient::connect`]; +1 per reconnection).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Latency of the queries answered so far.
    pub fn latency(&self) -> LatencySummary {
        LatencySummary::of(&self.rtt_ms, &self.server_ms)
    }

    /// The metadata's observation key for `role` (`image`, `state`, `prompt`), from
    /// `observation_keys` at the top level or under `roboaudit`; `None` when it names none.
    pub fn observation_key(&self, role: &str) -> Option<String> {
        let from = |m: Option<&Field>| {
            m.and_then(|m| m.get("observation_keys"))
                .and_then(|k| k.get(role))
                .and_then(Field::as_text)
                .map(str::to_owned)
        };
        from(Some(&self.metadata)).or_else(|| from(self.metadata.get("roboaudit")))
    }

    fn open(&mut self) -> Result<(), PolicyClientError> {
        let err = |m: String| PolicyClientError::Connect {
            url: self.url.clone(),
            message: m,
        };
        let stream = TcpStream::connect_timeout(&self.addr, self.config.timeout)
            .map_err(|e| err(e.to_string()))?;
        // Small request/answer exchanges: Nagle's delay would dominate the round trip.
        stream.set_nodelay(true).map_err(|e| err(e.to_string()))?;
        stream
            .set_read_timeout(Some(self.config.timeout))
            .map_err(|e| err(e.to_string()))?;
        stream
            .set_write_timeout(Some(self.config.timeout))
            .map_err(|e| err(e.to_string()))?;
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let (mut ws, _) =
            tungstenite::client::client_with_config(self.url.as_str(), stream, Some(ws_config))
                .map_err(|e| match e {
                    // The read timed out: something listens but never speaks websocket.
                    tungstenite::HandshakeError::Interrupted(_) => PolicyClientError::Timeout {
                        url: self.url.clone(),
                        step: "connect (websocket handshake)".into(),
                        seconds: self.config.timeout.as_secs_f64(),
                    },
                    other => err(format!("websocket handshake failed: {other}")),
                })?;
        let first = read_binary(
            &mut ws,
            &self.url,
            "connect (metadata)",
            self.config.timeout,
        )?;
        let metadata = unpack(&first).map_err(|m| PolicyClientError::Protocol {
            url: self.url.clone(),
            step: "connect (metadata)".into(),
            message: m,
        })?;
        if !matches!(metadata, Field::Map(_)) {
            return Err(PolicyClientError::Protocol {
                url: self.url.clone(),
                step: "connect (metadata)".into(),
                message: "the metadata frame is not a map".into(),
            });
        }
        self.capabilities = capabilities_of(&metadata);
        self.metadata = metadata;
        self.conn = Some(ws);
        self.generation += 1;
        Ok(())
    }

    /// Sends one message and returns the decoded answer; reconnects once on a dropped
    /// connection.
    fn exchange(&mut self, message: &Field, step: &str) -> Result<(Field, f64), PolicyClientError> {
        let payload = pack(message);
        for attempt in 0..2 {
            if self.conn.is_none()
                && let Err(e) = self.open()
            {
                return Err(PolicyClientError::Closed {
                    url: self.url.clone(),
                    step: step.to_owned(),
                    message: format!("the connection dropped and reconnecting failed ({e})"),
                });
            }
            let started = Instant::now();
            let result = match self.conn.as_mut() {
                Some(ws) => send_and_read(ws, &payload, &self.url, step, self.config.timeout),
                None => continue,
            };
            let elapsed = started.elapsed().as_secs_f64() * 1e3;
            match result {
                Ok(bytes) => {
                    let field = unpack(&bytes).map_err(|m| PolicyClientError::Protocol {
                        url: self.url.clone(),
                        step: step.to_owned(),
                        message: m,
                    })?;
                    return Ok((field, elapsed));
                }
                Err(e) => {
                    self.conn = None;
                    if !(e.is_dropped() && attempt == 0) {
                        return Err(e);
                    }
                }
            }
        }
        Err(PolicyClientError::Closed {
            url: self.url.clone(),
            step: step.to_owned(),
            message: "the connection dropped twice".into(),
        })
    }

    /// Queries the policy with `observation` (a map of keys to values) at `step` (words for
    /// error messages, e.g. `episode 3 frame 17`).
    ///
    /// # Errors
    /// Connection, timeout and server errors; [`PolicyClientError::Protocol`] for an answer that
    /// is not a map with a msgpack-numpy `actions` array; [`PolicyClientError::Actions`] for
    /// actions that are not 1-D or 2-D, empty, or hold a non-finite value.
    pub fn infer(
        &mut self,
        observation: Vec<(String, Field)>,
        step: &str,
    ) -> Result<Reply, PolicyClientError> {
        let (answer, rtt) = self.exchange(&Field::Map(observation), step)?;
        let protocol = |m: String| PolicyClientError::Protocol {
            url: self.url.clone(),
            step: step.to_owned(),
            message: m,
        };
        let bad = |m: String| PolicyClientError::Actions {
            url: self.url.clone(),
            step: step.to_owned(),
            message: m,
        };
        if !matches!(answer, Field::Map(_)) {
            return Err(protocol("the answer is not a map".into()));
        }
        let array = match answer.get("actions") {
            Some(Field::Array(a)) => a,
            Some(_) => return Err(protocol("`actions` is not a msgpack-numpy array".into())),
            None => return Err(protocol("the answer has no `actions`".into())),
        };
        let (horizon, dim) = match array.shape.as_slice() {
            [d] => (1, *d),
            [h, d] => (*h, *d),
            s => {
                return Err(bad(format!(
                    "`actions` has shape {s:?}; expected (action_horizon, action_dim) or (action_dim,)"
                )));
            }
        };
        if horizon == 0 || dim == 0 {
            return Err(bad(format!("`actions` has shape {:?}: empty", array.shape)));
        }
        let actions = array.to_f32().map_err(protocol)?;
        if let Some(k) = actions.iter().position(|v| !v.is_finite()) {
            return Err(bad(format!(
                "action {} dimension {} is {} (not finite)",
                k / dim,
                k % dim,
                actions[k]
            )));
        }
        let infer_ms = answer
            .get("server_timing")
            .and_then(|t| t.get("infer_ms"))
            .and_then(Field::as_f64);
        self.rtt_ms.push(rtt);
        if let Some(ms) = infer_ms {
            self.server_ms.push(ms);
        }
        Ok(Reply {
            actions,
            horizon,
            dim,
            infer_ms,
            round_trip_ms: rtt,
        })
    }

    /// Fails with [`PolicyClientError::Unsupported`] unless the server declares `capability`.
    ///
    /// # Errors
    /// As said.
    pub fn require(&self, capability: &str, what: &str) -> Result<(), PolicyClientError> {
        if self.has(capability) {
            return Ok(());
        }
        Err(PolicyClientError::Unsupported {
            url: self.url.clone(),
            capability: capability.to_owned(),
            declared: if self.capabilities.is_empty() {
                "none, a plain openpi server".into()
            } else {
                self.capabilities.join(", ")
            },
            what: what.to_owned(),
        })
    }

    fn command(
        &mut self,
        name: &str,
        extra: Vec<(String, Field)>,
        step: &str,
    ) -> Result<Field, PolicyClientError> {
        self.require(name, step)?;
        let mut msg = vec![(COMMAND_KEY.to_owned(), Field::Text(name.to_owned()))];
        msg.extend(extra);
        let (answer, _) = self.exchange(&Field::Map(msg), step)?;
        if !matches!(answer, Field::Map(_)) {
            return Err(PolicyClientError::Protocol {
                url: self.url.clone(),
                step: step.to_owned(),
                message: format!("the answer to `{name}` is not a map"),
            });
        }
        Ok(answer)
    }

    /// Starts a new episode: the policy clears its history (extension `reset`).
    ///
    /// # Errors
    /// [`PolicyClientError::Unsupported`] when the server does not declare `reset`; connection
    /// and server errors.
    pub fn reset(&mut self, step: &str) -> Result<(), PolicyClientError> {
        self.command(CAP_RESET, Vec::new(), step).map(|_| ())
    }

    /// The policy's memory: named float32 components, flat (extension `memory_get`).
    ///
    /// # Errors
    /// [`PolicyClientError::Unsupported`] without `memory_get`; a protocol error when the answer
    /// lacks a map of float arrays under [`MEMORY_KEY`].
    pub fn memory_get(&mut self, step: &str) -> Result<Vec<(String, Vec<f32>)>, PolicyClientError> {
        let answer = self.command(CAP_MEMORY_GET, Vec::new(), step)?;
        let protocol = |m: String| PolicyClientError::Protocol {
            url: self.url.clone(),
            step: step.to_owned(),
            message: m,
        };
        let Some(Field::Map(components)) = answer.get(MEMORY_KEY) else {
            return Err(protocol(format!(
                "the memory_get answer has no map `{MEMORY_KEY}`"
            )));
        };
        components
            .iter()
            .map(|(name, v)| match v {
                Field::Array(a) => a
                    .to_f32()
                    .map(|values| (name.clone(), values))
                    .map_err(|m| protocol(format!("memory component `{name}`: {m}"))),
                _ => Err(protocol(format!(
                    "memory component `{name}` is not an array"
                ))),
            })
            .collect()
    }

    /// Replaces the policy's memory (extension `memory_set`).
    ///
    /// # Errors
    /// [`PolicyClientError::Unsupported`] without `memory_set`; connection and server errors.
    pub fn memory_set(
        &mut self,
        components: &[(String, Vec<f32>)],
        step: &str,
    ) -> Result<(), PolicyClientError> {
        let map = Field::Map(
            components
                .iter()
                .map(|(n, v)| {
                    (
                        n.clone(),
                        Field::Array(crate::msgpack_numpy::NdArray::from_f32(vec![v.len()], v)),
                    )
                })
                .collect(),
        );
        self.command(CAP_MEMORY_SET, vec![(MEMORY_KEY.to_owned(), map)], step)
            .map(|_| ())
    }
}

fn capabilities_of(metadata: &Field) -> Vec<String> {
    extension_names(metadata, "capabilities")
}

/// The text items of the list `key` in the metadata's `roboaudit` extension map (e.g.
/// `capabilities`, `protected`); empty when absent, not a list, or declared for another
/// extension version (a future version may change what the names mean: use none of them).
pub fn extension_names(metadata: &Field, key: &str) -> Vec<String> {
    let Some(ext) = metadata.get("roboaudit") else {
        return Vec::new();
    };
    if ext.get("version").and_then(Field::as_f64) != Some(EXTENSION_VERSION as f64) {
        return Vec::new();
    }
    match ext.get(key) {
        Some(Field::List(l)) => l
            .iter()
            .filter_map(Field::as_text)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn classify(e: tungstenite::Error, url: &str, step: &str, timeout: Duration) -> PolicyClientError {
    use std::io::ErrorKind;
    match e {
        tungstenite::Error::Io(io)
            if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
        {
            PolicyClientError::Timeout {
                url: url.to_owned(),
                step: step.to_owned(),
                seconds: timeout.as_secs_f64(),
            }
        }
        tungstenite::Error::Io(_)
        | tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed
        | tungstenite::Error::Protocol(_) => PolicyClientError::Closed {
            url: url.to_owned(),
            step: step.to_owned(),
            message: e.to_string(),
        },
        other => PolicyClientError::Protocol {
            url: url.to_owned(),
            step: step.to_owned(),
            message: other.to_string(),
        },
    }
}

fn send_and_read(
    ws: &mut WebSocket<TcpStream>,
    payload: &[u8],
    url: &str,
    step: &str,
    timeout: Duration,
) -> Result<Vec<u8>, PolicyClientError> {
    ws.send(Message::binary(payload.to_vec()))
        .map_err(|e| classify(e, url, step, timeout))?;
    read_binary(ws, url, step, timeout)
}

/// Reads until a binary message; a text message is the server's error report.
fn read_binary(
    ws: &mut WebSocket<TcpStream>,
    url: &str,
    step: &str,
    timeout: Duration,
) -> Result<Vec<u8>, PolicyClientError> {
    loop {
        match ws.read().map_err(|e| classify(e, url, step, timeout))? {
            Message::Binary(b) => return Ok(b.to_vec()),
            Message::Text(t) => {
                // openpi closes with 1011 after the traceback; the close itself adds nothing.
                let _ = ws.read();
                return Err(PolicyClientError::Server {
                    url: url.to_owned(),
                    step: step.to_owned(),
                    text: t.as_str().trim_end().to_owned(),
                });
            }
            Message::Close(frame) => {
                return Err(match frame {
                    Some(f) if f.code == CloseCode::Error => PolicyClientError::Server {
                        url: url.to_owned(),
                        step: step.to_owned(),
                        text: format!("closed with code 1011: {}", f.reason.as_str()),
                    },
                    other => PolicyClientError::Closed {
                        url: url.to_owned(),
                        step: step.to_owned(),
                        message: match other {
                            Some(f) => {
                                format!("close code {} ({})", u16::from(f.code), f.reason.as_str())
                            }
                            None => "closed without a code".into(),
                        },
                    },
                });
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
}
