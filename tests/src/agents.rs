//! Agent profiles for AgentRegistry tests: a profile is built from a name and (capability, price)
//! pairs, the rest filled in from the name so that each profile is distinct.

use agentpact_contracts::AgentRegistry;
use alloy::primitives::{Address, U256};

/// A profile named `name` offering `capabilities` as (name, price in wei).
pub fn profile(name: &str, capabilities: &[(&str, U256)]) -> AgentRegistry::Profile {
    let slug: String = name.to_lowercase().split_whitespace().collect::<Vec<_>>().join("-");
    AgentRegistry::Profile {
        name: name.into(),
        description: format!("{name} does good work"),
        endpoint: format!("https://{slug}.example/mcp"),
        metadataUri: format!("ipfs://{slug}"),
        capabilities: capabilities
            .iter()
            .map(|(cap, price)| AgentRegistry::Capability {
                name: (*cap).into(),
                description: format!("{cap} by {name}"),
                price: *price,
                currency: Address::ZERO,
            })
            .collect(),
    }
}
