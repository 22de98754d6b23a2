//! The MCP server over streamable HTTP (`agentpact mcp --http`): the router at `/mcp`, the
//! confirmation pages beside it (`/confirm/…`, see [`crate::confirm`]), and what stands between
//! the network and the wallet behind it — the bearer token, the `Origin` check
//! (MCP's defence against DNS rebinding: a web page must not drive a local server through the
//! visitor's browser), the body's size and depth ([`crate::frame`]: refused with a JSON-RPC error
//! naming the limit), the session cap and the per-client rate limit. The accept
//! loop with its connection limits is `agentpact_http::connections`, shared with the api.

use std::sync::Arc;

use crate::{
    PactServer,
    frame::{self, MAX_MESSAGE_BYTES, Refusal},
};
use agentpact_http::{
    bearer::Bearer,
    rate_limit::{self, Rate, RateLimiter},
};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};

use axum::{
    extract::Request,
    http::{StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

/// What the HTTP server lets through besides the body and session limits.
#[derive(Clone, Default)]
pub struct Guards {
    /// Origins a browser may call from (requests without `Origin` always pass).
    pub allowed_origins: Vec<String>,
    /// The bearer token every request must carry, if any (never logged).
    pub token: Option<String>,
    /// Requests per second and burst per client address, if limited.
    pub rate: Option<Rate>,
}

impl std::fmt::Debug for Guards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guards")
            .field("allowed_origins", &self.allowed_origins)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("rate", &self.rate)
            .finish()
    }
}

/// The router serving `server` at `/mcp` behind `guards`, and its confirmation pages. MCP
/// 2026-07-28 requests are served statelessly (any process holding the same key can take any
/// request); a 2025-11-25 client gets a session kept in this process.
pub fn router(server: PactServer, guards: Guards) -> axum::Router {
    let pages = crate::confirm::page::router(server.confirmations());
    let sessions = Arc::new(LocalSessionManager::default());
    // rmcp refuses a Host other than loopback (DNS rebinding); past loopback the bearer token is
    // that defence (`agentpact mcp` requires one there), and the host is whatever the operator's
    // load balancer or DNS name says.
    let config = if guards.token.is_some() {
        StreamableHttpServerConfig::default().disable_allowed_hosts()
    } else {
        StreamableHttpServerConfig::default()
    };
    let config = config.with_max_request_body_bytes(MAX_MESSAGE_BYTES);
    let service = StreamableHttpService::new(move || Ok(server.session()), Arc::clone(&sessions), config);
    // Layers run from the last added: rate limit, token, Origin, session cap, body's size and depth.
    let allowed: Arc<[String]> = guards.allowed_origins.into();
    let mut router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(framed))
        .layer(axum::middleware::from_fn(move |request, next| {
            session_cap(Arc::clone(&sessions), request, next)
        }))
        .layer(axum::middleware::from_fn(move |request, next| origin(Arc::clone(&allowed), request, next)));
    if let Some(token) = guards.token {
        let expected = Arc::new(Bearer::new(&token));
        router = router.layer(axum::middleware::from_fn(move |request, next| {
            bearer(Arc::clone(&expected), request, next)
        }));
    }
    // Past the token and Origin guards: the human's browser carries no token, and the page's
    // own address (a 256-bit secret) is what admits it. The rate limit holds for both.
    router = router.merge(pages);
    if let Some(rate) = guards.rate {
        let limiter = Arc::new(RateLimiter::new(rate));
        router = router.layer(axum::middleware::from_fn_with_state(limiter, rate_limit::limit));
    }
    router
}

/// The most MCP sessions the server keeps at once (each holds a worker and buffers; idle ones
/// expire after rmcp's keep-alive, 5 minutes, or when their client sends DELETE).
pub const MAX_SESSIONS: usize = 256;

/// Refuses a request that would open a session (one without `Mcp-Session-Id`) while
/// [`MAX_SESSIONS`] are open: 503 with `Retry-After`.
async fn session_cap(sessions: Arc<LocalSessionManager>, request: Request, next: Next) -> Response {
    let opens =
        request.method() == axum::http::Method::POST && !request.headers().contains_key("mcp-session-id");
    if opens && sessions.sessions.read().await.len() >= MAX_SESSIONS {
        let message = format!(
            "this server already keeps {MAX_SESSIONS} sessions, the most it holds: close one (DELETE with its \
             Mcp-Session-Id) or retry in a minute\n"
        );
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
        response.headers_mut().insert(header::RETRY_AFTER, axum::http::HeaderValue::from_static("60"));
        return response;
    }
    next.run(request).await
}

/// Lets a POST through to rmcp only when its body passes [`frame::check`]; otherwise answers the
/// JSON-RPC error naming the limit: 413 for a body over [`MAX_MESSAGE_BYTES`] (refused unread when
/// its `Content-Length` says so), 400 for one too deep or not JSON.
async fn framed(request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse().ok());
    if declared.is_some_and(|length: usize| length > MAX_MESSAGE_BYTES) {
        return refused(StatusCode::PAYLOAD_TOO_LARGE, &Refusal::too_large());
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await else {
        return refused(StatusCode::PAYLOAD_TOO_LARGE, &Refusal::too_large());
    };
    if let Err(refusal) = frame::check(&bytes) {
        tracing::info!(code = refusal.code, "refused a request body before reading it");
        return refused(StatusCode::BAD_REQUEST, &refusal);
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// `refusal`'s JSON-RPC error with `status`.
fn refused(status: StatusCode, refusal: &Refusal) -> Response {
    (status, axum::Json(refusal.answer())).into_response()
}

/// Lets a request through only with `Authorization: Bearer <token>`.
async fn bearer(expected: Arc<Bearer>, request: Request, next: Next) -> Response {
    if expected.presented_in(request.headers()) {
        next.run(request).await
    } else {
        (StatusCode::UNAUTHORIZED, "send Authorization: Bearer <MCP_HTTP_TOKEN>\n").into_response()
    }
}

/// Lets a request through when it carries no `Origin` (clients that are not browsers), or a
/// loopback one (a local inspector), or one of `allowed`; otherwise 403.
async fn origin(allowed: Arc<[String]>, request: Request, next: Next) -> Response {
    let origin = request.headers().get(header::ORIGIN).map(|v| v.to_str().unwrap_or("<not text>"));
    match origin {
        Some(o) if !is_loopback(o) && !allowed.iter().any(|a| a == o) => {
            let shown: String = o.chars().take(60).collect();
            let message = format!(
                "requests from web origin {shown:?} are refused: a page there must not drive this wallet; \
                 add it to MCP_ALLOWED_ORIGINS if it should\n"
            );
            (StatusCode::FORBIDDEN, message).into_response()
        }
        _ => next.run(request).await,
    }
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, with any port.
fn is_loopback(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    let host = if rest.starts_with('[') {
        rest.split_inclusive(']').next().unwrap_or(rest)
    } else {
        rest.split(':').next().unwrap_or(rest)
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_are_told_from_others() {
        for o in ["http://localhost:6274", "http://127.0.0.1", "https://[::1]:8080", "http://localhost"] {
            assert!(is_loopback(o), "{o}");
        }
        for o in
            ["http://localhost.evil.example", "https://evil.example", "null", "http://127.0.0.1.nip.io:80"]
        {
            assert!(!is_loopback(o), "{o}");
        }
    }
}
