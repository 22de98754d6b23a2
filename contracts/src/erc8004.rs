//! Where a chain's ERC-8004 registries live: the Identity Registry (agents as ERC-721 tokens with
//! a registration file) and the Reputation Registry (feedback on them). They are singletons per
//! chain, deployed by their authors, not by us; the indexer follows them beside our contracts and
//! the MCP server writes to them (docs/erc8004.md).

use alloy::primitives::{Address, address};

/// The addresses of one chain's ERC-8004 Identity and Reputation registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Erc8004 {
    /// The Identity Registry (ERC-721: agentId → owner, registration file, agent wallet).
    pub identity: Address,
    /// The Reputation Registry (`giveFeedback`, `revokeFeedback`, `NewFeedback`).
    pub reputation: Address,
}

/// Base Sepolia's chain id.
pub const BASE_SEPOLIA: u64 = 84_532;

impl Erc8004 {
    /// The registries deployed on Base Sepolia, as the ERC-8004 SDK (`agent0-sdk`) lists them.
    pub const BASE_SEPOLIA: Self = Self {
        identity: address!("8004A818BFB912233c491871b3d84c89A494BD9e"),
        reputation: address!("8004B663056A597Dffe9eCcC1965A193B7388713"),
    };

    /// The documented registries of `chain_id`, if we know them.
    pub const fn known(chain_id: u64) -> Option<Self> {
        match chain_id {
            BASE_SEPOLIA => Some(Self::BASE_SEPOLIA),
            _ => None,
        }
    }
}
