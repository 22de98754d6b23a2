//! Requests that come before the handshake. This server speaks MCP 2025-11-25 (rmcp 1.8), whose
//! session starts with `initialize`; rmcp's handshake ends the session on any other first request.
//! A client of MCP 2026-07-28 opens differently: the official Python SDK's default mode (`auto`)
//! sends `server/discover` and falls back to `initialize` when that is answered with an error, and
//! its `2026-07-28` mode sends calls with no handshake at all. [`HandshakeFirst`] answers each
//! request before `initialize` with a JSON-RPC error that says what to send, and drops
//! notifications, so such a client connects (or is told why not) instead of seeing the connection
//! closed. After `initialize` every message passes through untouched.

use std::future::Future;

use rmcp::{
    RoleServer,
    model::{ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, ServerJsonRpcMessage},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{Transport, async_rw::AsyncRwTransport},
};

/// The protocol version this server speaks.
const SPOKEN: &str = "2025-11-25";

/// A server transport that answers requests before `initialize` itself (module docs).
#[derive(Debug)]
pub struct HandshakeFirst<T> {
    inner: T,
    initialized: bool,
}

impl<T> HandshakeFirst<T> {
    /// Wraps `inner`, whose session has not started yet.
    pub const fn new(inner: T) -> Self {
        Self { inner, initialized: false }
    }
}

/// The server's stdio transport, answering requests before `initialize` ([`HandshakeFirst`]).
pub fn stdio() -> HandshakeFirst<AsyncRwTransport<RoleServer, tokio::io::Stdin, tokio::io::Stdout>> {
    HandshakeFirst::new(AsyncRwTransport::new_server(tokio::io::stdin(), tokio::io::stdout()))
}

/// The answer to `request` sent before `initialize`.
fn before_initialize(request: &ClientRequest) -> ErrorData {
    let method = request.method();
    if method == "server/discover" {
        ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "server/discover (MCP 2026-07-28) is not served here: this server speaks MCP {SPOKEN}; \
                 start the session with initialize"
            ),
            None,
        )
    } else {
        ErrorData::invalid_request(
            format!(
                "{method} before initialize: this server speaks MCP {SPOKEN}, whose session starts \
                 with initialize; send it first (in the Python SDK, mode=\"auto\" or \"legacy\")"
            ),
            None,
        )
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for HandshakeFirst<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.inner.receive().await?;
            if self.initialized {
                return Some(message);
            }
            match message {
                JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)) => {
                    self.initialized = true;
                    return Some(JsonRpcMessage::Request(r));
                }
                JsonRpcMessage::Request(r) => {
                    let answer = ServerJsonRpcMessage::error(before_initialize(&r.request), Some(r.id));
                    if self.inner.send(answer).await.is_err() {
                        return None;
                    }
                }
                // A notification or a stray answer before the session means nothing yet.
                JsonRpcMessage::Notification(_) | JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
