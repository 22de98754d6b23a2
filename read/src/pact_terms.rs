//! A pact's terms as the index holds them, for the relay to hold a negotiated agreement against:
//! who made it for whom, under which spec hash, at what payment and deadline. The relay reads them
//! inside its own transaction, so these take any executor (its connection), not a [`Reader`].
//!
//! [`Reader`]: crate::Reader

use agentpact_contracts::Initiator;
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, B256, U256};
use sqlx::PgExecutor;

use super::ReadError;

/// What the index says of a pact, as far as a negotiated one must match its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PactTerms {
    /// Who created it.
    pub creator: Address,
    /// Whether the buyer or the seller created it.
    pub initiator: Initiator,
    /// The only account that may accept it, if any.
    pub counterparty: Option<Address>,
    /// Its spec hash.
    pub spec_hash: B256,
    /// Its currency (the zero address for ETH).
    pub currency: Address,
    /// Its payment, in base units of its currency.
    pub payment: U256,
    /// Its deadline, in seconds since the epoch.
    pub deadline: i64,
    /// Its stages in order, each its amount (base units) and deadline (seconds since the epoch);
    /// empty for a pact of one stage, whose row is its stage.
    pub stages: Vec<(U256, i64)>,
}

/// The ids of the pacts `creator` made on `chain_id` with spec hash `spec_hash`, as indexed,
/// oldest first.
pub async fn pacts_with_spec<'e>(
    db: impl PgExecutor<'e>,
    chain_id: u64,
    creator: Address,
    spec_hash: B256,
) -> Result<Vec<U256>, ReadError> {
    let ids = sqlx::query_scalar!(
        r#"SELECT pact_id::text AS "pact_id!" FROM pacts
           WHERE chain_id = $1 AND spec_hash = $2 AND creator = $3 ORDER BY pact_id"#,
        i64_of(chain_id),
        spec_hash.as_slice(),
        creator.as_slice()
    )
    .fetch_all(db)
    .await?;
    let cells = Cells { table: "pacts", key: format!("chain {chain_id} spec {spec_hash}") };
    ids.iter().map(|id| Ok(cells.u256("pact_id", id)?)).collect()
}

/// The terms of pact `pact_id` on `chain_id` as indexed; `None` when the index does not hold it
/// (yet).
pub async fn pact_terms<'e>(
    db: impl PgExecutor<'e>,
    chain_id: u64,
    pact_id: U256,
) -> Result<Option<PactTerms>, ReadError> {
    let row = sqlx::query!(
        r#"SELECT creator, initiator, counterparty, spec_hash, currency, payment::text AS "payment!",
                  extract(epoch FROM deadline)::bigint AS "deadline!",
                  ARRAY(SELECT s.amount::text FROM pact_stages s
                        WHERE s.chain_id = p.chain_id AND s.pact_id = p.pact_id ORDER BY s.stage) AS "stage_amounts!",
                  ARRAY(SELECT extract(epoch FROM s.deadline)::bigint FROM pact_stages s
                        WHERE s.chain_id = p.chain_id AND s.pact_id = p.pact_id ORDER BY s.stage) AS "stage_deadlines!"
           FROM pacts p WHERE chain_id = $1 AND pact_id = $2::text::numeric"#,
        i64_of(chain_id),
        pact_id.to_string()
    )
    .fetch_optional(db)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let cells = Cells { table: "pacts", key: format!("chain {chain_id} pact {pact_id}") };
    let staged = Cells { table: "pact_stages", key: format!("chain {chain_id} pact {pact_id}") };
    let stages = r
        .stage_amounts
        .iter()
        .zip(&r.stage_deadlines)
        .map(|(amount, deadline)| Ok((staged.u256("amount", amount)?, *deadline)))
        .collect::<Result<Vec<_>, ReadError>>()?;
    Ok(Some(PactTerms {
        creator: cells.address("creator", &r.creator)?,
        initiator: cells.code("initiator", r.initiator)?,
        counterparty: r.counterparty.as_deref().map(|c| cells.address("counterparty", c)).transpose()?,
        spec_hash: cells.hash("spec_hash", &r.spec_hash)?,
        currency: cells.address("currency", &r.currency)?,
        payment: cells.u256("payment", &r.payment)?,
        deadline: r.deadline,
        stages,
    }))
}
