//! Market-wide figures and how far the index is behind the chain.

use agentpact_contracts::PactStatus;
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{B256, U256};
use chrono::{DateTime, Utc};

use super::{Currency, ReadError, Reader};

/// Pacts of one status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusCount {
    /// The status.
    pub status: PactStatus,
    /// How many pacts are in it.
    pub count: u64,
}

/// The market at a glance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// All pacts.
    pub pacts: u64,
    /// Pacts per status, every status listed (zero included), in code order.
    pub by_status: Vec<StatusCount>,
    /// Payment of completed pacts and of pacts not yet finished, per currency of the deployment
    /// (each listed, zero included; never a sum across currencies), ETH first.
    pub volumes: Vec<CurrencyVolume>,
    /// Oracles registered and active.
    pub active_oracles: u64,
}

/// The payment volumes of the pacts paid in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrencyVolume {
    /// The currency.
    pub currency: Currency,
    /// Payment of completed pacts, in its base units.
    pub completed: U256,
    /// Payment held by pacts not yet finished, in its base units.
    pub open: U256,
}

/// Where the indexer stands on a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexerStatus {
    /// The chain.
    pub chain_id: u64,
    /// The last block fully indexed.
    pub indexed_block: u64,
    /// Its timestamp, when known.
    pub indexed_block_time: Option<DateTime<Utc>>,
    /// The chain's head when the indexer last looked.
    pub head_block: Option<u64>,
    /// The head's timestamp.
    pub head_block_time: Option<DateTime<Utc>>,
    /// When the indexer last looked at the head (a stale value means it is not running).
    pub head_seen_at: Option<DateTime<Utc>>,
}

impl IndexerStatus {
    /// Blocks between the index and the head (0 when the head is unknown or behind).
    pub fn lag_blocks(&self) -> u64 {
        self.head_block.map_or(0, |head| head.saturating_sub(self.indexed_block))
    }

    /// Chain seconds between the indexed block and the head.
    pub fn lag_seconds(&self) -> u64 {
        match (self.head_block_time, self.indexed_block_time) {
            (Some(head), Some(indexed)) => u64::try_from((head - indexed).num_seconds()).unwrap_or(0),
            _ => 0,
        }
    }

    /// Seconds since the indexer last reported, as of `now`.
    pub fn silent_for(&self, now: DateTime<Utc>) -> Option<u64> {
        self.head_seen_at.map(|seen| u64::try_from((now - seen).num_seconds()).unwrap_or(0))
    }
}

/// The indexed block and the indexer's health, as graph-node's `_meta` tells them: a client that
/// remembers `hash` and later sees a `parent_hash` (or a hash at the same number) it did not expect
/// knows a reorganisation happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The last block fully indexed.
    pub number: u64,
    /// Its hash.
    pub hash: B256,
    /// Its parent's hash, when the indexer recorded it (an index built before it did, or a
    /// rollback to a block no longer remembered, has none).
    pub parent_hash: Option<B256>,
    /// When it was mined, when known.
    pub timestamp: Option<DateTime<Utc>>,
    /// Since when the indexer's passes fail, while they do (`checkpoints.failure` names the
    /// error's kind, for the operator).
    pub failing_since: Option<DateTime<Utc>>,
}

impl Reader {
    /// The indexed block of `chain_id` and whether indexing fails, or `None` before its first batch.
    pub async fn meta(&self, chain_id: u64) -> Result<Option<Meta>, ReadError> {
        let row = sqlx::query!(
            "SELECT block_number, block_hash, block_parent_hash, block_time, failing_since
             FROM checkpoints WHERE chain_id = $1",
            i64_of(chain_id)
        )
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let cells = Cells { table: "checkpoints", key: format!("chain {chain_id}") };
        Ok(Some(Meta {
            number: cells.int("block_number", row.block_number)?,
            hash: cells.hash("block_hash", &row.block_hash)?,
            parent_hash: row.block_parent_hash.map(|p| cells.hash("block_parent_hash", &p)).transpose()?,
            timestamp: row.block_time,
            failing_since: row.failing_since,
        }))
    }

    /// Counts and volumes of `chain_id`.
    pub async fn stats(&self, chain_id: u64) -> Result<Stats, ReadError> {
        let chain = i64_of(chain_id);
        // The flat counts per currency (migrations/0010): one row per currency and status.
        let rows = sqlx::query!(
            r#"SELECT status, subject AS currency, pacts AS count, payment::text AS "volume!"
               FROM pact_counts WHERE chain_id = $1 AND dimension = 'currency' AND pacts <> 0"#,
            chain
        )
        .fetch_all(self.pool())
        .await?;
        let volumes = self
            .currencies(chain_id)
            .await?
            .into_iter()
            .map(|currency| CurrencyVolume { currency, completed: U256::ZERO, open: U256::ZERO })
            .collect();
        let active_oracles = sqlx::query_scalar!(
            r#"SELECT count(*) AS "n!" FROM oracles WHERE chain_id = $1 AND status = 'active'"#,
            chain
        )
        .fetch_one(self.pool())
        .await?;
        let mut stats = Stats {
            pacts: 0,
            by_status: PactStatus::ALL.iter().map(|&status| StatusCount { status, count: 0 }).collect(),
            volumes,
            active_oracles: Cells { table: "oracles", key: format!("chain {chain_id}") }
                .int("count", active_oracles)?,
        };
        for row in rows {
            let cells =
                Cells { table: "pact_counts", key: format!("chain {chain_id}, status {}", row.status) };
            let status: PactStatus = cells.code("status", row.status)?;
            let Some(entry) = stats.by_status.iter_mut().find(|s| s.status == status) else { continue };
            let count: u64 = cells.int("count", row.count)?;
            entry.count += count;
            stats.pacts += count;
            let volume = cells.u256("payment", &row.volume)?;
            let currency = cells.address("currency", &row.currency)?;
            // A currency the escrow never announced is a corrupt row, not a volume to drop.
            let v = cells
                .present("currency", stats.volumes.iter_mut().find(|v| v.currency.address == currency))?;
            match status {
                PactStatus::Completed => v.completed += volume,
                PactStatus::Refunded => {}
                _ => v.open += volume,
            }
        }
        Ok(stats)
    }

    /// Waits, up to `limit` and polling every `poll`, until the index of `chain_id` holds `block`:
    /// what a writer does before it reads what it just wrote. `Ok(false)` when `limit` passed first;
    /// a read that fails while waiting is retried until then, and the last failure is returned.
    pub async fn wait_until_indexed(
        &self,
        chain_id: u64,
        block: u64,
        limit: std::time::Duration,
        poll: std::time::Duration,
    ) -> Result<bool, ReadError> {
        let until = tokio::time::Instant::now() + limit;
        loop {
            let read = self.indexer_status(chain_id).await;
            match &read {
                Ok(Some(status)) if status.indexed_block >= block => return Ok(true),
                _ if tokio::time::Instant::now() < until => tokio::time::sleep(poll).await,
                Ok(_) => return Ok(false),
                Err(_) => return read.map(|_| false),
            }
        }
    }

    /// Where the indexer of `chain_id` stands, or `None` before its first batch.
    pub async fn indexer_status(&self, chain_id: u64) -> Result<Option<IndexerStatus>, ReadError> {
        let row = sqlx::query!(
            "SELECT block_number, block_time, head_block, head_time, head_seen_at FROM checkpoints WHERE chain_id = $1",
            i64_of(chain_id)
        )
        .fetch_optional(self.pool())
        .await?;
        let Some(r) = row else { return Ok(None) };
        let cells = Cells { table: "checkpoints", key: format!("chain {chain_id}") };
        Ok(Some(IndexerStatus {
            chain_id,
            indexed_block: cells.int("block_number", r.block_number)?,
            indexed_block_time: r.block_time,
            head_block: r.head_block.map(|b| cells.int("head_block", b)).transpose()?,
            head_block_time: r.head_time,
            head_seen_at: r.head_seen_at,
        }))
    }
}
