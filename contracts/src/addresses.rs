//! Where one deployment's contracts live: what the indexer follows and the MCP server calls.

use alloy::primitives::Address;

use crate::{Deployment, erc8004::Erc8004};

/// The addresses of one deployment's three contracts, and of the chain's ERC-8004 registries when
/// they are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contracts {
    /// AgentPact.
    pub agent_pact: Address,
    /// OracleRegistry.
    pub oracle_registry: Address,
    /// AgentRegistry.
    pub agent_registry: Address,
    /// The chain's ERC-8004 registries (none: not followed).
    pub erc8004: Option<Erc8004>,
}

impl From<&Deployment> for Contracts {
    fn from(d: &Deployment) -> Self {
        Self {
            agent_pact: d.agent_pact,
            oracle_registry: d.oracle_registry,
            agent_registry: d.agent_registry,
            erc8004: d.erc8004,
        }
    }
}

impl Contracts {
    /// The addresses, for a log filter.
    pub fn addresses(&self) -> Vec<Address> {
        let mut all = vec![self.agent_pact, self.oracle_registry, self.agent_registry];
        all.extend(self.erc8004.iter().flat_map(|r| [r.identity, r.reputation]));
        all
    }
}
