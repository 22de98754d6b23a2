//! `agentpact serve`: the dashboard, the GraphQL API over the index and the negotiation relay,
//! until interrupted.

use std::{net::SocketAddr, time::Duration};

use agentpact_api::{NegotiationConfig, OperatorConfig, ServeConfig};
use agentpact_http::rate_limit::Rate;
use agentpact_negotiation::Timeouts;
use agentpact_read::Databases;
use anyhow::{Context, bail};

use crate::{
    database,
    settings::{DatabaseArgs, ReadDatabaseArgs, Secret, WebhookPolicyArgs},
    signal,
};

/// Flags of `agentpact serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    #[command(flatten)]
    read_database: ReadDatabaseArgs,
    /// The chain queries mean when they name none, and the one /readyz checks.
    #[arg(long, env = "CHAIN_ID", default_value_t = 84532)]
    chain_id: u64,
    /// Where to listen: the dashboard on /, GraphQL on /graphql (a query console in a browser),
    /// subscriptions on /graphql/ws, the negotiation relay on /hire/messages and /hire/contracts
    /// (the server's base URL, http://API_ADDR/, is the HIRE_RELAY_URL of `agentpact mcp`), and
    /// /healthz, /readyz, /metrics. The URLs are logged at start.
    #[arg(long, env = "API_ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Browser origins allowed to call the API (comma-separated, or * for any); none by default.
    #[arg(long, env = "CORS_ORIGINS", value_delimiter = ',')]
    cors_origin: Vec<String>,
    /// /readyz fails while the index is more than this many blocks behind the head.
    #[arg(long, env = "READY_MAX_LAG_BLOCKS", default_value_t = 10)]
    ready_max_lag_blocks: u64,
    /// /readyz fails when the indexer has not reported for this many seconds.
    #[arg(long, env = "READY_MAX_SILENCE_SECS", default_value_t = 30)]
    ready_max_silence_secs: u64,
    /// /readyz fails while the read replica's index is more than this many blocks behind the
    /// primary's (with READ_DATABASE_URL).
    #[arg(long, env = "READY_MAX_REPLICA_LAG_BLOCKS", default_value_t = 2)]
    ready_max_replica_lag_blocks: u64,
    /// Requests per second each client address may send to /graphql (sustained); 0 turns the
    /// limit off. Over it, clients get 429 with Retry-After.
    #[arg(long, env = "RATE_LIMIT_PER_SEC", default_value_t = 50)]
    rate_limit_per_sec: u32,
    /// Requests a client may send at once after a quiet spell.
    #[arg(long, env = "RATE_LIMIT_BURST", default_value_t = 100)]
    rate_limit_burst: u32,
    /// Database connections for queries.
    #[arg(long, env = "API_DB_CONNECTIONS", default_value_t = 16)]
    db_connections: u32,
    /// Negotiation: seconds the worker has to answer an opening message.
    #[arg(long, env = "HIRE_INITIAL_RESPONSE_SECS", default_value_t = 60)]
    initial_response_secs: u64,
    /// Negotiation: seconds to answer a clarification.
    #[arg(long, env = "HIRE_CLARIFICATION_SECS", default_value_t = 30)]
    clarification_secs: u64,
    /// Negotiation: seconds to accept (or answer) terms on the table.
    #[arg(long, env = "HIRE_ACCEPTANCE_SECS", default_value_t = 120)]
    acceptance_secs: u64,
    /// How long a query with `block: { number_gte: N }` waits for the index to hold block N
    /// before it is refused with BLOCK_NOT_INDEXED, in milliseconds.
    #[arg(long, env = "BLOCK_WAIT_MS", default_value_t = 5000)]
    block_wait_ms: u64,
    /// The operator's bearer token (at least 16 characters): requests to /graphql with
    /// `Authorization: Bearer <token>` may register, list and cancel anyone's webhooks. Unset:
    /// nobody may.
    #[arg(long, env = "OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<Secret>,
    /// What the operator's webhook registrations are held to.
    #[command(flatten)]
    webhooks: WebhookPolicyArgs,
}

/// Serves until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let pool = database::connect(&args.database, args.db_connections.max(2)).await?;
    let replica = args.read_database.connect(args.db_connections.max(2)).await?;
    has_schema(&pool, "DATABASE_URL").await?;
    if let Some(replica) = &replica {
        has_schema(replica, "READ_DATABASE_URL").await?;
    }
    let config = ServeConfig {
        chain_id: args.chain_id,
        cors_origins: args
            .cors_origin
            .into_iter()
            .map(|o| o.trim().to_owned())
            .filter(|o| !o.is_empty())
            .collect(),
        ready_max_lag_blocks: args.ready_max_lag_blocks,
        ready_max_silence: Duration::from_secs(args.ready_max_silence_secs),
        ready_max_replica_lag_blocks: args.ready_max_replica_lag_blocks,
        rate_limit: (args.rate_limit_per_sec > 0).then(|| Rate {
            per_second: f64::from(args.rate_limit_per_sec),
            burst: f64::from(args.rate_limit_burst.max(1)),
        }),
        negotiation: NegotiationConfig {
            timeouts: Timeouts {
                initial_response: Duration::from_secs(args.initial_response_secs),
                clarification_round: Duration::from_secs(args.clarification_secs),
                acceptance: Duration::from_secs(args.acceptance_secs),
            },
            ..NegotiationConfig::default()
        },
        connections: Default::default(),
        block_wait: Duration::from_millis(args.block_wait_ms),
        operator: match args.operator_token {
            Some(token) => Some(OperatorConfig {
                token: agentpact_http::bearer::configured("OPERATOR_TOKEN", token.expose())?,
                policy: args.webhooks.policy()?,
            }),
            None => None,
        },
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {} (API_ADDR): is another server using that port?", args.listen))?;
    let addr = listener.local_addr().unwrap_or(args.listen);
    tracing::info!(chain_id = args.chain_id, "dashboard on http://{addr}/");
    tracing::info!("GraphQL on http://{addr}/graphql, its subscriptions on ws://{addr}/graphql/ws");
    tracing::info!("negotiation relay on http://{addr}/ (each agent's HIRE_RELAY_URL for `agentpact mcp`)");
    let databases = Databases { primary: pool, replica };
    agentpact_api::serve(listener, databases, config, signal::shutdown()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Refuses a database without the index's tables, saying how to make them.
async fn has_schema(pool: &sqlx::PgPool, setting: &str) -> anyhow::Result<()> {
    if let Err(e) = sqlx::query!("SELECT 1 AS one FROM checkpoints LIMIT 1").fetch_optional(pool).await {
        if e.as_database_error().and_then(|d| d.code()).as_deref() == Some("42P01") {
            bail!("{setting} has no index schema yet: run `agentpact migrate` (or `agentpact index`) first");
        }
        return Err(e).with_context(|| format!("reading the index at {setting}"));
    }
    Ok(())
}
