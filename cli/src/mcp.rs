//! `agentpact mcp`: the MCP server for one agent, over stdio (default) or streamable HTTP.

use std::{net::SocketAddr, time::Duration};

use agentpact_http::rate_limit::Rate;
use agentpact_mcp::{PactServer, Role, WriteLimits, input};
use agentpact_read::Reader;
use anyhow::{Context, bail};
use rmcp::ServiceExt;

use crate::{
    database,
    settings::{ChainArgs, DatabaseArgs, KeyArgs, ReadDatabaseArgs, Secret, WebhookPolicyArgs},
    signal,
};

/// Flags of `agentpact mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    chain: ChainArgs,
    #[command(flatten)]
    database: DatabaseArgs,
    #[command(flatten)]
    read_database: ReadDatabaseArgs,
    #[command(flatten)]
    key: KeyArgs,
    /// Which tools this agent gets: seeker, worker, oracle, arbitrator or full.
    #[arg(long, env = "MCP_ROLE", default_value = "full")]
    role: Role,
    /// The most ETH one write may send (a spending cap).
    #[arg(long, env = "MAX_VALUE_ETH", default_value = "1")]
    max_value_eth: String,
    /// The most USDC one deposit may take (a spending cap); deposits in other tokens are refused.
    #[arg(long, env = "MAX_VALUE_USDC", default_value = "100")]
    max_value_usdc: String,
    /// How long a write follows its transaction for a receipt, in seconds (past the call's
    /// answer when the call's time runs out first).
    #[arg(long, env = "RECEIPT_TIMEOUT_SECS", default_value_t = 60)]
    receipt_timeout_secs: u64,
    /// How long one tool call may take before it answers, in seconds (1-30); a transaction not
    /// mined by then is answered as pending, with its hash.
    #[arg(long, env = "CALL_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=30))]
    call_timeout_secs: u64,
    /// Deposits of more ETH than this ask the human to confirm first (MCP elicitation); a client
    /// that cannot ask is refused. Unset: never asked (the spending cap still holds).
    #[arg(long, env = "CONFIRM_ABOVE_ETH")]
    confirm_above_eth: Option<String>,
    /// Deposits of more USDC than this ask the human to confirm first, as CONFIRM_ABOVE_ETH.
    #[arg(long, env = "CONFIRM_ABOVE_USDC")]
    confirm_above_usdc: Option<String>,
    /// How long a write waits for the indexer to reach its block, in milliseconds.
    #[arg(long, env = "INDEX_WAIT_MS", default_value_t = 5000)]
    index_wait_ms: u64,
    /// Serve streamable HTTP on this address (at /mcp) instead of stdio.
    #[arg(long, env = "MCP_HTTP_ADDR")]
    http: Option<SocketAddr>,
    /// A bearer token HTTP clients must send (`Authorization: Bearer <token>`), at least 16
    /// characters; required when --http listens beyond loopback, since whoever reaches the port
    /// spends this wallet. Unset on loopback: a token is made for this run and printed at start.
    #[arg(long, env = "MCP_HTTP_TOKEN", hide_env_values = true)]
    http_token: Option<Secret>,
    /// Serve --http on loopback without any token, letting every process on this machine spend
    /// this wallet (only where nobody else runs anything); refused beyond loopback.
    #[arg(long, env = "MCP_HTTP_NO_TOKEN", conflicts_with = "http_token")]
    no_token: bool,
    /// Web origins (e.g. https://agents.example) whose pages may call the HTTP server; requests
    /// without an Origin (non-browser clients) and from loopback origins are always let through.
    #[arg(long, env = "MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    allowed_origins: Vec<String>,
    /// Requests per second each client address may send over HTTP (sustained); 0 turns the limit
    /// off. Over it, clients get 429 with Retry-After.
    #[arg(long, env = "MCP_RATE_LIMIT_PER_SEC", default_value_t = 20)]
    rate_limit_per_sec: u32,
    /// Requests a client may send at once after a quiet spell.
    #[arg(long, env = "MCP_RATE_LIMIT_BURST", default_value_t = 40)]
    rate_limit_burst: u32,
    /// The address humans reach this HTTP server at (e.g. https://mcp.example behind a load
    /// balancer): confirmation pages are offered under it. Unset: the Host each request came in on.
    #[arg(long, env = "MCP_PUBLIC_URL")]
    public_url: Option<alloy::transports::http::reqwest::Url>,
    /// The negotiation relay: the api server's base URL (`agentpact serve`), e.g.
    /// http://127.0.0.1:8080/. Without it the negotiation tools say so.
    #[arg(long, env = "HIRE_RELAY_URL")]
    relay_url: Option<alloy::transports::http::reqwest::Url>,
    /// What subscribe_webhook holds this wallet's subscriptions to.
    #[command(flatten)]
    webhooks: WebhookPolicyArgs,
}

/// Serves until the client closes stdin (stdio) or Ctrl-C/SIGTERM (HTTP).
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let signer = args.key.signer()?;
    let limits = WriteLimits {
        max_value: input::eth_amount("MAX_VALUE_ETH", &args.max_value_eth)?,
        // Read with 18 decimals, whatever USDC's are: the cap is compared at that scale.
        max_value_usdc: input::units("MAX_VALUE_USDC", &args.max_value_usdc, 18, "USDC")?,
        receipt_timeout: Duration::from_secs(args.receipt_timeout_secs.max(1)),
        call_timeout: Duration::from_secs(args.call_timeout_secs),
        confirm_above: match &args.confirm_above_eth {
            Some(eth) => input::eth_amount("CONFIRM_ABOVE_ETH", eth)?,
            None => alloy::primitives::U256::MAX,
        },
        // Read with 18 decimals, like the cap.
        confirm_above_usdc: match &args.confirm_above_usdc {
            Some(usdc) => input::units("CONFIRM_ABOVE_USDC", usdc, 18, "USDC")?,
            None => alloy::primitives::U256::MAX,
        },
        index_wait: Duration::from_millis(args.index_wait_ms),
    };
    let token = match (args.http, &args.http_token) {
        (Some(_), Some(token)) => {
            Some(HttpToken::Given(agentpact_http::bearer::configured("MCP_HTTP_TOKEN", token.expose())?))
        }
        (Some(addr), None) => HttpToken::unset(addr, args.no_token)?,
        (None, _) => None,
    };
    let target = args.chain.target()?;
    let policy = args.webhooks.policy()?;
    let pool = database::connect(&args.database, 8).await?;
    // Reads (and a write's wait for its block) go to the replica when there is one; the
    // subscriptions' LISTEN stays on the primary.
    let reader = match args.read_database.connect(8).await? {
        Some(replica) => Reader::of_replica(replica),
        None => Reader::new(pool.clone()),
    };
    let chain = agentpact_mcp::connect(
        args.chain.rpc_url()?,
        &args.chain.rpc.limits(),
        target.chain_id,
        target.contracts,
        signer,
        reader,
        limits,
    )
    .await?;
    if let Some(url) = args.relay_url {
        chain.set_relay(url);
    }
    chain.set_webhooks(agentpact_mcp::Webhooks { pool: pool.clone(), policy });
    chain.set_guard(pool.clone());
    tracing::info!(wallet = %chain.me, role = %args.role, chain_id = target.chain_id, "MCP server ready");
    let server = PactServer::new(chain, args.role).listening_on(Reader::new(pool));
    match args.http {
        None => {
            let stdio = agentpact_mcp::frame::stdio::Stdio::start();
            let running = server.serve(stdio).await.context("starting the stdio MCP session")?;
            running.waiting().await.context("serving MCP over stdio")?;
        }
        Some(addr) => {
            let rate = (args.rate_limit_per_sec > 0).then(|| Rate {
                per_second: f64::from(args.rate_limit_per_sec),
                burst: f64::from(args.rate_limit_burst.max(1)),
            });
            let guards = agentpact_mcp::http::Guards {
                allowed_origins: args.allowed_origins,
                token: token.as_ref().map(|t| t.value().to_owned()),
                rate,
            };
            let public = args.public_url.map(|u| u.as_str().trim_end_matches('/').to_owned());
            let router = agentpact_mcp::http::router(server.pages_with_mcp(public), guards);
            let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
                format!("binding {addr} (MCP_HTTP_ADDR): is another server using that port?")
            })?;
            let addr = listener.local_addr().unwrap_or(addr);
            tracing::info!("MCP over streamable HTTP on http://{addr}/mcp");
            if let Some(HttpToken::Made(token)) = &token {
                // Printed once, never logged: the operator's one way to learn it (as Jupyter does).
                eprintln!(
                    "\nMCP clients of http://{addr}/mcp send this header (a token made for this run: set \
                     MCP_HTTP_TOKEN to choose one, or --no-token to admit every local process):\n    \
                     Authorization: Bearer {token}\n"
                );
            }
            let limits = agentpact_http::connections::ConnectionLimits::default();
            agentpact_http::connections::serve(listener, router, limits, signal::shutdown()).await?;
        }
    }
    Ok(())
}

/// The bearer token HTTP clients must send.
enum HttpToken {
    /// The operator's (`MCP_HTTP_TOKEN`).
    Given(String),
    /// Made for this run (none was given on loopback), and printed at start.
    Made(String),
}

impl HttpToken {
    /// The token of a server on `addr` given none: one made for this run on loopback, none when
    /// the operator turned it off there (`no_token`), refused beyond loopback.
    fn unset(addr: SocketAddr, no_token: bool) -> anyhow::Result<Option<Self>> {
        if !addr.ip().is_loopback() {
            bail!(
                "--http {addr} listens beyond this machine, and anyone who reaches it could spend this wallet: \
                 set MCP_HTTP_TOKEN (clients send Authorization: Bearer <token>), or listen on 127.0.0.1"
            );
        }
        if no_token {
            tracing::warn!("--no-token: every process on this machine may spend this wallet over HTTP");
            return Ok(None);
        }
        Ok(Some(Self::Made(alloy::hex::encode(rand::random::<[u8; 32]>()))))
    }

    /// The token.
    fn value(&self) -> &str {
        match self {
            Self::Given(token) | Self::Made(token) => token,
        }
    }
}
