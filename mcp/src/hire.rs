//! Seed 000's resources: `hire://profile` (this wallet's agent profile and statistics),
//! `hire://contracts` (its pacts, active and past), `hire://conversations` (its negotiations) and
//! `hire://conversations/{id}` (one of them with its messages), read from the index; and
//! `hire://policy`, the wallet policy the server holds the wallet to.

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

/// The wallet policy this server holds the wallet to (docs/mcp.md §Policy), for the agent to plan
/// within: the policy as the human set it (null: none), the kill switch, the expiry, and per rule
/// what is used now and what remains.
pub async fn policy(chain: &Chain) -> Result<Value, ToolError> {
    let Some(guard) = chain.guard() else {
        return Ok(json!({
            "wallet": chain.me,
            "enforced": false,
            "note": "this server keeps no wallet policy (it runs without its database); only the per-call caps hold",
        }));
    };
    let view = guard.view().await?;
    let frozen =
        view.controls.frozen.as_ref().map(|f| json!({ "at": f.at.to_rfc3339(), "reason": f.reason }));
    let Some(policy) = &view.controls.policy else {
        return Ok(json!({ "wallet": chain.me, "enforced": true, "policy": null, "frozen": frozen }));
    };
    let currencies = chain.currencies().await?;
    let of = |named: &str| currencies.iter().find(|c| crate::policy::rules::names(named, c));
    let mut rules = Vec::new();
    for b in &policy.budget {
        let Some(c) = of(&b.currency) else { continue };
        let max = match c.parse(&b.max) {
            Ok(max) => max,
            Err(e) => {
                rules.push(json!({
                    "rule": format!("the {} budget per {}", c.symbol, b.per),
                    "error": format!("its max {:?} does not read in {} ({e}): the human must set the policy again", b.max, c.symbol),
                }));
                continue;
            }
        };
        let used = view.usage.spent(view.now, b.per, c.address, None);
        rules.push(json!({
            "rule": format!("the {} budget per {} ({})", c.symbol, b.per, c.show(max)),
            "used": c.show(used),
            "remaining": c.show(max.saturating_sub(used)),
            "over": b.over,
        }));
    }
    for r in &policy.calls {
        let used = view.usage.sent(view.now, r.per, r.tool.as_deref());
        let of_tool =
            r.tool.as_deref().map_or_else(String::new, |t| format!("{} ", crate::policy::rules::tool_key(t)));
        rules.push(json!({
            "rule": format!("{of_tool}calls per {} ({})", r.per, r.max),
            "used": used,
            "remaining": u64::from(r.max).saturating_sub(used),
        }));
    }
    Ok(json!({
        "wallet": chain.me,
        "enforced": true,
        "policy": policy,
        "policyDigest": view.controls.digest,
        "frozen": frozen,
        "expiresAt": policy.expires_at,
        "now": view.now.to_rfc3339(),
        "usage": rules,
    }))
}
