//! The MCP server (DESIGN.md §MCP server): every lifecycle step of seed 002 as a tool an agent can
//! call, signed with the agent's key, read back from the index.
//!
//! [`tools`] holds the tools, grouped as in the seed; each write goes through [`chain::Chain::write`]
//! (spending cap, funds, simulation, send, receipt, index wait), after its arguments are held to
//! the input schema it declares, whose bounds [`bounds`] holds. [`revert`] names a contract's
//! refusal; [`outcome`] is what a tool answers; [`role`] gates tools; [`keys`] loads the key
//! without ever showing it; [`server`] speaks MCP over stdio or streamable HTTP, whose messages
//! [`frame`] holds to a size and a depth before rmcp reads them.

pub mod bounds;
pub mod call;
pub mod chain;
pub mod confirm;
pub mod frame;
mod hire;
pub mod http;
pub mod input;
pub mod keys;
mod money;
pub mod outcome;
pub mod policy;
mod prompts;
pub mod revert;
pub mod role;
pub mod server;
pub mod tasks;
mod tools;
mod views;
mod watch;

use std::sync::Arc;

use agentpact_contracts::{Contracts, rpc::RpcLimits};
use agentpact_read::Reader;
use alloy::{
    network::EthereumWallet,
    providers::{Provider, ProviderBuilder},
    signers::local::PrivateKeySigner,
    transports::http::reqwest::Url,
};
pub use chain::{Chain, Webhooks, WriteLimits};
pub use role::Role;
pub use server::PactServer;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The RPC did not answer.
    #[error("the RPC at {url} did not answer (is the node up, and RPC_URL right?)")]
    Rpc {
        /// The URL (never carries a key).
        url: String,
        /// What failed, with its causes (a timeout, a refused connection, a certificate).
        #[source]
        source: alloy::transports::TransportError,
    },
    /// The HTTP client could not be made.
    #[error(transparent)]
    Client(agentpact_contracts::rpc::ConnectError),
    /// The RPC serves another chain.
    #[error("the RPC serves chain {served}, but CHAIN_ID is {configured}: point them at the same chain")]
    WrongChain {
        /// The RPC's chain id.
        served: u64,
        /// The configured one.
        configured: u64,
    },
    /// No contract at the AgentPact address.
    #[error(
        "no contract at AGENT_PACT_ADDRESS {0} on this chain: deploy first (`agentpact deploy`) or fix the address"
    )]
    NotDeployed(alloy::primitives::Address),
}

/// Connects the agent holding `signer` to the chain at `rpc`: checks that the RPC serves
/// `chain_id` and that AgentPact is deployed there.
pub async fn connect(
    rpc: Url,
    rpc_limits: &RpcLimits,
    chain_id: u64,
    contracts: Contracts,
    signer: PrivateKeySigner,
    reader: Reader,
    limits: WriteLimits,
) -> Result<Arc<Chain>, StartError> {
    let url = rpc.to_string();
    let client = agentpact_contracts::rpc::client(rpc, rpc_limits).await.map_err(StartError::Client)?;
    let provider = ProviderBuilder::new()
        .with_simple_nonce_management()
        .wallet(EthereumWallet::from(signer.clone()))
        .connect_client(client)
        .erased();
    let failed = |source: alloy::transports::TransportError| StartError::Rpc { url: url.clone(), source };
    let served = provider.get_chain_id().await.map_err(failed)?;
    if served != chain_id {
        return Err(StartError::WrongChain { served, configured: chain_id });
    }
    if provider.get_code_at(contracts.agent_pact).await.map_err(failed)?.is_empty() {
        return Err(StartError::NotDeployed(contracts.agent_pact));
    }
    Ok(Arc::new(Chain::new(provider, contracts, signer, chain_id, reader, limits)))
}
