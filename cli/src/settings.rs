//! Where the chain, the contracts and the database are: flags, each also an environment variable
//! (the names of seed 002 plus DATABASE_URL; a `.env` file is read when present). Addresses that
//! are not given come from `deployments/<chain_id>.json`, which `agentpact deploy` writes.

use std::path::PathBuf;

use agentpact_contracts::{Deployment, Erc8004, rpc::RpcLimits};
use agentpact_indexer::{Contracts, Target};
use alloy::primitives::Address;
use anyhow::{Context, bail};

/// How long and how often the RPC may be asked.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct RpcArgs {
    /// The longest one RPC request may take, in seconds: a node that accepts the connection and
    /// never answers is an error after this long (retried where the command retries).
    #[arg(long, env = "RPC_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub rpc_timeout_secs: u64,
    /// At most this many RPC requests per second, retries included (0: no ceiling). Set it to
    /// the plan of a rate-limited endpoint (a free tier) so it is never asked faster.
    #[arg(long, env = "RPC_MAX_RPS", default_value_t = 0)]
    pub rpc_max_rps: u32,
}

impl RpcArgs {
    /// The limits every RPC client of the command gets.
    pub fn limits(&self) -> RpcLimits {
        let timeout = std::time::Duration::from_secs(self.rpc_timeout_secs);
        RpcLimits {
            timeout,
            connect_timeout: timeout.min(RpcLimits::default().connect_timeout),
            max_rps: std::num::NonZeroU32::new(self.rpc_max_rps),
        }
    }
}

/// The chain and the contracts on it.
#[derive(Debug, Clone, clap::Args)]
pub struct ChainArgs {
    /// JSON-RPC endpoint of the chain.
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8545")]
    pub rpc_url: String,
    #[command(flatten)]
    pub rpc: RpcArgs,
    /// Chain id (84532 is Base Sepolia, 31337 a local anvil). Checked against the RPC.
    #[arg(long, env = "CHAIN_ID", default_value_t = 84532)]
    pub chain_id: u64,
    /// AgentPact address; read from the deployments file when not given.
    #[arg(long, env = "AGENT_PACT_ADDRESS")]
    pub agent_pact_address: Option<Address>,
    /// OracleRegistry address; read from the deployments file when not given.
    #[arg(long, env = "ORACLE_REGISTRY_ADDRESS")]
    pub oracle_registry_address: Option<Address>,
    /// AgentRegistry address; read from the deployments file when not given.
    #[arg(long, env = "AGENT_REGISTRY_ADDRESS")]
    pub agent_registry_address: Option<Address>,
    /// The chain's ERC-8004 Identity Registry; read from the deployments file when not given, else
    /// the registry documented for the chain (Base Sepolia's), else not followed.
    #[arg(long, env = "ERC8004_IDENTITY_ADDRESS", requires = "erc8004_reputation_address")]
    pub erc8004_identity_address: Option<Address>,
    /// The chain's ERC-8004 Reputation Registry; found like the Identity Registry's.
    #[arg(long, env = "ERC8004_REPUTATION_ADDRESS", requires = "erc8004_identity_address")]
    pub erc8004_reputation_address: Option<Address>,
    /// The block the contracts were deployed in (indexing starts there); read from the
    /// deployments file when not given, else 0.
    #[arg(long, env = "DEPLOYMENT_BLOCK")]
    pub deployment_block: Option<u64>,
    /// Where `deploy` writes and the other commands read `<chain_id>.json`.
    #[arg(long, env = "DEPLOYMENTS_DIR", default_value = "deployments")]
    pub deployments_dir: PathBuf,
}

impl ChainArgs {
    /// The RPC URL, parsed: http or https (e.g. https://sepolia.base.org).
    pub fn rpc_url(&self) -> anyhow::Result<alloy::transports::http::reqwest::Url> {
        Self::parse_rpc_url(&self.rpc_url)
    }

    /// `text` as an RPC URL, or what is wrong with it.
    pub fn parse_rpc_url(text: &str) -> anyhow::Result<alloy::transports::http::reqwest::Url> {
        let url: alloy::transports::http::reqwest::Url = text
            .parse()
            .with_context(|| format!("RPC_URL {text:?} is not a URL (e.g. http://127.0.0.1:8545)"))?;
        if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
            bail!("RPC_URL uses {}://; give the node's http(s):// or ws(s):// JSON-RPC URL", url.scheme());
        }
        Ok(url)
    }

    /// What to index: the flags, completed from the deployments file.
    pub fn target(&self) -> anyhow::Result<Target> {
        let file = self.deployments_dir.join(format!("{}.json", self.chain_id));
        let deployed =
            match (self.agent_pact_address, self.oracle_registry_address, self.agent_registry_address) {
                (Some(_), Some(_), Some(_)) => None,
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
                agent_registry: pick(self.agent_registry_address, |d| d.agent_registry),
                erc8004: self.erc8004(deployed.as_ref()),
            },
            deployment_block: self.deployment_block.or(deployed.map(|d| d.block)).unwrap_or(0),
        })
    }
}

impl ChainArgs {
    /// The ERC-8004 registries to follow: the flags, else the deployments file's, else the
    /// chain's documented ones.
    pub fn erc8004(&self, deployed: Option<&Deployment>) -> Option<Erc8004> {
        match (self.erc8004_identity_address, self.erc8004_reputation_address) {
            (Some(identity), Some(reputation)) => Some(Erc8004 { identity, reputation }),
            _ => deployed.and_then(|d| d.erc8004).or(Erc8004::known(self.chain_id)),
        }
    }
}

fn read_deployment(file: &PathBuf) -> anyhow::Result<Deployment> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "no contract addresses: the deployments file {} does not exist (DEPLOYMENTS_DIR is read from the \
             directory this command starts in). Set DEPLOYMENTS_DIR to the absolute path of the directory \
             `agentpact deploy` wrote, or set AGENT_PACT_ADDRESS, ORACLE_REGISTRY_ADDRESS, \
             AGENT_REGISTRY_ADDRESS and DEPLOYMENT_BLOCK (`agentpact deploy` prints them). Do not deploy \
             again for this: on a real network that is a second, paid deployment",
            std::path::absolute(file).unwrap_or_else(|_| file.clone()).display()
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

/// Whom reputation trusts first, and how often the indexer ranks (docs/api.md §Reputation).
#[derive(Debug, Clone, clap::Args)]
pub struct RankingArgs {
    /// The seed set, comma-separated addresses: trust as a rater starts from them (operator or
    /// community anchors; ≥ 1 % of active agents, spread across communities, is recommended).
    /// Without seeds nobody is trusted and every global score is 3.00.
    #[arg(long, env = "REPUTATION_SEEDS", value_delimiter = ',', value_name = "ADDRESS,...")]
    pub reputation_seeds: Vec<Address>,
    /// The least time between two rankings, in seconds; one runs only after a pass that changed
    /// the pacts or ratings (or when the seeds changed). 0: after every such pass.
    #[arg(long, env = "REPUTATION_EVERY", default_value_t = 60, value_name = "SECONDS")]
    pub reputation_every: u64,
}

impl RankingArgs {
    /// The ranking these flags configure.
    pub fn ranking(&self) -> agentpact_indexer::Ranking {
        agentpact_indexer::Ranking {
            seeds: self.reputation_seeds.clone(),
            every: std::time::Duration::from_secs(self.reputation_every),
        }
    }
}

/// A streaming replica of the index's database, for the servers' reads.
#[derive(Debug, Clone, clap::Args)]
pub struct ReadDatabaseArgs {
    /// A streaming replica of DATABASE_URL (e.g. a hot standby made with `pg_basebackup -R`) that
    /// serves every read; DATABASE_URL keeps what a standby refuses: LISTEN and the relay's
    /// writes. Unset: reads go to DATABASE_URL.
    #[arg(long, env = "READ_DATABASE_URL")]
    pub read_database_url: Option<String>,
}

impl ReadDatabaseArgs {
    /// A pool of `size` connections to the replica, when one is set.
    pub async fn connect(&self, size: u32) -> anyhow::Result<Option<sqlx::PgPool>> {
        let Some(url) = &self.read_database_url else { return Ok(None) };
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(size).connect(url).await.context(
            "connecting to READ_DATABASE_URL (is the replica running, and does it have the database?)",
        )?;
        Ok(Some(pool))
    }
}

/// The key that signs: `PRIVATE_KEY`, or an encrypted keystore and its password. Values are
/// hidden from `--help`, and nothing here prints them.
#[derive(Debug, Clone, clap::Args)]
pub struct KeyArgs {
    /// The signing private key (hex). Prefer --keystore; never pass it on a shared command line.
    #[arg(long, env = "PRIVATE_KEY", hide_env_values = true)]
    pub private_key: Option<Secret>,
    /// An encrypted JSON keystore holding the key (instead of PRIVATE_KEY).
    #[arg(long, env = "KEYSTORE")]
    pub keystore: Option<PathBuf>,
    /// The keystore's password; asked on the terminal when not set.
    #[arg(long, env = "KEYSTORE_PASSWORD", hide_env_values = true)]
    pub keystore_password: Option<Secret>,
}

impl KeyArgs {
    /// The signer, asking for the keystore password on the terminal when it is not set.
    pub fn signer(&self) -> anyhow::Result<alloy::signers::local::PrivateKeySigner> {
        let password = match (&self.keystore, &self.keystore_password) {
            (Some(path), None) => Some(
                rpassword::prompt_password(format!("Password for {}: ", path.display()))
                    .context("KEYSTORE_PASSWORD is not set and there is no terminal to ask on")?,
            ),
            (_, given) => given.as_ref().map(|p| p.expose().to_owned()),
        };
        let source = agentpact_mcp::keys::KeySource::pick(
            self.private_key.as_ref().map(Secret::expose),
            self.keystore.as_deref(),
            password.as_deref(),
        )?;
        Ok(source.load()?)
    }
}

/// Where webhooks may point (`agentpact push` holds every connection to it; a registering
/// process holds its registrations to the same setting, so what it accepts is delivered).
#[derive(Debug, Clone, clap::Args)]
pub struct WebhookTargetsArgs {
    /// Internal address ranges webhook targets may reach (comma-separated CIDRs, e.g.
    /// 10.0.0.0/8,127.0.0.1/32): private, loopback and link-local ranges are refused otherwise.
    #[arg(long, env = "WEBHOOK_ALLOW_TARGETS", default_value = "")]
    pub webhook_allow_targets: String,
}

impl WebhookTargetsArgs {
    /// The permitted targets, or which entry of WEBHOOK_ALLOW_TARGETS is not a range.
    pub fn targets(&self) -> anyhow::Result<agentpact_push::Targets> {
        agentpact_push::Targets::parse(&self.webhook_allow_targets)
            .map_err(|e| anyhow::anyhow!("WEBHOOK_ALLOW_TARGETS: {e}"))
    }
}

/// What a process that registers webhooks holds them to (`agentpact mcp`, and `agentpact serve`
/// for the operator): the permitted targets and the cap per owner.
#[derive(Debug, Clone, clap::Args)]
pub struct WebhookPolicyArgs {
    #[command(flatten)]
    targets: WebhookTargetsArgs,
    /// Active webhook subscriptions one owner may hold on the chain.
    #[arg(long, env = "WEBHOOK_MAX_PER_OWNER", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..))]
    webhook_max_per_owner: u32,
}

impl WebhookPolicyArgs {
    /// The policy, or which entry of WEBHOOK_ALLOW_TARGETS is not a range.
    pub fn policy(&self) -> anyhow::Result<agentpact_push::Policy> {
        Ok(agentpact_push::Policy {
            targets: self.targets.targets()?,
            max_per_owner: self.webhook_max_per_owner,
        })
    }
}

/// A value that must never be printed (a key, a password, a token): `Debug` shows `<hidden>`, and
/// the value is read only through [`Secret::expose`], where it is used.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<hidden>")
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Flags {
        #[command(flatten)]
        key: KeyArgs,
    }

    #[derive(Debug, Parser)]
    struct Ranked {
        #[command(flatten)]
        ranking: RankingArgs,
    }

    #[test]
    fn reputation_seeds_are_addresses_and_a_malformed_one_is_refused_by_its_flag() {
        let a = "0x00000000000000000000000000000000000000a1";
        let b = "0x00000000000000000000000000000000000000b2";
        let flags = Ranked::parse_from(["t", "--reputation-seeds", &format!("{a},{b}")]);
        let ranking = flags.ranking.ranking();
        assert_eq!(ranking.seeds, [a.parse::<Address>().unwrap_or_default(), b.parse().unwrap_or_default()]);
        assert_eq!(ranking.every, std::time::Duration::from_secs(60));
        assert!(Ranked::parse_from(["t"]).ranking.reputation_seeds.is_empty());
        let refused = Ranked::try_parse_from(["t", "--reputation-seeds", &format!("{a},0x12")]);
        let message = refused.map(|_| ()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("--reputation-seeds") && message.contains("0x12"), "{message}");
    }

    #[test]
    fn debug_output_hides_the_key_and_the_password() {
        let flags = Flags::parse_from(["t", "--private-key", "0xfeedface", "--keystore-password", "hunter2"]);
        let shown = format!("{flags:?}");
        assert!(!shown.contains("feedface") && !shown.contains("hunter2"), "{shown}");
        assert_eq!(flags.key.private_key.as_ref().map(Secret::expose), Some("0xfeedface"));
    }
}
