//! Catches the index up with the chain: from the checkpoint (or the deployment block) to the head,
//! one adaptive range at a time, each range a single transaction of journal rows, projections and
//! the new checkpoint — so a crash at any instant loses nothing and duplicates nothing.

use std::collections::HashMap;

use alloy::{
    eips::BlockNumberOrTag, primitives::B256, providers::Provider, rpc::types::Log,
    transports::TransportError,
};
use sqlx::PgPool;

use crate::{
    checkpoint::{self, Checkpoint},
    decode::{Contracts, DecodeError},
    event::JournalEvent,
    fetch::{self, RangeSize},
    journal, project,
};

/// Why indexing stopped.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The RPC failed.
    #[error("RPC: {0}")]
    Rpc(#[from] TransportError),
    /// Postgres failed.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A log could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The RPC did not return a block it should have, or a log without its place.
    #[error("the RPC returned incomplete data: {0}")]
    Incomplete(String),
}

/// What the indexer follows on one chain.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The chain id.
    pub chain_id: u64,
    /// The two contracts.
    pub contracts: Contracts,
    /// The block the contracts were deployed in: nothing before it is read.
    pub deployment_block: u64,
}

/// Indexes one chain into one database.
pub struct Backfill<P> {
    pool: PgPool,
    provider: P,
    target: Target,
    range: RangeSize,
}

impl<P: Provider> Backfill<P> {
    /// An indexer for `target`, reading through `provider` and writing to `pool`.
    pub fn new(pool: PgPool, provider: P, target: Target) -> Self {
        Self { pool, provider, target, range: RangeSize::new(1_000, 50_000) }
    }

    /// Indexes every block up to the current head; returns the new checkpoint.
    pub async fn catch_up(&mut self) -> Result<Checkpoint, IndexError> {
        let head = self.provider.get_block_number().await?;
        self.catch_up_to(head).await
    }

    /// Indexes every block up to `head`; returns the new checkpoint.
    pub async fn catch_up_to(&mut self, head: u64) -> Result<Checkpoint, IndexError> {
        let t = self.target;
        let mut conn = self.pool.acquire().await?;
        checkpoint::register_chain(&mut conn, t.chain_id, t.contracts, t.deployment_block).await?;
        let mut at = checkpoint::load(&mut conn, t.chain_id).await?;
        drop(conn);
        let mut from = at.map_or(t.deployment_block, |c| c.block_number + 1);
        while from <= head {
            let to = self.range.end(from, head);
            let logs = match fetch::logs(&self.provider, t.contracts, from, to).await {
                Ok(logs) => logs,
                Err(e) if fetch::is_result_too_large(&e) && self.range.shrink() => {
                    tracing::debug!(from, to, blocks = self.range.blocks(), "log range too large; shrinking");
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            self.range.succeeded(logs.len());
            let checkpoint = self.commit(from, to, &logs).await?;
            at = Some(checkpoint);
            from = to + 1;
        }
        at.ok_or_else(|| IndexError::Incomplete(format!("head {head} is before the deployment block")))
    }

    /// Journals, projects and checkpoints blocks `from..=to` in one transaction.
    async fn commit(&self, from: u64, to: u64, logs: &[Log]) -> Result<Checkpoint, IndexError> {
        let events = self.journal_events(logs).await?;
        let end = self.block_hash(to).await?;
        let mut tx = self.pool.begin().await?;
        let new = journal::append(&mut tx, &events).await?;
        for event in &new {
            project::apply(&mut tx, event).await?;
        }
        let checkpoint = Checkpoint { block_number: to, block_hash: end };
        checkpoint::save(&mut tx, self.target.chain_id, checkpoint).await?;
        tx.commit().await?;
        tracing::debug!(from, to, events = new.len(), "indexed");
        Ok(checkpoint)
    }

    async fn journal_events(&self, logs: &[Log]) -> Result<Vec<JournalEvent>, IndexError> {
        let mut times: HashMap<u64, u64> = HashMap::new();
        let mut events = Vec::with_capacity(logs.len());
        for log in logs {
            let missing = || IndexError::Incomplete(format!("log without its block or index: {log:?}"));
            let block_number = log.block_number.ok_or_else(missing)?;
            let block_time = match (log.block_timestamp, times.get(&block_number)) {
                (Some(t), _) | (None, Some(&t)) => t,
                (None, None) => {
                    let t = self.block(block_number).await?.header.timestamp;
                    times.insert(block_number, t);
                    t
                }
            };
            events.push(JournalEvent {
                chain_id: self.target.chain_id,
                block_number,
                log_index: log.log_index.ok_or_else(missing)?,
                block_hash: log.block_hash.ok_or_else(missing)?,
                tx_hash: log.transaction_hash.ok_or_else(missing)?,
                block_time,
                contract: log.address(),
                body: self.target.contracts.decode(&log.inner)?,
            });
        }
        Ok(events)
    }

    async fn block(&self, number: u64) -> Result<alloy::rpc::types::Block, IndexError> {
        self.provider
            .get_block_by_number(BlockNumberOrTag::Number(number))
            .await?
            .ok_or_else(|| IndexError::Incomplete(format!("block {number} not found")))
    }

    async fn block_hash(&self, number: u64) -> Result<B256, IndexError> {
        Ok(self.block(number).await?.header.hash)
    }
}
