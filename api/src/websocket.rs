//! GraphQL over a websocket (`/graphql/ws`), with the guards HTTP requests have:
//!
//! - a socket that does not send `connection_init` within [`INIT_TIMEOUT`] is closed with 4408
//!   (graphql-transport-ws's code for it), so idle upgraded sockets do not pile up;
//! - every operation a socket starts (`subscribe`, or `start` in the older protocol) takes a
//!   token from the same per-address rate limit as an HTTP request;
//! - a socket holds at most [`MAX_OPERATIONS_PER_SOCKET`] running operations.
//!
//! A refused operation gets an `error` message for its id with a code (`RATE_LIMITED`,
//! `TOO_MANY_OPERATIONS`) and never reaches the schema; the socket stays open.
//!
//! `connection_init`'s payload may carry `authorization`, the value an HTTP request sends as its
//! `Authorization` header: the operator's bearer token or a party's signed request, for the
//! subscriptions to negotiations ([`negotiation_access`](crate::graphql::negotiation_access)).

use std::{
    collections::HashSet,
    net::IpAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use agentpact_http::bearer::Bearer;
use async_graphql::{Data, ServerError, http::ALL_WEBSOCKET_PROTOCOLS};
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::{
    extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade},
    response::Response,
};
use futures::{SinkExt, Stream, StreamExt, stream};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{
    graphql::{ApiSchema, Code, negotiation_access::Credential},
    rate_limit::RateLimiter,
};

/// How long an upgraded socket may stay silent before its `connection_init`.
pub const INIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most operations one socket may run at once.
pub const MAX_OPERATIONS_PER_SOCKET: usize = 20;

/// What the socket handler needs from the server.
#[derive(Clone)]
pub struct Sockets {
    /// The schema operations run on.
    pub schema: ApiSchema,
    /// The per-address limit HTTP requests share, when one is configured.
    pub limiter: Option<Arc<RateLimiter>>,
    /// The operator's token, when one is configured.
    pub operator: Option<Bearer>,
}

/// Upgrades the request from `client` and serves GraphQL over the socket.
pub fn upgrade(
    sockets: Sockets,
    protocol: GraphQLProtocol,
    upgrade: WebSocketUpgrade,
    client: IpAddr,
) -> Response {
    upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| serve(socket, sockets, protocol, client))
}

async fn serve(socket: WebSocket, sockets: Sockets, protocol: GraphQLProtocol, client: IpAddr) {
    let (mut to_socket, from_socket) = socket.split();
    let (outbox, mut outgoing) = mpsc::channel::<Message>(64);
    let open = Arc::new(Mutex::new(HashSet::new()));
    let guard = Guard { limiter: sockets.limiter, client, open: Arc::clone(&open), outbox: outbox.clone() };
    let sink = futures::sink::unfold(outbox, |outbox, message: Message| async move {
        outbox.send(message).await.map(|()| outbox)
    });
    let operator = sockets.operator;
    let graphql = GraphQLWebSocket::new_with_pair(
        Box::pin(sink),
        guarded(from_socket, guard),
        sockets.schema,
        protocol,
    )
    .on_connection_init(move |payload| async move { Ok(credential_data(&payload, operator.as_ref())) })
    .serve();
    let forward = async move {
        while let Some(message) = outgoing.recv().await {
            if let Message::Text(text) = &message {
                finished(&open, text.as_str());
            }
            if to_socket.send(message).await.is_err() {
                break;
            }
        }
    };
    futures::future::join(graphql, forward).await;
}

/// The credential `connection_init`'s `authorization` carries, as the socket's data.
fn credential_data(payload: &Value, operator: Option<&Bearer>) -> Data {
    let mut data = Data::default();
    let Some(value) = payload["authorization"].as_str() else { return data };
    let mut headers = axum::http::HeaderMap::new();
    if let Ok(header) = axum::http::HeaderValue::from_str(value) {
        headers.insert(axum::http::header::AUTHORIZATION, header);
    }
    if operator.is_some_and(|bearer| bearer.presented_in(&headers)) {
        data.insert(Credential::Operator);
    } else if let Some(credential) = Credential::from_authorization(value) {
        data.insert(credential);
    }
    data
}

/// Forgets an operation the server has finished (`complete` or `error` sent for its id).
fn finished(open: &Mutex<HashSet<String>>, text: &str) {
    if !(text.contains("\"complete\"") || text.contains("\"error\"")) {
        return;
    }
    let Ok(message) = serde_json::from_str::<Value>(text) else { return };
    if matches!(message["type"].as_str(), Some("complete" | "error"))
        && let (Some(id), Ok(mut open)) = (message["id"].as_str(), open.lock())
    {
        open.remove(id);
    }
}

struct Guard {
    limiter: Option<Arc<RateLimiter>>,
    client: IpAddr,
    /// Ids of the operations running on this socket.
    open: Arc<Mutex<HashSet<String>>>,
    /// Where refusals go (the same queue as the schema's answers).
    outbox: mpsc::Sender<Message>,
}

impl Guard {
    /// Whether an operation with `id` may start; when not, the refusal.
    fn admit(&self, id: &str) -> Result<(), ServerError> {
        let Ok(mut open) = self.open.lock() else { return Ok(()) };
        if open.len() >= MAX_OPERATIONS_PER_SOCKET {
            return Err(Code::TooManyOperations.refusal(format!(
                "this socket already runs {MAX_OPERATIONS_PER_SOCKET} operations, the most one socket may; \
                 complete one, or open another socket"
            )));
        }
        if let Some(limiter) = &self.limiter
            && let Err(wait) = limiter.take(self.client)
        {
            let seconds = wait.as_secs_f64().ceil().max(1.0);
            return Err(Code::RateLimited
                .refusal(format!("too many requests from this address; retry in {seconds} s")));
        }
        open.insert(id.to_owned());
        Ok(())
    }

    /// Tells the client that operation `id` was refused.
    async fn refuse(&self, id: &str, refusal: ServerError) {
        let error = json!({ "id": id, "type": "error", "payload": [refusal] });
        let _ = self.outbox.send(Message::Text(error.to_string().into())).await;
    }

    /// Closes the socket: it never said `connection_init`.
    async fn close_silent(&self) {
        let frame = CloseFrame { code: 4408, reason: "Connection initialisation timeout".into() };
        let _ = self.outbox.send(Message::Close(Some(frame))).await;
    }
}

/// The client's messages, less the operations the guard refuses; ends (closing the socket) when
/// no `connection_init` came within [`INIT_TIMEOUT`].
fn guarded(
    from_socket: impl Stream<Item = Result<Message, axum::Error>> + Send + Unpin + 'static,
    guard: Guard,
) -> impl Stream<Item = Result<Message, axum::Error>> + Send + 'static {
    let deadline = tokio::time::Instant::now() + INIT_TIMEOUT;
    stream::unfold((from_socket, guard, false), move |(mut from_socket, guard, mut initialized)| async move {
        loop {
            let next = if initialized {
                from_socket.next().await
            } else {
                match tokio::time::timeout_at(deadline, from_socket.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        guard.close_silent().await;
                        return None;
                    }
                }
            };
            let message = next?;
            let Ok(Message::Text(text)) = &message else {
                return Some((message, (from_socket, guard, initialized)));
            };
            let parsed: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
            let id = parsed["id"].as_str().unwrap_or_default().to_owned();
            match parsed["type"].as_str() {
                Some("connection_init") => initialized = true,
                Some("subscribe" | "start") => {
                    if let Err(refusal) = guard.admit(&id) {
                        guard.refuse(&id, refusal).await;
                        continue;
                    }
                }
                Some("complete" | "stop") => {
                    if let Ok(mut open) = guard.open.lock() {
                        open.remove(&id);
                    }
                }
                _ => {}
            }
            return Some((message, (from_socket, guard, initialized)));
        }
    })
}
