//! How every part reaches a node over HTTP(S): a connect timeout and a request timeout on every
//! call, so a node that accepts a connection and never answers is an error within a bound instead
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
    rpc::{
        client::{ClientBuilder, RpcClient},
        json_rpc::{RequestPacket, ResponsePacket},
    },
    transports::{
        BoxTransport, RpcError, TransportError, TransportErrorKind, TransportFut,
        http::{Http, reqwest},
        layers::ThrottleLayer,
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
#[error("setting up the HTTP client for the RPC failed (TLS backend): {0}")]
pub struct ClientSetupError(#[source] reqwest::Error);

/// The HTTP(S) transport to `url` within `limits`, boxed so callers can put their own layers
/// (retries, checks) above it: `ClientBuilder::default().layer(…).transport(t, local)`.
pub fn transport(url: reqwest::Url, limits: &RpcLimits) -> Result<(BoxTransport, bool), ClientSetupError> {
    let client = reqwest::Client::builder()
        .timeout(limits.timeout)
        .connect_timeout(limits.connect_timeout)
        .build()
        .map_err(ClientSetupError)?;
    let http = Http::with_client(client, url);
    let local = http.guess_local();
    let explained = Explained { inner: http };
    let boxed = match limits.max_rps {
        Some(rps) => BoxTransport::new(ThrottleLayer::new(rps.get()).layer(explained)),
        None => BoxTransport::new(explained),
    };
    Ok((boxed, local))
}

/// An RPC client of `url` within `limits`, with no further layers.
pub fn client(url: reqwest::Url, limits: &RpcLimits) -> Result<RpcClient, ClientSetupError> {
    let (transport, local) = transport(url, limits)?;
    Ok(ClientBuilder::default().transport(transport, local))
}

/// A transport whose failures to reach the node carry their causes in their message.
#[derive(Debug, Clone)]
struct Explained<S> {
    inner: S,
}

impl<S> Service<RequestPacket> for Explained<S>
where
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
        let answer = self.inner.call(request);
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
        let client = client(url, &limits).expect("client");
        let started = std::time::Instant::now();
        let error = client.request_noparams::<String>("eth_chainId").await.expect_err("no answer");
        assert!(started.elapsed() < Duration::from_secs(3), "waited {:?}", started.elapsed());
        assert!(error.to_string().contains("timed out"), "{error}");
        held.abort();
    }
}
