//! How every part reaches a node, over HTTP(S) or a websocket: a connect timeout and a request
//! timeout on every call, so a node that accepts a connection and never answers is an error within a bound instead
//! of a wait without end, and an optional ceiling on requests per second (alloy's throttle layer),
//! so an endpoint on a free tier is never asked faster than it allows. A failure to reach the
//! node says why in its own message ("error sending request for url (…): operation timed out",
//! "…: certificate has expired"), so the reason survives layers that keep only the message
//! (a retry layer's "Max retries exceeded"). Retries are a layer the caller puts above this one
//! (the indexer's `transport`); nothing loops by hand.

use std::{
    num::NonZeroU32,
    task::{Context, Poll},
    time::Duration,
};

use alloy::{
    pubsub::{PubSubConnect, PubSubFrontend},
    rpc::{
        client::{ClientBuilder, RpcClient},
        json_rpc::{RequestPacket, ResponsePacket},
    },
    transports::{
        BoxTransport, RpcError, TransportError, TransportErrorKind, TransportFut,
        http::{Http, reqwest},
        layers::ThrottleLayer,
        ws::WsConnect,
    },
};
use tower::{Layer, Service};

/// How long and how often a node may be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpcLimits {
    /// The longest one request may take, connecting included.
    pub timeout: Duration,
    /// The longest connecting may take.
    pub connect_timeout: Duration,
    /// At most this many requests per second, retries included; `None`: as fast as answered.
    pub max_rps: Option<NonZeroU32>,
}

impl Default for RpcLimits {
    /// 30 s per request (a wide `eth_getLogs` on a busy public node takes seconds), 10 s to
    /// connect, no ceiling.
    fn default() -> Self {
        Self { timeout: Duration::from_secs(30), connect_timeout: Duration::from_secs(10), max_rps: None }
    }
}

/// Why a client for a node could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The HTTP client could not be set up (its TLS backend).
    #[error("setting up the HTTP client for the RPC failed (TLS backend)")]
    Http(#[source] reqwest::Error),
    /// The websocket did not open.
    #[error("opening the websocket to the RPC failed: {}", with_causes(.0))]
    Ws(#[source] TransportError),
    /// Neither HTTP nor a websocket.
    #[error("RPC_URL uses {0}://; give the node's http(s):// or ws(s):// JSON-RPC URL")]
    Scheme(String),
}

/// How often a dropped websocket is reopened: every second, for as long as it takes.
const WS_RETRY_INTERVAL: Duration = Duration::from_secs(1);

/// The transport to `url` within `limits`, boxed so callers can put their own layers (retries,
/// checks) above it: `ClientBuilder::default().layer(…).transport(t, local)`. `http(s)://` goes
/// over HTTP; `ws(s)://` over a websocket that reopens itself after a drop (the requests in
/// flight then fail and are retried above), each request within `limits.timeout`.
pub async fn transport(url: reqwest::Url, limits: &RpcLimits) -> Result<(BoxTransport, bool), ConnectError> {
    match url.scheme() {
        "http" | "https" => {
            let client = reqwest::Client::builder()
                .timeout(limits.timeout)
                .connect_timeout(limits.connect_timeout)
                .build()
                .map_err(ConnectError::Http)?;
            let http = Http::with_client(client, url);
            let local = http.guess_local();
            Ok((within(WatchLayer(Explain).layer(http), limits), local))
        }
        "ws" | "wss" => {
            let (ws, local) = open_ws(&url, limits).await?;
            Ok((within(WatchLayer(Deadline(limits.timeout)).layer(ws), limits), local))
        }
        other => Err(ConnectError::Scheme(other.to_owned())),
    }
}

/// A client of the websocket at `url` with nothing between it and the socket, as subscriptions
/// need (`eth_subscribe` is answered by the socket's own frontend); it reopens after a drop and
/// subscribes again.
pub async fn subscriber(url: &reqwest::Url, limits: &RpcLimits) -> Result<RpcClient, ConnectError> {
    let (ws, local) = open_ws(url, limits).await?;
    Ok(ClientBuilder::default().transport(ws, local))
}

/// Opens the websocket at `url` within the connect timeout.
async fn open_ws(url: &reqwest::Url, limits: &RpcLimits) -> Result<(PubSubFrontend, bool), ConnectError> {
    let connect =
        WsConnect::new(url.as_str()).with_max_retries(u32::MAX).with_retry_interval(WS_RETRY_INTERVAL);
    let local = connect.is_local();
    match tokio::time::timeout(limits.connect_timeout, connect.into_service()).await {
        Ok(opened) => Ok((opened.map_err(ConnectError::Ws)?, local)),
        Err(_) => Err(ConnectError::Ws(timed_out(limits.connect_timeout))),
    }
}

/// `transport` boxed, under the requests-per-second ceiling of `limits` when it has one.
fn within<S>(transport: S, limits: &RpcLimits) -> BoxTransport
where
    S: Service<
            RequestPacket,
            Response = ResponsePacket,
            Error = TransportError,
            Future = TransportFut<'static>,
        > + Clone
        + Send
        + Sync
        + 'static,
{
    match limits.max_rps {
        Some(rps) => BoxTransport::new(ThrottleLayer::new(rps.get()).layer(transport)),
        None => BoxTransport::new(transport),
    }
}

/// An RPC client of `url` within `limits`, with no further layers.
pub async fn client(url: reqwest::Url, limits: &RpcLimits) -> Result<RpcClient, ConnectError> {
    let (transport, local) = transport(url, limits).await?;
    Ok(ClientBuilder::default().transport(transport, local))
}

/// The error of a request that got no answer within `limit`.
fn timed_out(limit: Duration) -> TransportError {
    TransportErrorKind::custom_str(&format!(
        "no answer within {} s: operation timed out",
        limit.as_secs_f32()
    ))
}

/// What a [`WatchLayer`] does with each request and its answer.
pub trait Watch {
    /// What is noted of a request before it goes down (its method, say).
    type Note: Send + 'static;
    /// Looks at `request` before it is sent.
    fn note(&self, request: &RequestPacket) -> Self::Note;
    /// The answer as the layers above see it.
    fn answer(&self, note: Self::Note, answer: TransportFut<'static>) -> TransportFut<'static>;
}

/// A transport layer that hands each request and its answer to a [`Watch`]: how the deadline and
/// the explanations here, and the indexer's shape check, sit on a transport without each one
/// repeating a tower service.
#[derive(Debug, Clone, Copy, Default)]
pub struct WatchLayer<W>(pub W);

impl<W: Clone, S> Layer<S> for WatchLayer<W> {
    type Service = Watching<W, S>;

    fn layer(&self, inner: S) -> Watching<W, S> {
        Watching { watch: self.0.clone(), inner }
    }
}

/// A transport under a [`Watch`].
#[derive(Debug, Clone)]
pub struct Watching<W, S> {
    watch: W,
    inner: S,
}

impl<W, S> Service<RequestPacket> for Watching<W, S>
where
    W: Watch,
    S: Service<
            RequestPacket,
            Response = ResponsePacket,
            Error = TransportError,
            Future = TransportFut<'static>,
        >,
{
    type Response = ResponsePacket;
    type Error = TransportError;
    type Future = TransportFut<'static>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: RequestPacket) -> Self::Future {
        let note = self.watch.note(&request);
        self.watch.answer(note, self.inner.call(request))
    }
}

/// Fails a request not answered within its limit (a websocket has no per-request timeout).
#[derive(Debug, Clone, Copy)]
struct Deadline(Duration);

impl Watch for Deadline {
    type Note = ();

    fn note(&self, _: &RequestPacket) {}

    fn answer(&self, (): (), answer: TransportFut<'static>) -> TransportFut<'static> {
        let limit = self.0;
        Box::pin(async move {
            tokio::time::timeout(limit, answer).await.unwrap_or_else(|_| Err(timed_out(limit)))
        })
    }
}

/// Puts the causes of a failure to reach the node into its message.
#[derive(Debug, Clone, Copy)]
struct Explain;

impl Watch for Explain {
    type Note = ();

    fn note(&self, _: &RequestPacket) {}

    fn answer(&self, (): (), answer: TransportFut<'static>) -> TransportFut<'static> {
        Box::pin(async move {
            answer.await.map_err(|error| match error {
                RpcError::Transport(TransportErrorKind::Custom(cause)) => {
                    TransportErrorKind::custom_str(&with_causes(cause.as_ref()))
                }
                other => other,
            })
        })
    }
}

/// `error`'s message followed by each cause's that says more: "a: b: c" (a cause whose words are
/// already said is left out, as wrappers often repeat their source).
pub fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !said.contains(&more) {
            said = format!("{said}: {more}");
        }
        cause = c.source();
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_node_that_takes_the_request_and_never_answers_is_an_error_that_says_so() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address")).parse().expect("url");
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let limits = RpcLimits { timeout: Duration::from_millis(300), ..RpcLimits::default() };
        let client = client(url, &limits).await.expect("client");
        let started = std::time::Instant::now();
        let error = client.request_noparams::<String>("eth_chainId").await.expect_err("no answer");
        assert!(started.elapsed() < Duration::from_secs(3), "waited {:?}", started.elapsed());
        assert!(error.to_string().contains("timed out"), "{error}");
        held.abort();
    }
}
