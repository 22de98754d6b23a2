//! The AgentPact test harness: every test gets real parts of its own.
//!
//! - [`anvil`]: the pinned anvil binary, spawned on a free port, killed when dropped.
//! - [`api`]: the GraphQL API on a free port over a test database, with an HTTP and websocket client.
//! - [`postgres`]: a fresh, migrated database on a Postgres server, dropped when dropped.
//! - [`chain`]: a [`chain::TestChain`] — an anvil with both contracts deployed and helpers to send
//!   transactions, decode custom errors, read balances and move time.
//! - [`docs`]: README.md and docs/ as a test reads them: a section, its code blocks, its names.
//! - [`erc8004`]: the chain's ERC-8004 Identity and Reputation registries: register, rate.
//! - [`python`]: the outside Python SDKs (MCP, ERC-8004's agent0-sdk) running tests/python's scripts.
//! - [`raw_text`]: calls carrying strings the Rust bindings cannot hold (NUL, invalid UTF-8).
//! - [`rpc_proxy`], [`tcp_relay`] and [`tls_proxy`]: endpoints that misbehave as public ones do,
//!   connections cut under a websocket, and HTTPS with a test certificate authority (good,
//!   expired, wrong-host certificates).
//! - [`world`]: many fresh wallets on one chain and pacts between any of them walked to any end, for
//!   the reputation tests' worlds.
//!
//! Nothing here is a mock: tests run against a real anvil node and a real Postgres server, and
//! many can run in parallel because nothing is shared between them.

pub mod agents;
pub mod anvil;
pub mod api;
pub mod browser;
pub mod chain;
pub mod cli;
pub mod dev;
pub mod docs;
pub mod erc8004;
pub mod index;
pub mod mcp;
pub mod mcp_http;
pub mod pacts;
pub mod postgres;
pub mod python;
pub mod raw_text;
pub mod receiver;
pub mod round_robin;
pub mod rpc_proxy;
pub mod streams;
pub mod tcp_relay;
pub mod tls_proxy;
pub mod webhooks;
pub mod world;

/// Waits until `holds` answers true, asking every 20 ms, for at most `limit`: how a test waits
/// for a condition it created instead of sleeping for a time a loaded machine may not keep to.
/// `limit` is a bound for a hung run, not a speed to reach: give it generously. The error names
/// `what` was awaited.
pub async fn until<F, Fut>(limit: std::time::Duration, what: &str, mut holds: F) -> Result<(), HarnessError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, HarnessError>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if holds().await? {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(HarnessError::Process(format!("{what}: not within {limit:?}")));
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Why the harness could not give a test the parts it asked for.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The pinned anvil binary is not installed.
    #[error("anvil not found at {0}: run scripts/install-tools (or set ANVIL_BIN)")]
    AnvilMissing(std::path::PathBuf),
    /// anvil did not start.
    #[error("anvil did not start: {0}")]
    AnvilStart(#[from] alloy::node_bindings::NodeError),
    /// The contracts could not be deployed.
    #[error(transparent)]
    Deploy(Box<agentpact_contracts::DeployError>),
    /// A contract call or transaction failed (the error carries any revert data).
    #[error("contract call failed: {0}")]
    Contract(Box<alloy::contract::Error>),
    /// A JSON-RPC call to anvil failed.
    #[error("anvil RPC failed: {0}")]
    Rpc(#[from] alloy::transports::TransportError),
    /// No Postgres could be found or started.
    #[error("{0}")]
    NoPostgres(String),
    /// A Postgres command failed.
    #[error("postgres: {0}")]
    Postgres(#[from] sqlx::Error),
    /// Migrations did not apply.
    #[error("migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The indexer stopped with an error.
    #[error("indexer: {0}")]
    Index(Box<agentpact_indexer::IndexError>),
    /// A local process (initdb, pg_ctl) failed.
    #[error("{0}")]
    Process(String),
}

impl From<agentpact_contracts::DeployError> for HarnessError {
    fn from(e: agentpact_contracts::DeployError) -> Self {
        Self::Deploy(Box::new(e))
    }
}

impl From<alloy::contract::Error> for HarnessError {
    fn from(e: alloy::contract::Error) -> Self {
        Self::Contract(Box::new(e))
    }
}

impl From<agentpact_indexer::IndexError> for HarnessError {
    fn from(e: agentpact_indexer::IndexError) -> Self {
        Self::Index(Box::new(e))
    }
}
