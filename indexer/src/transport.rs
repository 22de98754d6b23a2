//! The indexer's RPC transport: retries live here, as a layer under the provider, so every call the
//! indexer makes is retried the same way and nothing above it loops by hand. The policy retries
//! what may succeed on a second try (a dropped connection, a rate limit — after the wait the
//! endpoint asks for —, a 5xx, an internal error, a garbled answer) and never what cannot: a log
//! range the endpoint refused (the range shrinks instead; `fetch::refusal`), invalid
//! parameters, an unknown method, an HTTP 4xx other than 408 and 429. Below the retries,
//! [`ShapeCheck`] turns an answer of the wrong shape (a proxy's or a broken backend's) into a
//! failure the retries see, since it would only fail later, above the transport, unretried.

use agentpact_contracts::rpc::{self, ConnectError, RpcLimits, Watch, WatchLayer};
use alloy::{
    providers::{DynProvider, Provider, ProviderBuilder},
    rpc::{
        client::ClientBuilder,
        json_rpc::{RequestPacket, ResponsePacket},
    },
    transports::{
        RpcError, TransportError, TransportErrorKind, TransportFut,
        http::reqwest::Url,
        layers::{RateLimitRetryPolicy, RetryBackoffLayer, RetryPolicy},
    },
};

use crate::{Metrics, fetch};

/// Retries after the first attempt.
const RETRIES: u32 = 4;
/// The base wait between attempts, in milliseconds (an endpoint's own `Retry-After` wins).
const BACKOFF_MS: u64 = 100;
/// Compute units per second the layer budgets for: no client-side throttle.
const UNLIMITED: u64 = u64::MAX;
/// JSON-RPC's "internal error": a node's passing failure.
const INTERNAL_ERROR: i64 = -32603;
/// The wait after a rate limit that names none: providers answer 429 with the JSON-RPC error in
/// the body, which hides their `Retry-After`, and their windows are a second long. Retrying at
/// the base backoff instead spends every retry inside the same refused second.
const RATE_LIMIT_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A provider for `url` (http(s) or ws(s)) within `limits` (timeouts, a requests-per-second
/// ceiling) whose calls are retried by [`Transient`], each failure counted in `metrics` (give the
/// same metrics to the indexer: `Indexer::with_metrics`).
pub async fn connect(url: Url, limits: &RpcLimits, metrics: &Metrics) -> Result<DynProvider, ConnectError> {
    let policy = Transient { metrics: metrics.clone() };
    let retry = RetryBackoffLayer::new_with_policy(RETRIES, BACKOFF_MS, UNLIMITED, policy);
    let (transport, local) = rpc::transport(url, limits).await?;
    let client =
        ClientBuilder::default().layer(retry).layer(WatchLayer(ShapeCheck)).transport(transport, local);
    Ok(ProviderBuilder::new().connect_client(client).erased())
}

/// For a `ws(s)://` `url`, a provider of its own whose only use is the `newHeads` subscription
/// that wakes the indexer at each block (the calls go through [`connect`]'s layers, which a
/// subscription cannot pass); `None` for HTTP, where the indexer polls.
pub async fn head_source(url: &Url, limits: &RpcLimits) -> Result<Option<DynProvider>, ConnectError> {
    if !matches!(url.scheme(), "ws" | "wss") {
        return Ok(None);
    }
    let client = rpc::subscriber(url, limits).await?;
    Ok(Some(ProviderBuilder::new().connect_client(client).erased()))
}

/// Retry what may succeed on a second try (see the module's documentation); count and log every
/// failure either way.
#[derive(Debug, Clone, Default)]
pub struct Transient {
    metrics: Metrics,
}

impl RetryPolicy for Transient {
    fn should_retry(&self, error: &TransportError) -> bool {
        let retry = may_pass(error);
        self.metrics.error("rpc");
        tracing::debug!(%error, retry, "RPC call failed");
        retry
    }

    fn backoff_hint(&self, error: &TransportError) -> Option<std::time::Duration> {
        let named = RateLimitRetryPolicy::default().backoff_hint(error);
        named.or_else(|| rate_limited(error).then_some(RATE_LIMIT_WAIT))
    }
}

/// Whether `error` is an endpoint refusing for the rate of requests (HTTP 429, or a JSON-RPC
/// error saying so), whatever wait it names.
fn rate_limited(error: &TransportError) -> bool {
    match error {
        RpcError::Transport(TransportErrorKind::HttpError(http)) => http.status == 429,
        RpcError::ErrorResp(payload) => payload.code == 429 || says_rate_limit(&payload.message),
        _ => false,
    }
}

/// Whether an endpoint's error `message` speaks of the rate of requests, as providers word it.
pub(crate) fn says_rate_limit(message: &str) -> bool {
    let message = message.to_lowercase();
    ["rate limit", "rate-limit", "too many requests", "exceeded its compute units", "capacity"]
        .iter()
        .any(|hint| message.contains(hint))
}

/// Whether a call that failed with `error` may succeed when sent again.
fn may_pass(error: &TransportError) -> bool {
    if fetch::refusal(error).is_some() {
        return false;
    }
    match error {
        RpcError::Transport(kind) => match kind {
            TransportErrorKind::HttpError(http) => {
                http.status == 408 || http.status == 429 || http.status >= 500
            }
            TransportErrorKind::BackendGone | TransportErrorKind::PubsubUnavailable => false,
            other if other.is_non_retryable() => false,
            // Connection refused or reset, timeouts, a Retry-After answer, a lost batch member.
            _ => true,
        },
        // Rate limits in the providers' own codes, as alloy knows them.
        RpcError::ErrorResp(payload) => {
            payload.code == INTERNAL_ERROR || RateLimitRetryPolicy::default().should_retry(error)
        }
        // A garbled or empty answer: a healthy node answers right next time.
        RpcError::NullResp | RpcError::DeserError { .. } => true,
        _ => false,
    }
}

/// A [`Watch`] that fails an answer whose result cannot be what the method returns.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShapeCheck;

impl Watch for ShapeCheck {
    /// The method, when `plausible` knows it: no work, no allocation for the others.
    type Note = Option<&'static str>;

    fn note(&self, request: &RequestPacket) -> Self::Note {
        match request {
            RequestPacket::Single(one) => CHECKED.into_iter().find(|m| *m == one.method()),
            RequestPacket::Batch(_) => None,
        }
    }

    fn answer(&self, method: Self::Note, answer: TransportFut<'static>) -> TransportFut<'static> {
        Box::pin(async move {
            let response = answer.await?;
            if let (Some(method), ResponsePacket::Single(one)) = (method, &response)
                && let Some(result) = one.payload.as_success()
                && !plausible(method, result.get())
            {
                return Err(TransportErrorKind::custom_str(&format!(
                    "the node answered {method} with a result of the wrong shape"
                )));
            }
            Ok(response)
        })
    }
}

/// The methods whose answers [`ShapeCheck`] checks.
const CHECKED: [&str; 5] =
    ["eth_getLogs", "eth_getBlockByNumber", "eth_getBlockByHash", "eth_blockNumber", "eth_chainId"];

/// Whether `result` (raw JSON) can be an answer to `method`, judged cheaply (a log answer may be
/// megabytes: it is not parsed twice).
fn plausible(method: &str, result: &str) -> bool {
    let result = result.trim_start();
    match method {
        "eth_getLogs" => result.starts_with('['),
        "eth_getBlockByNumber" | "eth_getBlockByHash" => {
            result.starts_with("null") || (result.starts_with('{') && result.contains("\"hash\""))
        }
        "eth_blockNumber" | "eth_chainId" => result.starts_with("\"0x"),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use alloy::rpc::json_rpc::ErrorPayload;

    use super::*;

    fn refusal(code: i64, message: &str) -> TransportError {
        RpcError::ErrorResp(ErrorPayload { code, message: message.to_owned().into(), data: None })
    }

    #[test]
    fn answers_of_the_wrong_shape_are_caught() {
        assert!(plausible("eth_getLogs", " []") && !plausible("eth_getLogs", r#"{"garbage": [1]}"#));
        assert!(plausible("eth_getBlockByNumber", "null"));
        assert!(plausible("eth_getBlockByNumber", r#"{"hash": "0x01", "number": "0x1"}"#));
        assert!(!plausible("eth_getBlockByNumber", r#"{"garbage": [1, "two", null]}"#));
        assert!(plausible("eth_chainId", r#""0x7a69""#) && !plausible("eth_chainId", "{}"));
        assert!(plausible("eth_call", "{}"), "other methods pass unchecked");
    }

    #[test]
    fn what_may_pass_is_retried_and_what_cannot_is_not() {
        let retried = [
            refusal(INTERNAL_ERROR, "internal error"),
            refusal(429, "too many requests"),
            refusal(-32005, "exceeded project rate limit"),
            RpcError::NullResp,
            TransportErrorKind::custom_str("connection reset by peer"),
            TransportErrorKind::http_error(503, "unavailable".into()),
        ];
        let refused = [
            refusal(-32005, "query exceeds max block range 500"),
            refusal(-32602, "invalid params"),
            refusal(-32601, "the method eth_foo does not exist"),
            TransportErrorKind::http_error(401, "unauthorized".into()),
            TransportErrorKind::backend_gone(),
            TransportErrorKind::non_retryable_str("a certificate that does not verify"),
        ];
        for e in &retried {
            assert!(may_pass(e), "{e} should be retried");
        }
        for e in &refused {
            assert!(!may_pass(e), "{e} cannot succeed on a retry");
        }
    }

    #[test]
    fn a_rate_limit_without_a_named_wait_waits_a_second_and_one_naming_it_waits_that() {
        let policy = Transient::default();
        let wait = |e: &TransportError| policy.backoff_hint(e);
        assert_eq!(wait(&refusal(429, "Too Many Requests")), Some(RATE_LIMIT_WAIT));
        assert_eq!(wait(&refusal(-32005, "exceeded project rate limit")), Some(RATE_LIMIT_WAIT));
        assert_eq!(wait(&TransportErrorKind::http_error(429, "slow down".into())), Some(RATE_LIMIT_WAIT));
        let named = TransportErrorKind::http_error_with_retry_after(
            429,
            String::new(),
            Some(std::time::Duration::from_secs(3)),
        );
        assert_eq!(wait(&named), Some(std::time::Duration::from_secs(3)));
        assert_eq!(
            wait(&refusal(INTERNAL_ERROR, "internal error")),
            None,
            "not a rate limit: the base backoff"
        );
    }
}
