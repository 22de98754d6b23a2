//! Seed 000's resources: `hire://profile` (this wallet's agent profile and statistics),
//! `hire://contracts` (its pacts, active and past), `hire://conversations` (its negotiations) and
//! `hire://conversations/{id}` (one of them with its messages), read from the index.

use agentpact_negotiation::ConversationFilter;
use agentpact_read::AgentRef;
use serde_json::{Value, json};

use crate::{
    chain::Chain,
    outcome::ToolError,
    tools::negotiation::own_conversation,
    views::{AgentView, ConversationView, MessageView, PactView, ReputationView},
};

/// The most pacts `hire://contracts` lists (the newest); `list-pacts` pages through the rest.
const CONTRACTS_SHOWN: u32 = 100;

/// This wallet's profile (null before `register_agent`; with its ERC-8004 identity when it has one)
/// and its statistics in every role.
pub async fn profile(chain: &Chain) -> Result<Value, ToolError> {
    let reputation = chain.reader.reputation(chain.chain_id, chain.me).await?;
    let statistics = ReputationView::of(&reputation);
    let agent = chain.reader.agent(chain.chain_id, chain.me).await?;
    let identity = chain.reader.erc8004_agent(chain.chain_id, AgentRef::Address(chain.me)).await?;
    Ok(json!({
        "wallet": chain.me,
        "registered": agent.is_some(),
        "profile": agent.map(|a| AgentView::of(&a, None).with_erc8004(identity.as_ref())),
        "statistics": statistics,
    }))
}

/// This wallet's pacts in any role, newest first: the active ones and the finished ones.
pub async fn contracts(chain: &Chain) -> Result<Value, ToolError> {
    let (pacts, more) = chain.my_pacts(CONTRACTS_SHOWN).await?;
    let (past, active): (Vec<_>, Vec<_>) = pacts.iter().partition(|p| p.status.is_terminal());
    Ok(json!({
        "wallet": chain.me,
        "active": active.into_iter().map(PactView::of).collect::<Vec<_>>(),
        "past": past.into_iter().map(PactView::of).collect::<Vec<_>>(),
        "more": more,
    }))
}

/// Conversation `id` of this wallet with every message of it, oldest first.
pub async fn conversation(chain: &Chain, id: &str) -> Result<Value, ToolError> {
    let record = own_conversation(chain, id).await?;
    let id = &record.conversation.id;
    let messages = chain.negotiations().messages_after(chain.chain_id, id, 0).await?;
    Ok(json!({
        "conversation": ConversationView::of(&record),
        "messages": messages.iter().map(MessageView::of).collect::<Vec<_>>(),
    }))
}

/// This wallet's negotiations, latest change first (the latest 50).
pub async fn conversations(chain: &Chain) -> Result<Value, ToolError> {
    let list =
        chain.negotiations().conversations(chain.chain_id, chain.me, ConversationFilter::All, 50).await?;
    Ok(
        json!({ "wallet": chain.me, "conversations": list.iter().map(ConversationView::of).collect::<Vec<_>>() }),
    )
}
