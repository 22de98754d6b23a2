//! Reorganisations: noticing that the indexed blocks are no longer the chain's, finding the fork
//! point among the recent blocks, and rolling the index back to it. Rolling back deletes the
//! journal above the fork and rebuilds the projections of every entity those events touched from
//! the journal that remains.

use agentpact_schema::i64_of;
use alloy::primitives::{B256, U256};
use sqlx::{PgConnection, Row};

use crate::{
    checkpoint::{self, Checkpoint},
    event::{EventBody, JournalEvent},
    project,
};

/// How the indexed chain relates to the RPC's chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuity {
    /// The checkpoint is still on the chain: carry on after it.
    Intact,
    /// The RPC's head is below the checkpoint but agrees with what was indexed up to there: a
    /// lagging node, not a reorg. Wait for it.
    Lagging {
        /// The RPC's head.
        head: u64,
    },
    /// The chain left the indexed blocks after block `fork`, which both share.
    Forked {
        /// The last block both chains share.
        fork: Checkpoint,
    },
    /// The chain left the indexed blocks below every block still remembered: deeper than the
    /// finality depth. The index cannot repair this by itself.
    TooDeep {
        /// The lowest block that was compared.
        lowest_checked: u64,
    },
}

/// Compares the checkpoint and the recent blocks with the RPC's chain. `hash_at` returns the
/// chain's hash of a block, or `None` when the chain has no such block (yet).
pub async fn check<F, Fut, E>(
    conn: &mut PgConnection,
    chain_id: u64,
    checkpoint: Checkpoint,
    head: u64,
    hash_at: F,
) -> Result<Continuity, E>
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = Result<Option<B256>, E>>,
    E: From<sqlx::Error>,
{
    if head >= checkpoint.block_number
        && hash_at(checkpoint.block_number).await? == Some(checkpoint.block_hash)
    {
        return Ok(Continuity::Intact);
    }
    let recent = checkpoint::recent_blocks(conn, chain_id, checkpoint.block_number).await?;
    let mut lowest_checked = None;
    for (number, stored) in recent {
        if number > head {
            continue; // the RPC does not have it (yet): neither a match nor a mismatch
        }
        lowest_checked = Some(number);
        if hash_at(number).await? == Some(stored) {
            return Ok(if number == head && head < checkpoint.block_number {
                Continuity::Lagging { head }
            } else {
                Continuity::Forked { fork: Checkpoint { block_number: number, block_hash: stored } }
            });
        }
    }
    Ok(match lowest_checked {
        Some(lowest_checked) => Continuity::TooDeep { lowest_checked },
        // Nothing remembered is as low as the RPC's head: it lags further than the recent blocks
        // reach, which says nothing about a reorg. Wait for it.
        None if head < checkpoint.block_number => Continuity::Lagging { head },
        None => Continuity::TooDeep { lowest_checked: checkpoint.block_number },
    })
}

/// What a rollback removed and rebuilt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rollback {
    /// Journal events deleted (they were on the abandoned branch).
    pub orphaned_events: u64,
    /// Pacts whose projections were rebuilt (or removed, when created on the abandoned branch).
    pub pacts: Vec<U256>,
    /// Oracles and agents whose projections were rebuilt.
    pub accounts_rebuilt: u64,
}

/// Rolls `chain_id` back to `fork` inside the caller's transaction: deletes everything above it and
/// rebuilds the touched pacts (with their feedback), oracles and agents from the remaining journal.
pub async fn rollback(
    conn: &mut PgConnection,
    chain_id: u64,
    fork: Checkpoint,
) -> Result<Rollback, sqlx::Error> {
    let (chain, above) = (i64_of(chain_id), i64_of(fork.block_number));
    let pacts: Vec<String> = sqlx::query_scalar!(
        r#"SELECT DISTINCT pact_id::text AS "pact_id!" FROM events
           WHERE chain_id = $1 AND block_number > $2 AND pact_id IS NOT NULL"#,
        chain,
        above
    )
    .fetch_all(&mut *conn)
    .await?;
    // The oracles and agents whose registry events were orphaned.
    let accounts: Vec<Vec<u8>> = sqlx::query_scalar!(
        r#"SELECT DISTINCT account AS "account!" FROM events
           WHERE chain_id = $1 AND block_number > $2 AND account IS NOT NULL AND kind <> 'Withdrawn'"#,
        chain,
        above
    )
    .fetch_all(&mut *conn)
    .await?;
    let orphaned = sqlx::query!("DELETE FROM events WHERE chain_id = $1 AND block_number > $2", chain, above)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    sqlx::query!("DELETE FROM blocks WHERE chain_id = $1 AND number > $2", chain, above)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM payouts WHERE chain_id = $1 AND block_number > $2", chain, above)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM withdrawals WHERE chain_id = $1 AND block_number > $2", chain, above)
        .execute(&mut *conn)
        .await?;
    sqlx::query!(
        "DELETE FROM pacts WHERE chain_id = $1 AND pact_id = ANY($2::text[]::numeric[])",
        chain,
        &pacts
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("DELETE FROM oracles WHERE chain_id = $1 AND address = ANY($2)", chain, &accounts)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM agents WHERE chain_id = $1 AND address = ANY($2)", chain, &accounts)
        .execute(&mut *conn)
        .await?;

    // Replay what remains of the touched entities' history. Payouts and withdrawals at or below
    // the fork were not deleted, so they are not replayed.
    let rows = sqlx::query(
        "SELECT block_number, log_index, block_hash, tx_hash, extract(epoch FROM block_time)::bigint AS t,
                contract, data::text AS data
         FROM events
         WHERE chain_id = $1
           AND ((pact_id = ANY($2::text[]::numeric[]) AND kind <> 'Payout') OR (account = ANY($3) AND kind <> 'Withdrawn'))
         ORDER BY block_number, log_index",
    )
    .bind(chain)
    .bind(&pacts)
    .bind(&accounts)
    .fetch_all(&mut *conn)
    .await?;
    let events = rows.iter().map(|row| journal_event(chain_id, row)).collect::<Result<Vec<_>, _>>()?;
    project::apply_batch(conn, &events).await?;
    checkpoint::save(conn, chain_id, fork, None, None).await?;
    Ok(Rollback {
        orphaned_events: orphaned,
        pacts: pacts.iter().filter_map(|id| id.parse().ok()).collect(),
        accounts_rebuilt: accounts.len() as u64,
    })
}

/// A journal row back into the event it recorded.
fn journal_event(chain_id: u64, row: &sqlx::postgres::PgRow) -> Result<JournalEvent, sqlx::Error> {
    let data: String = row.try_get("data")?;
    let body: EventBody = serde_json::from_str(&data).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let bytes = |col: &str| -> Result<Vec<u8>, sqlx::Error> { row.try_get::<Vec<u8>, _>(col) };
    Ok(JournalEvent {
        chain_id,
        block_number: u64::try_from(row.try_get::<i64, _>("block_number")?).unwrap_or(0),
        log_index: u64::try_from(row.try_get::<i32, _>("log_index")?).unwrap_or(0),
        block_hash: B256::try_from(bytes("block_hash")?.as_slice()).unwrap_or_default(),
        tx_hash: B256::try_from(bytes("tx_hash")?.as_slice()).unwrap_or_default(),
        block_time: u64::try_from(row.try_get::<i64, _>("t")?).unwrap_or(0),
        contract: alloy::primitives::Address::try_from(bytes("contract")?.as_slice()).unwrap_or_default(),
        body,
    })
}
