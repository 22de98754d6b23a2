//! The chain's ERC-8004 registries in GraphQL: an agent by its token id or its address, its raw
//! ERC-8004 score beside the grounded and trusted ones, its feedback with what grounds it, and a
//! search across both registries ranked by trusted score (docs/erc8004.md).

use async_graphql::{Context, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    errors::{Code, to_graphql},
    meta::{BlockHeight, indexed},
    scalars::{Address, BigInt, Bytes32},
};
use crate::read::{self, Reader};

/// Queries over the ERC-8004 registries.
#[derive(Default)]
pub struct Erc8004Query;

/// Queries over the ERC-8004 registries.
#[Object]
impl Erc8004Query {
    /// An agent of the chain's ERC-8004 Identity Registry, by its token id (`agentId`) or by an
    /// address (its wallet, else its owner); exactly one of the two. Null when none.
    #[graphql(complexity = "super::cost::REPUTATION + child_complexity")]
    async fn erc8004_agent(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        agent_id: Option<BigInt>,
        address: Option<Address>,
    ) -> Result<Option<Erc8004Agent>> {
        let who = match (agent_id, address) {
            (Some(id), None) => read::AgentRef::Id(id.0),
            (None, Some(a)) => read::AgentRef::Address(a.0),
            _ => return Err(Code::BadArgument.error("give exactly one of `agentId` and `address`")),
        };
        let chain = indexed(ctx, chain_id, block).await?;
        let agent = ctx.data::<Reader>()?.erc8004_agent(chain, who).await.map_err(to_graphql)?;
        Ok(agent.map(|agent| Erc8004Agent { agent, chain_id: chain }))
    }

    /// Agents of either registry offering `capability` (an AgentPact capability, or a skill an
    /// ERC-8004 registration file lists), best trusted score first (`score`: its trusted
    /// grounded ERC-8004 score; for an agent without ERC-8004 feedback its AgentPact score, which
    /// counts settled pacts only), then by address; `first` (at most 100, default 20).
    #[graphql(
        complexity = "first.unwrap_or(read::DEFAULT_PAGE_SIZE) as usize * (child_complexity + super::cost::REPUTATION) + 1"
    )]
    async fn search_registries(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        capability: String,
        first: Option<u32>,
    ) -> Result<Vec<RegistryMatch>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let found = ctx
            .data::<Reader>()?
            .search_registries(chain, &capability, first.unwrap_or(read::DEFAULT_PAGE_SIZE))
            .await
            .map_err(to_graphql)?;
        Ok(found.into_iter().map(RegistryMatch::from).collect())
    }
}

/// An agent as ERC-8004's Identity Registry lists it.
pub struct Erc8004Agent {
    agent: read::Erc8004Agent,
    chain_id: u64,
}

/// An agent as ERC-8004's Identity Registry lists it.
#[Object]
impl Erc8004Agent {
    /// Its token id.
    async fn agent_id(&self) -> BigInt {
        BigInt(self.agent.agent_id)
    }
    /// The token's owner.
    async fn owner(&self) -> Option<Address> {
        self.agent.owner.map(Address)
    }
    /// The address paid for it (`agentWallet`): null once unset or transferred.
    async fn wallet(&self) -> Option<Address> {
        self.agent.wallet.map(Address)
    }
    /// Its registration file's URI as registered.
    async fn uri(&self) -> &str {
        &self.agent.uri
    }
    /// From the registration file (when it is a data: URI): the name.
    async fn name(&self) -> Option<&str> {
        self.agent.name.as_deref()
    }
    /// From the registration file: what it does.
    async fn description(&self) -> Option<&str> {
        self.agent.description.as_deref()
    }
    /// From the registration file: its MCP endpoint.
    async fn mcp_endpoint(&self) -> Option<&str> {
        self.agent.mcp_endpoint.as_deref()
    }
    /// From the registration file: the skills its services list.
    async fn skills(&self) -> &[String] {
        &self.agent.skills
    }
    /// When it registered.
    async fn registered_at(&self) -> DateTime<Utc> {
        self.agent.registered_at
    }
    /// Its ERC-8004 feedback, raw and grounded, side by side.
    async fn reputation(&self) -> Erc8004Reputation {
        Erc8004Reputation(self.agent.reputation.clone())
    }
    /// Its feedback, newest first, each with what grounds it; `first` at most 100 (default 20).
    #[graphql(complexity = "first.unwrap_or(read::DEFAULT_PAGE_SIZE) as usize * child_complexity + 1")]
    async fn feedback(&self, ctx: &Context<'_>, first: Option<u32>) -> Result<Vec<Erc8004Feedback>> {
        let reader = ctx.data::<Reader>()?;
        let rows = reader
            .erc8004_feedback(self.chain_id, self.agent.agent_id, first.unwrap_or(read::DEFAULT_PAGE_SIZE))
            .await
            .map_err(to_graphql)?;
        Ok(rows.into_iter().map(Erc8004Feedback).collect())
    }
}

/// An agent's ERC-8004 feedback: all of it (raw) and the part grounded in settled pacts.
pub struct Erc8004Reputation(read::Erc8004Reputation);

/// An agent's ERC-8004 feedback: all of it (raw) and the part grounded in settled pacts.
#[Object]
impl Erc8004Reputation {
    /// Unrevoked feedback, all of it.
    async fn feedback(&self) -> u64 {
        self.0.feedback
    }
    /// The distinct clients that gave it.
    async fn clients(&self) -> u64 {
        self.0.clients
    }
    /// The raw score: the mean value as given (what the registry's `getSummary` averages;
    /// usually 0-100), null without feedback.
    async fn raw_mean_value(&self) -> Option<f64> {
        self.0.mean_value.map(|v| (v * 100.0).round() / 100.0)
    }
    /// Feedback whose client paid the agent's wallet through a pact that settled.
    async fn grounded(&self) -> u64 {
        self.0.grounded
    }
    /// The distinct clients behind the grounded feedback.
    async fn grounded_clients(&self) -> u64 {
        self.0.grounded_clients
    }
    /// What the grounded clients' votes weigh together (each at most 1, by its pacts).
    async fn grounded_weight(&self) -> f64 {
        self.0.grounded_weight
    }
    /// The 0-5 score of the grounded feedback alone, every grounded client counted fully (3.0
    /// without any; docs/api.md §Reputation): a raw figure beside `trustedScore`.
    async fn grounded_score(&self) -> f64 {
        self.0.grounded_score
    }
    /// The grounded clients trusted as raters of the agent's wallet (trust > 0).
    async fn trusted_clients(&self) -> u64 {
        self.0.trusted_clients
    }
    /// What the grounded clients' votes weigh, each times its trust.
    async fn trusted_weight(&self) -> f64 {
        self.0.trusted_weight
    }
    /// The 0-5 score of the grounded feedback, each client's vote times its trust as a rater (3.0
    /// without any): a ring of wallets without trusted pacts weighs nothing. What ranks the agent.
    async fn trusted_score(&self) -> f64 {
        self.0.trusted_score
    }
    /// The share of the feedback that is not grounded, 0-1.
    async fn ungrounded_share(&self) -> f64 {
        (self.0.ungrounded_share() * 10_000.0).round() / 10_000.0
    }
}

/// One ERC-8004 feedback and what grounds it.
pub struct Erc8004Feedback(read::Erc8004Feedback);

/// One ERC-8004 feedback and what grounds it.
#[Object]
impl Erc8004Feedback {
    /// Who gave it.
    async fn client(&self) -> Address {
        Address(self.0.client)
    }
    /// Its index among this client's feedback for the agent (from 1).
    async fn index(&self) -> u64 {
        self.0.index
    }
    /// The value as given, as a decimal.
    async fn value(&self) -> &str {
        &self.0.value
    }
    /// `tag1` and `tag2`.
    async fn tags(&self) -> &[String] {
        &self.0.tags
    }
    /// The feedback file's URI (may be empty).
    async fn feedback_uri(&self) -> &str {
        &self.0.feedback_uri
    }
    /// Revoked by its client.
    async fn revoked(&self) -> bool {
        self.0.revoked
    }
    /// Grounded: the client paid the agent's wallet through a settled pact.
    async fn grounded(&self) -> bool {
        !self.0.grounding_pacts.is_empty()
    }
    /// The pact its tag names (`pact:{id}`), if any.
    async fn tagged_pact(&self) -> Option<BigInt> {
        self.0.tagged_pact.map(BigInt)
    }
    /// The settled pacts that ground it (the tagged one only, when tagged).
    async fn grounding_pacts(&self) -> Vec<BigInt> {
        self.0.grounding_pacts.iter().copied().map(BigInt).collect()
    }
    /// What those pacts weigh as this client's vote (0-1).
    async fn weight(&self) -> f64 {
        self.0.weight
    }
    /// When it was given.
    async fn given_at(&self) -> DateTime<Utc> {
        self.0.given_at
    }
    /// The transaction that gave it.
    async fn tx_hash(&self) -> Bytes32 {
        Bytes32(self.0.tx_hash)
    }
}

/// An agent found in either registry.
#[derive(SimpleObject)]
pub struct RegistryMatch {
    /// The address paid for it (AgentPact address or ERC-8004 wallet).
    address: Option<Address>,
    /// Its ERC-8004 token id, when it is in ERC-8004.
    agent_id: Option<BigInt>,
    /// Its name.
    name: String,
    /// Listed in AgentPact's market with the capability.
    in_agentpact: bool,
    /// The score that ranked it: its trusted grounded ERC-8004 score when it has ERC-8004
    /// feedback, else its AgentPact score.
    score: f64,
    /// Its grounded ERC-8004 score before trust (when it has ERC-8004 feedback), else its
    /// AgentPact score: the raw figure beside `score`.
    grounded_score: f64,
    /// Its AgentPact score (global view).
    agentpact_score: f64,
    /// Its raw ERC-8004 mean value, when it has feedback there.
    raw_mean_value: Option<f64>,
}

impl From<read::RegistryMatch> for RegistryMatch {
    fn from(m: read::RegistryMatch) -> Self {
        Self {
            address: m.address.map(Address),
            agent_id: m.agent_id.map(BigInt),
            name: m.name,
            in_agentpact: m.in_agentpact,
            score: m.score,
            grounded_score: m.grounded_score,
            agentpact_score: m.agentpact_score,
            raw_mean_value: m.raw_mean_value,
        }
    }
}
