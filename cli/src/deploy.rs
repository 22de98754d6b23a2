//! `agentpact deploy`: OracleRegistry and AgentPact on any chain, recorded in
//! `deployments/<chain_id>.json` for `index`, `serve` and `mcp` to find.

use std::path::PathBuf;

use agentpact_contracts::{DeployOptions, deploy};
use alloy::{
    network::EthereumWallet,
    primitives::{Address, U256},
    providers::{Provider, ProviderBuilder},
};
use anyhow::{Context, bail};

use crate::settings::{ChainArgs, KeyArgs, RpcArgs};

/// Flags of `agentpact deploy`.
#[derive(Debug, Clone, clap::Args)]
pub struct DeployArgs {
    /// JSON-RPC endpoint of the chain (http or https); the chain id is read from it.
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8545")]
    rpc_url: String,
    #[command(flatten)]
    rpc: RpcArgs,
    #[command(flatten)]
    key: KeyArgs,
    /// The least an oracle must stake, in ETH.
    #[arg(long, env = "MIN_ORACLE_STAKE_ETH", default_value = "0.01")]
    min_oracle_stake_eth: String,
    /// How long a deregistered oracle waits for its stake, in seconds (default 7 days).
    #[arg(long, env = "ORACLE_COOLDOWN_SECS", default_value_t = DeployOptions::default().oracle_cooldown_secs)]
    oracle_cooldown_secs: u64,
    /// ERC-20 tokens pacts may be paid in besides ETH, comma-separated; fixed for good at
    /// deployment. On Base Sepolia, USDC is 0x036CbD53842c5426634e7929541eC2318f3dCF7e.
    #[arg(long, env = "ALLOWED_TOKENS", value_delimiter = ',', value_parser = parse_token)]
    tokens: Vec<Address>,
    /// Where to write `<chain_id>.json`.
    #[arg(long, env = "DEPLOYMENTS_DIR", default_value = "deployments")]
    deployments_dir: PathBuf,
    /// Replace an existing deployments file for this chain.
    #[arg(long)]
    force: bool,
}

/// Deploys both contracts from the key's account and writes the deployments file.
pub async fn run(args: DeployArgs) -> anyhow::Result<()> {
    let url = ChainArgs::parse_rpc_url(&args.rpc_url)?;
    let signer = args.key.signer()?;
    let deployer = signer.address();
    let min_oracle_stake =
        agentpact_mcp::input::eth_amount("MIN_ORACLE_STAKE_ETH", &args.min_oracle_stake_eth)?;
    let client = agentpact_contracts::rpc::client(url, &args.rpc.limits()).await?;
    let provider = ProviderBuilder::new().wallet(EthereumWallet::from(signer)).connect_client(client);
    let chain_id =
        provider.get_chain_id().await.context("asking RPC_URL for its chain id (is the node up?)")?;
    let file = args.deployments_dir.join(format!("{chain_id}.json"));
    if file.exists() && !args.force {
        bail!("{} exists: this chain already has a deployment. Pass --force to replace it", file.display());
    }
    let balance = provider.get_balance(deployer).await.context("reading the deployer's balance")?;
    if balance == U256::ZERO {
        bail!(
            "the deployer {deployer} has no ETH on chain {chain_id}: fund it first (a faucet, on a testnet)"
        );
    }
    for token in &args.tokens {
        let code = provider.get_code_at(*token).await.context("reading an allowed token's code")?;
        if code.is_empty() {
            bail!("--tokens names {token}, which has no contract on chain {chain_id}: check the address");
        }
    }
    let allowed = args.tokens.clone();
    let options = DeployOptions {
        min_oracle_stake,
        oracle_cooldown_secs: args.oracle_cooldown_secs,
        tokens: args.tokens,
    };
    tracing::info!(chain_id, %deployer, "deploying OracleRegistry, AgentPact and AgentRegistry");
    let deployment = deploy(&provider, options).await?;
    std::fs::create_dir_all(&args.deployments_dir)
        .with_context(|| format!("creating {}", args.deployments_dir.display()))?;
    let json = serde_json::to_string_pretty(&deployment)?;
    std::fs::write(&file, json + "\n").with_context(|| format!("writing {}", file.display()))?;
    let tokens = if allowed.is_empty() {
        "none (ETH only)".to_owned()
    } else {
        allowed.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    };
    println!(
        "Deployed on chain {chain_id} at block {}:\n  AgentPact       {}\n  OracleRegistry  {}\n  AgentRegistry   {}\n  Allowed tokens  {tokens}\nWrote {}",
        deployment.block,
        deployment.agent_pact,
        deployment.oracle_registry,
        deployment.agent_registry,
        file.display()
    );
    println!(
        "\nMCP client configuration (Claude Desktop / Claude Code `mcpServers`; works from any working \
         directory): set DATABASE_URL and HIRE_RELAY_URL to yours and add the agent's key \
         (PRIVATE_KEY or KEYSTORE) yourself; it is never printed.\n{}",
        serde_json::to_string_pretty(&client_config(&args.rpc_url, chain_id, &deployment))?
    );
    Ok(())
}

/// The `mcpServers` entry that starts `agentpact mcp` (this binary, by its absolute path) on
/// `deployment` from any working directory: the addresses in its environment, not a
/// deployments file; placeholders for the database and the relay; no key.
fn client_config(
    rpc_url: &str,
    chain_id: u64,
    deployment: &agentpact_contracts::Deployment,
) -> serde_json::Value {
    let command =
        std::env::current_exe().map_or_else(|_| "agentpact".to_owned(), |p| p.display().to_string());
    let mut config = serde_json::json!({ "mcpServers": { "agentpact": {
        "command": command,
        "args": ["mcp"],
        "env": {
            "RPC_URL": rpc_url,
            "CHAIN_ID": chain_id.to_string(),
            "AGENT_PACT_ADDRESS": deployment.agent_pact.to_string(),
            "ORACLE_REGISTRY_ADDRESS": deployment.oracle_registry.to_string(),
            "AGENT_REGISTRY_ADDRESS": deployment.agent_registry.to_string(),
            "DEPLOYMENT_BLOCK": deployment.block.to_string(),
            "DATABASE_URL": "postgres://USER@HOST:5432/agentpact",
            "HIRE_RELAY_URL": "http://127.0.0.1:8080/",
        },
    } } });
    if let Some(registries) = deployment.erc8004 {
        let env = &mut config["mcpServers"]["agentpact"]["env"];
        env["ERC8004_IDENTITY_ADDRESS"] = registries.identity.to_string().into();
        env["ERC8004_REPUTATION_ADDRESS"] = registries.reputation.to_string().into();
    }
    config
}

fn parse_token(text: &str) -> Result<Address, String> {
    agentpact_contracts::parse::address(text).map_err(|e| e.to_string())
}
