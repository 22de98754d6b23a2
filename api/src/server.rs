//! The HTTP server: the dashboard (`/`, its query console on `GET /graphql`), GraphQL (POST
//! `/graphql`, websocket subscriptions on `/graphql/ws`), the negotiation relay (`/hire/…`), `/healthz`, `/readyz`, `/metrics`, and CORS
//! as configured.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use agentpact_http::bearer::Bearer;
use agentpact_negotiation::{Clock, NEGOTIATION_CHANNEL, Relay, Timeouts};
use async_graphql::ParseRequestError;
use async_graphql_axum::{GraphQLProtocol, GraphQLRequest, GraphQLResponse};
use axum::{
    Json, Router,
    extract::{ConnectInfo, MatchedPath, Request, State, ws::WebSocketUpgrade},
    http::{HeaderValue, StatusCode},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
};
use tower_http::{
    cors::{AllowOrigin, Any, CorsLayer},
    limit::RequestBodyLimitLayer,
};
use tracing::Instrument;

use crate::{
    connections::{self, ConnectionLimits},
    dashboard,
    databases::Databases,
    graphql::{ApiSchema, BlockWait, ChainId, Code, OperatorAccess, negotiation_access::Credential, schema},
    live::Live,
    metrics::ApiMetrics,
    rate_limit::{self, Rate, RateLimiter},
    read::Reader,
    websocket,
};

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The chain queries mean when they name none (and the one `/readyz` checks).
    pub chain_id: u64,
    /// Origins allowed to call from a browser: empty allows none (no CORS headers), `*` any.
    pub cors_origins: Vec<String>,
    /// `/readyz` fails while the index is more than this many blocks behind the head.
    pub ready_max_lag_blocks: u64,
    /// `/readyz` fails when the indexer has not reported for this long (it is not running).
    pub ready_max_silence: Duration,
    /// `/readyz` fails while the read replica's index is more than this many blocks behind the
    /// primary's (ignored without a replica).
    pub ready_max_replica_lag_blocks: u64,
    /// Per-client limit on the GraphQL and relay routes; `None` serves everyone as fast as it can.
    pub rate_limit: Option<Rate>,
    /// The negotiation relay's timeouts and clock.
    pub negotiation: NegotiationConfig,
    /// How clients may hold connections (per address, in all, header and body time).
    pub connections: ConnectionLimits,
    /// How long a query with `block: { number_gte }` waits for the index.
    pub block_wait: Duration,
    /// The operator's token and webhook policy; `None`: no request reaches the operator's fields.
    pub operator: Option<OperatorConfig>,
}

/// What the operator's requests (`Authorization: Bearer <token>`) may do: register, list and
/// cancel anyone's webhooks under `policy`.
#[derive(Clone)]
pub struct OperatorConfig {
    /// The bearer token (`OPERATOR_TOKEN`); never printed.
    pub token: String,
    /// Permitted targets and the cap per owner.
    pub policy: agentpact_push::Policy,
}

impl std::fmt::Debug for OperatorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorConfig").field("token", &"<hidden>").field("policy", &self.policy).finish()
    }
}

/// How the negotiation relay keeps time.
#[derive(Debug, Clone)]
pub struct NegotiationConfig {
    /// How long each side has to answer.
    pub timeouts: Timeouts,
    /// The relay's clock (the system's, or a test's).
    pub clock: Clock,
}

impl Default for NegotiationConfig {
    /// Seed 004's timeouts on the system clock.
    fn default() -> Self {
        Self { timeouts: Timeouts::default(), clock: Clock::system() }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A CORS origin is not a valid header value.
    #[error("CORS origin {0:?} is not an origin such as https://dashboard.example.com (or *)")]
    BadOrigin(String),
    /// The notification listener could not connect.
    #[error("listening for pact changes: {0}")]
    Listen(#[from] sqlx::Error),
    /// Serving failed.
    #[error("serving HTTP: {0}")]
    Io(#[from] std::io::Error),
}

/// The largest GraphQL request body accepted; larger ones get 413 before any of it is parsed. A
/// dashboard's biggest query is a few kilobytes; this leaves room for generated ones.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

#[derive(Clone)]
struct AppState {
    schema: ApiSchema,
    sockets: websocket::Sockets,
    databases: Databases,
    reader: Reader,
    config: ServeConfig,
    metrics: ApiMetrics,
    /// The operator's token and what a request carrying it may reach.
    operator: Option<(Bearer, OperatorAccess)>,
}

/// The application over `databases`: every route, ready for `axum::serve`.
pub async fn app(databases: Databases, config: ServeConfig) -> Result<Router, ServeError> {
    let cors = cors(&config.cors_origins)?;
    let live = Live::start(&databases.primary, NEGOTIATION_CHANNEL).await?;
    let reader = databases.reader();
    let schema = schema(reader.clone(), live, ChainId(config.chain_id), BlockWait(config.block_wait));
    let operator = config.operator.as_ref().map(|o| {
        let access = OperatorAccess { pool: databases.primary.clone(), policy: o.policy.clone() };
        (Bearer::new(&o.token), access)
    });
    let n = &config.negotiation;
    let relay = Relay::new(databases.primary.clone(), config.chain_id, n.timeouts, n.clock.clone());
    // One limiter for HTTP requests and the operations sockets start.
    let limiter = config.rate_limit.map(|rate| Arc::new(RateLimiter::new(rate)));
    let sockets = websocket::Sockets {
        schema: schema.clone(),
        limiter: limiter.clone(),
        operator: operator.as_ref().map(|(bearer, _)| bearer.clone()),
    };
    let state =
        AppState { schema, sockets, databases, reader, config, metrics: ApiMetrics::default(), operator };
    let mut graphql_routes = Router::new()
        .route("/graphql", get(dashboard::page).post(graphql))
        .route("/graphql/ws", get(socket))
        .merge(agentpact_negotiation::http::routes(relay))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES));
    if let Some(limiter) = limiter {
        graphql_routes = graphql_routes.layer(middleware::from_fn_with_state(limiter, rate_limit::limit));
    }
    let mut router = Router::new()
        .merge(graphql_routes)
        .merge(dashboard::routes())
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .with_state(state);
    if let Some(cors) = cors {
        router = router.layer(cors);
    }
    Ok(router)
}

/// Serves [`app`] on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    databases: Databases,
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let limits = config.connections;
    let app = app(databases, config).await?;
    connections::serve(listener, app, limits, shutdown).await?;
    Ok(())
}

fn cors(origins: &[String]) -> Result<Option<CorsLayer>, ServeError> {
    if origins.is_empty() {
        return Ok(None);
    }
    let layer = CorsLayer::new().allow_methods(Any).allow_headers(Any);
    if origins.iter().any(|o| o == "*") {
        return Ok(Some(layer.allow_origin(Any)));
    }
    let values = origins
        .iter()
        .map(|o| HeaderValue::from_str(o).map_err(|_| ServeError::BadOrigin(o.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(layer.allow_origin(AllowOrigin::list(values))))
}

/// Runs one GraphQL request; one carrying the operator's token reaches the operator's fields and
/// every negotiation, one signed by a party its own negotiations.
async fn graphql(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    request: GraphQLRequest<BadGraphQLRequest>,
) -> GraphQLResponse {
    let mut request = request.into_inner();
    if let Some((expected, access)) = &state.operator
        && expected.presented_in(&headers)
    {
        request = request.data(access.clone()).data(Credential::Operator);
    } else if let Some(credential) = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(Credential::from_authorization)
    {
        request = request.data(credential);
    }
    state.schema.execute(request).await.into()
}

/// Whether reading the body failed because it did not arrive in time (the connection's body
/// timeout, `connections::ConnectionLimits::body_timeout`).
fn body_timed_out(e: &std::io::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|inner| inner as _);
    while let Some(error) = cause {
        // The extractor may keep only the message on its way to `io::Error`: tower-http's
        // `TimeoutError` says this and nothing else does.
        if error.is::<tower_http::timeout::TimeoutError>()
            || error.to_string() == "data was not received within the designated timeout"
        {
            return true;
        }
        cause = error.source();
    }
    false
}

/// A body that is not one GraphQL request (not JSON of one, a batch, too large), answered the way
/// GraphQL answers: a JSON error with a code, HTTP 400 (413 when too large).
pub struct BadGraphQLRequest(ParseRequestError);

impl From<ParseRequestError> for BadGraphQLRequest {
    fn from(e: ParseRequestError) -> Self {
        Self(e)
    }
}

impl IntoResponse for BadGraphQLRequest {
    fn into_response(self) -> Response {
        let (status, code, message) = match &self.0 {
            ParseRequestError::PayloadTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                Code::PayloadTooLarge,
                format!("the body is over {MAX_BODY_BYTES} bytes"),
            ),
            ParseRequestError::Io(e) if body_timed_out(e) => (
                StatusCode::REQUEST_TIMEOUT,
                Code::BodyTimeout,
                "the body did not arrive in time; send it whole".to_owned(),
            ),
            ParseRequestError::UnsupportedBatch => (
                StatusCode::BAD_REQUEST,
                Code::BadRequest,
                "a batch (a JSON array of requests) is not served: send one query per request".to_owned(),
            ),
            other => (
                StatusCode::BAD_REQUEST,
                Code::BadRequest,
                format!(
                    "the body is not one GraphQL request ({{\"query\": \"…\", \"variables\": {{…}}}}): {}",
                    other.to_string().chars().take(200).collect::<String>()
                ),
            ),
        };
        (status, Json(serde_json::json!({ "errors": [code.refusal(message)] }))).into_response()
    }
}

async fn socket(
    State(state): State<AppState>,
    protocol: GraphQLProtocol,
    upgrade: WebSocketUpgrade,
    ConnectInfo(client): ConnectInfo<std::net::SocketAddr>,
) -> Response {
    websocket::upgrade(state.sockets, protocol, upgrade, client.ip())
}

async fn healthz() -> &'static str {
    "ok"
}

/// Ready when the databases answer, the indexer has indexed the chain, is alive, and is close to
/// the head, and a read replica has replayed the index to within its bound; otherwise 503 with
/// the reason, so a load balancer sends no traffic to stale data.
async fn readyz(State(state): State<AppState>) -> Response {
    let config = &state.config;
    let not_ready = |reason: String| {
        (StatusCode::SERVICE_UNAVAILABLE, Json(serde_json::json!({ "ready": false, "reason": reason })))
            .into_response()
    };
    let status = match state.reader.indexer_status(config.chain_id).await {
        Ok(Some(status)) => status,
        Ok(None) => return not_ready(format!("chain {} has not been indexed yet", config.chain_id)),
        Err(e) => return not_ready(format!("the read database does not answer: {e}")),
    };
    let silent = status.silent_for(chrono::Utc::now()).unwrap_or(u64::MAX);
    if silent > config.ready_max_silence.as_secs() {
        return not_ready(format!(
            "the indexer has not reported for {silent} s; is `agentpact index` running?"
        ));
    }
    if status.lag_blocks() > config.ready_max_lag_blocks {
        return not_ready(format!(
            "the index is {} blocks behind the head (bound: {})",
            status.lag_blocks(),
            config.ready_max_lag_blocks
        ));
    }
    // The read database's status, read above, is the replica's when there is one.
    let replica = match state.databases.replica_lag(config.chain_id, status.indexed_block).await {
        Ok(lag) => lag,
        Err(e) => return not_ready(format!("the primary database does not answer: {e}")),
    };
    if let Some(lag) = replica.filter(|lag| lag.blocks() > config.ready_max_replica_lag_blocks) {
        return not_ready(format!(
            "the read replica has replayed the index to block {}, {} blocks behind the primary's {} (bound: {})",
            lag.replica_block,
            lag.blocks(),
            lag.primary_block,
            config.ready_max_replica_lag_blocks
        ));
    }
    Json(serde_json::json!({
        "ready": true,
        "indexedBlock": status.indexed_block,
        "lagBlocks": status.lag_blocks(),
        "replicaLagBlocks": replica.map(|lag| lag.blocks()),
    }))
    .into_response()
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let status = state.reader.indexer_status(state.config.chain_id).await.ok().flatten();
    ([("content-type", "text/plain; version=0.0.4")], state.metrics.render(status.as_ref()))
}

/// Gives every request a span with an id, and counts it.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    let span = tracing::info_span!("request", id = NEXT_ID.fetch_add(1, Ordering::Relaxed), method = %request.method(), route);
    let started = Instant::now();
    let response = next.run(request).instrument(span.clone()).await;
    let took = started.elapsed();
    state.metrics.request(&route, response.status().as_u16(), took);
    span.in_scope(|| {
        tracing::debug!(status = response.status().as_u16(), micros = took.as_micros() as u64, "answered")
    });
    response
}
