//! Matching the journal to subscriptions. Each mode keeps a cursor over a chain's `events`
//! (`webhook_cursors`); one pass takes the next batch of pact events up to its ceiling (instant:
//! the indexed block; finalized: the indexed block minus the finality depth), writes one delivery
//! per (event, matching subscription) into the outbox and moves the cursor, all in one
//! transaction: a pass killed half-way wrote nothing, and a pass run twice (two processes) writes
//! each delivery once (the idempotency key is unique per subscription).
//!
//! The idempotency key of an event is `{chain}:{block hash}:{log index}`: the same event sent
//! again carries the same key; an event moved to another block by a reorganisation is another
//! event.

use agentpact_contracts::{DeliveryState, NoticeKind, WebhookMode};
use agentpact_schema::{Cells, i64_of};
use sqlx::{Postgres, Transaction};

use crate::{PushConfig, PushError, revoke};

/// The indexed block of a chain, as the matching and the alarms read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    /// Its number.
    pub number: u64,
    /// Its hash.
    pub hash: Vec<u8>,
    /// When it was mined (the chain's clock).
    pub time: Option<chrono::DateTime<chrono::Utc>>,
}

/// Reads the checkpoint of `chain_id`, if the indexer wrote one.
pub async fn indexed(conn: &mut sqlx::PgConnection, chain_id: u64) -> Result<Option<Indexed>, PushError> {
    let row = sqlx::query!(
        "SELECT block_number, block_hash, block_time FROM checkpoints WHERE chain_id = $1",
        i64_of(chain_id)
    )
    .fetch_optional(conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let cells = Cells { table: "checkpoints", key: format!("chain {chain_id}") };
    Ok(Some(Indexed {
        number: cells.int("block_number", row.block_number)?,
        hash: row.block_hash,
        time: row.block_time,
    }))
}

/// Where a mode's matching stopped: after the event at (`block`, `log_index`) of the block with
/// `hash` (instant mode only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The block.
    pub block: i64,
    /// The last log index matched in it (`i32::MAX`: the whole block).
    pub log_index: i32,
    /// The block's hash.
    pub hash: Option<Vec<u8>>,
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Matched {
    /// Deliveries written.
    pub queued: u64,
    /// Revocations written (a reorganisation under the cursor).
    pub revoked: u64,
    /// Whether the batch was full: another pass has more to match.
    pub more: bool,
}

/// One pass of `mode` on `config.chain_id`.
pub async fn pass(pool: &sqlx::PgPool, config: &PushConfig, mode: WebhookMode) -> Result<Matched, PushError> {
    // One snapshot: the checkpoint and the journal as one indexer commit left them.
    let mut tx = pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ").await?;
    let Some(head) = indexed(&mut tx, config.chain_id).await? else { return Ok(Matched::default()) };
    let ceiling = match mode {
        WebhookMode::Instant => head.number,
        WebhookMode::Finalized => head.number.saturating_sub(config.finality_depth),
    };
    let ceiling = i64_of(ceiling);
    let mut matched = Matched::default();
    let cursor = match load_cursor(&mut tx, config.chain_id, mode).await? {
        Some(cursor) => cursor,
        // A new deployment starts at what is indexed now: subscriptions hear of what happens
        // after they exist, not of history.
        None => Cursor { block: ceiling, log_index: i32::MAX, hash: Some(head.hash.clone()) },
    };
    let cursor = if mode == WebhookMode::Instant {
        match revoke::fork_below(&mut tx, config, &cursor, &head).await? {
            Some(fork) => {
                matched.revoked = revoke::revoke_above(&mut tx, config.chain_id, fork).await?;
                Cursor { block: fork, log_index: i32::MAX, hash: None }
            }
            None => cursor,
        }
    } else {
        cursor
    };
    // The batch ends at its `batch`-th event, or at the ceiling.
    let last = sqlx::query!(
        "SELECT block_number, log_index, block_hash FROM events
         WHERE chain_id = $1 AND (block_number, log_index) > ($2, $3) AND block_number <= $4 AND pact_id IS NOT NULL
         ORDER BY block_number, log_index OFFSET $5 LIMIT 1",
        i64_of(config.chain_id),
        cursor.block,
        cursor.log_index,
        ceiling,
        i64::from(config.batch.max(1)) - 1
    )
    .fetch_optional(&mut *tx)
    .await?;
    let end = match last {
        Some(last) => {
            matched.more = true;
            Cursor { block: last.block_number, log_index: last.log_index, hash: Some(last.block_hash) }
        }
        None => Cursor {
            block: ceiling.max(cursor.block),
            log_index: i32::MAX,
            hash: (mode == WebhookMode::Instant).then(|| head.hash.clone()),
        },
    };
    if mode == WebhookMode::Instant {
        revoke::remember(&mut tx, config, (cursor.block, end.block), &head).await?;
    }
    matched.queued = queue_events(&mut tx, config.chain_id, mode, &cursor, &end).await?;
    save_cursor(&mut tx, config.chain_id, mode, &end).await?;
    tx.commit().await?;
    Ok(matched)
}

/// Writes a delivery for each pact event after `from` up to `to` (inclusive) and each
/// subscription of `mode` it matches, in chain order.
async fn queue_events(
    tx: &mut Transaction<'_, Postgres>,
    chain_id: u64,
    mode: WebhookMode,
    from: &Cursor,
    to: &Cursor,
) -> Result<u64, PushError> {
    let done = sqlx::query!(
        "WITH ev AS (
             SELECT e.chain_id, e.block_number, e.log_index, e.block_hash, e.tx_hash, e.block_time, e.kind, e.pact_id,
                    e.data, p.currency,
                    ARRAY[p.creator, p.buyer, p.seller, p.arbitrator]
                      || ARRAY(SELECT o.oracle FROM pact_oracles o WHERE o.chain_id = e.chain_id AND o.pact_id = e.pact_id)
                      AS parties,
                    e.chain_id || ':0x' || encode(e.block_hash, 'hex') || ':' || e.log_index AS key
             FROM events e
             LEFT JOIN pacts p ON p.chain_id = e.chain_id AND p.pact_id = e.pact_id
             WHERE e.chain_id = $1 AND e.pact_id IS NOT NULL
               AND (e.block_number, e.log_index) > ($2, $3) AND (e.block_number, e.log_index) <= ($4, $5)
         )
         INSERT INTO webhook_deliveries
             (subscription_id, idempotency_key, kind, chain_id, block_number, block_hash, log_index, block_time, body, state)
         SELECT s.id, ev.key, $7, ev.chain_id, ev.block_number, ev.block_hash, ev.log_index, ev.block_time,
                jsonb_build_object(
                    'type', $7::text, 'idempotencyKey', ev.key, 'subscriptionId', s.id, 'mode', s.mode,
                    'chainId', ev.chain_id, 'pactId', ev.pact_id::text, 'event', ev.kind,
                    'blockNumber', ev.block_number, 'blockHash', '0x' || encode(ev.block_hash, 'hex'),
                    'logIndex', ev.log_index, 'txHash', '0x' || encode(ev.tx_hash, 'hex'),
                    'blockTime', extract(epoch FROM ev.block_time)::bigint, 'data', ev.data)::text,
                $8
         FROM ev
         JOIN webhook_subscriptions s
           ON s.chain_id = ev.chain_id AND s.mode = $6 AND s.cancelled_at IS NULL
          AND (s.party IS NULL OR s.party = ANY(ev.parties))
          AND (s.pact_ids IS NULL OR ev.pact_id = ANY(s.pact_ids))
          AND (s.kinds IS NULL OR ev.kind = ANY(s.kinds))
          AND (s.currencies IS NULL OR ev.currency = ANY(s.currencies))
         ORDER BY ev.block_number, ev.log_index, s.id
         ON CONFLICT (subscription_id, idempotency_key) DO NOTHING",
        i64_of(chain_id),
        from.block,
        from.log_index,
        to.block,
        to.log_index,
        mode.name(),
        NoticeKind::Event.name(),
        DeliveryState::Pending.name()
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected())
}

async fn load_cursor(
    tx: &mut Transaction<'_, Postgres>,
    chain_id: u64,
    mode: WebhookMode,
) -> Result<Option<Cursor>, PushError> {
    let row = sqlx::query!(
        "SELECT block_number, log_index, block_hash FROM webhook_cursors WHERE chain_id = $1 AND mode = $2",
        i64_of(chain_id),
        mode.name()
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| Cursor { block: r.block_number, log_index: r.log_index, hash: r.block_hash }))
}

async fn save_cursor(
    tx: &mut Transaction<'_, Postgres>,
    chain_id: u64,
    mode: WebhookMode,
    cursor: &Cursor,
) -> Result<(), PushError> {
    sqlx::query!(
        "INSERT INTO webhook_cursors (chain_id, mode, block_number, log_index, block_hash) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (chain_id, mode) DO UPDATE
         SET block_number = $3, log_index = $4, block_hash = $5",
        i64_of(chain_id),
        mode.name(),
        cursor.block,
        cursor.log_index,
        cursor.hash.as_deref()
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}
