//! Finding oracles: `search_oracles`, the active oracles of the registry as the index has them,
//! so a seeker can name the 1-10 oracles every pact needs.

use agentpact_read::{Currency, OracleFilter, OracleStatus};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::{
    bounds::MAX_NAME,
    chain::Chain,
    outcome::{Answer, ToolError},
    views::{ReputationView, RoleView, decimal},
};

/// Input of `search_oracles`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchOracles {
    /// Only oracles that verify this capability (exact name, e.g. logo-design); all when left out.
    #[schemars(length(min = 1, max = MAX_NAME))]
    capability: Option<String>,
    /// Max results to return (1-100, default 20).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

/// What `search_oracles` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OraclesFound {
    /// Active oracles, largest stake first.
    oracles: Vec<OracleMatch>,
}

/// One active oracle.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OracleMatch {
    /// Its address: create-pact and sign_contract take it in `oracles`.
    address: String,
    /// Its stake in ETH (a decimal string).
    stake_eth: String,
    /// What it verifies.
    capabilities: Vec<String>,
    /// When it registered (Unix seconds).
    registered_at: i64,
    /// Its record as oracle: pacts scored, mean score, agreement with the final scores.
    as_oracle: RoleView,
}

pub async fn search(chain: &Chain, i: SearchOracles) -> Result<Answer<OraclesFound>, ToolError> {
    if let Some(capability) = &i.capability {
        agentpact_read::agents::check_capability(capability)?;
    }
    let filter = OracleFilter {
        capability: i.capability.clone(),
        status: Some(OracleStatus::Active),
        min_stake: None,
    };
    let found = chain.reader.oracles(chain.chain_id, &filter, i.limit.unwrap_or(20)).await?;
    let mut oracles = Vec::with_capacity(found.len());
    for oracle in found {
        let reputation = chain.reader.reputation(chain.chain_id, oracle.address).await?;
        oracles.push(OracleMatch {
            address: oracle.address.to_string(),
            stake_eth: decimal(oracle.stake, &Currency::eth()),
            capabilities: oracle.capabilities,
            registered_at: oracle.registered_at.timestamp(),
            as_oracle: ReputationView::of(&reputation).as_oracle,
        });
    }
    let which = i.capability.map_or_else(String::new, |c| format!(" verifying {c}"));
    Answer::new(
        format!(
            "{} active oracle(s){which}, largest stake first. A pact names 1-10 of them (their weights summing to 100) and an arbitrator who is neither party.",
            oracles.len()
        ),
        OraclesFound { oracles },
    )
}
