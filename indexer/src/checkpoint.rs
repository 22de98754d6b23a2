//! Per-chain bookkeeping: which chain and contracts are indexed, the last block fully in the
//! journal (written in the same transaction as the batch it covers), and the recent block hashes
//! that reveal a reorganisation. Every value read back goes through `Cells`: a hash, address or
//! number that does not convert stops the indexer naming table, key and column (a zeroed hash
//! read as a default would roll back a chain that never reorganised).

use agentpact_contracts::Erc8004;
use alloy::primitives::{Address, B256};
use sqlx::PgConnection;

use agentpact_schema::{Cells, i64_of};

use crate::IndexError;

/// The last block whose events are all journaled and projected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its number.
    pub block_number: u64,
    /// Its hash.
    pub block_hash: B256,
}

/// What makes a chain the one an index was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainIdentity {
    /// The hash of block 0.
    pub genesis_hash: B256,
    /// AgentPact.
    pub agent_pact: Address,
    /// OracleRegistry.
    pub oracle_registry: Address,
    /// AgentRegistry (zero for an index built before it existed).
    pub agent_registry: Address,
    /// The first block read.
    pub deployment_block: u64,
    /// The ERC-8004 registries followed (none: not followed).
    pub erc8004: Option<Erc8004>,
    /// The first block of the registries' logs read: `deployment_block`, or an earlier one
    /// (`Indexer::with_erc8004_start`).
    pub erc8004_start_block: u64,
}

/// Records what `chain_id` indexes, the first time; returns what the database holds, which differs
/// from `identity` when the database was built from another chain or other contracts.
pub async fn register_chain(
    conn: &mut PgConnection,
    chain_id: u64,
    identity: ChainIdentity,
) -> Result<ChainIdentity, IndexError> {
    sqlx::query!(
        "INSERT INTO chains (chain_id, genesis_hash, agent_pact, oracle_registry, agent_registry, deployment_block,
                             erc8004_identity, erc8004_reputation, erc8004_start_block)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (chain_id) DO NOTHING",
        i64_of(chain_id),
        identity.genesis_hash.as_slice(),
        identity.agent_pact.as_slice(),
        identity.oracle_registry.as_slice(),
        identity.agent_registry.as_slice(),
        i64_of(identity.deployment_block),
        identity.erc8004.map(|r| r.identity.to_vec()),
        identity.erc8004.map(|r| r.reputation.to_vec()),
        i64_of(identity.erc8004_start_block),
    )
    .execute(&mut *conn)
    .await?;
    let row = sqlx::query!(
        "SELECT genesis_hash, agent_pact, oracle_registry, agent_registry, deployment_block, erc8004_identity,
                erc8004_reputation, erc8004_start_block
         FROM chains WHERE chain_id = $1",
        i64_of(chain_id)
    )
    .fetch_one(conn)
    .await?;
    let cells = Cells { table: "chains", key: format!("chain {chain_id}") };
    Ok(ChainIdentity {
        genesis_hash: cells.hash("genesis_hash", &row.genesis_hash)?,
        agent_pact: cells.address("agent_pact", &row.agent_pact)?,
        oracle_registry: cells.address("oracle_registry", &row.oracle_registry)?,
        // NULL in an index built before AgentRegistry existed: zero, as the identity says.
        agent_registry: row
            .agent_registry
            .map(|a| cells.address("agent_registry", &a))
            .transpose()?
            .unwrap_or_default(),
        deployment_block: cells.int("deployment_block", row.deployment_block)?,
        erc8004_start_block: cells.int("erc8004_start_block", row.erc8004_start_block)?,
        // Both or neither: one without the other reads as corrupt.
        erc8004: match row.erc8004_identity {
            Some(identity) => Some(Erc8004 {
                identity: cells.address("erc8004_identity", &identity)?,
                reputation: cells.address(
                    "erc8004_reputation",
                    &cells.present("erc8004_reputation", row.erc8004_reputation)?,
                )?,
            }),
            None => {
                if row.erc8004_reputation.is_some() {
                    cells.present("erc8004_identity", None::<()>)?;
                }
                None
            }
        },
    })
}

/// The checkpoint of `chain_id`, if it has one.
pub async fn load(conn: &mut PgConnection, chain_id: u64) -> Result<Option<Checkpoint>, IndexError> {
    let row = sqlx::query!(
        "SELECT block_number, block_hash FROM checkpoints WHERE chain_id = $1",
        i64_of(chain_id)
    )
    .fetch_optional(conn)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let cells = Cells { table: "checkpoints", key: format!("chain {chain_id}") };
    Ok(Some(Checkpoint {
        block_number: cells.int("block_number", r.block_number)?,
        block_hash: cells.hash("block_hash", &r.block_hash)?,
    }))
}

/// The chain's head as the indexer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Its number.
    pub number: u64,
    /// Its timestamp (Unix seconds).
    pub time: u64,
}

/// Moves the checkpoint of `chain_id` to `checkpoint`, whose block was mined at `block_time`
/// (Unix seconds) and whose parent is `parent` when known (else the remembered block's: a rollback
/// to a fork point), and records `head` when given (else keeps the last one). A batch written is a
/// pass that works: any failure recorded (`_meta.hasIndexingErrors`) is cleared with it.
pub async fn save(
    conn: &mut PgConnection,
    chain_id: u64,
    checkpoint: Checkpoint,
    block_time: Option<u64>,
    parent: Option<B256>,
    head: Option<Head>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO checkpoints (chain_id, block_number, block_hash, block_time, head_block, head_time, head_seen_at,
                                  block_parent_hash)
         VALUES ($1, $2, $3, to_timestamp($4::bigint), $5, to_timestamp($6::bigint),
                 CASE WHEN $5::bigint IS NULL THEN NULL ELSE now() END,
                 coalesce($7, (SELECT b.parent_hash FROM blocks b WHERE b.chain_id = $1 AND b.number = $2)))
         ON CONFLICT (chain_id) DO UPDATE
         SET block_number = $2, block_hash = $3, block_time = to_timestamp($4::bigint), updated_at = now(),
             head_block = coalesce($5, checkpoints.head_block),
             head_time = coalesce(to_timestamp($6::bigint), checkpoints.head_time),
             head_seen_at = CASE WHEN $5::bigint IS NULL THEN checkpoints.head_seen_at ELSE now() END,
             block_parent_hash = excluded.block_parent_hash, failing_since = NULL, failure = NULL",
        i64_of(chain_id),
        i64_of(checkpoint.block_number),
        checkpoint.block_hash.as_slice(),
        block_time.map(i64_of),
        head.map(|h| i64_of(h.number)),
        head.map(|h| i64_of(h.time)),
        parent.as_ref().map(B256::as_slice)
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Records that a pass failed with an error of `kind` (`IndexError::kind`, never its message),
/// keeping when the failing began; readers see it as `_meta.hasIndexingErrors`. Does nothing
/// before the first checkpoint.
pub async fn record_failure(pool: &sqlx::PgPool, chain_id: u64, kind: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE checkpoints SET failing_since = coalesce(failing_since, now()), failure = $2 WHERE chain_id = $1",
        i64_of(chain_id),
        kind
    )
    .execute(pool)
    .await
    .map(drop)
}

/// Records that a pass completed: the failing, if any, is over.
pub async fn record_recovery(conn: &mut PgConnection, chain_id: u64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE checkpoints SET failing_since = NULL, failure = NULL WHERE chain_id = $1",
        i64_of(chain_id)
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Records the chain's head as the indexer saw it just now, so readers know the lag and that the
/// indexer is alive. Does nothing before the first checkpoint (the first batch records it).
pub async fn record_head(conn: &mut PgConnection, chain_id: u64, head: Head) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE checkpoints SET head_block = $2, head_time = to_timestamp($3::bigint), head_seen_at = now()
         WHERE chain_id = $1",
        i64_of(chain_id),
        i64_of(head.number),
        i64_of(head.time),
    )
    .execute(conn)
    .await
    .map(drop)
}

/// One block's place in the chain, kept while it could still be reorganised away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRef {
    /// Its number.
    pub number: u64,
    /// Its hash.
    pub hash: B256,
    /// Its parent's hash.
    pub parent_hash: B256,
    /// When it was mined (Unix seconds).
    pub timestamp: u64,
}

/// Forgets the remembered blocks above `above` (a rollback to it).
pub async fn forget_above(conn: &mut PgConnection, chain_id: u64, above: u64) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM blocks WHERE chain_id = $1 AND number > $2", i64_of(chain_id), i64_of(above))
        .execute(conn)
        .await?;
    Ok(())
}

/// Remembers `blocks` and forgets those at or below `final_below` (no reorg reaches them).
pub async fn record_blocks(
    conn: &mut PgConnection,
    chain_id: u64,
    blocks: &[BlockRef],
    final_below: u64,
) -> Result<(), sqlx::Error> {
    let numbers: Vec<i64> = blocks.iter().map(|b| i64_of(b.number)).collect();
    let hashes: Vec<Vec<u8>> = blocks.iter().map(|b| b.hash.to_vec()).collect();
    let parents: Vec<Vec<u8>> = blocks.iter().map(|b| b.parent_hash.to_vec()).collect();
    sqlx::query!(
        "INSERT INTO blocks (chain_id, number, hash, parent_hash)
         SELECT $1, n, h, p FROM UNNEST($2::bigint[], $3::bytea[], $4::bytea[]) AS u(n, h, p)
         ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash",
        i64_of(chain_id),
        &numbers,
        &hashes,
        &parents,
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "DELETE FROM blocks WHERE chain_id = $1 AND number < $2",
        i64_of(chain_id),
        i64_of(final_below)
    )
    .execute(conn)
    .await
    .map(drop)
}

/// The recorded hashes of `chain_id` from `from` down, newest first.
pub async fn recent_blocks(
    conn: &mut PgConnection,
    chain_id: u64,
    from: u64,
) -> Result<Vec<(u64, B256)>, IndexError> {
    let rows = sqlx::query!(
        "SELECT number, hash FROM blocks WHERE chain_id = $1 AND number <= $2 ORDER BY number DESC",
        i64_of(chain_id),
        i64_of(from)
    )
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|r| {
            let cells = Cells { table: "blocks", key: format!("chain {chain_id} block {}", r.number) };
            Ok((cells.int("number", r.number)?, cells.hash("hash", &r.hash)?))
        })
        .collect()
}
