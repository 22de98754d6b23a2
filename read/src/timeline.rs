//! A pact's history: every journal event that names it, in chain order.

use agentpact_contracts::EventKind;
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, B256, U256};
use chrono::{DateTime, Utc};

use super::{ReadError, Reader};

/// One event of a pact's history.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEvent {
    /// The event (its name as in the contract, e.g. `WorkSubmitted`).
    pub kind: EventKind,
    /// The block that carried it.
    pub block_number: u64,
    /// Its index in the block's logs.
    pub log_index: u32,
    /// The block's hash.
    pub block_hash: B256,
    /// The transaction that emitted it.
    pub tx_hash: B256,
    /// The block's timestamp.
    pub time: DateTime<Utc>,
    /// The contract that emitted it.
    pub contract: Address,
    /// All of the event's fields (camelCase, amounts as decimal strings).
    pub data: serde_json::Value,
}

impl Reader {
    /// Every event of pact `pact_id` on `chain_id`, oldest first (empty for an unknown pact).
    pub async fn timeline(&self, chain_id: u64, pact_id: U256) -> Result<Vec<TimelineEvent>, ReadError> {
        let rows = sqlx::query!(
            r#"SELECT kind, block_number, log_index, block_hash, tx_hash, block_time, contract, data
               FROM events WHERE chain_id = $1 AND pact_id = $2::text::numeric
               ORDER BY block_number, log_index"#,
            i64_of(chain_id),
            pact_id.to_string(),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let key = format!("chain {chain_id} block {} log {}", r.block_number, r.log_index);
                let row = Cells { table: "events", key };
                Ok(TimelineEvent {
                    kind: row.named("kind", &r.kind, EventKind::from_name)?,
                    block_number: row.int("block_number", r.block_number)?,
                    log_index: row.int("log_index", r.log_index)?,
                    block_hash: row.hash("block_hash", &r.block_hash)?,
                    tx_hash: row.hash("tx_hash", &r.tx_hash)?,
                    time: r.block_time,
                    contract: row.address("contract", &r.contract)?,
                    data: r.data,
                })
            })
            .collect()
    }
}
