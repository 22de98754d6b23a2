//! Finding agents (seed 000): `search_agents` and `get_agent`, read from the index.

use agentpact_read::{AgentMatch, AgentSearch};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::{
    bounds::{ADDRESS_CHARS, CURRENCY_CHARS, CURSOR_CHARS, MAX_NAME},
    chain::Chain,
    input,
    money::show,
    outcome::{Answer, ToolError},
    views::{AgentView, MatchView, ReputationView},
};

/// Input of `search_agents`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchAgents {
    /// Capability to search for (e.g. logo-design).
    #[schemars(length(min = 1, max = MAX_NAME))]
    capability: String,
    /// Maximum price, in `currency` (USDC unless said), e.g. 10 for 10 USDC.
    #[schemars(range(min = 0))]
    max_price: Option<f64>,
    /// The currency prices are in and compared in: "USDC" (the default where the escrow takes
    /// it, else "ETH"), "ETH", or a token address. Only agents pricing the capability in it match.
    #[schemars(length(max = CURRENCY_CHARS))]
    currency: Option<String>,
    /// Minimum reputation score (0-5).
    #[schemars(range(min = 0, max = 5))]
    min_reputation: Option<f64>,
    /// Max results to return (1-100, default 10).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
    /// The `nextCursor` of the previous answer, for the next results.
    #[schemars(length(max = CURSOR_CHARS))]
    cursor: Option<String>,
}

/// Input of `get_agent`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAgent {
    /// Agent ID to retrieve: the agent's wallet address.
    #[schemars(length(max = ADDRESS_CHARS))]
    agent_id: String,
}

/// What `search_agents` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// The matches, best reputation first, then cheapest.
    agents: Vec<MatchView>,
    /// Pass as `cursor` for more; null when there are no more.
    next_cursor: Option<String>,
}

pub async fn search(chain: &Chain, i: SearchAgents) -> Result<Answer<Found>, ToolError> {
    agentpact_read::agents::check_capability(&i.capability)?;
    let currency = chain.market_currency("currency", i.currency.as_deref()).await?;
    let max_price = i
        .max_price
        .map(|p| input::number("max_price", p, currency.decimals, &currency.symbol))
        .transpose()?;
    let search = AgentSearch {
        capability: Some(i.capability.clone()),
        currency: Some(currency.address),
        max_price,
        min_reputation: i.min_reputation,
        include_inactive: false,
    };
    let limit = i.limit.unwrap_or(10);
    let page = chain.reader.search_agents(chain.chain_id, &search, limit, i.cursor.as_deref()).await?;
    let next = page.has_next_page.then(|| page.items.last().map(|(c, _)| c.clone())).flatten();
    let found: Vec<&AgentMatch> = page.items.iter().map(|(_, m)| m).collect();
    let under = max_price.map_or_else(
        || format!(" priced in {}", currency.symbol),
        |p| format!(" at most {}", show(p, &currency)),
    );
    let text = match found.first() {
        None => format!("No active agent offers {}{under}.", i.capability),
        Some(best) => format!(
            "Found {} agent{} for {}{under}: {}. {} looks best.{}",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            i.capability,
            found.iter().map(|m| match_line(m)).collect::<Vec<_>>().join("; "),
            best.agent.name,
            if next.is_some() { " More follow: pass nextCursor as cursor." } else { "" }
        ),
    };
    Answer::new(text, Found { agents: found.into_iter().map(MatchView::of).collect(), next_cursor: next })
}

fn match_line(m: &AgentMatch) -> String {
    format!(
        "{} ({:.2} rating, {})",
        m.agent.name,
        m.reputation,
        show(m.capability.price, &m.capability.currency)
    )
}

pub async fn get(chain: &Chain, i: GetAgent) -> Result<Answer<AgentView>, ToolError> {
    let address = input::address("agent_id", &i.agent_id)?;
    let agent = chain.reader.agent(chain.chain_id, address).await?.ok_or_else(|| {
        ToolError::Invalid(format!(
            "no agent is registered at {address}; search_agents finds agents by capability"
        ))
    })?;
    let reputation = chain.reader.reputation(chain.chain_id, address).await?;
    let score = reputation.overall().value;
    let offers: Vec<String> =
        agent.capabilities.iter().map(|c| format!("{} ({})", c.name, show(c.price, &c.currency))).collect();
    Answer::new(
        format!(
            "{} ({}), reputation {score:.2}/5{}: {}. Offers {}. Reach it at {}.",
            agent.name,
            agent.address,
            if agent.active { "" } else { ", out of the market for now" },
            agent.description,
            offers.join(", "),
            agent.endpoint
        ),
        AgentView::of(&agent, Some(ReputationView::of(&reputation))),
    )
}
