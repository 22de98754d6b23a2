//! The agent market: profiles from AgentRegistry, searched by capability, price and reputation,
//! and the feedback the parties of finished pacts gave each other.
//!
//! A search ranks by the agent's overall 0-5 reputation score in the global view (the current
//! generation's trusted score, `reputation_scores`, the one `reputation` shows; the prior 3.00
//! without one), then by the price of the capability that matched (cheapest first), then by
//! address; pages are keyset pages over that order, so a cursor stays exact while agents come and go.

use agentpact_schema::{Cells, i64_of};
use alloy::{
    hex,
    primitives::{Address, U256},
};
use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use super::{Currency, MAX_PAGE_SIZE, Page, ReadError, Reader};

/// The longest capability name a search accepts (the registry's own limit).
pub const MAX_CAPABILITY_CHARS: usize = 64;

/// A registered agent and what it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Its wallet: the agent's id.
    pub address: Address,
    /// Display name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Where it can be reached.
    pub endpoint: String,
    /// A URI to more about it (may be empty).
    pub metadata_uri: String,
    /// Listed in searches (it has not stepped out of the market).
    pub active: bool,
    /// When it registered.
    pub registered_at: DateTime<Utc>,
    /// When its profile or activity last changed.
    pub updated_at: DateTime<Utc>,
    /// What it offers, in the profile's order.
    pub capabilities: Vec<Capability>,
}

/// One thing an agent offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    /// Its name, e.g. `logo-design`.
    pub name: String,
    /// What it covers.
    pub description: String,
    /// Price per job, in base units of `currency`.
    pub price: U256,
    /// What the price is in.
    pub currency: Currency,
}

/// Refuses a capability name no profile can hold (empty, or over [`MAX_CAPABILITY_CHARS`]).
pub fn check_capability(name: &str) -> Result<(), ReadError> {
    if name.trim().is_empty() || name.chars().count() > MAX_CAPABILITY_CHARS {
        return Err(ReadError::BadArgument(format!(
            "a capability is a name of 1 to {MAX_CAPABILITY_CHARS} characters, e.g. logo-design"
        )));
    }
    Ok(())
}

/// What to look for.
#[derive(Debug, Clone, Default)]
pub struct AgentSearch {
    /// Offering this capability (name compared without regard to case); any when `None`.
    pub capability: Option<String>,
    /// Priced in this currency (zero: ETH); any currency when `None`, but `max_price` then means
    /// ETH.
    pub currency: Option<Address>,
    /// Charging at most this, in base units of the currency, for it (for the cheapest capability
    /// without `capability`).
    pub max_price: Option<U256>,
    /// With an overall reputation score of at least this (0-5).
    pub min_reputation: Option<f64>,
    /// List agents that stepped out of the market too.
    pub include_inactive: bool,
}

/// An agent found by a search, with what ranked it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentMatch {
    /// The agent.
    pub agent: Agent,
    /// The capability that matched (the cheapest one when the search named none).
    pub capability: Capability,
    /// The agent's overall 0-5 reputation score.
    pub reputation: f64,
}

/// A rating one party of a finished pact gave the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    /// The pact.
    pub pact_id: U256,
    /// Who rated.
    pub rater: Address,
    /// Who was rated.
    pub ratee: Address,
    /// 1-5.
    pub rating: u8,
    /// Short labels.
    pub tags: Vec<String>,
    /// A comment or a URI to one (may be empty).
    pub comment: String,
    /// When it was given.
    pub given_at: DateTime<Utc>,
    /// The block that carried it.
    pub block_number: u64,
}

const CURSOR_PREFIX: &str = "agent1";

/// A position in a search's order: the row's score, price and address.
#[derive(Debug, Clone, PartialEq)]
struct SearchCursor {
    score: String,
    price: U256,
    address: Address,
}

impl SearchCursor {
    fn encode(&self) -> String {
        hex::encode(format!("{CURSOR_PREFIX}:{}:{}:{}", self.score, self.price, self.address))
    }

    fn decode(text: &str) -> Result<Self, ReadError> {
        let not_ours = || {
            ReadError::BadCursor(format!(
                "`{}` is not a cursor of an agent search: pass the `cursor` of an edge or the \
                 `endCursor` of a page, unchanged",
                text.chars().take(40).collect::<String>()
            ))
        };
        let plain = hex::decode(text).ok().and_then(|b| String::from_utf8(b).ok()).ok_or_else(not_ours)?;
        let mut parts = plain.split(':');
        let (Some(CURSOR_PREFIX), Some(score), Some(price), Some(who), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(not_ours());
        };
        // A 0-5 score as the search writes it: digits and one point, nothing the database could
        // read as infinite, NaN or out of its column's range.
        let plain_decimal = score.bytes().all(|b| b.is_ascii_digit() || b == b'.') && score.len() <= 8;
        if !plain_decimal || !score.parse::<f64>().is_ok_and(|s| (0.0..=5.0).contains(&s)) {
            return Err(not_ours());
        }
        Ok(Self {
            score: score.to_owned(),
            price: price.parse().map_err(|_| not_ours())?,
            address: who.parse().map_err(|_| not_ours())?,
        })
    }
}

impl Reader {
    /// The agent at `address` on `chain_id`, if it ever registered (active or not).
    pub async fn agent(&self, chain_id: u64, agent: Address) -> Result<Option<Agent>, ReadError> {
        Ok(self.agents_at(chain_id, &[agent]).await?.pop())
    }

    /// Up to `first` (at most [`MAX_PAGE_SIZE`]) agents matching `search` after the cursor
    /// `after`, best reputation first, then cheapest.
    pub async fn search_agents(
        &self,
        chain_id: u64,
        search: &AgentSearch,
        first: u32,
        after: Option<&str>,
    ) -> Result<Page<AgentMatch>, ReadError> {
        if first > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: first });
        }
        if let Some(cap) = &search.capability {
            check_capability(cap)?;
        }
        if let Some(min) = search.min_reputation
            && !(0.0..=5.0).contains(&min)
        {
            return Err(ReadError::BadArgument(format!("minReputation is a score from 0 to 5; got {min}")));
        }
        let after = after.map(SearchCursor::decode).transpose()?;
        let rows = sqlx::query!(
            r#"SELECT a.address, c.name AS "cap_name!", c.description AS "cap_description!",
                      c.price::text AS "price!", s.score::text AS "score!", c.currency AS "currency!",
                      k.symbol AS "symbol?", k.decimals AS "decimals?"
               FROM agents a
               CROSS JOIN LATERAL (
                   SELECT name, description, price, currency FROM agent_capabilities c
                   WHERE c.chain_id = a.chain_id AND c.address = a.address
                     AND ($2::text IS NULL OR lower(c.name) = lower($2))
                     AND ($10::bytea IS NULL OR c.currency = $10)
                   ORDER BY price, position LIMIT 1) c
               LEFT JOIN currencies k ON k.chain_id = a.chain_id AND k.address = c.currency
               -- The current generation's trusted score over all roles; the prior without one.
               CROSS JOIN LATERAL (
                   SELECT coalesce((SELECT r.score FROM reputation_scores r
                                    WHERE r.chain_id = a.chain_id AND r.address = a.address AND r.role = $11),
                                   reputation_score(0, 0)) AS score) s
               WHERE a.chain_id = $1 AND (a.active OR $3)
                 AND ($4::text IS NULL OR c.price <= $4::numeric)
                 AND ($5::float8 IS NULL OR s.score >= $5::numeric)
                 AND ($6::text IS NULL OR s.score < $6::numeric
                      OR (s.score = $6::numeric AND (c.price > $7::text::numeric
                          OR (c.price = $7::text::numeric AND a.address > $8))))
               ORDER BY s.score DESC, c.price, a.address
               LIMIT $9"#,
            i64_of(chain_id),
            search.capability.as_deref().map(str::trim),
            search.include_inactive,
            search.max_price.map(|p| p.to_string()),
            search.min_reputation,
            after.as_ref().map(|c| c.score.clone()),
            after.as_ref().map(|c| c.price.to_string()),
            after.as_ref().map(|c| c.address.to_vec()),
            i64::from(first) + 1,
            search.currency.or(search.max_price.map(|_| Address::ZERO)).map(|c| c.to_vec()),
            super::reputation::ALL_ROLES,
        )
        .fetch_all(self.pool())
        .await?;
        let has_next_page = rows.len() > first as usize;
        let rows = &rows[..rows.len().min(first as usize)];
        let row_of = |bytes: &[u8]| Cells {
            table: "agents",
            key: format!("chain {chain_id} agent 0x{}", alloy::hex::encode(bytes)),
        };
        let addresses = rows
            .iter()
            .map(|r| row_of(&r.address).address("address", &r.address))
            .collect::<Result<Vec<_>, _>>()?;
        let mut agents = self.agents_at(chain_id, &addresses).await?;
        let mut items = Vec::with_capacity(rows.len());
        for (r, who) in rows.iter().zip(addresses) {
            let Some(at) = agents.iter().position(|a| a.address == who) else { continue };
            let agent = agents.swap_remove(at);
            let row = row_of(&r.address);
            let price = row.u256("agent_capabilities.price", &r.price)?;
            let reputation = row.named("reputation score", &r.score, |s| s.parse::<f64>().ok())?;
            let cursor = SearchCursor { score: r.score.clone(), price, address: who }.encode();
            let currency = super::currencies::currency_of(
                &row,
                "agent_capabilities.currency",
                &r.currency,
                r.symbol.clone(),
                r.decimals,
            )?;
            let capability = Capability {
                name: r.cap_name.clone(),
                description: r.cap_description.clone(),
                price,
                currency,
            };
            items.push((cursor, AgentMatch { agent, capability, reputation }));
        }
        Ok(Page { items, has_next_page, has_previous_page: after.is_some() })
    }

    /// The agents at `addresses` with their capabilities, in no particular order.
    async fn agents_at(&self, chain_id: u64, addresses: &[Address]) -> Result<Vec<Agent>, ReadError> {
        if addresses.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Vec<u8>> = addresses.iter().map(|a| a.to_vec()).collect();
        let rows = sqlx::query!(
            r#"SELECT address, name, description, endpoint, metadata_uri, active, registered_at, updated_at,
                      ARRAY(SELECT c.name FROM agent_capabilities c WHERE c.chain_id = a.chain_id
                            AND c.address = a.address ORDER BY c.position) AS "cap_names!",
                      ARRAY(SELECT c.description FROM agent_capabilities c WHERE c.chain_id = a.chain_id
                            AND c.address = a.address ORDER BY c.position) AS "cap_descriptions!",
                      ARRAY(SELECT c.price::text FROM agent_capabilities c WHERE c.chain_id = a.chain_id
                            AND c.address = a.address ORDER BY c.position) AS "cap_prices!",
                      ARRAY(SELECT c.currency FROM agent_capabilities c WHERE c.chain_id = a.chain_id
                            AND c.address = a.address ORDER BY c.position) AS "cap_currencies!",
                      -- '' and -1 where the escrow never announced the currency: read as corrupt.
                      ARRAY(SELECT coalesce(k.symbol, '') FROM agent_capabilities c LEFT JOIN currencies k
                            ON k.chain_id = c.chain_id AND k.address = c.currency
                            WHERE c.chain_id = a.chain_id AND c.address = a.address ORDER BY c.position)
                            AS "cap_symbols!",
                      ARRAY(SELECT coalesce(k.decimals, -1::smallint) FROM agent_capabilities c LEFT JOIN currencies k
                            ON k.chain_id = c.chain_id AND k.address = c.currency
                            WHERE c.chain_id = a.chain_id AND c.address = a.address ORDER BY c.position)
                            AS "cap_decimals!"
               FROM agents a WHERE chain_id = $1 AND address = ANY($2)"#,
            i64_of(chain_id),
            &keys,
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let row = Cells {
                    table: "agents",
                    key: format!("chain {chain_id} agent 0x{}", alloy::hex::encode(&r.address)),
                };
                let capabilities = r
                    .cap_names
                    .into_iter()
                    .zip(r.cap_descriptions)
                    .zip(r.cap_prices)
                    .zip(r.cap_currencies.iter().zip(r.cap_symbols).zip(r.cap_decimals))
                    .map(|(((name, description), price), ((currency, symbol), decimals))| {
                        let symbol = Some(symbol).filter(|s| !s.is_empty());
                        Ok(Capability {
                            name,
                            description,
                            price: row.u256("agent_capabilities.price", &price)?,
                            currency: super::currencies::currency_of(
                                &row,
                                "agent_capabilities.currency",
                                currency,
                                symbol,
                                Some(decimals),
                            )?,
                        })
                    })
                    .collect::<Result<_, ReadError>>()?;
                Ok(Agent {
                    address: row.address("address", &r.address)?,
                    name: r.name,
                    description: r.description,
                    endpoint: r.endpoint,
                    metadata_uri: r.metadata_uri,
                    active: r.active,
                    registered_at: r.registered_at,
                    updated_at: r.updated_at,
                    capabilities,
                })
            })
            .collect()
    }

    /// Up to `limit` (at most [`MAX_PAGE_SIZE`]) ratings `ratee` received on `chain_id`, newest first.
    pub async fn feedback_received(
        &self,
        chain_id: u64,
        ratee: Address,
        limit: u32,
    ) -> Result<Vec<Feedback>, ReadError> {
        self.feedback_where(chain_id, Some(ratee), None, limit).await
    }

    /// The ratings the parties of pact `pact_id` gave each other (none, one or two).
    pub async fn pact_feedback(&self, chain_id: u64, pact_id: U256) -> Result<Vec<Feedback>, ReadError> {
        self.feedback_where(chain_id, None, Some(pact_id), 2).await
    }

    async fn feedback_where(
        &self,
        chain_id: u64,
        ratee: Option<Address>,
        pact_id: Option<U256>,
        limit: u32,
    ) -> Result<Vec<Feedback>, ReadError> {
        if limit > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: limit });
        }
        let rows = sqlx::query!(
            r#"SELECT pact_id::text AS "pact_id!", rater, ratee, rating, tags, comment, given_at, block_number
               FROM feedback
               WHERE chain_id = $1 AND ($2::bytea IS NULL OR ratee = $2)
                 AND ($3::text IS NULL OR pact_id = $3::numeric)
               ORDER BY block_number DESC, log_index DESC LIMIT $4"#,
            i64_of(chain_id),
            ratee.map(|a| a.to_vec()),
            pact_id.map(|id| id.to_string()),
            i64::from(limit),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let key =
                    format!("chain {chain_id} pact {} rater 0x{}", r.pact_id, alloy::hex::encode(&r.rater));
                let row = Cells { table: "feedback", key };
                Ok(Feedback {
                    pact_id: row.u256("pact_id", &r.pact_id)?,
                    rater: row.address("rater", &r.rater)?,
                    ratee: row.address("ratee", &r.ratee)?,
                    rating: row.int("rating", r.rating)?,
                    tags: r.tags,
                    comment: r.comment,
                    given_at: r.given_at,
                    block_number: row.int("block_number", r.block_number)?,
                })
            })
            .collect()
    }
}

/// Whether `agent` is a registered agent in AgentRegistry on `chain_id` (as indexed) that is in
/// the market (active): someone the relay lets a conversation be opened with. On `db`, so the
/// relay asks inside its own transaction.
pub async fn listed<'e>(db: impl PgExecutor<'e>, chain_id: u64, agent: Address) -> Result<bool, ReadError> {
    let listed = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM agents WHERE chain_id = $1 AND address = $2 AND active) AS "listed!""#,
        i64_of(chain_id),
        agent.as_slice()
    )
    .fetch_one(db)
    .await?;
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_foreign_ones_are_refused() {
        let c =
            SearchCursor { score: "4.25".into(), price: U256::from(5u8), address: Address::repeat_byte(7) };
        assert_eq!(SearchCursor::decode(&c.encode()).ok(), Some(c));
        for bad in ["", "zz", &hex::encode("pact1:created::1"), &hex::encode("agent1:x:1:0x00")] {
            assert!(matches!(SearchCursor::decode(bad), Err(ReadError::BadCursor(_))), "{bad}");
        }
    }
}
