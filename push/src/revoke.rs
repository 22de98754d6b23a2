//! Reorganisations under the instant cursor. The indexer rolls its journal back and forward in one
//! transaction (indexer/src/reorg.rs), so an event removed by a reorganisation is simply gone from
//! `events`. When the block the instant cursor stopped at is no longer the indexed one, every
//! event delivery above the finality depth whose event is gone is either cancelled (never
//! attempted: the receiver never saw it) or revoked: a `revocation` delivery with the event's key
//! plus `:revoked` follows it to the same subscription. The cursor then goes back to below the
//! fork, so the new branch's events are matched (their keys name their new blocks).

use agentpact_contracts::{DeliveryState, NoticeKind};
use agentpact_schema::i64_of;
use sqlx::{Postgres, Transaction};

use crate::{PushConfig, PushError, dispatch::Cursor, dispatch::Indexed};

/// The block to match again from, when the block at `cursor` is no longer on the indexed chain;
/// `None` while it is.
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
        // The indexer remembers the blocks of its reorg window, and the journal names the block of
        // each event; below both, the block is final.
        let known: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT hash FROM blocks WHERE chain_id = $1 AND number = $2
             UNION ALL
             (SELECT block_hash FROM events WHERE chain_id = $1 AND block_number = $2 LIMIT 1)
             LIMIT 1",
        )
        .bind(i64_of(config.chain_id))
        .bind(cursor.block)
        .fetch_optional(&mut **tx)
        .await?;
        known.is_none_or(|known| known == *hash)
    };
    Ok((!still_there)
        .then(|| cursor.block.min(head_number).saturating_sub(i64_of(config.finality_depth)).max(0)))
}

/// Cancels or revokes every event delivery of the chain above block `from` whose event the
/// journal no longer holds; returns how many revocations it queued.
pub async fn revoke_above(
    tx: &mut Transaction<'_, Postgres>,
    chain_id: u64,
    from: i64,
) -> Result<u64, PushError> {
    let gone: Vec<(i64, i32)> = sqlx::query_as(
        "SELECT d.id, d.attempts FROM webhook_deliveries d
         WHERE d.chain_id = $1 AND d.kind = $3 AND NOT d.revoked AND d.state <> $4 AND d.block_number > $2
           AND NOT EXISTS (SELECT 1 FROM events e
                           WHERE e.chain_id = d.chain_id AND e.block_number = d.block_number
                             AND e.log_index = d.log_index AND e.block_hash = d.block_hash)
         ORDER BY d.id
         FOR UPDATE",
    )
    .bind(i64_of(chain_id))
    .bind(from)
    .bind(NoticeKind::Event.name())
    .bind(DeliveryState::Cancelled.name())
    .fetch_all(&mut **tx)
    .await?;
    let (never_tried, tried): (Vec<_>, Vec<_>) = gone.into_iter().partition(|(_, attempts)| *attempts == 0);
    let never_tried: Vec<i64> = never_tried.into_iter().map(|(id, _)| id).collect();
    let tried: Vec<i64> = tried.into_iter().map(|(id, _)| id).collect();
    sqlx::query("UPDATE webhook_deliveries SET state = $2 WHERE id = ANY($1)")
        .bind(&never_tried)
        .bind(DeliveryState::Cancelled.name())
        .execute(&mut **tx)
        .await?;
    let queued = sqlx::query(
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
    )
    .bind(&tried)
    .bind(NoticeKind::Revocation.name())
    .bind(DeliveryState::Pending.name())
    .execute(&mut **tx)
    .await?;
    Ok(queued.rows_affected())
}
