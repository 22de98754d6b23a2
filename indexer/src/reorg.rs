//! Reorganisations: noticing that the indexed blocks are no longer the chain's, finding the fork
//! point among the recent blocks, and rolling the index back to it. Rolling back deletes the
//! journal above the fork and rebuilds the projections of every entity those events touched from
//! the journal that remains.

use alloy::primitives::{B256, U256};
use sqlx::PgConnection;

use crate::{
    IndexError,
    checkpoint::{self, Checkpoint},
    journal, project,
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

/// Rolls `chain_id` back to `fork` inside the caller's transaction: deletes the journal and every
/// projection above it, and rebuilds the touched pacts (with their feedback), oracles and agents
/// from the journal that remains.
pub async fn rollback(
    conn: &mut PgConnection,
    chain_id: u64,
    fork: Checkpoint,
) -> Result<Rollback, IndexError> {
    let above = fork.block_number;
    let (pacts, accounts) = journal::touched_above(conn, chain_id, above).await?;
    let orphaned = journal::truncate_above(conn, chain_id, above).await?;
    checkpoint::forget_above(conn, chain_id, above).await?;
    project::rollback(conn, chain_id, above, &pacts, &accounts).await?;
    let history = journal::history(conn, chain_id, &pacts, &accounts).await?;
    project::apply_batch(conn, &history.iter().collect::<Vec<_>>()).await?;
    checkpoint::save(conn, chain_id, fork, None, None).await?;
    Ok(Rollback {
        orphaned_events: orphaned,
        pacts: pacts.iter().filter_map(|id| id.parse().ok()).collect(),
        accounts_rebuilt: accounts.len() as u64,
    })
}
