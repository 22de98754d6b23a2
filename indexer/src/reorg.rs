//! Reorganisations: noticing that the indexed blocks are no longer the chain's, finding the fork
//! point among the recent blocks ([`continuity`], a pure decision over what it is given), and
//! rolling the index back to it ([`rollback`], the whole unit in one transaction). Rolling back
//! deletes the journal above the fork and rebuilds the projections of every entity those events
//! touched from the journal that remains.

use agentpact_schema::Cells;
use alloy::primitives::{B256, U256};
use sqlx::{Connection, PgConnection};

use crate::{
    IndexError,
    checkpoint::{self, Checkpoint},
    journal, notify, project, reputation,
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

/// Compares the checkpoint and the `recent` blocks the index remembers (newest first) with the
/// RPC's chain. `hash_at` returns the chain's hash of a block, or `None` when the chain has no
/// such block (yet). No database here: what is compared is passed in, so the decision is tested
/// on its own (see the tests below).
pub async fn continuity<F, Fut, E>(
    checkpoint: Checkpoint,
    recent: &[(u64, B256)],
    head: u64,
    hash_at: F,
) -> Result<Continuity, E>
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = Result<Option<B256>, E>>,
{
    if head >= checkpoint.block_number
        && hash_at(checkpoint.block_number).await? == Some(checkpoint.block_hash)
    {
        return Ok(Continuity::Intact);
    }
    let mut lowest_checked = None;
    for &(number, stored) in recent {
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

/// Rolls `chain_id` back to `fork` in one transaction of its own: deletes the journal, the
/// remembered blocks and every projection above it (`project::TABLES` says how, table by table),
/// rebuilds the touched pacts, oracles and agents from the journal that remains, recomputes every
/// reputation, announces the rebuilt pacts and moves the checkpoint to `fork`. Readers see the
/// index before or after, never between.
pub async fn rollback(
    conn: &mut PgConnection,
    chain_id: u64,
    fork: Checkpoint,
) -> Result<Rollback, IndexError> {
    let mut tx = conn.begin().await?;
    let above = fork.block_number;
    let (pacts, accounts) = journal::touched_above(&mut tx, chain_id, above).await?;
    let orphaned = journal::truncate_above(&mut tx, chain_id, above).await?;
    checkpoint::forget_above(&mut tx, chain_id, above).await?;
    project::rollback(&mut tx, chain_id, above, &pacts, &accounts).await?;
    let history = journal::history(&mut tx, chain_id, &pacts, &accounts).await?;
    project::apply_batch(&mut tx, &history.iter().collect::<Vec<_>>()).await?;
    checkpoint::save(&mut tx, chain_id, fork, None, None, None).await?;
    reputation::refresh(&mut tx, chain_id, reputation::Scope::All).await?;
    let cells = Cells { table: "events", key: format!("chain {chain_id} above block {above}") };
    let rebuilt = pacts.iter().map(|id| cells.u256("pact_id", id)).collect::<Result<Vec<U256>, _>>()?;
    notify::pacts(&mut tx, chain_id, &rebuilt.iter().copied().collect()).await?;
    tx.commit().await?;
    Ok(Rollback { orphaned_events: orphaned, pacts: rebuilt, accounts_rebuilt: accounts.len() as u64 })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A chain of blocks 0..=head, each hash `number + salt` (a fork: another salt above a block).
    fn chain(head: u64, fork_above: Option<(u64, u8)>) -> HashMap<u64, B256> {
        (0..=head)
            .map(|n| {
                let salt = match fork_above {
                    Some((fork, salt)) if n > fork => salt,
                    _ => 0,
                };
                (n, B256::with_last_byte(n as u8).bit_xor(B256::repeat_byte(salt)))
            })
            .collect()
    }

    /// What the index remembers of `chain` from `from` down to `to`, newest first.
    fn remembered(chain: &HashMap<u64, B256>, from: u64, to: u64) -> Vec<(u64, B256)> {
        (to..=from).rev().map(|n| (n, chain[&n])).collect()
    }

    async fn check(
        indexed: &HashMap<u64, B256>,
        at: u64,
        keep: u64,
        rpc: &HashMap<u64, B256>,
        head: u64,
    ) -> Continuity {
        let checkpoint = Checkpoint { block_number: at, block_hash: indexed[&at] };
        let recent = remembered(indexed, at, at.saturating_sub(keep));
        let hash_at = |n: u64| {
            let found = (n <= head).then(|| rpc.get(&n).copied()).flatten();
            async move { Ok::<_, std::convert::Infallible>(found) }
        };
        continuity(checkpoint, &recent, head, hash_at).await.unwrap_or_else(|e| match e {})
    }

    #[tokio::test]
    async fn the_same_chain_is_intact_and_a_longer_one_too() {
        let indexed = chain(20, None);
        assert_eq!(check(&indexed, 20, 5, &indexed, 20).await, Continuity::Intact);
        assert_eq!(check(&indexed, 20, 5, &chain(30, None), 30).await, Continuity::Intact);
    }

    #[tokio::test]
    async fn a_fork_is_found_at_the_last_shared_block() {
        let indexed = chain(20, None);
        let rpc = chain(25, Some((17, 9)));
        let expected = Checkpoint { block_number: 17, block_hash: indexed[&17] };
        assert_eq!(check(&indexed, 20, 5, &rpc, 25).await, Continuity::Forked { fork: expected });
        // A shorter new branch: the RPC's head is below the checkpoint and differs above 17.
        assert_eq!(
            check(&indexed, 20, 5, &chain(19, Some((17, 9))), 19).await,
            Continuity::Forked { fork: expected }
        );
    }

    #[tokio::test]
    async fn a_node_behind_the_index_that_agrees_lags() {
        let indexed = chain(20, None);
        assert_eq!(check(&indexed, 20, 5, &chain(18, None), 18).await, Continuity::Lagging { head: 18 });
        // Further behind than the remembered blocks reach: nothing to compare, so wait.
        assert_eq!(check(&indexed, 20, 5, &chain(10, None), 10).await, Continuity::Lagging { head: 10 });
    }

    #[tokio::test]
    async fn a_fork_below_every_remembered_block_is_too_deep() {
        let indexed = chain(20, None);
        let rpc = chain(25, Some((12, 9)));
        assert_eq!(check(&indexed, 20, 5, &rpc, 25).await, Continuity::TooDeep { lowest_checked: 15 });
    }
}
