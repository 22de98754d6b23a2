//! Finding agents (seed 000): `search_agents` and `get_agent`, read from the index.

use agentpact_read::{
    AgentMatch, AgentRef, AgentSearch, Basis, MAX_PAGE_SIZE, Reputation, ReputationRun, ReputationSnapshot,
};
use alloy::primitives::{Address, U256};
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
    /// Maximum price, in `currency` (USDC unless said), as prices are answered: e.g. "10" (or
    /// the number 10) for 10 USDC.
    max_price: Option<input::Amount>,
    /// The currency prices are in and compared in: "USDC" (the default where the escrow takes
    /// it, else "ETH"), "ETH", or a token address. Only agents pricing the capability in it match.
    #[schemars(length(max = CURRENCY_CHARS))]
    currency: Option<String>,
    /// Minimum reputation score (0-5): the global trusted score that ranks the matches.
    #[schemars(range(min = 0, max = 5))]
    min_reputation: Option<f64>,
    /// Max results to return (1-100, default 10).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
    /// The `nextCursor` of the previous answer, for the next results.
    #[schemars(length(max = CURSOR_CHARS))]
    cursor: Option<String>,
}

/// Input of `get_agent`: `agent_id` or `erc8004_agent_id`, exactly one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAgent {
    /// Agent ID to retrieve: the agent's wallet address. Give this or erc8004_agent_id.
    #[schemars(length(max = ADDRESS_CHARS))]
    agent_id: Option<String>,
    /// Instead of agent_id: the agent's token id in the chain's ERC-8004 Identity Registry
    /// (decimal, e.g. "12").
    #[schemars(length(min = 1, max = U256_CHARS))]
    erc8004_agent_id: Option<String>,
    /// Also give the score as this address sees it (a wallet address, or "me" for this
    /// server's wallet): its own counterparties count as far as it endorsed them. Without it, the
    /// global view only, the market's trust from its seeds: the same for every caller.
    #[schemars(length(max = ADDRESS_CHARS))]
    as_seen_by: Option<String>,
}

/// The most trusted counterparties get_agent lists behind a score.
const RESTS_ON: u32 = 5;

/// The most characters of a decimal 256-bit number.
const U256_CHARS: usize = 78;

/// What `search_agents` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// The matches, best reputation first, then cheapest.
    agents: Vec<MatchView>,
    /// Pass as `cursor` for more; null when there are no more.
    next_cursor: Option<String>,
    /// Agents only in the chain's ERC-8004 Identity Registry whose registration file lists the
    /// capability as a skill: not in AgentPact's market, so unpriced and outside `agents`' order
    /// and price filter; best grounded score first (`min_reputation` holds them to it). Listed on
    /// the first page only (no `cursor`); empty on later pages.
    erc8004_only: Vec<Erc8004Match>,
}

/// An agent found only in ERC-8004's Identity Registry.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Erc8004Match {
    /// Its ERC-8004 token id (decimal): get_agent takes it as `erc8004_agent_id`.
    erc8004_agent_id: String,
    /// The address paid for it (its ERC-8004 wallet), when it has one.
    #[schemars(with = "Option<String>")]
    address: Option<Address>,
    /// Its name, from its registration file.
    name: String,
    /// Its trusted ERC-8004 score, 0-5, which ranked it: feedback from clients who paid it
    /// through settled pacts, each client's vote times its trust as a rater (3.0 without any).
    trusted_score: f64,
    /// The same feedback with every grounded client counted fully: a raw figure beside it.
    grounded_score: f64,
    /// The mean value of its ERC-8004 feedback as given (usually 0-100), null without any.
    raw_mean_value: Option<f64>,
}

pub async fn search(chain: &Chain, i: SearchAgents) -> Result<Answer<Found>, ToolError> {
    agentpact_read::agents::check_capability(&i.capability)?;
    let currency = chain.market_currency("currency", i.currency.as_deref()).await?;
    let max_price =
        i.max_price.map(|p| p.units("max_price", currency.decimals, &currency.symbol)).transpose()?;
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
    let asked: Vec<AgentRef> = found.iter().map(|m| AgentRef::Address(m.agent.address)).collect();
    let identities = chain.reader.erc8004_agents_of(chain.chain_id, &asked).await?;
    let views = found
        .iter()
        .map(|m| {
            let identity = identities.iter().find(|(who, _)| *who == AgentRef::Address(m.agent.address));
            MatchView::of(m).with_erc8004(identity.map(|(_, agent)| agent))
        })
        .collect();
    let erc8004_only = if i.cursor.is_some() {
        Vec::new()
    } else {
        let all = chain.reader.search_registries(chain.chain_id, &i.capability, MAX_PAGE_SIZE).await?;
        all.into_iter()
            .filter(|r| !r.in_agentpact && i.min_reputation.is_none_or(|min| r.score >= min))
            .filter_map(|r| {
                Some(Erc8004Match {
                    erc8004_agent_id: r.agent_id?.to_string(),
                    address: r.address,
                    name: r.name,
                    trusted_score: r.score,
                    grounded_score: r.grounded_score,
                    raw_mean_value: r.raw_mean_value,
                })
            })
            .take(limit as usize)
            .collect()
    };
    let elsewhere = match erc8004_only.len() {
        0 => String::new(),
        _ => format!(
            " In ERC-8004 only (unpriced, not in this market): {}.",
            erc8004_only
                .iter()
                .map(|e| format!(
                    "{} (agent #{}, trusted {:.2})",
                    e.name, e.erc8004_agent_id, e.trusted_score
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    let under = max_price.map_or_else(
        || format!(" priced in {}", currency.symbol),
        |p| format!(" at most {}", show(p, &currency)),
    );
    let text = match found.first() {
        None => format!("No active agent offers {}{under}.{elsewhere}", i.capability),
        Some(best) => {
            format!(
                "Found {} agent{} for {}{under}: {}. {} looks best.{}",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                i.capability,
                found.iter().map(|m| match_line(m)).collect::<Vec<_>>().join("; "),
                best.agent.name,
                if next.is_some() { " More follow: pass nextCursor as cursor." } else { "" }
            ) + &elsewhere
        }
    };
    Answer::new(text, Found { agents: views, next_cursor: next, erc8004_only })
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
    let (address, identity) = match (i.agent_id.as_deref(), i.erc8004_agent_id.as_deref()) {
        (Some(_), Some(_)) => {
            return Err(ToolError::Invalid(
                "give agent_id (the agent's wallet address) or erc8004_agent_id (its ERC-8004 token id), not both"
                    .into(),
            ));
        }
        (None, None) => {
            return Err(ToolError::Invalid(
                "give agent_id (the agent's wallet address) or erc8004_agent_id (its ERC-8004 token id)"
                    .into(),
            ));
        }
        (Some(text), None) => {
            let address = input::address("agent_id", text)?;
            let identity = chain.reader.erc8004_agent(chain.chain_id, AgentRef::Address(address)).await?;
            (address, identity)
        }
        (None, Some(text)) => {
            let id = erc8004_id("erc8004_agent_id", text)?;
            let identity =
                chain.reader.erc8004_agent(chain.chain_id, AgentRef::Id(id)).await?.ok_or_else(|| {
                    ToolError::Invalid(format!(
                        "no ERC-8004 agent #{id} is in the index of chain {}; search_agents lists the agents of both registries",
                        chain.chain_id
                    ))
                })?;
            let address = identity.wallet.or(identity.owner).ok_or(ToolError::Ownerless { id })?;
            (address, Some(identity))
        }
    };
    let viewer = match i.as_seen_by.as_deref() {
        None => None,
        Some("me") => Some(chain.me),
        Some(text) => Some(input::address("as_seen_by", text)?),
    };
    let agent = chain.reader.agent(chain.chain_id, address).await?;
    // One generation: a ranking run committing meanwhile cannot mix two in one answer.
    let ReputationSnapshot { reputation, basis, run } =
        chain.reader.reputation_snapshot(chain.chain_id, address, viewer, RESTS_ON).await?;
    let score = said(&reputation, &basis, run.as_ref(), viewer == Some(chain.me));
    let view = ReputationView::of(&reputation).resting_on(&basis, run.as_ref());
    let erc8004 = identity.as_ref().map_or_else(String::new, |e| {
        let r = &e.reputation;
        let raw = r.mean_value.map_or_else(String::new, |v| format!(", raw mean value {v:.1}"));
        format!(
            " ERC-8004 agent #{}: trusted score {:.2}/5 from {} of its {} feedback{} (grounded in paid pacts; {:.2} counting every grounded client fully{raw}).",
            e.agent_id,
            r.trusted_score,
            r.grounded,
            r.feedback,
            if r.feedback == 1 { "" } else { "s" },
            r.grounded_score,
        )
    });
    let Some(agent) = agent else {
        let e = identity.ok_or_else(|| {
            ToolError::Invalid(format!(
                "no agent is registered at {address}, in AgentPact's market or in ERC-8004; search_agents finds agents by capability"
            ))
        })?;
        let name = e.name.clone().unwrap_or_else(|| format!("ERC-8004 agent #{}", e.agent_id));
        let reach = e.mcp_endpoint.as_deref().map_or_else(String::new, |u| format!(" Reach it at {u}."));
        return Answer::new(
            format!(
                "{name} ({address}) is listed in ERC-8004 only, not in AgentPact's market (it prices nothing here); AgentPact reputation {score}.{erc8004}{reach}"
            ),
            AgentView::of_erc8004(&e, address, Some(view)),
        );
    };
    let offers: Vec<String> =
        agent.capabilities.iter().map(|c| format!("{} ({})", c.name, show(c.price, &c.currency))).collect();
    Answer::new(
        format!(
            "{} ({}), reputation {score}{}: {}. Offers {}. Reach it at {}.{erc8004}",
            agent.name,
            agent.address,
            if agent.active { "" } else { ", out of the market for now" },
            agent.description,
            offers.join(", "),
            agent.endpoint
        ),
        AgentView::of(&agent, Some(view)).with_erc8004(identity.as_ref()),
    )
}

/// The score in words: "4.54/5 from 20 counterparties the market trusts (36.4 evidence units, 200
/// paid pacts; computed at block N, 40 s ago)", and a viewer's view beside it ("you" when the
/// viewer is this server's wallet).
fn said(r: &Reputation, global: &Basis, run: Option<&ReputationRun>, viewer_is_me: bool) -> String {
    let g = &r.global;
    let trusted = match g.trusted_raters {
        0 => "no counterparty the market trusts yet".to_owned(),
        1 => "1 counterparty the market trusts".to_owned(),
        n => format!("{n} counterparties the market trusts"),
    };
    let untrusted = match global.untrusted_raters {
        0 => String::new(),
        n => format!("{n} untrusted weighing nothing"),
    };
    let computed = match run {
        None => "not ranked yet: every score is 3.00 until the first ranking run".to_owned(),
        Some(run) if run.seeds.is_empty() => {
            format!(
                "computed at block {}, {} s ago, with no seeds configured: every global score is 3.00",
                run.block, run.age_seconds
            )
        }
        Some(run) => format!("computed at block {}, {} s ago", run.block, run.age_seconds),
    };
    let seen = r.viewer.map_or_else(String::new, |v| {
        let (who, whose, itself) = if viewer_is_me {
            ("you".to_owned(), "your", "you dealt with it yourself")
        } else {
            (v.to_string(), "its", "it dealt with it itself")
        };
        let mut why = Vec::new();
        if r.viewer_rated {
            why.push(itself.to_owned());
        }
        match r.viewers_counterparties {
            0 => {}
            1 => why.push(format!("1 of them is {whose} own counterparty")),
            n => why.push(format!("{n} of them are {whose} own counterparties")),
        }
        let why = if why.is_empty() { String::new() } else { format!(", {}", why.join("; ")) };
        format!("; as seen by {who}: {:.2}{why}", r.overall.value)
    });
    let evidence = match g.trusted_raters {
        0 => String::new(),
        _ => format!("{:.1} evidence units, {} paid pacts", g.weight, global.trusted_paid_pacts),
    };
    let detail = [evidence, untrusted, computed].into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>();
    format!("{:.2}/5 from {trusted} ({}){seen}", g.value, detail.join("; "))
}

/// An ERC-8004 token id given as decimal text in `field`.
pub(crate) fn erc8004_id(field: &str, text: &str) -> Result<U256, ToolError> {
    let t = input::filled(field, text)?.trim_start_matches('#');
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ToolError::Invalid(format!(
            "{field} must be an ERC-8004 agent id in decimal digits, e.g. \"12\", not {text:?}"
        )));
    }
    t.parse()
        .map_err(|_| ToolError::Invalid(format!("{field} {text:?} is larger than any ERC-8004 agent id")))
}
