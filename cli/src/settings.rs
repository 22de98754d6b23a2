//! Where the chain, the contracts and the database are: flags, each also an environment variable
//! (the names of seed 002 plus DATABASE_URL; a `.env` file is read when present). Addresses that
//! are not given come from `deployments/<chain_id>.json`, which `agentpact deploy` writes.

use std::path::PathBuf;

use agentpact_contracts::Deployment;
use agentpact_indexer::{Contracts, Target};
use alloy::primitives::Address;
use anyhow::{Context, bail};

/// The chain and the contracts on it.
#[derive(Debug, Clone, clap::Args)]
pub struct ChainArgs {
    /// JSON-RPC endpoint of the chain.
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8545")]
    pub rpc_url: String,
    /// Chain id (84532 is Base Sepolia, 31337 a local anvil). Checked against the RPC.
    #[arg(long, env = "CHAIN_ID", default_value_t = 84532)]
    pub chain_id: u64,
    /// AgentPact address; read from the deployments file when not given.
    #[arg(long, env = "AGENT_PACT_ADDRESS")]
    pub agent_pact_address: Option<Address>,
    /// OracleRegistry address; read from the deployments file when not given.
    #[arg(long, env = "ORACLE_REGISTRY_ADDRESS")]
    pub oracle_registry_address: Option<Address>,
    /// The block the contracts were deployed in (indexing starts there); read from the
    /// deployments file when not given, else 0.
    #[arg(long, env = "DEPLOYMENT_BLOCK")]
    pub deployment_block: Option<u64>,
    /// Where `deploy` writes and the other commands read `<chain_id>.json`.
    #[arg(long, env = "DEPLOYMENTS_DIR", default_value = "deployments")]
    pub deployments_dir: PathBuf,
}

impl ChainArgs {
    /// The RPC URL, parsed. Only plain http for now: this build has no TLS (see docs/indexer.md).
    pub fn rpc_url(&self) -> anyhow::Result<alloy::transports::http::reqwest::Url> {
        let url: alloy::transports::http::reqwest::Url = self.rpc_url.parse().with_context(|| {
            format!("RPC_URL {:?} is not a URL (e.g. http://127.0.0.1:8545)", self.rpc_url)
        })?;
        if url.scheme() != "http" {
            bail!(
                "RPC_URL uses {}://, but this build speaks plain http only (https arrives with issue #6); \
                 use an http endpoint, e.g. a local node or proxy",
                url.scheme()
            );
        }
        Ok(url)
    }

    /// What to index: the flags, completed from the deployments file.
    pub fn target(&self) -> anyhow::Result<Target> {
        let file = self.deployments_dir.join(format!("{}.json", self.chain_id));
        let deployed = match (self.agent_pact_address, self.oracle_registry_address) {
            (Some(_), Some(_)) => None,
            _ => Some(read_deployment(&file)?),
        };
        let pick = |given: Option<Address>, from_file: fn(&Deployment) -> Address| {
            given.or(deployed.as_ref().map(from_file)).unwrap_or_default()
        };
        Ok(Target {
            chain_id: self.chain_id,
            contracts: Contracts {
                agent_pact: pick(self.agent_pact_address, |d| d.agent_pact),
                oracle_registry: pick(self.oracle_registry_address, |d| d.oracle_registry),
            },
            deployment_block: self.deployment_block.or(deployed.map(|d| d.block)).unwrap_or(0),
        })
    }
}

fn read_deployment(file: &PathBuf) -> anyhow::Result<Deployment> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "no contract addresses: set AGENT_PACT_ADDRESS and ORACLE_REGISTRY_ADDRESS (or the flags), \
             or run `agentpact deploy` to write {}",
            file.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    serde_json::from_str(&text).with_context(|| format!("{} is not a deployments file", file.display()))
}

/// The database of the index.
#[derive(Debug, Clone, clap::Args)]
pub struct DatabaseArgs {
    /// Postgres URL, e.g. postgres://user@127.0.0.1:5432/agentpact.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
}

impl DatabaseArgs {
    /// A pool of `size` connections, with a message that says which database failed.
    pub async fn connect(&self, size: u32) -> anyhow::Result<sqlx::PgPool> {
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(size)
            .connect(&self.database_url)
            .await
            .with_context(|| "connecting to DATABASE_URL (is Postgres running, and does the database exist?)")
    }
}
