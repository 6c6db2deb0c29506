//! A minimal in-process policy server speaking the same protocol, for tests (here and in the
//! crates that use the client) and for failure drills: garbage answers, silence, server errors,
//! connections dropped mid-run.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tungstenite::protocol::WebSocketConfig;
use tungstenite::protocol::frame::CloseFrame;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};

use crate::msgpack_numpy::{Field, pack};

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Sends this map (encoded with msgpack-numpy).
    Reply(Field),
    /// Sends these bytes as a binary frame.
    Raw(Vec<u8>),
    /// Sends the text as a text frame, then closes with code 1011 (openpi's error report).
    Error(String),
    /// Never answers (the connection stays open until the client gives up).
    Silent,
    /// Drops the TCP connection without a close handshake.
    Drop,
}

/// A request handler: the decoded request (or the decoding error) → what to do.
pub type Handler = dyn FnMut(Result<Field, String>) -> Answer + Send;

/// A server on `127.0.0.1:<free port>` serving one connection at a time on its own thread.
pub struct TestServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server that sends `metadata` on every connection and answers with `handler`.
    ///
    /// # Errors
    /// I/O errors binding the port.
    pub fn start(metadata: Field, handler: Box<Handler>) -> std::io::Result<TestServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handler = Arc::new(Mutex::new(handler));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                serve(stream, &metadata, &handler);
            }
        });
        Ok(TestServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// `ws://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Unblocks the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, metadata: &Field, handler: &Arc<Mutex<Box<Handler>>>) {
    let _ = stream.set_nodelay(true);
    let config = WebSocketConfig::default()
        .max_message_size(Some(crate::client::MAX_MESSAGE_BYTES))
        .max_frame_size(Some(crate::client::MAX_MESSAGE_BYTES));
    let Ok(mut ws) = tungstenite::accept_with_config(stream, Some(config)) else {
        return;
    };
    if ws.send(Message::binary(pack(metadata))).is_err() {
        return;
    }
    loop {
        let request = match ws.read() {
            Ok(Message::Binary(b)) => crate::msgpack_numpy::unpack(&b),
            Ok(Message::Close(_)) | Err(_) => return,
            Ok(_) => continue,
        };
        let answer = match handler.lock() {
            Ok(mut h) => h(request),
            Err(_) => return,
        };
        if !respond(&mut ws, answer) {
            return;
        }
    }
}

/// Sends `answer`; false when the connection is over.
fn respond(ws: &mut WebSocket<TcpStream>, answer: Answer) -> bool {
    match answer {
        Answer::Reply(f) => ws.send(Message::binary(pack(&f))).is_ok(),
        Answer::Raw(b) => ws.send(Message::binary(b)).is_ok(),
        Answer::Error(text) => {
            let _ = ws.send(Message::text(text));
            let _ = ws.close(Some(CloseFrame {
                code: CloseCode::Error,
                reason: "Internal server error".into(),
            }));
            let _ = ws.flush();
            false
        }
        Answer::Silent => true,
        Answer::Drop => {
            let _ = ws.get_ref().shutdown(std::net::Shutdown::Both);
            false
        }
    }
}

/// A metadata map declaring roboaudit extension version 1 with `capabilities`.
pub fn metadata_with(capabilities: &[&str]) -> Field {
    Field::Map(vec![(
        "roboaudit".into(),
        Field::Map(vec![
            ("version".into(), Field::Int(1)),
            (
                "capabilities".into(),
                Field::List(
                    capabilities
                        .iter()
                        .map(|c| Field::Text((*c).into()))
                        .collect(),
                ),
            ),
        ]),
    )])
}

/// An answer map `{"actions": <float32 array of shape (horizon, dim)>}`.
pub fn actions_reply(horizon: usize, dim: usize, values: &[f32]) -> Field {
    Field::Map(vec![(
        "actions".into(),
        Field::Array(crate::msgpack_numpy::NdArray::from_f32(
            vec![horizon, dim],
            values,
        )),
    )])
}
