//! Agents of the chain's ERC-8004 registries: who they are (owner, wallet, registration file),
//! their raw ERC-8004 feedback beside the part of it that is grounded in settled pacts and the
//! trusted score of that part, and a search across both registries (docs/erc8004.md). Read from
//! the aggregates the indexer keeps (`erc8004_reputation`), the ranking run's generation
//! (`erc8004_trusted`: each grounded client's vote times its trust as a rater of the agent's
//! wallet) and the view that grounds each feedback (`erc8004_grounding`).

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, B256, U256};
use chrono::{DateTime, Utc};

use super::{MAX_PAGE_SIZE, ReadError, Reader, agents::check_capability};

/// An agent as ERC-8004's Identity Registry lists it, with its reputation there.
#[derive(Debug, Clone, PartialEq)]
pub struct Erc8004Agent {
    /// Its token id.
    pub agent_id: U256,
    /// The token's owner.
    pub owner: Option<Address>,
    /// The address paid for it (`agentWallet`; none once unset or transferred).
    pub wallet: Option<Address>,
    /// Its registration file's URI as registered.
    pub uri: String,
    /// From the registration file, when it is a data: URI the index read.
    pub name: Option<String>,
    /// Same.
    pub description: Option<String>,
    /// Same: its MCP endpoint.
    pub mcp_endpoint: Option<String>,
    /// Same: the skills its services list.
    pub skills: Vec<String>,
    /// When it registered.
    pub registered_at: DateTime<Utc>,
    /// Its raw and grounded ERC-8004 reputation.
    pub reputation: Erc8004Reputation,
}

/// An agent's ERC-8004 feedback, raw and grounded, side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Erc8004Reputation {
    /// Unrevoked feedback, all of it.
    pub feedback: u64,
    /// The distinct clients that gave it.
    pub clients: u64,
    /// The mean value as given (what the registry's `getSummary` averages; usually 0-100).
    pub mean_value: Option<f64>,
    /// Unrevoked feedback whose client paid the agent's wallet through a settled pact.
    pub grounded: u64,
    /// The distinct clients behind it.
    pub grounded_clients: u64,
    /// What those clients' votes weigh together (each at most 1, by the pacts behind it).
    pub grounded_weight: f64,
    /// The 0-5 score of the grounded feedback alone, every grounded client counted fully (3.0
    /// without any): a raw figure, kept beside the trusted one.
    pub grounded_score: f64,
    /// The grounded clients trusted as raters of the agent's wallet (trust > 0).
    pub trusted_clients: u64,
    /// What their votes weigh, each times its trust.
    pub trusted_weight: f64,
    /// The 0-5 score of the grounded feedback, each client's vote times its trust (3.0 without
    /// any): the score that ranks the agent.
    pub trusted_score: f64,
}

impl Erc8004Reputation {
    /// The share of the feedback that is not grounded, 0-1 (0 without feedback).
    pub fn ungrounded_share(&self) -> f64 {
        if self.feedback == 0 { 0.0 } else { (self.feedback - self.grounded) as f64 / self.feedback as f64 }
    }
}

/// One ERC-8004 feedback and what grounds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Erc8004Feedback {
    /// The agent rated.
    pub agent_id: U256,
    /// Who gave it.
    pub client: Address,
    /// Its index among this client's feedback for the agent (from 1).
    pub index: u64,
    /// The value as given, as a decimal (`value / 10^decimals`).
    pub value: String,
    /// `tag1`, `tag2`.
    pub tags: [String; 2],
    /// The feedback file's URI (may be empty).
    pub feedback_uri: String,
    /// Revoked by its client.
    pub revoked: bool,
    /// The pact its tag names (`pact:{id}`), if any.
    pub tagged_pact: Option<U256>,
    /// The settled pacts by which the client paid the agent's wallet (the tagged one only, when
    /// tagged): empty when ungrounded.
    pub grounding_pacts: Vec<U256>,
    /// What those pacts weigh as this client's vote (0-1).
    pub weight: f64,
    /// When it was given.
    pub given_at: DateTime<Utc>,
    /// The transaction that gave it.
    pub tx_hash: B256,
}

/// How an ERC-8004 agent is named: by its token id or by the address paid for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentRef {
    /// Its token id.
    Id(U256),
    /// Its wallet (or, when no agent has this wallet, its owner).
    Address(Address),
}

impl AgentRef {
    /// How a read names it: the id in decimal, the address as lower-case 0x hex.
    fn key(&self) -> String {
        match self {
            Self::Id(id) => id.to_string(),
            Self::Address(a) => alloy::hex::encode_prefixed(a),
        }
    }
}

/// An agent found in either registry by a capability, ranked by its grounded score.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistryMatch {
    /// The address paid for it: its AgentPact address, or its ERC-8004 wallet.
    pub address: Option<Address>,
    /// Its ERC-8004 token id, when it is in ERC-8004.
    pub agent_id: Option<U256>,
    /// Its name (AgentPact profile, else registration file).
    pub name: String,
    /// Listed in AgentPact's market with this capability.
    pub in_agentpact: bool,
    /// The score that ranked it: its trusted grounded ERC-8004 score when it has ERC-8004
    /// feedback, else its AgentPact score (which counts settled pacts only, each counterparty
    /// times its trust).
    pub score: f64,
    /// Its grounded ERC-8004 score before trust (every grounded client counted fully) when it
    /// has ERC-8004 feedback, else its AgentPact score: the raw figure beside `score`.
    pub grounded_score: f64,
    /// Its AgentPact score in the global view (3.0 without history).
    pub agentpact_score: f64,
    /// Its raw ERC-8004 mean value, when it has feedback there.
    pub raw_mean_value: Option<f64>,
}

impl Reader {
    /// The ERC-8004 agent `who` names on `chain_id`, if any.
    pub async fn erc8004_agent(
        &self,
        chain_id: u64,
        who: AgentRef,
    ) -> Result<Option<Erc8004Agent>, ReadError> {
        Ok(self.erc8004_agents_of(chain_id, &[who]).await?.pop().map(|(_, agent)| agent))
    }

    /// The ERC-8004 agent each of `asked` names on `chain_id`, for those that name one, in one
    /// read: by token id, or by address (the agent whose current wallet it is, else, among agents
    /// without a wallet, one it owns; the lowest id when several). Candidates are found through
    /// the changes' address index, so the cost follows the addresses asked, not the registry.
    pub async fn erc8004_agents_of(
        &self,
        chain_id: u64,
        asked: &[AgentRef],
    ) -> Result<Vec<(AgentRef, Erc8004Agent)>, ReadError> {
        let ids: Vec<String> =
            asked.iter().filter(|w| matches!(w, AgentRef::Id(_))).map(AgentRef::key).collect();
        let addresses: Vec<Vec<u8>> = asked
            .iter()
            .filter_map(|w| match w {
                AgentRef::Address(a) => Some(a.to_vec()),
                AgentRef::Id(_) => None,
            })
            .collect();
        let rows = sqlx::query!(
            r#"WITH candidates AS (
                   SELECT agent_id, 0 AS rank, address AS asked FROM erc8004_agent_changes
                   WHERE chain_id = $1 AND field = 'wallet' AND address = ANY($3)
                   UNION
                   SELECT agent_id, 1, address FROM erc8004_agent_changes
                   WHERE chain_id = $1 AND field = 'owner' AND address = ANY($3)
                   UNION
                   SELECT agent_id, 0, NULL FROM erc8004_agents
                   WHERE chain_id = $1 AND agent_id = ANY($2::text[]::numeric[])
               )
               SELECT DISTINCT ON (coalesce(encode(c.asked, 'hex'), s.agent_id::text))
                      coalesce('0x' || encode(c.asked, 'hex'), s.agent_id::text) AS "key!",
                      s.agent_id::text AS "agent_id!", s.owner, s.wallet, s.uri, s.name, s.description,
                      s.mcp_endpoint, s.skills AS "skills!", s.registered_at AS "registered_at!",
                      coalesce(r.feedback, 0) AS "feedback!", coalesce(r.clients, 0) AS "clients!",
                      r.mean_value::float8 AS mean_value, coalesce(r.grounded, 0) AS "grounded!",
                      coalesce(r.grounded_clients, 0) AS "grounded_clients!",
                      coalesce(r.grounded_weight, 0)::float8 AS "grounded_weight!",
                      coalesce(r.grounded_score, reputation_score(0, 0))::float8 AS "grounded_score!",
                      coalesce(t.clients, 0) AS "trusted_clients!", coalesce(t.weight, 0) AS "trusted_weight!",
                      coalesce(t.score, reputation_score(0, 0))::float8 AS "trusted_score!"
               FROM candidates c
               JOIN erc8004_agent_state s ON s.chain_id = $1 AND s.agent_id = c.agent_id
               LEFT JOIN erc8004_reputation r ON r.chain_id = $1 AND r.agent_id = s.agent_id
               LEFT JOIN erc8004_trusted t ON t.chain_id = $1 AND t.agent_id = s.agent_id
               WHERE c.asked IS NULL OR (c.rank = 0 AND s.wallet = c.asked)
                  OR (c.rank = 1 AND s.wallet IS NULL AND s.owner = c.asked)
               ORDER BY coalesce(encode(c.asked, 'hex'), s.agent_id::text), c.rank, s.agent_id"#,
            i64_of(chain_id),
            &ids,
            &addresses,
        )
        .fetch_all(self.pool())
        .await?;
        let mut found = Vec::with_capacity(rows.len());
        for r in rows {
            let Some(&who) = asked.iter().find(|w| w.key() == r.key) else { continue };
            let cells =
                Cells { table: "erc8004_agent_state", key: format!("chain {chain_id} agent {}", r.agent_id) };
            let count = |column, n: i32| cells.int::<u64>(column, n);
            let agent = Erc8004Agent {
                agent_id: cells.u256("agent_id", &r.agent_id)?,
                owner: r.owner.map(|o| cells.address("owner", &o)).transpose()?,
                wallet: r.wallet.map(|w| cells.address("wallet", &w)).transpose()?,
                uri: r.uri.unwrap_or_default(),
                name: r.name,
                description: r.description,
                mcp_endpoint: r.mcp_endpoint,
                skills: r.skills,
                registered_at: r.registered_at,
                reputation: Erc8004Reputation {
                    feedback: count("feedback", r.feedback)?,
                    clients: count("clients", r.clients)?,
                    mean_value: r.mean_value,
                    grounded: count("grounded", r.grounded)?,
                    grounded_clients: count("grounded_clients", r.grounded_clients)?,
                    grounded_weight: r.grounded_weight,
                    grounded_score: r.grounded_score,
                    trusted_clients: count("erc8004_trusted.clients", r.trusted_clients)?,
                    trusted_weight: r.trusted_weight,
                    trusted_score: r.trusted_score,
                },
            };
            found.push((who, agent));
        }
        Ok(found)
    }

    /// Up to `first` (at most [`MAX_PAGE_SIZE`]) of `agent_id`'s ERC-8004 feedback, newest first,
    /// each with its grounding.
    pub async fn erc8004_feedback(
        &self,
        chain_id: u64,
        agent_id: U256,
        first: u32,
    ) -> Result<Vec<Erc8004Feedback>, ReadError> {
        if first > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: first });
        }
        let rows = sqlx::query!(
            r#"SELECT f.client, f.feedback_index, (f.value / 10::numeric ^ f.value_decimals)::text AS "value!",
                      f.tag1, f.tag2, f.feedback_uri, g.revoked AS "revoked!", g.tagged::text AS tagged,
                      coalesce(g.grounding_pacts::text[], '{}') AS "pacts!", g.weight::float8 AS "weight!",
                      f.given_at, f.tx_hash
               FROM erc8004_feedback f
               JOIN erc8004_grounding g USING (chain_id, agent_id, client, feedback_index)
               WHERE f.chain_id = $1 AND f.agent_id = $2::text::numeric
               ORDER BY f.block_number DESC, f.log_index DESC
               LIMIT $3"#,
            i64_of(chain_id),
            agent_id.to_string(),
            i64::from(first),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let cells = Cells {
                    table: "erc8004_feedback",
                    key: format!("chain {chain_id} agent {agent_id} index {}", r.feedback_index),
                };
                Ok(Erc8004Feedback {
                    agent_id,
                    client: cells.address("client", &r.client)?,
                    index: cells.int("feedback_index", r.feedback_index)?,
                    value: trim_decimal(&r.value),
                    tags: [r.tag1, r.tag2],
                    feedback_uri: r.feedback_uri,
                    revoked: r.revoked,
                    tagged_pact: r.tagged.map(|t| cells.u256("tag1", &t)).transpose()?,
                    grounding_pacts: r
                        .pacts
                        .iter()
                        .map(|p| cells.u256("pact_id", p))
                        .collect::<Result<_, _>>()?,
                    weight: r.weight,
                    given_at: r.given_at,
                    tx_hash: cells.hash("tx_hash", &r.tx_hash)?,
                })
            })
            .collect()
    }

    /// Up to `first` (at most [`MAX_PAGE_SIZE`]) agents of either registry offering `capability`
    /// (an AgentPact capability, or a skill its ERC-8004 registration file lists), best trusted
    /// score first ([`RegistryMatch::score`]), then by address. An agent in both is one match.
    pub async fn search_registries(
        &self,
        chain_id: u64,
        capability: &str,
        first: u32,
    ) -> Result<Vec<RegistryMatch>, ReadError> {
        if first > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: first });
        }
        check_capability(capability)?;
        let rows = sqlx::query!(
            r#"WITH ours AS (
                   SELECT a.address, a.name FROM agents a
                   WHERE a.chain_id = $1 AND a.active AND EXISTS (
                       SELECT 1 FROM agent_capabilities c
                       WHERE c.chain_id = a.chain_id AND c.address = a.address AND lower(c.name) = lower($2))
               ),
               theirs AS (
                   SELECT s.agent_id, s.wallet, s.name FROM erc8004_agent_state s
                   WHERE s.chain_id = $1 AND EXISTS (SELECT 1 FROM unnest(s.skills) k WHERE lower(k) = lower($2))
               ),
               both_lists AS (
                   SELECT coalesce(o.address, t.wallet) AS address, t.agent_id, coalesce(o.name, t.name, '') AS name,
                          o.address IS NOT NULL AS in_agentpact
                   FROM ours o FULL JOIN theirs t ON t.wallet = o.address
               )
               SELECT b.address, b.agent_id::text AS agent_id, b.name AS "name!", b.in_agentpact AS "in_agentpact!",
                      -- The indexer keeps a row of raw figures for every agent it marked, feedback
                      -- or not: without feedback, the ERC-8004 side says nothing.
                      (CASE WHEN coalesce(e.feedback, 0) = 0 THEN p.score
                            ELSE coalesce(t.score, reputation_score(0, 0)) END)::float8 AS "score!",
                      (CASE WHEN coalesce(e.feedback, 0) = 0 THEN p.score
                            ELSE e.grounded_score END)::float8 AS "grounded!", p.score::float8 AS "ours!",
                      e.mean_value::float8 AS raw_mean
               FROM both_lists b
               LEFT JOIN erc8004_reputation e ON e.chain_id = $1 AND e.agent_id = b.agent_id
               LEFT JOIN erc8004_trusted t ON t.chain_id = $1 AND t.agent_id = b.agent_id
               CROSS JOIN LATERAL (
                   SELECT coalesce((SELECT r.score FROM reputation_scores r
                                    WHERE r.chain_id = $1 AND r.address = b.address AND r.role = $4),
                                   reputation_score(0, 0)) AS score) p
               ORDER BY 5 DESC, b.address, b.agent_id
               LIMIT $3"#,
            i64_of(chain_id),
            capability.trim(),
            i64::from(first),
            super::reputation::ALL_ROLES,
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let cells =
                    Cells { table: "agents", key: format!("chain {chain_id} registry search {capability}") };
                Ok(RegistryMatch {
                    address: r.address.map(|a| cells.address("address", &a)).transpose()?,
                    agent_id: r.agent_id.map(|id| cells.u256("agent_id", &id)).transpose()?,
                    name: r.name,
                    in_agentpact: r.in_agentpact,
                    score: r.score,
                    grounded_score: r.grounded,
                    agentpact_score: r.ours,
                    raw_mean_value: r.raw_mean,
                })
            })
            .collect()
    }
}

/// A NUMERIC's text without trailing zeros after the point ("95.500" → "95.5", "100.0" → "100").
fn trim_decimal(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}
