//! Deploys OracleRegistry, then AgentPact pointing at it, then AgentRegistry pointing at AgentPact.

use alloy::{
    contract::RawCallBuilder,
    primitives::{Address, U256},
    providers::{PendingTransactionError, Provider},
};

use crate::{AgentPact, AgentRegistry, OracleRegistry, erc8004::Erc8004};

/// Settings of a deployment that the contracts fix at construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployOptions {
    /// The least stake, in wei, an oracle must put up to register.
    pub min_oracle_stake: U256,
    /// Seconds between an oracle deregistering and withdrawing its stake.
    pub oracle_cooldown_secs: u64,
    /// The ERC-20 tokens pacts may be paid in besides ETH (the allowlist; it can never change).
    pub tokens: Vec<Address>,
}

impl Default for DeployOptions {
    /// 0.01 ETH minimum oracle stake, a 7-day cooldown, and ETH only.
    fn default() -> Self {
        Self {
            min_oracle_stake: U256::from(10_000_000_000_000_000u64),
            oracle_cooldown_secs: 7 * 24 * 60 * 60,
            tokens: Vec::new(),
        }
    }
}

/// Where the contracts landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    /// The AgentPact escrow contract.
    pub agent_pact: Address,
    /// The OracleRegistry contract.
    pub oracle_registry: Address,
    /// The AgentRegistry contract (agent profiles and feedback).
    pub agent_registry: Address,
    /// The block of the first deployment transaction: an indexer starts here.
    pub block: u64,
    /// The chain's ERC-8004 registries, when this file names them (`agentpact dev` deploys a pair
    /// on anvil; on Base Sepolia they are [`Erc8004::known`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erc8004: Option<Erc8004>,
}

/// Why a deployment failed.
#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    /// The node refused or failed the deployment transaction.
    #[error("sending the {contract} deployment failed: {source}")]
    Send {
        /// Which contract.
        contract: &'static str,
        /// What the node said.
        source: alloy::contract::Error,
    },
    /// The transaction was sent but its receipt never came.
    #[error("waiting for the {contract} deployment receipt failed: {source}")]
    Receipt {
        /// Which contract.
        contract: &'static str,
        /// What went wrong.
        source: PendingTransactionError,
    },
    /// The transaction was mined but reverted or created no contract.
    #[error("the {contract} deployment transaction {tx} was mined but created no contract")]
    Reverted {
        /// Which contract.
        contract: &'static str,
        /// The transaction hash.
        tx: alloy::primitives::TxHash,
    },
}

/// Deploys OracleRegistry, then AgentPact bound to it (allowing `options.tokens`), then
/// AgentRegistry bound to AgentPact, from the provider's default sender.
pub async fn deploy<P: Provider>(provider: P, options: DeployOptions) -> Result<Deployment, DeployError> {
    let registry =
        OracleRegistry::deploy_builder(&provider, options.min_oracle_stake, options.oracle_cooldown_secs);
    let (oracle_registry, block) = send_deployment("OracleRegistry", registry).await?;
    let pact = AgentPact::deploy_builder(&provider, oracle_registry, options.tokens);
    let (agent_pact, _) = send_deployment("AgentPact", pact).await?;
    let agents = AgentRegistry::deploy_builder(&provider, agent_pact);
    let (agent_registry, _) = send_deployment("AgentRegistry", agents).await?;
    Ok(Deployment { agent_pact, oracle_registry, agent_registry, block, erc8004: None })
}

/// Sends one deployment and waits for its receipt: the contract's address and block.
pub(crate) async fn send_deployment<P: Provider>(
    contract: &'static str,
    call: RawCallBuilder<P>,
) -> Result<(Address, u64), DeployError> {
    let pending = call.send().await.map_err(|source| DeployError::Send { contract, source })?;
    let receipt = pending.get_receipt().await.map_err(|source| DeployError::Receipt { contract, source })?;
    match (receipt.status(), receipt.contract_address, receipt.block_number) {
        (true, Some(address), Some(block)) => Ok((address, block)),
        _ => Err(DeployError::Reverted { contract, tx: receipt.transaction_hash }),
    }
}
