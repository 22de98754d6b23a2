//! Per-chain bookkeeping: which contracts are indexed and the last block fully in the journal.
//! The checkpoint is written in the same transaction as the batch it covers.

use alloy::primitives::B256;
use sqlx::PgConnection;

use crate::{decode::Contracts, journal::to_i64};

/// The last block whose events are all journaled and projected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its number.
    pub block_number: u64,
    /// Its hash.
    pub block_hash: B256,
}

/// Records which contracts `chain_id` indexes (once; later calls must name the same contracts).
pub async fn register_chain(
    conn: &mut PgConnection,
    chain_id: u64,
    contracts: Contracts,
    deployment_block: u64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO chains (chain_id, agent_pact, oracle_registry, deployment_block) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain_id) DO NOTHING",
        to_i64(chain_id),
        contracts.agent_pact.as_slice(),
        contracts.oracle_registry.as_slice(),
        to_i64(deployment_block),
    )
    .execute(conn)
    .await
    .map(drop)
}

/// The checkpoint of `chain_id`, if it has one.
pub async fn load(conn: &mut PgConnection, chain_id: u64) -> Result<Option<Checkpoint>, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT block_number, block_hash FROM checkpoints WHERE chain_id = $1",
        to_i64(chain_id)
    )
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|r| Checkpoint {
        block_number: u64::try_from(r.block_number).unwrap_or(0),
        block_hash: B256::try_from(r.block_hash.as_slice()).unwrap_or_default(),
    }))
}

/// Moves the checkpoint of `chain_id` to `checkpoint`.
pub async fn save(conn: &mut PgConnection, chain_id: u64, checkpoint: Checkpoint) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO checkpoints (chain_id, block_number, block_hash) VALUES ($1, $2, $3)
         ON CONFLICT (chain_id) DO UPDATE SET block_number = $2, block_hash = $3, updated_at = now()",
        to_i64(chain_id),
        to_i64(checkpoint.block_number),
        checkpoint.block_hash.as_slice(),
    )
    .execute(conn)
    .await
    .map(drop)
}
