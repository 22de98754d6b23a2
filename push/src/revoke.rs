//! Reorganisations under the instant cursor. The indexer rolls its journal back and forward in one
//! transaction (indexer/src/reorg.rs), so an event removed by a reorganisation is simply gone from
//! `events`. When the block the instant cursor stopped at is no longer the indexed one, every
//! event delivery above the fork whose event is gone is either cancelled (never attempted: the
//! receiver never saw it) or revoked: a `revocation` delivery with the event's key plus
//! `:revoked` follows it to the same subscription. The cursor then goes back to the fork, so the
//! new branch's events are matched (their keys name their new blocks) and nothing below it is
//! matched twice.
//!
//! The fork is the last block the matching passed that is still on the indexed chain: each pass
//! [`remember`]s the hashes of the blocks it passed (`webhook_matched_blocks`) while a
//! reorganisation could still remove them. Going back further (to the finality depth) would match
//! the untouched events again, and a subscription made since would hear, after its newer
//! deliveries, of events from before it existed.

use agentpact_contracts::{DeliveryState, NoticeKind};
use agentpact_schema::i64_of;
use sqlx::{Postgres, Transaction};

use crate::{PushConfig, PushError, dispatch::Cursor, dispatch::Indexed};

/// Remembers the hashes of blocks `from..=to` as the indexer has them (its recent blocks, or the
/// journal's), and forgets those at or below the finality depth under `head`.
pub async fn remember(
    tx: &mut Transaction<'_, Postgres>,
    config: &PushConfig,
    (from, to): (i64, i64),
    head: &Indexed,
) -> Result<(), PushError> {
    let chain_id = i64_of(config.chain_id);
    sqlx::query!(
        "INSERT INTO webhook_matched_blocks (chain_id, number, hash)
         SELECT chain_id, number, hash FROM blocks WHERE chain_id = $1 AND number BETWEEN $2 AND $3
         UNION ALL
         SELECT DISTINCT ON (block_number) chain_id, block_number, block_hash FROM events e
         WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3
           AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.chain_id = $1 AND b.number = e.block_number)
         ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash",
        chain_id,
        from,
        to
    )
    .execute(&mut **tx)
    .await?;
    sqlx::query!(
        "DELETE FROM webhook_matched_blocks WHERE chain_id = $1 AND number <= $2",
        chain_id,
        i64_of(head.number.saturating_sub(config.finality_depth))
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The block to match again from, when the block at `cursor` is no longer on the indexed chain;
/// `None` while it is. It is the last remembered block whose hash the indexer still has (or no
/// longer remembers: final); with none, the finality depth under the cursor.
pub async fn fork_below(
    tx: &mut Transaction<'_, Postgres>,
    config: &PushConfig,
    cursor: &Cursor,
    head: &Indexed,
) -> Result<Option<i64>, PushError> {
    let Some(hash) = &cursor.hash else { return Ok(None) };
    let head_number = i64_of(head.number);
    let still_there = if cursor.block > head_number {
        false
    } else if cursor.block == head_number {
        *hash == head.hash
    } else {
        known(tx, config.chain_id, cursor.block).await?.is_none_or(|known| known == *hash)
    };
    if still_there {
        return Ok(None);
    }
    let below = cursor.block.min(head_number);
    let shared = sqlx::query_scalar!(
        "SELECT max(m.number) FROM webhook_matched_blocks m
         WHERE m.chain_id = $1 AND m.number <= $2
           AND m.hash IS NOT DISTINCT FROM coalesce(
                 CASE WHEN m.number = $3 THEN $4::bytea END,
                 (SELECT hash FROM blocks b WHERE b.chain_id = $1 AND b.number = m.number),
                 (SELECT block_hash FROM events e WHERE e.chain_id = $1 AND e.block_number = m.number LIMIT 1),
                 m.hash)",
        i64_of(config.chain_id),
        below,
        head_number,
        &head.hash
    )
    .fetch_one(&mut **tx)
    .await?;
    let fork = shared.unwrap_or_else(|| below.saturating_sub(i64_of(config.finality_depth)).max(0));
    sqlx::query!(
        "DELETE FROM webhook_matched_blocks WHERE chain_id = $1 AND number > $2",
        i64_of(config.chain_id),
        fork
    )
    .execute(&mut **tx)
    .await?;
    Ok(Some(fork))
}

/// The hash the indexer holds for block `number`: from its recent blocks, or the journal's;
/// `None` below both (a final block).
async fn known(
    tx: &mut Transaction<'_, Postgres>,
    chain_id: u64,
    number: i64,
) -> Result<Option<Vec<u8>>, PushError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT hash AS "hash!" FROM blocks WHERE chain_id = $1 AND number = $2
           UNION ALL
           (SELECT block_hash FROM events WHERE chain_id = $1 AND block_number = $2 LIMIT 1)
           LIMIT 1"#,
        i64_of(chain_id),
        number
    )
    .fetch_optional(&mut **tx)
    .await?)
}

/// Cancels or revokes every event delivery of the chain above block `from` whose event the
/// journal no longer holds; returns how many revocations it queued.
pub async fn revoke_above(
    tx: &mut Transaction<'_, Postgres>,
    chain_id: u64,
    from: i64,
) -> Result<u64, PushError> {
    let gone = sqlx::query!(
        "SELECT d.id, d.attempts FROM webhook_deliveries d
         WHERE d.chain_id = $1 AND d.kind = $3 AND NOT d.revoked AND d.state <> $4 AND d.block_number > $2
           AND NOT EXISTS (SELECT 1 FROM events e
                           WHERE e.chain_id = d.chain_id AND e.block_number = d.block_number
                             AND e.log_index = d.log_index AND e.block_hash = d.block_hash)
         ORDER BY d.id
         FOR UPDATE",
        i64_of(chain_id),
        from,
        NoticeKind::Event.name(),
        DeliveryState::Cancelled.name()
    )
    .fetch_all(&mut **tx)
    .await?;
    let (never_tried, tried): (Vec<_>, Vec<_>) = gone.into_iter().partition(|d| d.attempts == 0);
    let never_tried: Vec<i64> = never_tried.into_iter().map(|d| d.id).collect();
    let tried: Vec<i64> = tried.into_iter().map(|d| d.id).collect();
    sqlx::query!(
        "UPDATE webhook_deliveries SET state = $2 WHERE id = ANY($1)",
        &never_tried,
        DeliveryState::Cancelled.name()
    )
    .execute(&mut **tx)
    .await?;
    let queued = sqlx::query!(
        "WITH gone AS (UPDATE webhook_deliveries SET revoked = true WHERE id = ANY($1) RETURNING *)
         INSERT INTO webhook_deliveries
             (subscription_id, idempotency_key, kind, chain_id, block_number, block_hash, log_index, block_time, body, state)
         SELECT subscription_id, idempotency_key || ':revoked', $2, chain_id, block_number, block_hash, log_index,
                NULL,
                (body::jsonb || jsonb_build_object('type', $2::text, 'idempotencyKey', idempotency_key || ':revoked',
                                                   'revokes', idempotency_key))::text,
                $3
         FROM gone ORDER BY id
         ON CONFLICT (subscription_id, idempotency_key) DO NOTHING",
        &tried,
        NoticeKind::Revocation.name(),
        DeliveryState::Pending.name()
    )
    .execute(&mut **tx)
    .await?;
    Ok(queued.rows_affected())
}
