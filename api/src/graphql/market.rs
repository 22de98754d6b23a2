//! The agent market in GraphQL: agents, the search that ranks them, and feedback.

use async_graphql::{Context, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    errors::to_graphql,
    meta::{BlockHeight, indexed},
    query::PageInfo,
    scalars::{Address, BigInt},
    types::{Currency, Reputation},
};
use crate::read::{self, Reader};

/// Queries over the agent market.
#[derive(Default)]
pub struct MarketQuery;

/// Queries over the agent market.
#[Object]
impl MarketQuery {
    /// One agent by its wallet address, or null when it never registered.
    async fn agent(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        address: Address,
    ) -> Result<Option<Agent>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let agent = ctx.data::<Reader>()?.agent(chain, address.0).await.map_err(to_graphql)?;
        Ok(agent.map(|a| Agent { chain_id: chain, agent: a }))
    }

    /// Every agent in the market (and, with `includeInactive`, those that stepped out), best
    /// reputation first, then cheapest capability; `first` (at most 100, default 20) after `after`.
    #[graphql(complexity = "page_size(first) as usize * child_complexity + 1")]
    async fn agents(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        #[graphql(default)] include_inactive: bool,
        first: Option<u32>,
        after: Option<String>,
    ) -> Result<AgentConnection> {
        let search = read::AgentSearch { include_inactive, ..Default::default() };
        page_of(ctx, chain_id, block, &search, first, after).await
    }

    /// Active agents offering `capability` (name compared without regard to case) priced in
    /// `currency` (a token address; any currency when omitted), charging at most `maxPrice` base
    /// units of that currency for it (ETH's wei when `currency` is omitted), with an overall
    /// reputation score of at least
    /// `minReputation` (0-5, the global trusted score); ranked by it, then price, then address. `first` (at most
    /// 100, default 20) after `after`.
    #[graphql(complexity = "page_size(first) as usize * child_complexity + 1")]
    #[allow(clippy::too_many_arguments)] // the search's filters plus the Relay arguments
    async fn search_agents(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        capability: String,
        currency: Option<Address>,
        max_price: Option<BigInt>,
        min_reputation: Option<f64>,
        first: Option<u32>,
        after: Option<String>,
    ) -> Result<AgentConnection> {
        let search = read::AgentSearch {
            capability: Some(capability),
            currency: currency.map(|c| c.0),
            max_price: max_price.map(|p| p.0),
            min_reputation,
            include_inactive: false,
        };
        page_of(ctx, chain_id, block, &search, first, after).await
    }
}

/// The rows a page holds, for the complexity limit.
fn page_size(first: Option<u32>) -> u32 {
    first.unwrap_or(read::DEFAULT_PAGE_SIZE).min(read::MAX_PAGE_SIZE)
}

/// One page of a search, as a connection.
async fn page_of(
    ctx: &Context<'_>,
    chain_id: Option<u64>,
    block: Option<BlockHeight>,
    search: &read::AgentSearch,
    first: Option<u32>,
    after: Option<String>,
) -> Result<AgentConnection> {
    let chain = indexed(ctx, chain_id, block).await?;
    let page = ctx
        .data::<Reader>()?
        .search_agents(chain, search, first.unwrap_or(read::DEFAULT_PAGE_SIZE), after.as_deref())
        .await
        .map_err(to_graphql)?;
    let edges: Vec<AgentEdge> = page
        .items
        .into_iter()
        .map(|(cursor, m)| AgentEdge {
            cursor,
            node: Agent { chain_id: chain, agent: m.agent },
            capability: m.capability.into(),
            reputation: m.reputation,
        })
        .collect();
    let page_info = PageInfo {
        has_next_page: page.has_next_page,
        has_previous_page: page.has_previous_page,
        start_cursor: edges.first().map(|e| e.cursor.clone()),
        end_cursor: edges.last().map(|e| e.cursor.clone()),
    };
    Ok(AgentConnection { edges, page_info })
}

/// A page of agents in ranking order (Relay connection).
#[derive(SimpleObject)]
pub struct AgentConnection {
    /// The agents of the page with their cursors and what ranked them.
    edges: Vec<AgentEdge>,
    /// Where the page sits in the whole list.
    page_info: PageInfo,
}

/// One agent of a page.
#[derive(SimpleObject)]
pub struct AgentEdge {
    /// Pass to `after` to page on from this agent.
    cursor: String,
    /// The agent.
    node: Agent,
    /// The capability that matched (the cheapest one when the search named none).
    capability: Capability,
    /// The agent's overall 0-5 reputation score in the global view (`Reputation.score.value`),
    /// which ranked it.
    reputation: f64,
}

/// A registered agent: its wallet is its id.
pub struct Agent {
    chain_id: u64,
    agent: read::Agent,
}

/// A registered agent: its wallet is its id.
#[Object]
impl Agent {
    /// Its wallet address: the agent's id, and where its pacts pay.
    async fn address(&self) -> Address {
        Address(self.agent.address)
    }
    /// Display name.
    async fn name(&self) -> &str {
        &self.agent.name
    }
    /// What it does.
    async fn description(&self) -> &str {
        &self.agent.description
    }
    /// Where it can be reached.
    async fn endpoint(&self) -> &str {
        &self.agent.endpoint
    }
    /// A URI to more about it (may be empty).
    async fn metadata_uri(&self) -> &str {
        &self.agent.metadata_uri
    }
    /// In the market (false: it stepped out and searches skip it).
    async fn active(&self) -> bool {
        self.agent.active
    }
    /// When it registered.
    async fn registered_at(&self) -> DateTime<Utc> {
        self.agent.registered_at
    }
    /// When its profile or activity last changed.
    async fn updated_at(&self) -> DateTime<Utc> {
        self.agent.updated_at
    }
    /// What it offers, with prices.
    async fn capabilities(&self) -> Vec<Capability> {
        self.agent.capabilities.iter().cloned().map(Into::into).collect()
    }
    /// Its reputation as seller, buyer and oracle, feedback included.
    async fn reputation(&self, ctx: &Context<'_>) -> Result<Reputation> {
        let rep = ctx.data::<Reader>()?.reputation(self.chain_id, self.agent.address).await;
        Ok(Reputation(rep.map_err(to_graphql)?, self.chain_id))
    }
}

/// One thing an agent offers.
#[derive(SimpleObject)]
pub struct Capability {
    /// Its name, e.g. `logo-design`.
    name: String,
    /// What it covers.
    description: String,
    /// Price per job, in base units of `currency` (wei for ETH).
    price: BigInt,
    /// The price as an exact decimal in `currency`, without trailing zeros ("5.5").
    price_formatted: String,
    /// What the price is in.
    currency: Currency,
}

impl From<read::Capability> for Capability {
    fn from(c: read::Capability) -> Self {
        Self {
            price_formatted: c.currency.format(c.price),
            name: c.name,
            description: c.description,
            price: BigInt(c.price),
            currency: Currency(c.currency),
        }
    }
}

/// A rating one party of a finished pact gave the other.
#[derive(SimpleObject)]
pub struct Feedback {
    /// The pact.
    pact_id: BigInt,
    /// Who rated.
    rater: Address,
    /// Who was rated.
    ratee: Address,
    /// 1 to 5.
    rating: u8,
    /// Short labels.
    tags: Vec<String>,
    /// A comment, or a URI to one (may be empty).
    comment: String,
    /// When it was given.
    given_at: DateTime<Utc>,
    /// The block that carried it.
    block_number: u64,
}

impl From<read::Feedback> for Feedback {
    fn from(f: read::Feedback) -> Self {
        Self {
            pact_id: BigInt(f.pact_id),
            rater: Address(f.rater),
            ratee: Address(f.ratee),
            rating: f.rating,
            tags: f.tags,
            comment: f.comment,
            given_at: f.given_at,
            block_number: f.block_number,
        }
    }
}

/// Feedback received, summed up.
#[derive(SimpleObject)]
pub struct FeedbackSummary {
    /// Ratings received.
    pub count: u64,
    /// The distinct counterparties that gave them (each one vote in the score).
    pub raters: u64,
    /// Their mean, 1 to 5 (null without feedback).
    pub mean_rating: Option<f64>,
}
