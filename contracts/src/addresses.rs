//! Where one deployment's contracts live: what the indexer follows and the MCP server calls.

use alloy::primitives::Address;

use crate::Deployment;

/// The addresses of one deployment's three contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contracts {
    /// AgentPact.
    pub agent_pact: Address,
    /// OracleRegistry.
    pub oracle_registry: Address,
    /// AgentRegistry.
    pub agent_registry: Address,
}

impl From<&Deployment> for Contracts {
    fn from(d: &Deployment) -> Self {
        Self {
            agent_pact: d.agent_pact,
            oracle_registry: d.oracle_registry,
            agent_registry: d.agent_registry,
        }
    }
}

impl Contracts {
    /// The addresses, for a log filter.
    pub fn addresses(&self) -> Vec<Address> {
        vec![self.agent_pact, self.oracle_registry, self.agent_registry]
    }
}
